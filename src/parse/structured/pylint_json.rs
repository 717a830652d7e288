//! pylint's JSON: `--output-format=json` (an array of messages, `message-id`) and `json2` (an
//! object with `messages`, `messageId`, and `statistics`). Severity by the message type, as the
//! `pylint` parser maps it: error and fatal are errors, warning a warning, convention, refactor
//! and info notes. Columns as pylint gives them (0-based, as its text format prints them).
//! E0001 (syntax-error) is a syntax error.

use std::io::BufRead;

use serde::Deserialize;

use super::{DocumentReader, Found, Sink};
use crate::model::Severity;

#[derive(Debug)]
pub struct PylintJson;

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Document {
    /// json2: `{"messages": [...], "statistics": {...}}`.
    Json2 { messages: Vec<Message> },
    /// json: `[...]`.
    Json(Vec<Message>),
}

#[derive(Debug, Deserialize)]
struct Message {
    #[serde(rename = "type")]
    kind: String,
    path: String,
    line: Option<u32>,
    column: Option<u32>,
    #[serde(rename = "endLine")]
    end_line: Option<u32>,
    #[serde(rename = "endColumn")]
    end_column: Option<u32>,
    message: String,
    #[serde(alias = "messageId", rename = "message-id")]
    message_id: String,
}

impl DocumentReader for PylintJson {
    fn read(&self, document: &mut dyn BufRead, sink: &mut Sink<'_>) -> bool {
        let messages = match serde_json::from_reader::<_, Document>(document) {
            Ok(Document::Json2 { messages } | Document::Json(messages)) => messages,
            Err(_) => return false,
        };
        for message in messages {
            let severity = match message.kind.as_str() {
                "error" | "fatal" => Severity::Error,
                "warning" => Severity::Warning,
                _ => Severity::Note,
            };
            let category = (message.message_id == "E0001").then(|| "syntax".to_string());
            sink.push(Found {
                file: Some(message.path),
                line: message.line,
                column: message.column,
                end_line: message.end_line,
                end_column: message.end_column,
                severity: Some(severity),
                code: Some(message.message_id),
                message: message.message,
                category,
                ..Found::default()
            });
        }
        true
    }
}
