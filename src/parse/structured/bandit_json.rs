//! bandit's `-f json`: `{"results": [...], "errors": [...], "metrics": {...}}`. Severity as the
//! `bandit` parser maps bandit's issue severity: HIGH and MEDIUM are errors, LOW and UNDEFINED
//! warnings. The column is `col_offset` (0-based, as the screen report prints it).

use std::io::BufRead;

use serde::Deserialize;

use super::{DocumentReader, Found, Sink};
use crate::model::Severity;

#[derive(Debug)]
pub struct BanditJson;

#[derive(Debug, Deserialize)]
struct Document {
    results: Vec<Issue>,
    /// Only bandit's document has it (with `results`).
    #[allow(dead_code)]
    metrics: serde_json::Value,
}

#[derive(Debug, Deserialize)]
struct Issue {
    filename: String,
    line_number: Option<u32>,
    col_offset: Option<u32>,
    end_col_offset: Option<u32>,
    issue_severity: String,
    issue_text: String,
    test_id: String,
}

impl DocumentReader for BanditJson {
    fn read(&self, document: &mut dyn BufRead, sink: &mut Sink<'_>) -> bool {
        let Ok(document) = serde_json::from_reader::<_, Document>(document) else {
            return false;
        };
        for issue in document.results {
            let severity = match issue.issue_severity.to_ascii_uppercase().as_str() {
                "HIGH" | "MEDIUM" => Severity::Error,
                _ => Severity::Warning,
            };
            sink.push(Found {
                file: Some(issue.filename),
                line: issue.line_number,
                column: issue.col_offset,
                end_column: issue.end_col_offset,
                severity: Some(severity),
                code: Some(issue.test_id),
                message: issue.issue_text,
                ..Found::default()
            });
        }
        true
    }
}
