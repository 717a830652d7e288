//! `refine-loop parse` and `refine-loop parsers` through the real binary.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::support::binary;

fn fixture(relative: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/parsers")
        .join(relative)
}

fn refine_loop(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(binary())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(bytes) = stdin {
        std::io::Write::write_all(&mut input, bytes).unwrap();
    }
    drop(input);
    child.wait_with_output().unwrap()
}

#[test]
fn json_output_has_the_documented_shape() {
    let path = fixture("eslint/lint.txt");
    let output = refine_loop(
        &[
            "parse",
            "-p",
            "eslint",
            "--format",
            "json",
            "--target",
            "/fixture/js",
            path.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.starts_with(
            "{\"format_version\":1,\"parser\":\"eslint\",\"diagnostics\":[{\"file\":\"src/"
        ),
        "{text}"
    );
    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
    let keys: Vec<&str> = report
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut expected = [
        "format_version",
        "parser",
        "diagnostics",
        "counts",
        "expected_count",
        "tests",
        "notes",
    ];
    expected.sort_unstable();
    assert_eq!(keys, expected);
    let first = &report["diagnostics"][0];
    for key in [
        "file",
        "line",
        "column",
        "end_line",
        "end_column",
        "severity",
        "code",
        "message",
        "category",
        "fingerprint",
    ] {
        assert!(first.get(key).is_some(), "{key} missing in {first}");
    }
    assert_eq!(first["category"], "lint");
    assert_eq!(first["fingerprint"].as_str().unwrap().len(), 64);
    assert_eq!(
        report["counts"]["error"].as_u64().unwrap() + report["counts"]["warning"].as_u64().unwrap(),
        14
    );
}

#[test]
fn auto_reads_stdin_and_says_what_it_chose() {
    let bytes = std::fs::read(fixture("ruff/concise.txt")).unwrap();
    let output = refine_loop(&["parse", "--target", "/fixture/python"], Some(&bytes));
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.starts_with("auto: chose parser \"ruff\""), "{text}");
    assert!(
        text.contains("parser ruff: 23 errors, 0 warnings, 0 notes"),
        "{text}"
    );
}

/// The gate script of tests/fixtures/parsers/ruff-then-pytest: ruff's findings, then pytest's.
fn two_tools(args: &[&str]) -> (Output, serde_json::Value) {
    let path = fixture("ruff-then-pytest/gate.txt");
    let mut all = vec!["parse", "--target", "/fixture/python"];
    all.extend_from_slice(args);
    all.extend(["--format", "json", path.to_str().unwrap()]);
    let output = refine_loop(&all, None);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let report = serde_json::from_slice(&output.stdout).unwrap();
    (output, report)
}

fn codes_by_category(report: &serde_json::Value) -> Vec<(String, usize)> {
    let mut counts = std::collections::BTreeMap::new();
    for diagnostic in report["diagnostics"].as_array().unwrap() {
        let category = diagnostic["category"].as_str().unwrap().to_string();
        *counts.entry(category).or_insert(0) += 1;
    }
    counts.into_iter().collect()
}

#[test]
fn auto_reads_a_log_of_two_tools_in_regions_and_says_which() {
    let (_, report) = two_tools(&[]);
    assert_eq!(report["parser"], "ruff,pytest");
    let regions = report["regions"].as_array().unwrap();
    assert_eq!(regions.len(), 2, "{regions:?}");
    assert_eq!(regions[0]["parser"], "ruff");
    assert_eq!(regions[0]["first_line"], 1);
    assert_eq!(regions[1]["parser"], "pytest");
    assert_eq!(
        regions[1]["first_line"].as_u64().unwrap(),
        regions[0]["last_line"].as_u64().unwrap() + 1
    );
    // Each tool's findings keep their own parser's category.
    assert_eq!(
        codes_by_category(&report),
        [
            ("lint".to_string(), 14),
            ("syntax".to_string(), 1),
            ("tests".to_string(), 3)
        ]
    );
    assert_eq!(report["tests"]["failed"], 3);

    let path = fixture("ruff-then-pytest/gate.txt");
    let summary = refine_loop(
        &[
            "parse",
            "--target",
            "/fixture/python",
            path.to_str().unwrap(),
        ],
        None,
    );
    let text = String::from_utf8(summary.stdout).unwrap();
    assert!(
        text.starts_with("auto: the log reads in regions: lines 1-"),
        "{text}"
    );
}

