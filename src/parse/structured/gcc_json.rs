//! gcc's `-fdiagnostics-format=json` (gcc 10 to 13; `json-stderr` later): one JSON array per
//! translation unit, each on its own line of stderr. Every diagnostic, and every nested child (a
//! note), is one finding at its first location's caret, as the text format prints each on its own
//! line. The code is the warning option (`-Wformat=`); `fatal error` is an error.

use std::io::BufRead;

use serde::Deserialize;

use super::{DocumentReader, Found, Sink};
use crate::model::Severity;

#[derive(Debug)]
pub struct GccJson;

#[derive(Debug, Deserialize)]
struct Diagnostic {
    kind: String,
    message: String,
    #[serde(default)]
    option: Option<String>,
    #[serde(default)]
    locations: Vec<Location>,
    #[serde(default)]
    children: Vec<Diagnostic>,
}

#[derive(Debug, Deserialize)]
struct Location {
    caret: Point,
}

#[derive(Debug, Deserialize)]
struct Point {
    file: String,
    line: Option<u32>,
    column: Option<u32>,
}

impl DocumentReader for GccJson {
    fn read(&self, document: &mut dyn BufRead, sink: &mut Sink<'_>) -> bool {
        let mut read_any = false;
        let mut line = String::new();
        loop {
            line.clear();
            match document.read_line(&mut line) {
                Ok(0) => break,
                Ok(_) => {}
                Err(_) => return false,
            }
            if line.trim().is_empty() {
                continue;
            }
            let Ok(unit) = serde_json::from_str::<Vec<Diagnostic>>(&line) else {
                return false;
            };
            read_any = true;
            for diagnostic in &unit {
                push(diagnostic, sink);
            }
        }
        read_any
    }
}

fn push(diagnostic: &Diagnostic, sink: &mut Sink<'_>) {
    let caret = diagnostic.locations.first().map(|l| &l.caret);
    sink.push(Found {
        file: caret.map(|c| c.file.clone()),
        line: caret.and_then(|c| c.line),
        column: caret.and_then(|c| c.column),
        severity: Some(match diagnostic.kind.as_str() {
            "warning" => Severity::Warning,
            "note" => Severity::Note,
            _ => Severity::Error,
        }),
        code: diagnostic.option.clone(),
        message: diagnostic.message.clone(),
        ..Found::default()
    });
    for child in &diagnostic.children {
        push(child, sink);
    }
}
