//! Biome `--reporter=json` (and `json-pretty`): `{"summary": {...}, "diagnostics": [{"severity":
//! "warning", "message": "...", "category": "lint/style/useConst", "location": {"path":
//! "src/cart.js", "start": {"line": 20, "column": 3}, ...}}]}`. The code is the category, as the
//! default reporter prints it; a diagnostic about the whole file (`format`) has `0:0` as its start
//! and no place here. Severity: `error` and `fatal` errors (biome exits 1), `warning` a warning,
//! `info` and `hint` notes.

use std::io::BufRead;

use serde::Deserialize;
use serde_json::Value;

use super::{DocumentReader, Found, Sink, position};
use crate::model::Severity;

#[derive(Debug)]
pub struct BiomeJson;

#[derive(Debug, Deserialize)]
struct Report {
    summary: Value,
    diagnostics: Vec<Diagnostic>,
}

#[derive(Debug, Deserialize)]
struct Diagnostic {
    severity: Option<String>,
    #[serde(default)]
    message: String,
    category: Option<String>,
    #[serde(default)]
    location: Value,
}

impl DocumentReader for BiomeJson {
    fn read(&self, document: &mut dyn BufRead, sink: &mut Sink<'_>) -> bool {
        let Ok(report) = serde_json::from_reader::<_, Report>(document) else {
            return false;
        };
        if !report.summary.is_object() {
            return false;
        }
        for diagnostic in report.diagnostics {
            let location = &diagnostic.location;
            let number = |end: &str, name: &str| position(&location[end][name]).filter(|n| *n > 0);
            let line = number("start", "line");
            sink.push(Found {
                file: location["path"].as_str().map(str::to_string),
                line,
                column: line.and(number("start", "column")),
                end_line: line.and(number("end", "line")),
                end_column: line.and(number("end", "column")),
                severity: Some(match diagnostic.severity.as_deref() {
                    Some("warning") => Severity::Warning,
                    Some("info" | "information" | "hint") => Severity::Note,
                    _ => Severity::Error,
                }),
                code: diagnostic.category,
                message: diagnostic.message,
                ..Found::default()
            });
        }
        true
    }
}
