//! reviewdog's Diagnostic Format: rdjson (one `DiagnosticResult` document with `diagnostics`)
//! and rdjsonl (one `Diagnostic` per line), which ruff, golangci-lint's and many reviewdog
//! actions' tools print. The code is `code.value`; severity `ERROR`, `WARNING`, `INFO`, else the
//! document's, else an error.

use std::io::BufRead;

use serde::Deserialize;
use serde_json::Value;

use super::{DocumentReader, Found, Sink, position};
use crate::model::Severity;

#[derive(Debug)]
pub struct Rdjson;

#[derive(Debug, Deserialize)]
struct Document {
    diagnostics: Vec<Diagnostic>,
    #[serde(default)]
    severity: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Diagnostic {
    message: String,
    /// None for a diagnostic about no file in particular (biome's `format` ones); only in a
    /// whole document: an rdjsonl line needs one to be taken for a diagnostic.
    #[serde(default)]
    location: Option<Location>,
    #[serde(default)]
    severity: Option<String>,
    #[serde(default)]
    code: Value,
}

#[derive(Debug, Deserialize)]
struct Location {
    path: String,
    #[serde(default)]
    range: Value,
}

impl DocumentReader for Rdjson {
    fn read(&self, document: &mut dyn BufRead, sink: &mut Sink<'_>) -> bool {
        let mut text = Vec::new();
        if document.read_to_end(&mut text).is_err() {
            return false;
        }
        let (diagnostics, default) = match serde_json::from_slice::<Document>(&text) {
            Ok(document) => (document.diagnostics, document.severity),
            Err(_) => {
                let mut diagnostics = Vec::new();
                for line in text.split(|b| *b == b'\n') {
                    if line.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    match serde_json::from_slice::<Diagnostic>(line) {
                        Ok(diagnostic) if diagnostic.location.is_some() => {
                            diagnostics.push(diagnostic);
                        }
                        _ => return false,
                    }
                }
                if diagnostics.is_empty() {
                    return false;
                }
                (diagnostics, None)
            }
        };
        for diagnostic in diagnostics {
            let (file, range) = match diagnostic.location {
                Some(location) => (Some(location.path), location.range),
                None => (None, Value::Null),
            };
            let code = match &diagnostic.code {
                Value::String(code) => Some(code.clone()),
                code => code["value"].as_str().map(str::to_string),
            };
            let severity = diagnostic.severity.as_deref().or(default.as_deref());
            sink.push(Found {
                file,
                line: position(&range["start"]["line"]),
                column: position(&range["start"]["column"]),
                end_line: position(&range["end"]["line"]),
                end_column: position(&range["end"]["column"]),
                severity: Some(match severity.map(str::to_ascii_uppercase).as_deref() {
                    Some("WARNING") => Severity::Warning,
                    Some("INFO") => Severity::Note,
                    _ => Severity::Error,
                }),
                code: code.filter(|c| !c.is_empty()),
                message: diagnostic.message,
                ..Found::default()
            });
        }
        true
    }
}
