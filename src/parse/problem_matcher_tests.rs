//! The runner's matching rules, case by case.

use std::path::PathBuf;

use super::compile_matchers;
use crate::parse::{ParseContext, Parser, parse_bytes};

fn run(json: &str, input: &str) -> Vec<String> {
    let matchers = compile_matchers("m.json", json).unwrap();
    let context = ParseContext {
        target: PathBuf::from("/repo"),
        cwd_relative: String::new(),
        sample: false,
    };
    let findings = parse_bytes(&matchers[0] as &dyn Parser, &context, input.as_bytes());
    findings
        .diagnostics()
        .iter()
        .map(|d| {
            format!(
                "{}:{}:{} {} {} {}",
                d.file.as_deref().unwrap_or("-"),
                d.line.map_or("-".into(), |n| n.to_string()),
                d.column.map_or("-".into(), |n| n.to_string()),
                d.severity.as_str(),
                d.code.as_deref().unwrap_or("-"),
                d.message
            )
        })
        .collect()
}

const LOOPING: &str = r#"{"problemMatcher": [{"owner": "stylish", "pattern": [
  {"regexp": "^([^\\s].*)$", "file": 1},
  {"regexp": "^\\s+(\\d+):(\\d+)\\s+(error|warning)\\s+(.*)\\s\\s+(.*)$",
   "line": 1, "column": 2, "severity": 3, "message": 4, "code": 5, "loop": true}]}]}"#;

#[test]
fn a_looping_last_pattern_reports_every_line_under_the_first() {
    let input = "/repo/a.js\n  1:7  error  x unused  no-unused-vars\n  2:1  warning  console  no-console\n\nb.js\n  9:9  error  bad  rule\nnot indented\n  3:3  error  orphan  rule\n";
    assert_eq!(
        run(LOOPING, input),
        [
            "a.js:1:7 error no-unused-vars x unused",
            "a.js:2:1 warning no-console console",
            "b.js:9:9 error rule bad",
            // Any unindented line starts a new file for the loop, as the runner reads it.
            "not indented:3:3 error rule orphan",
        ]
    );
}

#[test]
fn patterns_must_match_consecutive_lines() {
    let json = r#"{"problemMatcher": [{"owner": "two", "severity": "warning", "pattern": [
      {"regexp": "^FILE (\\S+)$", "file": 1},
      {"regexp": "^MSG (.+)$", "message": 1}]}]}"#;
    assert_eq!(
        run(
            json,
            "FILE a.c\nMSG one\nMSG two\nFILE b.c\nnoise\nMSG three\nFILE c.c\nMSG four\n"
        ),
        ["a.c:-:- warning - one", "c.c:-:- warning - four"]
    );
}

#[test]
fn an_earlier_value_wins_and_from_path_anchors_the_file() {
    let json = r#"{"problemMatcher": [{"owner": "anchored", "pattern": [
      {"regexp": "^In (\\S+) at (\\S+)$", "fromPath": 1, "file": 2},
      {"regexp": "^(\\S+): (.+)$", "code": 1, "message": 2}]}]}"#;
    assert_eq!(
        run(json, "In sub/Cargo.toml at src/x.rs\nE1: broken\n"),
        ["sub/src/x.rs:-:- error E1 broken"]
    );
}

#[test]
fn default_severity_and_notice() {
    let json = r#"{"problemMatcher": [{"owner": "one", "severity": "warning", "pattern": [
      {"regexp": "^(notice|error)?:? ?(.+)$", "severity": 1, "message": 2}]}]}"#;
    assert_eq!(
        run(json, "notice: n\nerror: e\nplain\n"),
        ["-:-:- note - n", "-:-:- error - e", "-:-:- warning - plain"]
    );
}

#[test]
fn ecmascript_escapes_keep_their_meaning() {
    // `\>` is a plain `>` in ECMAScript (the tsc matcher uses it), a word boundary in the crate.
    let json = r#"{"problemMatcher": [{"owner": "t", "pattern": [
      {"regexp": "^(?:\\s+\\d+\\>)?(\\S+): (.+)$", "file": 1, "message": 2}]}]}"#;
    assert_eq!(run(json, "  12>a.ts: m\n"), ["a.ts:-:- error - m"]);
}

#[test]
fn bad_matchers_name_the_pattern_and_the_reason() {
    let table = [
        (
            r#"{"problemMatcher": [{"owner": "x", "pattern": [{"regexp": "a", "message": 0, "loop": true}, {"regexp": "b", "message": 0}]}]}"#,
            "problemMatcher[0].pattern[0]: only the last pattern",
        ),
        (
            r#"{"problemMatcher": [{"owner": "x", "pattern": [{"regexp": "(a)", "file": 1}]}]}"#,
            "problemMatcher[0].pattern: at least one pattern must set `message`",
        ),
        (
            r#"{"problemMatcher": [{"owner": "x", "pattern": [{"regexp": "(a)", "file": 1}, {"regexp": "(b)", "file": 1, "message": 1, "loop": true}]}]}"#,
            "problemMatcher[0].pattern[1]: the property `file` is set twice",
        ),
        (
            r#"{"problemMatcher": [{"owner": "x", "pattern": [{"regexp": "(?<=a)b", "message": 0}]}]}"#,
            "problemMatcher[0].pattern[0].regexp: the regex crate cannot compile /(?<=a)b/",
        ),
        (
            r#"{"problemMatcher": [{"owner": "x", "pattern": [{"regexp": "(a)\\1", "message": 1}]}]}"#,
            "problemMatcher[0].pattern[0].regexp: the regex crate cannot compile",
        ),
        (
            r#"{"problemMatcher": [{"owner": "", "pattern": [{"regexp": "a", "message": 0}]}]}"#,
            "problemMatcher[0].owner: must not be empty",
        ),
        (
            r#"{"problemMatcher": [{"owner": "x", "severity": "fatal", "pattern": [{"regexp": "a", "message": 0}]}]}"#,
            "problemMatcher[0].severity: \"fatal\" is not a severity",
        ),
        ("{\"problemMatcher\": [", "m.json: (json, line 1 column 20)"),
    ];
    for (json, expected) in table {
        let error = compile_matchers("m.json", json).unwrap_err().to_string();
        assert!(error.contains(expected), "{expected:?} not in {error}");
    }
}

#[test]
fn ascii_classes_as_in_ecmascript() {
    // (pattern, line, matches)
    let table = [
        (r"^(\\w+)$", "abc_1", true),
        (r"^(\\w+)$", "ab\u{ef}", false),
        (r"^(\\d+)$", "\u{663}", false),
        (r"^([\\w.]+)$", "a.b", true),
        (r"^([^\\d]+)$", "ab", true),
        (r"^(a\\b)", "a b", true),
        (r"^\\s(x)$", "\u{a0}x", true),
    ];
    for (pattern, line, matches) in table {
        let json = format!(
            r#"{{"problemMatcher": [{{"owner": "t", "pattern": [{{"regexp": "{pattern}", "message": 1}}]}}]}}"#
        );
        assert_eq!(
            !run(&json, line).is_empty(),
            matches,
            "{pattern} on {line:?}"
        );
    }
}

#[test]
fn unknown_severities_and_blank_messages_are_dropped_as_by_the_runner() {
    let json = r#"{"problemMatcher": [{"owner": "s", "pattern": [
      {"regexp": "^(\\w+): (.*)$", "severity": 1, "message": 2}]}]}"#;
    assert_eq!(
        run(json, "info: dropped\nwarning:    \nERROR: kept\n"),
        ["-:-:- error - kept"]
    );
}
