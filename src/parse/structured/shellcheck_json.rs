//! ShellCheck's `-f json` (an array of comments) and `-f json1` (`{"comments": [...]}`), and
//! hadolint's `-f json`, which has the same shape: `file`, `line`, `column`, `level`, `code`,
//! `message`. A number as the code is ShellCheck's (`SC2086`); hadolint's codes are strings
//! (`DL3008`, and `SC…` for the ShellCheck checks it runs on `RUN`). Levels: `error` an error,
//! `warning` a warning, `info` and `style` notes.

use std::io::BufRead;

use serde::Deserialize;
use serde_json::Value;

use super::{DocumentReader, Found, Sink};
use crate::model::Severity;

#[derive(Debug)]
pub struct ShellcheckJson;

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Document {
    Comments { comments: Vec<Comment> },
    List(Vec<Comment>),
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Comment {
    file: String,
    line: Option<u32>,
    column: Option<u32>,
    end_line: Option<u32>,
    end_column: Option<u32>,
    level: String,
    code: Value,
    message: String,
}

impl DocumentReader for ShellcheckJson {
    fn read(&self, document: &mut dyn BufRead, sink: &mut Sink<'_>) -> bool {
        let comments = match serde_json::from_reader::<_, Document>(document) {
            Ok(Document::Comments { comments } | Document::List(comments)) => comments,
            Err(_) => return false,
        };
        for comment in comments {
            let code = match &comment.code {
                Value::Number(number) => Some(format!("SC{number}")),
                Value::String(code) if !code.is_empty() => Some(code.clone()),
                _ => None,
            };
            sink.push(Found {
                file: Some(comment.file),
                line: comment.line,
                column: comment.column,
                end_line: comment.end_line,
                end_column: comment.end_column,
                severity: Some(match comment.level.to_ascii_lowercase().as_str() {
                    "error" => Severity::Error,
                    "warning" => Severity::Warning,
                    _ => Severity::Note,
                }),
                code,
                message: comment.message,
                ..Found::default()
            });
        }
        true
    }
}
