//! markdownlint's JSON: `markdownlint --json` (markdownlint-cli) and markdownlint-cli2's
//! `markdownlint-cli2-formatter-json`, the same array of results:
//! `[{"fileName": "docs/guide.md", "lineNumber": 6, "ruleNames": ["MD013", "line-length"],
//! "ruleDescription": "Line length", "errorDetail": "Expected: 80; Actual: 125", "errorContext":
//! null, "errorRange": [81, 45], "severity": "error"}]`. The code is the rule's number (the first
//! name), the column the start of `errorRange` (none without a range, as the text output prints
//! none), the message the description followed by the detail and context as the text output
//! prints them. Severity: `error` an error (markdownlint exits 1), `warning` a warning; results
//! without one (before markdownlint-cli 0.45) are errors.

use std::io::BufRead;

use serde::Deserialize;
use serde_json::Value;

use super::{DocumentReader, Found, Sink, position};
use crate::model::Severity;

#[derive(Debug)]
pub struct MarkdownlintJson;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Problem {
    file_name: String,
    line_number: Option<u32>,
    rule_names: Vec<String>,
    #[serde(default)]
    rule_description: String,
    error_detail: Option<String>,
    error_context: Option<String>,
    #[serde(default)]
    error_range: Value,
    severity: Option<String>,
}

impl DocumentReader for MarkdownlintJson {
    fn read(&self, document: &mut dyn BufRead, sink: &mut Sink<'_>) -> bool {
        let Ok(results) = serde_json::from_reader::<_, Vec<Problem>>(document) else {
            return false;
        };
        for result in results {
            let mut message = result.rule_description;
            if let Some(detail) = result.error_detail.filter(|d| !d.is_empty()) {
                message.push_str(&format!(" [{detail}]"));
            }
            if let Some(context) = result.error_context.filter(|c| !c.is_empty()) {
                message.push_str(&format!(" [Context: \"{context}\"]"));
            }
            sink.push(Found {
                file: Some(result.file_name),
                line: result.line_number,
                column: position(&result.error_range[0]),
                severity: Some(match result.severity.as_deref() {
                    Some("warning") => Severity::Warning,
                    _ => Severity::Error,
                }),
                code: result.rule_names.into_iter().next(),
                message,
                ..Found::default()
            });
        }
        true
    }
}
