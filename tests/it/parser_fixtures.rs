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
/// test target; its human output prints them once).
fn cargo_truth(relative: &str) -> Vec<Finding> {
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
        // The human format shows rustc's error codes (error[E0308]); lint names it leaves out.
        let code = message["code"]["code"]
            .as_str()
            .filter(|code| code.starts_with('E'))
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
