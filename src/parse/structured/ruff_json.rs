//! ruff's own JSON: `--output-format=json` (an array of messages) and `json-lines` (one message
//! per line). Every message is an error, as `ruff check` fails on each; `invalid-syntax` is a
//! syntax error, as the `ruff` parser files it.

use std::io::BufRead;

use serde::Deserialize;

use super::{DocumentReader, Found, Sink};
use crate::model::Severity;

#[derive(Debug)]
pub struct RuffJson;

#[derive(Debug, Deserialize)]
struct Message {
    code: Option<String>,
    filename: String,
    message: String,
    location: Option<Point>,
    end_location: Option<Point>,
}

#[derive(Debug, Deserialize)]
struct Point {
    row: u32,
    column: u32,
}

impl DocumentReader for RuffJson {
    fn read(&self, document: &mut dyn BufRead, sink: &mut Sink<'_>) -> bool {
        let mut text = Vec::new();
        if document.read_to_end(&mut text).is_err() {
            return false;
        }
        let messages = match serde_json::from_slice::<Vec<Message>>(&text) {
            Ok(messages) => messages,
            Err(_) => {
                let lines = text.split(|b| *b == b'\n');
                let parsed: Result<Vec<Message>, _> = lines
                    .filter(|line| !line.iter().all(u8::is_ascii_whitespace))
                    .map(serde_json::from_slice)
                    .collect();
                match parsed {
                    Ok(messages) if !messages.is_empty() => messages,
                    _ => return false,
                }
            }
        };
        for message in messages {
            let category =
                (message.code.as_deref() == Some("invalid-syntax")).then(|| "syntax".to_string());
            sink.push(Found {
                file: Some(message.filename),
                line: message.location.as_ref().map(|p| p.row),
                column: message.location.as_ref().map(|p| p.column),
                end_line: message.end_location.as_ref().map(|p| p.row),
                end_column: message.end_location.as_ref().map(|p| p.column),
                severity: Some(Severity::Error),
                code: message.code.or_else(|| Some("invalid-syntax".into())),
                message: message.message,
                category,
                ..Found::default()
            });
        }
        true
    }
}
