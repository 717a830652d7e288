//! `check` with real tools: a real `cargo clippy` and `cargo test` gate on a small crate in a
//! temporary git repository, and real ShellCheck and hadolint, which exit 1 on a finding of any
//! level.

use std::process::Command;

use serde_json::json;

use crate::support::{Repo, stdout, tool};

const LIB: &str = r#"pub fn answer() -> i32 {
    return 42;
}

pub fn is_empty(values: &Vec<i32>) -> bool {
    values.len() == 0
}

pub fn add(a: i32, b: i32) -> i32 {
    a - b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(2, 2), 4);
    }

    #[test]
    fn answers() {
        assert_eq!(answer(), 42);
    }
}
"#;

const CONFIG: &str = r#"[[gate.check]]
name = "clippy"
category = "lint"
run = "cargo clippy --all-targets --message-format=short -- -D warnings"
parser = "clippy"
timeout = "10m"

[[gate.check]]
name = "tests"
category = "tests"
run = "cargo test --no-fail-fast"
parser = "cargo-test"
timeout = "10m"
"#;

fn crate_repo() -> Repo {
    let repo = Repo::new();
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    );
    repo.write("src/lib.rs", LIB);
    repo.write(".gitignore", "/target\n/.refine-loop\n");
    repo.write("refine-loop.toml", CONFIG);
    repo.commit("demo crate");
    repo
}

/// Unique primary-span diagnostics in `cargo clippy --message-format=json` (cargo repeats a lib's
/// diagnostics for its test target).
fn clippy_json_count(repo: &Repo) -> usize {
    let output = Command::new("cargo")
        .args([
            "clippy",
            "--all-targets",
            "--message-format=json",
            "--",
            "-D",
            "warnings",
        ])
        .current_dir(repo.path())
        .env("CARGO_TARGET_DIR", repo.join("target"))
        .output()
        .unwrap();
    let mut unique = std::collections::BTreeSet::new();
    for line in String::from_utf8(output.stdout).unwrap().lines() {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        if value["reason"] != "compiler-message" {
            continue;
        }
        let message = &value["message"];
        if let Some(span) = message["spans"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["is_primary"] == true)
        {
            unique.insert((
                span["file_name"].to_string(),
                span["line_start"].to_string(),
                span["column_start"].to_string(),
                message["message"].to_string(),
            ));
        }
    }
    unique.len()
}

#[test]
fn real_clippy_and_cargo_test_gate() {
    let repo = crate_repo();
    let output = repo
        .command(&["check"])
        .env("CARGO_TARGET_DIR", repo.join("target"))
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");

    let mut summary = repo.summary();
    for check in summary["checks"].as_array_mut().unwrap() {
        assert!(check["duration_ms"].as_u64().unwrap() > 0);
        assert!(check["output_bytes"].as_u64().unwrap() > 0);
        check["duration_ms"] = json!("(varies)");
        check["output_bytes"] = json!("(varies)");
    }
    let expected = json!({
        "format_version": 1,
        "cycle": 0,
        "overall_result": "FAILED",
        "failed_count": 3,
        "warning_count": 0,
        "categories": {
            "lint": {
                "passed": false,
                "failures": 2,
                "details": [
                    "src/lib.rs:2:5: unneeded `return` statement",
                    "src/lib.rs:5:25: writing `&Vec` instead of `&[_]` involves a new object where a slice will do"
                ]
            },
            "tests": {
                "passed": false,
                "failures": 1,
                "details": ["src/lib.rs:19:9: tests::adds: test failed"]
            }
        },
        "checks": [
            {
                "name": "clippy", "category": "lint", "parser": "clippy", "status": "failed",
                "exit_code": 101, "signal": null, "duration_ms": "(varies)", "timed_out": false,
                "counts": {"error": 2, "warning": 0, "note": 0},
                "expected_count": null, "tests": null, "unparsed": false,
                "output_bytes": "(varies)", "lines_cut": 0, "infra_reason": null,
                "leftover_processes_stopped": false, "output_abandoned": false
            },
            {
                "name": "tests", "category": "tests", "parser": "cargo-test", "status": "failed",
                "exit_code": 101, "signal": null, "duration_ms": "(varies)", "timed_out": false,
                "counts": {"error": 1, "warning": 0, "note": 0},
                "expected_count": {"error": 1, "warning": null},
                "tests": {"passed": 1, "failed": 1, "skipped": 0},
                "unparsed": false,
                "output_bytes": "(varies)", "lines_cut": 0, "infra_reason": null,
                "leftover_processes_stopped": false, "output_abandoned": false
            }
        ]
    });
    assert_eq!(
        summary,
        expected,
        "{}",
        serde_json::to_string_pretty(&summary).unwrap()
    );

    // The count agrees with clippy's own machine-readable output.
    assert_eq!(clippy_json_count(&repo), 2);

    let table = stdout(&output);
    assert!(table.starts_with(
        "CATEGORY  PASSED  FAILURES  WARNINGS\nlint      no             2         0\ntests     no             1         0\ngate FAILED: 3 failures, 0 warnings; "
    ), "{table}");
}