#[test]
fn two_parsers_named_together_read_the_whole_log() {
    let (_, report) = two_tools(&["--parser", "ruff,pytest"]);
    assert_eq!(report["parser"], "ruff,pytest");
    assert!(report.get("regions").is_none());
    assert_eq!(
        codes_by_category(&report),
        [
            ("lint".to_string(), 14),
            ("syntax".to_string(), 1),
            ("tests".to_string(), 3)
        ]
    );
    // A name that is not a parser, or a reader of whole documents, is a usage error.
    for (parsers, says) in [
        ("ruff,nope", "\"nope\" is not a parser"),
        ("ruff,sarif", "cannot share an output"),
        ("ruff,ruff", "named twice"),
    ] {
        let output = refine_loop(&["parse", "--parser", parsers, "-"], Some(b""));
        assert_eq!(output.status.code(), Some(2), "{parsers}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(says), "{parsers}: {stderr}");
    }
}

#[test]
fn output_no_parser_knows_gets_a_one_line_note_and_the_exit_code() {
    // A deploy step's words, and an `ls -l` (whose `drwxr-xr-x` once read as a ruff code).
    let log = b"Uploading build artefacts to the cache\nthree archives, 12 MB in all\n\
                drwxr-xr-x 2 root root 4096 Dec  1 23:15 bench\n\
                -rw-r--r-- 1 root root  380 Dec  1 21:04 Cargo.toml\n\
                Deploying to staging... done\nall done in 2 minutes\n";
    let output = refine_loop(&["parse", "--format", "json", "-"], Some(log));
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let notes: Vec<&str> = stderr.lines().filter(|l| l.starts_with("auto: ")).collect();
    assert_eq!(notes.len(), 1, "{stderr}");
    assert!(
        notes[0].contains("no parser recognises this output"),
        "{stderr}"
    );
    assert!(notes[0].contains("reading it by exit code"), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["parser"], "exit-code");
    assert_eq!(report["notes"][0].as_str().unwrap(), notes[0]);
}

#[test]
fn jsonl_prints_one_diagnostic_a_line() {
    let path = fixture("mypy/default.txt");
    let output = refine_loop(
        &[
            "parse",
            "-p",
            "mypy",
            "--format",
            "jsonl",
            path.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let truth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("mypy/default.truth.json")).unwrap())
            .unwrap();
    assert_eq!(lines.len(), truth["diagnostics"].as_array().unwrap().len());
    assert!(lines.iter().all(|d| d["file"].is_string()));
}

#[test]
fn explain_names_the_rule_for_every_line() {
    let input = b"    Checking x v0.1.0\nsrc/a.rs:1:2: error[E0425]: nope\nrandom text\n";
    let output = refine_loop(&["parse", "-p", "clippy", "--explain"], Some(input));
    let text = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = text.lines().take(3).collect();
    assert!(
        lines[0].starts_with("      1  skip[") && lines[0].ends_with("|     Checking x v0.1.0"),
        "{text}"
    );
    assert!(
        lines[1].starts_with("      2  pattern[0] finding"),
        "{text}"
    );
    assert!(lines[2].starts_with("      3  -"), "{text}");
}

#[test]
fn parsers_lists_the_catalogue() {
    let output = refine_loop(&["parsers", "--json"], None);
    assert_eq!(output.status.code(), Some(0));
    let list: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let names: Vec<&str> = list["parsers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    for name in [
        "bandit",
        "cargo-json",
        "cargo-test",
        "clippy",
        "eslint",
        "eslint-compact",
        "eslint-json",
        "exit-code",
        "flake8",
        "gate-script",
        "gcc",
        "go",
        "hadolint",
        "jest",
        "junit",
        "markdownlint",
        "mypy",
        "node-test",
        "pylint",
        "pytest",
        "ruff",
        "rustc",
        "rustfmt",
        "sarif",
        "shellcheck",
        "tsc",
        "vitest",
        "yamllint",
    ] {
        assert!(names.contains(&name), "{name} not in {names:?}");
    }
    let table = refine_loop(&["parsers"], None);
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(text.starts_with("NAME"), "{text}");
    assert!(text.contains("ruff "), "{text}");
}

#[test]
fn bad_definitions_exit_2_naming_file_pattern_and_reason() {
    let dir = tempfile::tempdir().unwrap();
    let table = [
        (
            "bad-regex.toml",
            "name = \"x\"\n[[pattern]]\nregex = '(?P<message>.*'\n",
            "bad-regex.toml: pattern[0].regex: invalid regex",
        ),
        (
            "bad-group.toml",
            "name = \"x\"\n[[pattern]]\nregex = '(?P<msg>.*)'\n",
            "bad-group.toml: pattern[0].regex: unknown group name \"msg\"",
        ),
        (
            "loop.json",
            r#"{"problemMatcher": [{"owner": "x", "pattern": [{"regexp": "a", "message": 0, "loop": true}, {"regexp": "b", "message": 0}]}]}"#,
            "loop.json: problemMatcher[0].pattern[0]: only the last pattern of a multi-line matcher may set `loop`",
        ),
        (
            "no-message.json",
            r#"{"problemMatcher": [{"owner": "x", "pattern": [{"regexp": "(a)", "file": 1}]}]}"#,
            "no-message.json: problemMatcher[0].pattern: at least one pattern must set `message`",
        ),
        (
            "lookbehind.json",
            r#"{"problemMatcher": [{"owner": "x", "pattern": [{"regexp": "(?<=x)(a)", "message": 1}]}]}"#,
            "lookbehind.json: problemMatcher[0].pattern[0].regexp: the regex crate cannot compile /(?<=x)(a)/",
        ),
    ];
    for (file, text, expected) in table {
        let path = dir.path().join(file);
        std::fs::write(&path, text).unwrap();
        let output = refine_loop(
            &[
                "parse",
                "-p",
                "exit-code",
                "--definition",
                path.to_str().unwrap(),
            ],
            Some(b""),
        );
        assert_eq!(output.status.code(), Some(2), "{file}: {output:?}");
        let error = String::from_utf8(output.stderr).unwrap();
        assert_eq!(error.lines().count(), 1, "{error}");
        assert!(error.contains(expected), "{expected:?} not in {error}");
    }
    // A duplicate name in a parser folder (a user's parser may replace a built-in one, but two of
    // theirs may not share a name).
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("a.toml"), "name = \"mine\"\n").unwrap();
    std::fs::write(folder.path().join("b.toml"), "name = \"mine\"\n").unwrap();
    let output = refine_loop(
        &["parsers", "--parser-dir", folder.path().to_str().unwrap()],
        None,
    );
    assert_eq!(output.status.code(), Some(2));
    let error = String::from_utf8(output.stderr).unwrap();
    assert!(
        error.contains("b.toml: name: parser \"mine\" is already defined in"),
        "{error}"
    );
}

