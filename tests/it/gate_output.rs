//! Hostile output: floods, huge lines, invalid UTF-8. `check` finishes, the log and memory stay
//! bounded, and the summary says what happened.

use crate::support::Repo;

fn config(run: &str, parser: &str) -> String {
    format!(
        "[gate]\nlog_limit = \"1MiB\"\n[[gate.check]]\nname = \"flood\"\ncategory = \"lint\"\n\
         parser = \"{parser}\"\nrun = '''{run}'''\n"
    )
}

#[test]
fn a_flood_of_findings_is_counted_in_full_and_kept_bounded() {
    let repo = Repo::new();
    // Each on its own line: clippy's parser counts a finding cargo printed again only once.
    let run = "seq 200000 | sed 's|.*|src/a.rs:&:1: error: flood|'; echo 'src/z.rs:9:9: error: the last one'; exit 1";
    repo.write("refine-loop.toml", &config(run, "clippy"));
    let output = repo.run(&["check"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let summary = repo.summary();
    assert_eq!(summary["failed_count"], 200_001);
    let lint = &summary["categories"]["lint"];
    assert_eq!(lint["failures"], 200_001);
    assert_eq!(lint["details"].as_array().unwrap().len(), 100);
    assert_eq!(lint["details_omitted"], 10_000 - 100);
    let lines: u64 = (1..=200_000u64)
        .map(|n| "src/a.rs::1: error: flood\n".len() as u64 + n.to_string().len() as u64)
        .sum();
    assert_eq!(summary["checks"][0]["output_bytes"], lines + 34);
    let notes = summary["notes"][0].as_str().unwrap();
    assert!(
        notes.contains("190001 findings were counted but not kept"),
        "{notes}"
    );

    let log = repo.gate_output();
    assert!(
        log.len() < (1 << 20) + 64 * 1024,
        "log is {} bytes",
        log.len()
    );
    let text = String::from_utf8_lossy(&log);
    assert!(text.contains("bytes of output left out here (log limit 1048576 bytes)"));
    assert!(text.contains("src/z.rs:9:9: error: the last one\n<== check \"flood\": exit code 1"));
}

#[test]
fn a_50_mb_line_is_cut_and_the_check_finishes() {
    let repo = Repo::new();
    let run = "head -c 52428800 /dev/zero | tr '\\0' a; echo; echo 'src/a.rs:2:3: error: after the long line'; exit 1";
    repo.write("refine-loop.toml", &config(run, "clippy"));
    let output = repo.run(&["check"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let summary = repo.summary();
    let check = &summary["checks"][0];
    assert_eq!(check["lines_cut"], 1);
    assert_eq!(check["output_bytes"], 52_428_800 + 1 + 41);
    assert_eq!(
        summary["categories"]["lint"]["details"],
        serde_json::json!(["src/a.rs:2:3: after the long line"])
    );
}

#[test]
fn invalid_utf8_is_decoded_lossily_and_kept_raw_in_the_log() {
    let repo = Repo::new();
    let run = "printf 'src/\\377.rs:1:1: error: bad \\376 bytes\\n'; exit 1";
    repo.write("refine-loop.toml", &config(run, "clippy"));
    let output = repo.run(&["check"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(
        repo.summary()["categories"]["lint"]["details"],
        serde_json::json!(["src/\u{fffd}.rs:1:1: bad \u{fffd} bytes"])
    );
    let log = repo.gate_output();
    assert!(
        log.windows(5).any(|w| w == b"src/\xff"),
        "raw bytes kept in the log"
    );
}

#[test]
fn coloured_output_is_parsed() {
    let repo = Repo::new();
    let run = "printf '\\033[1msrc/a.rs:4:1: \\033[31merror\\033[0m: coloured\\r\\n'; exit 1";
    repo.write("refine-loop.toml", &config(run, "clippy"));
    repo.run(&["check"]);
    assert_eq!(
        repo.summary()["categories"]["lint"]["details"],
        serde_json::json!(["src/a.rs:4:1: coloured"])
    );
}

#[test]
fn findings_past_the_limit_keep_their_category_and_errors_stay_named() {
    // 10,000 warnings fill the kept list; then errors of another category arrive.
    let repo = Repo::new();
    repo.write(
        "parsers/tagged.toml",
        "name = \"tagged\"\n[[pattern]]\nregex = '^(?P<severity>error|warning) (?P<category>[a-z]+): (?P<message>.+)$'\n",
    );
    let run = "yes 'warning lint: style' | head -n 10000; echo 'error types: boom'; yes 'warning docs: late' | head -n 5; exit 1";
    repo.write(
        "refine-loop.toml",
        &format!("parser_dirs = [\"parsers\"]\n{}", config(run, "tagged")),
    );
    let output = repo.run(&["check"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let categories = &repo.summary()["categories"];
    assert_eq!(categories["types"]["failures"], 1, "{categories}");
    assert_eq!(categories["types"]["details"], serde_json::json!(["boom"]));
    assert_eq!(categories["lint"]["warnings"], 10_000);
    assert_eq!(categories["lint"]["failures"], 0);
    assert_eq!(categories["docs"]["warnings"], 5);
}

#[test]
fn huge_findings_are_cut_and_all_counted() {
    // 10,000 findings of 2 KB each: every field is cut to 1,000 characters, and even cut they
    // pass the 8 MiB storage budget, so the last ones are counted but not kept (bench/flood.sh
    // measures the memory of far bigger floods). The summary still counts every one.
    let repo = Repo::new();
    let run = "long=$(head -c 2000 /dev/zero | tr '\\0' x); seq 10000 | sed \"s|.*|src/a.rs:&:1: error: $long|\"; exit 1";
    repo.write("refine-loop.toml", &config(run, "clippy"));
    let output = repo.run(&["check"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let summary = repo.summary();
    assert_eq!(summary["failed_count"], 10_000);
    let detail = summary["categories"]["lint"]["details"][0]
        .as_str()
        .unwrap();
    assert!(detail.chars().count() < 1_100, "{}", detail.len());
    let notes = summary["notes"][0].as_str().unwrap();
    assert!(
        notes.contains("findings were counted but not kept"),
        "{notes}"
    );
}

#[test]
fn a_check_reads_a_ci_framed_log_of_two_tools_with_both_parsers() {
    // The two-tool fixture (ruff, then pytest, from one gate script) as a GitHub Actions log
    // prints it, read by a check that names both parsers: the framing is stripped before the
    // parsers see a line, and each finding keeps its own parser's category.
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/parsers/ruff-then-pytest/gate.txt");
    let framed: String = std::fs::read_to_string(fixture)
        .unwrap()
        .lines()
        .map(|line| format!("2026-11-30T10:00:00.0041100Z {line}\n"))
        .collect();
    let repo = Repo::new();
    repo.write("ci.log", &framed);
    repo.write(
        "refine-loop.toml",
        "[[gate.check]]\nname = \"gate\"\nparser = \"ruff,pytest\"\nrun = \"cat ci.log; exit 1\"\n",
    );
    let output = repo.run(&["check"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let categories = &repo.summary()["categories"];
    assert_eq!(categories["lint"]["failures"], 14, "{categories}");
    assert_eq!(categories["syntax"]["failures"], 1, "{categories}");
    assert_eq!(categories["tests"]["failures"], 3, "{categories}");
}

/// A check whose parser does not read its tool's output (ruff's, given to eslint's parser) fails
/// as one unparsed failure, and the summary says that its lines looked like diagnostics the
/// parser did not read, instead of quietly counting none. A parser that reads it says nothing.
#[test]
fn a_check_its_parser_does_not_understand_says_so_in_the_notes() {
    let run = "printf 'app/a.py:1:8: F401 [*] `os` imported but unused\\n\
               app/a.py:2:8: F401 [*] `sys` imported but unused\\n\
               app/b.py:9:1: E722 Do not use bare `except`\\nFound 3 errors.\\n'; exit 1";
    for (parser, noted) in [("eslint", true), ("ruff", false)] {
        let repo = Repo::new();
        repo.write("refine-loop.toml", &config(run, parser));
        let output = repo.run(&["check"]);
        assert_eq!(output.status.code(), Some(1), "{output:?}");
        let summary = repo.summary();
        let notes = summary["notes"].to_string();
        assert_eq!(
            notes.contains("read as eslint, but 3 of its 4 lines looked like diagnostics"),
            noted,
            "{parser}: {notes}"
        );
        if !noted {
            assert_eq!(summary["categories"]["lint"]["failures"], 3, "{parser}");
        }
    }
}

/// A check the environment failed (real outputs: `go vet` with no network, cargo offline, npx
/// without node_modules) is `infra`, not a failure of its category; one the code failed beside
/// a network warning stays the code's. (issue 35: infrastructure is not a finding.)
#[test]
fn a_check_the_environment_failed_is_infra_by_the_same_rule_for_every_tool() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    // (fixture printed by the check, its parser, its status)
    let table = [
        ("tests/fixtures/infra/go-vet-no-network.txt", "go", "infra"),
        ("tests/fixtures/infra/cargo-offline.txt", "clippy", "infra"),
        (
            "tests/fixtures/infra/cargo-no-network.txt",
            "clippy",
            "infra",
        ),
        ("tests/fixtures/infra/npx-no-modules.txt", "eslint", "infra"),
        (
            "tests/fixtures/infra/rustup-toolchain-missing.txt",
            "clippy",
            "infra",
        ),
        ("tests/fixtures/parsers/go/vet.txt", "go", "failed"),
    ];
    for (fixture, parser, status) in table {
        let repo = Repo::new();
        std::fs::copy(root.join(fixture), repo.join("out.txt")).unwrap();
        repo.write(
            "refine-loop.toml",
            &format!(
                "[[gate.check]]\nname = \"c\"\ncategory = \"lint\"\nrun = \"cat out.txt; exit 1\"\nparser = \"{parser}\"\n"
            ),
        );
        repo.commit("check");
        let output = repo.run(&["check"]);
        let summary = repo.summary();
        assert_eq!(
            summary["checks"][0]["status"], status,
            "{fixture}: {summary}\n{output:?}"
        );
        if status == "infra" {
            let reason = summary["checks"][0]["infra_reason"]
                .as_str()
                .unwrap_or_default();
            assert!(
                reason.starts_with("the environment failed it"),
                "{fixture}: {reason}"
            );
            assert_eq!(
                summary["categories"]["lint"]["failures"]
                    .as_u64()
                    .unwrap_or(0),
                0,
                "{fixture}: {summary}"
            );
            // What the parser read of the environment's words is no finding.
            assert_eq!(
                summary["checks"][0]["counts"]["error"], 0,
                "{fixture}: {summary}"
            );
        }
    }
}