#[test]
fn the_quick_start_example_reports_what_the_readme_says() {
    let repo = Repo::new();
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/rust-demo");
    for file in ["Cargo.toml", "src/lib.rs", "refine-loop.toml"] {
        repo.write(file, &std::fs::read_to_string(example.join(file)).unwrap());
    }
    repo.commit("example");
    let output = repo
        .command(&["check"])
        .env("CARGO_TARGET_DIR", repo.join("target"))
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let summary = repo.summary();
    assert_eq!(
        summary["categories"],
        json!({
            "lint": {
                "passed": false,
                "failures": 2,
                "details": [
                    "src/lib.rs:6:5: unneeded `return` statement",
                    "src/lib.rs:10:22: writing `&Vec` instead of `&[_]` involves a new object where a slice will do"
                ]
            },
            "tests": {
                "passed": false,
                "failures": 1,
                "details": ["src/lib.rs:35:9: tests::boils: test failed"]
            }
        })
    );
}

/// A fix that uses an API newer than the crate's declared `rust-version` is a regression of the
/// gate's MSRV check, in a category of its own, and is rolled back, though it lowers the lint
/// count; the same fix in a crate that declares none is kept. (issue 35: the `is_multiple_of` fix
/// kept in a crate whose CI checks Rust 1.60.) The MSRV check `init` writes builds with the
/// declared toolchain (`cargo +1.60 check`), which rustup cannot fetch here (no network to
/// static.rust-lang.org): it stands in as clippy's `incompatible_msrv` lint alone, which reads
/// the same declaration, with the real clippy.
#[test]
fn a_fix_past_the_declared_rust_version_is_rolled_back() {
    const BEFORE: &str = "pub fn answer() -> i32 {\n    return 42;\n}\n\n\
        pub fn is_empty(values: &Vec<i32>) -> bool {\n    values.len() == 0\n}\n\n\
        pub fn leap(y: u32) -> bool {\n    y % 4 == 0\n}\n";
    // Fixes the two lints, and rewrites `y % 4 == 0` with Rust 1.87's `is_multiple_of`.
    const AFTER: &str = "pub fn answer() -> i32 {\n    42\n}\n\n\
        pub fn is_empty(values: &[i32]) -> bool {\n    values.is_empty()\n}\n\n\
        pub fn leap(y: u32) -> bool {\n    y.is_multiple_of(4)\n}\n";
    // (the manifest's rust-version line, whether the fix is kept)
    for (declared, kept) in [("rust-version = \"1.60\"\n", false), ("", true)] {
        let repo = Repo::new();
        repo.write(
            "Cargo.toml",
            &format!(
                "[package]\nname = \"leap\"\nversion = \"0.1.0\"\nedition = \"2021\"\n{declared}\n[workspace]\n"
            ),
        );
        repo.write("src/lib.rs", BEFORE);
        repo.write("after.rs", AFTER);
        repo.write(".gitignore", "/target\n/.refine-loop\n");
        repo.write(
            "refine-loop.toml",
            "[loop]\nmax_cycles = 1\n\n[[gate.check]]\nname = \"clippy\"\ncategory = \"lint\"\n\
             run = \"cargo clippy --all-targets --message-format=short -- -D warnings\"\n\
             parser = \"clippy\"\ntimeout = \"10m\"\n\n\
             [[gate.check]]\nname = \"msrv\"\ncategory = \"build\"\n\
             run = \"cargo clippy --lib --message-format=short -- -A clippy::all -D clippy::incompatible_msrv\"\n\
             parser = \"clippy\"\ntimeout = \"10m\"\n\n\
             [[delegate]]\ncategories = [\"lint\"]\nrun = \"cp after.rs src/lib.rs\"\n",
        );
        repo.commit("crate");
        let output = crate::run_loop::run(&repo, &[]);
        let trend = crate::run_loop::json(&repo, "trend.json");
        assert_eq!(
            trend["cycles"][1]["accepted"], kept,
            "{declared:?}: {trend}\n{output:?}"
        );
        let now = std::fs::read_to_string(repo.join("src/lib.rs")).unwrap();
        assert_eq!(now == AFTER, kept, "{declared:?}: {now}");
        if !kept {
            assert_eq!(now, BEFORE, "rolled back to the byte");
        }
    }
}

