//! pyright's `--outputjson`: a document whose `generalDiagnostics` are the findings. `range.start`
//! is 0-based (line and character) where the text format prints 1-based; `rule` is the code
//! (absent for a syntax error); severity `information` is a note.

use std::io::BufRead;

use serde::Deserialize;

use super::{DocumentReader, Found, Sink};
use crate::model::Severity;

#[derive(Debug)]
pub struct PyrightJson;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Document {
    general_diagnostics: Vec<Diagnostic>,
}

#[derive(Debug, Deserialize)]
struct Diagnostic {
    file: String,
    severity: String,
    message: String,
    #[serde(default)]
    range: Option<Range>,
    #[serde(default)]
    rule: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Range {
    start: Position,
    end: Position,
}

#[derive(Debug, Deserialize)]
struct Position {
    line: u32,
    character: u32,
}

impl DocumentReader for PyrightJson {
    fn read(&self, document: &mut dyn BufRead, sink: &mut Sink<'_>) -> bool {
        let Ok(document) = serde_json::from_reader::<_, Document>(document) else {
            return false;
        };
        for diagnostic in document.general_diagnostics {
            let range = diagnostic.range.as_ref();
            sink.push(Found {
                file: Some(diagnostic.file),
                line: range.map(|r| r.start.line + 1),
                column: range.map(|r| r.start.character + 1),
                end_line: range.map(|r| r.end.line + 1),
                end_column: range.map(|r| r.end.character + 1),
                severity: Some(match diagnostic.severity.as_str() {
                    "warning" => Severity::Warning,
                    "information" => Severity::Note,
                    _ => Severity::Error,
                }),
                code: diagnostic.rule.filter(|r| !r.is_empty()),
                message: diagnostic.message,
                ..Found::default()
            });
        }
        true
    }
}
