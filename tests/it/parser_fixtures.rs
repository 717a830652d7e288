//! The built-in parsers against real output of real tools (tests/fixtures/parsers, made by its
//! regenerate.sh), compared with the same tools' machine-readable output on the same input.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use refine_loop::model::Severity;
use refine_loop::parse::{Catalogue, Findings, ParseContext, parse_bytes};

fn fixture(relative: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/parsers")
        .join(relative);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

fn parse(parser: &str, relative: &str) -> Findings {
    let catalogue = Catalogue::built_in().unwrap();
    let context = ParseContext {
        target: PathBuf::from("/fixture/lints"),
        cwd_relative: String::new(),
        sample: false,
    };
    parse_bytes(catalogue.get(parser).unwrap(), &context, &fixture(relative))
}

fn json_lines(relative: &str) -> Vec<serde_json::Value> {
    String::from_utf8(fixture(relative))
        .unwrap()
        .lines()
        .filter(|line| line.starts_with('{'))
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// A diagnostic reduced to what both formats carry.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Finding {
    file: String,
    line: u32,
    column: u32,
    severity: &'static str,
    code: Option<String>,
    message: String,
}

/// Unique diagnostics of cargo's JSON messages (cargo reports a lib's diagnostics again for its
/// test target; its human output prints them once), with the codes the short format shows.
fn cargo_truth(relative: &str) -> Vec<Finding> {
    cargo_truth_showing(relative, false)
}

/// [`cargo_truth`], with clippy's lint names when the format shows them (the default format's
/// help link names the lint).
fn cargo_truth_showing(relative: &str, lint_names: bool) -> Vec<Finding> {
    let mut unique = BTreeSet::new();
    for value in json_lines(relative) {
        if value["reason"] != "compiler-message" {
            continue;
        }
        let message = &value["message"];
        let severity = match message["level"].as_str().unwrap() {
            "error" => "error",
            "warning" => "warning",
            _ => continue,
        };
        let Some(span) = message["spans"]
            .as_array()
            .unwrap()
            .iter()
            .find(|span| span["is_primary"] == true)
        else {
            continue;
        };
        // The human format shows rustc's error codes (error[E0308]); rustc's lint names it leaves
        // out, clippy's too in the short format.
        let code = message["code"]["code"]
            .as_str()
            .filter(|code| code.starts_with('E') || (lint_names && code.starts_with("clippy::")))
            .map(str::to_string);
        unique.insert(Finding {
            file: span["file_name"].as_str().unwrap().to_string(),
            line: span["line_start"].as_u64().unwrap() as u32,
            column: span["column_start"].as_u64().unwrap() as u32,
            severity,
            code,
            message: message["message"].as_str().unwrap().to_string(),
        });
    }
    unique.into_iter().collect()
}

fn parsed(findings: &Findings) -> Vec<Finding> {
    let mut list: Vec<Finding> = findings
        .diagnostics()
        .iter()
        .map(|d| Finding {
            file: d.file.clone().unwrap(),
            line: d.line.unwrap(),
            column: d.column.unwrap(),
            severity: d.severity.as_str(),
            code: d.code.clone(),
            message: d.message.clone(),
        })
        .collect();
    list.sort();
    list
}

/// Same findings, field for field; the human message may add the primary label after ": ".
fn assert_same(parsed: &[Finding], truth: &[Finding], name: &str) {
    let key = |f: &Finding| (f.file.clone(), f.line, f.column, f.severity, f.code.clone());
    let parsed_keys: Vec<_> = parsed.iter().map(key).collect();
    let mut truth_keys: Vec<_> = truth.iter().map(key).collect();
    truth_keys.sort();
    let mut parsed_sorted = parsed_keys.clone();
    parsed_sorted.sort();
    assert_eq!(parsed_sorted, truth_keys, "{name}: findings differ");
    for finding in truth {
        let twin = parsed.iter().find(|p| key(p) == key(finding)).unwrap();
        assert!(
            twin.message.starts_with(&finding.message),
            "{name}: {:?} does not start with {:?}",
            twin.message,
            finding.message
        );
    }
}

#[test]
fn clippy_short_matches_cargo_json() {
    // (human, json, errors, warnings, warnings cargo says it printed)
    let table = [
        ("clippy/warnings.txt", "clippy/warnings.json", 0, 7, Some(7)),
        ("clippy/deny.txt", "clippy/deny.json", 7, 0, None),
        ("clippy/broken.txt", "clippy/broken.json", 2, 1, Some(1)),
        ("clippy/paths.txt", "clippy/paths.json", 0, 6, Some(6)),
    ];
    for (human, json, errors, warnings, reported) in table {
        let findings = parse("clippy", human);
        let truth = cargo_truth(json);
        assert_same(&parsed(&findings), &truth, human);
        assert_eq!(findings.counts.error, errors, "{human}");
        assert_eq!(findings.counts.warning, warnings, "{human}");
        // What cargo says it printed agrees with what was parsed.
        assert_eq!(
            findings.expected.and_then(|e| e.warning),
            reported,
            "{human}"
        );
        assert_eq!(findings.expected.and_then(|e| e.error), None, "{human}");
    }
}

/// The diagnostics a human output printed, repeats included: the lines of the short format, and
/// the first line of each in the default format (not cargo's own `warning: `name` (lib)
/// generated …`, `error: could not compile …`, `warning: build failed …`).
fn printed(relative: &str) -> usize {
    let short = regex::Regex::new(r"^[^\s:][^:]*:\d+:\d+: (?:error|warning)").unwrap();
    let cargo_own = [
        "warning: `",
        "error: could not compile",
        "warning: build failed",
    ];
    String::from_utf8(fixture(relative))
        .unwrap()
        .lines()
        .filter(|line| {
            let first_line = (line.starts_with("warning") || line.starts_with("error"))
                && !cargo_own.iter().any(|own| line.starts_with(own));
            first_line || short.is_match(line)
        })
        .count()
}

/// A workspace whose files several targets compile (tests/fixtures/crates/ledger: lib and lib
/// test, a module of the lib and the bin, tests sharing `mod common;`, a macro expanded three
/// times). cargo drops a repeat only when its text is the same: in the default format a lint's
/// first diagnostic in each compilation has a note the others lack, and a macro's diagnostic
/// names its expansion site, so some are printed more than once. Every format counts each
/// diagnostic once: as many, and the same, as cargo's JSON has unique ones.
#[test]
fn cargo_human_formats_count_each_diagnostic_once_across_targets() {
    // (parser, human, json, lint names shown, errors, warnings, printed by the human output)
    let table = [
        ("clippy", "targets.txt", "targets.json", false, 0, 43, 43),
        (
            "clippy",
            "targets-human.txt",
            "targets.json",
            true,
            0,
            43,
            51,
        ),
        (
            "clippy",
            "targets-deny.txt",
            "targets-deny.json",
            false,
            30,
            0,
            30,
        ),
        (
            "clippy",
            "targets-human-deny.txt",
            "targets-deny.json",
            true,
            30,
            0,
            35,
        ),
        (
            "rustc",
            "targets-check.txt",
            "targets-check.json",
            false,
            0,
            3,
            5,
        ),
    ];
    for (parser, human, json, lint_names, errors, warnings, repeated) in table {
        let (human, json) = (format!("clippy/{human}"), format!("clippy/{json}"));
        let findings = parse(parser, &human);
        let truth = cargo_truth_showing(&json, lint_names);
        // The fixture is what it claims: the JSON reports shared lints once per target, and the
        // default format printed some of them again.
        let reported = json_lines(&json)
            .iter()
            .filter(|value| value["reason"] == "compiler-message")
            .count();
        assert!(reported > truth.len(), "{json}: no diagnostic repeats");
        assert_eq!(printed(&human), repeated, "{human}");
        assert_same(&parsed(&findings), &truth, &human);
        let unique = |level: &str| truth.iter().filter(|f| f.severity == level).count() as u64;
        assert_eq!(
            (unique("error"), unique("warning")),
            (errors, warnings),
            "{json}"
        );
        assert_eq!(findings.counts.error, errors, "{human}");
        assert_eq!(findings.counts.warning, warnings, "{human}");
        // cargo's "generated N warnings (M duplicates)", less the repeats it printed.
        assert_eq!(
            findings.expected.and_then(|e| e.warning),
            (warnings > 0).then_some(warnings),
            "{human}"
        );
    }
}

#[test]
fn cargo_test_matches_libtest_json() {
    let findings = parse("cargo-test", "cargo-test/failing.txt");
    let mut truth = Vec::new();
    // One suite per test binary (unit tests, then doc tests): counts add up.
    let mut counts = (0, 0, 0);
    for value in json_lines("cargo-test/failing.json") {
        match (value["type"].as_str(), value["event"].as_str()) {
            (Some("test"), Some("failed")) => {
                // The panic site, from the captured stdout libtest reports with the failure.
                let stdout = value["stdout"].as_str().unwrap();
                let site = stdout
                    .split(" panicked at ")
                    .nth(1)
                    .and_then(|rest| rest.lines().next())
                    .unwrap()
                    .trim_end_matches(':');
                let mut parts = site.rsplitn(3, ':');
                let column: u32 = parts.next().unwrap().parse().unwrap();
                let line: u32 = parts.next().unwrap().parse().unwrap();
                truth.push(Finding {
                    file: parts.next().unwrap().to_string(),
                    line,
                    column,
                    severity: "error",
                    code: Some(value["name"].as_str().unwrap().to_string()),
                    message: "test failed".to_string(),
                });
            }
            (Some("suite"), Some("failed" | "ok")) => {
                counts.0 += value["passed"].as_u64().unwrap();
                counts.1 += value["failed"].as_u64().unwrap();
                counts.2 += value["ignored"].as_u64().unwrap();
            }
            _ => {}
        }
    }
    truth.sort();
    assert_eq!(truth.len(), 3);
    assert_same(&parsed(&findings), &truth, "cargo-test");
    let tests = findings.tests.unwrap();
    assert_eq!((tests.passed, tests.failed, tests.skipped), counts);
    assert_eq!(counts, (1, 3, 1));
    assert_eq!(findings.expected.unwrap().error, Some(3));
    assert!(
        findings
            .diagnostics()
            .iter()
            .all(|d| d.severity == Severity::Error)
    );
}