/// A repository whose gate is the one check `c` of category `lint`: `run` (`{tool}` for the
/// installed tool's path) read by `parser`, on `file`.
fn one_check_repo(run: &str, tool_name: &str, parser: &str, file: (&str, &str)) -> Repo {
    let repo = Repo::new();
    repo.write(file.0, file.1);
    let run = run.replace("{tool}", &tool(tool_name));
    repo.write(
        "refine-loop.toml",
        &format!(
            "[[gate.check]]\nname = \"c\"\ncategory = \"lint\"\nrun = '''{run}'''\n\
             parser = \"{parser}\"\n"
        ),
    );
    repo
}

/// ShellCheck and hadolint exit 1 on a finding of any level, a note too. A check that exits 1
/// while its parser read only notes says so, and its notes count by their level: they fail
/// nothing. With a warning read the exit stands (one failure, as for a tool told to fail on
/// warnings), and so does a crash's exit (2) with a note read; each detail says what was read.
#[test]
fn an_exit_on_notes_or_warnings_counts_what_the_parser_read() {
    const NOTE_SH: (&str, &str) = ("run.sh", "#!/bin/sh\necho $1\n");
    const WARNING_SH: (&str, &str) = ("run.sh", "#!/bin/sh\nunused=1\n");
    // (what, command, tool and parser, file, (`check`'s exit code, lint passed, failures,
    // warnings), the line `check` prints for the check, the start of lint's first detail)
    let cases = [
        (
            "shellcheck, one info (SC2086): a note, no failure",
            "{tool} run.sh",
            "shellcheck",
            NOTE_SH,
            (0, true, 0, 0),
            Some("check \"c\": exit 1; 1 note, no errors\n"),
            None,
        ),
        (
            "shellcheck, one warning (SC2034): the exit stands, one failure beside it",
            "{tool} run.sh",
            "shellcheck",
            WARNING_SH,
            (1, false, 1, 1),
            None,
            Some("c: failed (exit code 1 after "),
        ),
        (
            "shellcheck, an error (SC2045) beside an info: one failure",
            "{tool} run.sh",
            "shellcheck",
            (
                "run.sh",
                "#!/bin/bash\nfor f in $(ls *.txt); do echo \"$f\"; done\n",
            ),
            (1, false, 1, 0),
            None,
            Some("run.sh:2: SC2045"),
        ),
        (
            "shellcheck, a missing file (exit 2) and an info: still a failure, saying what it read",
            "{tool} missing.sh run.sh",
            "shellcheck",
            NOTE_SH,
            (1, false, 1, 0),
            None,
            Some("c: failed (exit code 2 after "),
        ),
        (
            "hadolint, one info (SC2086 in a RUN): a note, no failure",
            "{tool} --no-color Dockerfile",
            "hadolint",
            ("Dockerfile", "FROM alpine:3.19\nRUN echo $HOME\n"),
            (0, true, 0, 0),
            Some("check \"c\": exit 1; 1 note, no errors\n"),
            None,
        ),
        (
            "hadolint, one warning (DL3006): the exit stands, one failure beside it",
            "{tool} --no-color Dockerfile",
            "hadolint",
            ("Dockerfile", "FROM alpine\n"),
            (1, false, 1, 1),
            None,
            Some("c: failed (exit code 1 after "),
        ),
    ];
    for (what, run, tool_name, file, expected, line, detail_start) in cases {
        let repo = one_check_repo(run, tool_name, tool_name, file);
        let output = repo.run(&["check"]);
        let printed = stdout(&output);
        let summary = repo.summary();
        let lint = &summary["categories"]["lint"];
        let (code, passed, failures, warnings) = expected;
        assert_eq!(output.status.code(), Some(code), "{what}: {printed}");
        assert_eq!(lint["passed"], passed, "{what}: {lint}");
        assert_eq!(lint["failures"], failures, "{what}: {lint}");
        assert_eq!(lint["warnings"].as_u64().unwrap_or(0), warnings, "{what}");
        let detail = lint["details"][0].as_str();
        match detail_start {
            Some(start) => assert!(
                detail.is_some_and(|d| d.starts_with(start)),
                "{what}: {detail:?}"
            ),
            None => assert_eq!(detail, None, "{what}"),
        }
        // Never "no finding parser reads" when it read one.
        assert!(
            !lint.to_string().contains("no finding parser"),
            "{what}: {lint}"
        );
        let check = &summary["checks"][0];
        match line {
            Some(line) => {
                assert!(printed.contains(line), "{what}: {printed}");
                assert_eq!(check["status"], "passed", "{what}: {check}");
                assert_eq!(check["unparsed"], false, "{what}: {check}");
                let exit = check["failing_exit"].as_str().unwrap_or_default();
                assert_eq!(format!("check \"c\": {exit}\n"), line, "{what}");
            }
            None => {
                assert!(!printed.contains("check \"c\""), "{what}: {printed}");
                assert_eq!(check["status"], "failed", "{what}: {check}");
                assert!(check.get("failing_exit").is_none(), "{what}: {check}");
            }
        }
    }
    // A failure's detail says what its parser read.
    for (run, file, read) in [
        ("{tool} missing.sh run.sh", NOTE_SH, "1 note"),
        ("{tool} run.sh", WARNING_SH, "1 warning"),
    ] {
        let repo = one_check_repo(run, "shellcheck", "shellcheck", file);
        repo.run(&["check"]);
        let detail = repo.summary()["categories"]["lint"]["details"][0].clone();
        let expected =
            format!("with no error parser \"shellcheck\" reads (it read {read}); output ends: ");
        assert!(
            detail.as_str().unwrap().contains(&expected),
            "{run}: {detail}"
        );
    }
}