#[test]
fn hostile_input_is_read_without_harm() {
    // Invalid UTF-8, a NUL, escapes cut short, a carriage-return storm and a long line.
    let mut input = b"src/\xff.rs:1:1: error: \x00bad\r\r\r\x1b[\x1b]8;;\n".to_vec();
    input.extend(std::iter::repeat_n(b'x', 200_000));
    input.extend_from_slice(b"\nsrc/a.rs:2:2: warning: after\n");
    let output = refine_loop(&["parse", "-p", "clippy", "--format", "json"], Some(&input));
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["counts"]["warning"], 1);
}

#[test]
fn structured_readers_take_what_line_cleaning_would_break() {
    // A BOM before a SARIF log.
    let mut sarif = b"\xEF\xBB\xBF".to_vec();
    sarif.extend(std::fs::read(fixture("sarif/ruff.sarif")).unwrap());
    let output = refine_loop(&["parse", "-p", "sarif", "--format", "json"], Some(&sarif));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["counts"]["error"], 15, "{output:?}");

    // A cargo JSON line longer than the 64 KiB a cleaned line keeps.
    let rendered = "x".repeat(100_000);
    let line = format!(
        r#"{{"reason":"compiler-message","message":{{"message":"long one","code":null,"level":"warning","spans":[{{"file_name":"src/a.rs","line_start":3,"line_end":3,"column_start":1,"column_end":2,"is_primary":true}}],"rendered":"{rendered}"}}}}"#
    );
    let output = refine_loop(
        &["parse", "--format", "json"],
        Some(format!("{line}\n").as_bytes()),
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["parser"], "cargo-json", "{output:?}");
    assert_eq!(report["diagnostics"][0]["message"], "long one");

    // Deeply nested JSON is refused, not a crash.
    let nested = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let output = refine_loop(
        &["parse", "-p", "eslint-json", "--format", "json"],
        Some(nested.as_bytes()),
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
}

#[test]
fn a_pipe_can_be_named_as_the_input() {
    let script = format!(
        "{} parse --target /fixture/python <(cat {})",
        binary(),
        fixture("ruff/concise.txt").display()
    );
    let output = Command::new("bash").args(["-c", &script]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("auto: chose parser \"ruff\""));
}

/// A long output is ranked on a sample of it (its start, windows through it, its end), and read
/// whole by the parser chosen: the same choice and the same findings as ranking all of it.
#[test]
fn auto_ranks_a_long_output_on_a_sample_and_reads_all_of_it() {
    for (case, parser) in [
        ("clippy/targets-human.txt", "clippy"),
        ("pytest/field.txt", "pytest"),
        ("eslint/lint.txt", "eslint"),
        ("ruff/concise.txt", "ruff"),
    ] {
        let one = std::fs::read(fixture(case)).unwrap();
        let long = one.repeat((600 * 1024) / one.len() + 1);
        let auto = refine_loop(&["parse", "--target", "/fixture"], Some(&long));
        let stdout = String::from_utf8_lossy(&auto.stdout);
        let first = stdout.lines().next().unwrap_or_default();
        assert!(
            first.contains(&format!("chose parser \"{parser}\""))
                && first.contains("lines sampled"),
            "{case}: {first}"
        );
        let named = refine_loop(
            &["parse", "-p", parser, "--target", "/fixture"],
            Some(&long),
        );
        let last = |text: &str| text.lines().last().unwrap_or_default().to_string();
        assert_eq!(
            last(&stdout),
            last(&String::from_utf8_lossy(&named.stdout)),
            "{case}: the same findings"
        );
    }
}
