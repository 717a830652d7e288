//! `jest --json` and `vitest run --reporter=json` (vitest writes jest's shape): one finding per
//! failing test, and one per test file that failed to load (a result with a `message` and no
//! failing test). Counts: `numPassedTests`, `numFailedTests`, `numPendingTests`.
//!
//! The code is the test's name as the human report prints it: its describe blocks and title
//! joined by ` › ` (jest) or ` > ` (vitest; its report has no `wasInterrupted` nor
//! `numRuntimeErrorTestSuites`); jest's file that failed to load has its heading, `Test suite
//! failed to run`, vitest's its path. The place is the first stack frame of the failure in the
//! user's code (`at fn (path:line:col)` or `at path:line:col`; not node_modules, not node's
//! internals), else the test's file without a line. The message is the failure's first line
//! (jest's plain `Error: ` dropped, as its report prints it). Every finding is an error.

use std::io::BufRead;

use serde::Deserialize;

use super::{DocumentReader, Found, Sink};
use crate::model::Severity;
use crate::parse::regex_parser::frames::{frame_place, is_user_frame};

#[derive(Debug)]
pub struct JestJson;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    num_passed_tests: u64,
    num_failed_tests: u64,
    #[serde(default)]
    num_pending_tests: u64,
    test_results: Vec<FileResult>,
    /// Only jest writes these.
    was_interrupted: Option<bool>,
    num_runtime_error_test_suites: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileResult {
    name: String,
    #[serde(default)]
    message: String,
    #[serde(default)]
    assertion_results: Vec<Assertion>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Assertion {
    #[serde(default)]
    ancestor_titles: Vec<String>,
    title: String,
    status: String,
    #[serde(default)]
    failure_messages: Vec<String>,
}

impl DocumentReader for JestJson {
    fn read(&self, document: &mut dyn BufRead, sink: &mut Sink<'_>) -> bool {
        let Ok(report) = serde_json::from_reader::<_, Report>(document) else {
            return false;
        };
        let jest =
            report.was_interrupted.is_some() || report.num_runtime_error_test_suites.is_some();
        let separator = if jest { " › " } else { " > " };
        for result in &report.test_results {
            let failed = result
                .assertion_results
                .iter()
                .any(|test| test.status == "failed");
            if !result.message.trim().is_empty() && !failed {
                let lines: Vec<&str> = result.message.lines().map(str::trim).collect();
                let (code, message) = if jest {
                    let heading = lines.iter().position(|l| l.starts_with('●'));
                    let code = heading.map(|i| lines[i].trim_start_matches(['●', ' ']).to_string());
                    let after = heading.map_or(0, |i| i + 1);
                    let message = lines[after..].iter().find(|l| !l.is_empty());
                    (code, message.map_or("", |m| m).to_string())
                } else {
                    let message = lines.iter().find(|l| !l.is_empty()).map_or("", |m| m);
                    (Some(result.name.clone()), message.to_string())
                };
                sink.push(self.found(&result.message, &result.name, code, message, sink));
            }
            for test in &result.assertion_results {
                if test.status != "failed" {
                    continue;
                }
                let failure = test.failure_messages.first().map_or("", String::as_str);
                let first = failure.lines().next().unwrap_or("").trim();
                let message = if jest {
                    first.strip_prefix("Error: ").unwrap_or(first)
                } else {
                    first
                };
                let mut names = test.ancestor_titles.clone();
                names.push(test.title.clone());
                let code = Some(names.join(separator));
                sink.push(self.found(failure, &result.name, code, message.to_string(), sink));
            }
        }
        let tests = sink.findings().tests_mut();
        tests.passed += report.num_passed_tests;
        tests.failed += report.num_failed_tests;
        tests.skipped += report.num_pending_tests;
        true
    }
}

impl JestJson {
    /// A finding at the failure's first frame in the user's code, else on `own_file`.
    fn found(
        &self,
        failure: &str,
        own_file: &str,
        code: Option<String>,
        message: String,
        sink: &Sink<'_>,
    ) -> Found {
        let (file, line, column) = user_frame(failure, sink)
            .map_or((own_file.to_string(), None, None), |(f, l, c)| {
                (f, Some(l), Some(c))
            });
        Found {
            file: Some(file),
            line,
            column,
            severity: Some(Severity::Error),
            code,
            message,
            ..Found::default()
        }
    }
}

/// The first `at … (path:line:col)` or `at path:line:col` frame in the user's code.
fn user_frame(failure: &str, sink: &Sink<'_>) -> Option<(String, u32, u32)> {
    failure.lines().find_map(|line| {
        let (path, line, column) = frame_place(line.trim_start().strip_prefix("at ")?)?;
        let path = path.strip_prefix("file://").unwrap_or(path);
        is_user_frame(path, sink.context).then(|| (path.to_string(), line, column))
    })
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::parse::{Findings, ParseContext};

    fn read(document: &str) -> Vec<String> {
        let context = ParseContext {
            target: PathBuf::from("/repo"),
            cwd_relative: String::new(),
            sample: false,
        };
        let mut findings = Findings::default();
        let mut sink = Sink {
            tool: "jest-json",
            context: &context,
            findings: &mut findings,
        };
        assert!(JestJson.read(&mut document.as_bytes(), &mut sink));
        findings
            .diagnostics()
            .iter()
            .map(|d| {
                format!(
                    "{}:{} {} | {}",
                    d.file.as_deref().unwrap_or("-"),
                    d.line.unwrap_or(0),
                    d.code.as_deref().unwrap_or("-"),
                    d.message
                )
            })
            .collect()
    }

    #[test]
    fn jest_and_vitest_names_places_and_suites() {
        let failure = "Error: boom\n    at helper (/repo/node_modules/x/i.js:1:1)\n    at Object.<anonymous> (/repo/t (1).test.js:4:9)";
        let jest = format!(
            r#"{{"numPassedTests": 1, "numFailedTests": 1, "numPendingTests": 0, "wasInterrupted": false,
            "testResults": [{{"name": "/repo/t (1).test.js", "message": "", "assertionResults": [
              {{"ancestorTitles": ["cart"], "title": "adds", "status": "failed", "failureMessages": [{failure:?}]}},
              {{"ancestorTitles": [], "title": "ok", "status": "passed", "failureMessages": []}}]}},
              {{"name": "/repo/b.test.js", "message": "  ● Test suite failed to run\n\n    Cannot find module 'x'", "assertionResults": []}}]}}"#
        );
        assert_eq!(
            read(&jest),
            [
                "t (1).test.js:4 cart › adds | boom",
                "b.test.js:0 Test suite failed to run | Cannot find module 'x'",
            ]
        );
        let vitest = jest
            .replace(r#""wasInterrupted": false,"#, "")
            .replace(r#"["cart"]"#, r#"["cart", "total"]"#);
        assert_eq!(
            read(&vitest)[0],
            "t (1).test.js:4 cart > total > adds | Error: boom"
        );
    }
}