/// `cargo clippy --fix` cannot be given paths: under `--scope`, what it fixes outside the scope
/// is left out (not a scope violation, no strike), and what it fixes inside is kept.
#[test]
fn a_fixer_that_cannot_take_paths_keeps_to_the_scope_without_a_violation() {
    let repo = Repo::new();
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"two\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    );
    repo.write("src/lib.rs", "pub mod a;\npub mod b;\n");
    let a = "pub fn answer() -> i32 {\n    return 42;\n}\n";
    let b = "pub fn other() -> i32 {\n    return 7;\n}\n";
    repo.write("src/a.rs", a);
    repo.write("src/b.rs", b);
    repo.write(".gitignore", "/target\n/.refine-loop\n");
    repo.write(
        "refine-loop.toml",
        "[[gate.check]]\nname = \"clippy\"\ncategory = \"lint\"\n\
         run = \"cargo clippy --all-targets --message-format=short -- -D warnings\"\n\
         parser = \"clippy\"\ntimeout = \"10m\"\n\n[[delegate]]\nfrom_check = \"clippy\"\n",
    );
    repo.commit("crate");
    let output = crate::run_loop::run(&repo, &["--scope", "src/a.rs", "--max-cycles", "2"]);
    let read = |path: &str| std::fs::read_to_string(repo.join(path)).unwrap();
    assert_eq!(
        read("src/a.rs"),
        "pub fn answer() -> i32 {\n    42\n}\n",
        "{output:?}"
    );
    assert_eq!(read("src/b.rs"), b, "outside the scope, as it was");
    let last = read(".refine-loop/REFINE-LOOP-FINAL.md");
    assert!(!last.contains("scope violation"), "{last}");
    let report = read(".refine-loop/cycle-1/delegate-reports/fix-lint.md");
    assert!(
        report.contains("`src/b.rs`, outside the scope: its tool cannot be given paths"),
        "{report}"
    );
    assert!(!report.contains("Refused"), "{report}");
    let patch = read(".refine-loop/refine-loop.patch");
    assert!(
        patch.contains("src/a.rs") && !patch.contains("src/b.rs"),
        "{patch}"
    );
}

/// `init` reads a bats suite run by `npm test` with the TAP parser: the gate counts its tests
/// (real npm and bats), not one exit code.
#[test]
fn npm_test_running_bats_is_read_by_its_tap() {
    let bats = tool("bats");
    let repo = Repo::new();
    repo.write(
        "package.json",
        &format!("{{\"name\": \"t\", \"scripts\": {{\"test\": \"{bats} t.bats\"}}}}"),
    );
    repo.write(
        "t.bats",
        "#!/usr/bin/env bats\n\n@test \"adds\" {\n  [ \"$((1 + 1))\" -eq 2 ]\n}\n\n\
         @test \"subtracts\" {\n  [ \"$((2 - 1))\" -eq 2 ]\n}\n",
    );
    repo.commit("suite");
    let init = repo.run(&["init"]);
    assert_eq!(init.status.code(), Some(0), "{init:?}");
    let config = std::fs::read_to_string(repo.join("refine-loop.toml")).unwrap();
    assert!(
        config.contains("run = \"npm test --silent\"\nparser = \"tap\""),
        "{config}"
    );
    let output = repo.run(&["check"]);
    let summary = repo.summary();
    let record = summary["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "npm-test")
        .unwrap_or_else(|| panic!("{summary}\n{output:?}"))
        .clone();
    assert_eq!(record["status"], "failed", "{record}");
    assert_eq!(record["tests"]["failed"], 1, "{record}");
    assert_eq!(record["tests"]["passed"], 1, "{record}");
}
