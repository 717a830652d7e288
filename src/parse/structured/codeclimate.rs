//! Code Climate issues as GitLab's Code Quality reads them (`ruff --output-format=gitlab`,
//! `hadolint -f gitlab_codeclimate`, `eslint-formatter-gitlab`, mypy-gitlab-code-quality...): a
//! JSON array of issues, or the Code Climate engine stream (issues separated by NUL bytes or
//! newlines). The code is `check_name`, the place `location.lines` or `location.positions`.
//! Severity: `info` is a note, `minor` a warning, `major`, `critical` and `blocker` errors.

use std::io::BufRead;

use serde::Deserialize;
use serde_json::Value;

use super::{DocumentReader, Found, Sink, position};
use crate::model::Severity;

#[derive(Debug)]
pub struct CodeClimate;

#[derive(Debug, Deserialize)]
struct Issue {
    description: String,
    check_name: Option<String>,
    severity: Option<String>,
    location: Location,
}

#[derive(Debug, Deserialize)]
struct Location {
    path: String,
    #[serde(default)]
    lines: Value,
    #[serde(default)]
    positions: Value,
}

impl DocumentReader for CodeClimate {
    fn read(&self, document: &mut dyn BufRead, sink: &mut Sink<'_>) -> bool {
        let mut text = Vec::new();
        if document.read_to_end(&mut text).is_err() {
            return false;
        }
        let issues: Vec<Issue> = if let Ok(issues) = serde_json::from_slice(&text) {
            issues
        } else {
            // The engine stream: one issue per NUL- or newline-separated piece.
            let mut issues = Vec::new();
            for piece in text.split(|b| *b == 0 || *b == b'\n') {
                if piece.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match serde_json::from_slice::<Issue>(piece) {
                    Ok(issue) => issues.push(issue),
                    Err(_) => return false,
                }
            }
            if issues.is_empty() {
                return false;
            }
            issues
        };
        for issue in issues {
            let (line, column, end_line, end_column) = place(&issue.location);
            let code = issue.check_name.filter(|c| !c.is_empty());
            let mut message = issue.description;
            // ruff repeats the code first: "F401: `os` imported but unused".
            if let Some(code) = &code
                && let Some(rest) = message.strip_prefix(&format!("{code}: "))
            {
                message = rest.to_string();
            }
            sink.push(Found {
                file: Some(issue.location.path),
                line,
                column,
                end_line,
                end_column,
                severity: Some(severity(issue.severity.as_deref())),
                code,
                message,
                ..Found::default()
            });
        }
        true
    }
}

/// Line, column, end line and end column: `positions` (`begin`/`end` with `line`, `column`),
/// else `lines` (`begin`, `end`).
fn place(location: &Location) -> (Option<u32>, Option<u32>, Option<u32>, Option<u32>) {
    let positions = &location.positions;
    if positions.is_object() {
        return (
            position(&positions["begin"]["line"]),
            position(&positions["begin"]["column"]),
            position(&positions["end"]["line"]),
            position(&positions["end"]["column"]),
        );
    }
    let lines = &location.lines;
    (
        position(&lines["begin"]),
        None,
        position(&lines["end"]),
        None,
    )
}

fn severity(severity: Option<&str>) -> Severity {
    match severity.map(str::to_ascii_lowercase).as_deref() {
        Some("info") => Severity::Note,
        Some("minor") => Severity::Warning,
        _ => Severity::Error,
    }
}
