//! stylelint `-f json`: an array of sources, each with its `warnings` (the problems, a file that
//! does not parse among them as `CssSyntaxError`):
//! `[{"source": "/repo/a.css", "warnings": [{"line": 6, "column": 3, "rule":
//! "property-no-unknown", "severity": "error", "text": "Unknown property \"colr\"
//! (property-no-unknown)"}], ...}]`. The message is `text` without the ` (rule)` stylelint adds to
//! it, as its default formatter prints it. Severity: `error` an error (stylelint exits 2),
//! `warning` a warning.

use std::io::BufRead;

use serde::Deserialize;

use super::{DocumentReader, Found, Sink};
use crate::model::Severity;

#[derive(Debug)]
pub struct StylelintJson;

#[derive(Debug, Deserialize)]
struct Source {
    source: Option<String>,
    warnings: Vec<Warning>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Warning {
    line: Option<u32>,
    column: Option<u32>,
    end_line: Option<u32>,
    end_column: Option<u32>,
    rule: Option<String>,
    severity: Option<String>,
    #[serde(default)]
    text: String,
}

impl DocumentReader for StylelintJson {
    fn read(&self, document: &mut dyn BufRead, sink: &mut Sink<'_>) -> bool {
        let Ok(sources) = serde_json::from_reader::<_, Vec<Source>>(document) else {
            return false;
        };
        for source in sources {
            for warning in source.warnings {
                let mut message = warning.text;
                if let Some(rule) = &warning.rule
                    && let Some(text) = message.strip_suffix(&format!(" ({rule})"))
                {
                    message = text.to_string();
                }
                sink.push(Found {
                    file: source.source.clone(),
                    line: warning.line,
                    column: warning.column,
                    end_line: warning.end_line,
                    end_column: warning.end_column,
                    severity: Some(match warning.severity.as_deref() {
                        Some("warning") => Severity::Warning,
                        _ => Severity::Error,
                    }),
                    code: warning.rule.filter(|r| !r.is_empty()),
                    message,
                    ..Found::default()
                });
            }
        }
        true
    }
}
