//! mypy's `-O json` (mypy 1.11 and later): one JSON object a line, each an error or a note of
//! its own; the notes that follow an error at its place are its `hint` (the finding's body).
//! Columns 1-based, as `--show-column-numbers` prints them (mypy's JSON counts from 0); a line
//! or column of -1 (a file-level message) is none. The `syntax` code is a syntax error.

use std::io::BufRead;

use serde::Deserialize;

use super::{DocumentReader, Found, Sink};
use crate::model::Severity;

#[derive(Debug)]
pub struct MypyJson;

#[derive(Debug, Deserialize)]
struct Message {
    file: String,
    line: i64,
    column: i64,
    end_line: Option<i64>,
    end_column: Option<i64>,
    message: String,
    hint: Option<String>,
    code: Option<String>,
    severity: String,
}

/// A position mypy gives, if it is one (-1 is none).
fn position(value: i64, offset: i64) -> Option<u32> {
    (value >= 0)
        .then(|| u32::try_from(value + offset).ok())
        .flatten()
}

impl DocumentReader for MypyJson {
    fn read(&self, document: &mut dyn BufRead, sink: &mut Sink<'_>) -> bool {
        let mut messages = Vec::new();
        for line in document.lines() {
            let Ok(line) = line else {
                return false;
            };
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Message>(&line) {
                Ok(message) => messages.push(message),
                Err(_) => return false,
            }
        }
        if messages.is_empty() {
            return false;
        }
        for message in messages {
            let severity = match message.severity.as_str() {
                "note" => Severity::Note,
                "warning" => Severity::Warning,
                _ => Severity::Error,
            };
            let category = (message.code.as_deref() == Some("syntax")).then(|| "syntax".into());
            let line = position(message.line, 0).filter(|&line| line > 0);
            sink.push(Found {
                file: Some(message.file),
                line,
                column: line.and(position(message.column, 1)),
                end_line: message.end_line.and_then(|l| position(l, 0)),
                end_column: message.end_column.and_then(|c| position(c, 0)),
                severity: Some(severity),
                code: message.code,
                message: message.message,
                body: message.hint,
                category,
            });
        }
        true
    }
}
