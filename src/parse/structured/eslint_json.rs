//! ESLint `-f json`: an array of files, each with its messages. Read as a stream into the few
//! fields used (a file's `source` and the rest are skipped, not held).

use std::io::BufRead;

use serde::Deserialize;

use super::{DocumentReader, Found, Sink};
use crate::model::Severity;

#[derive(Debug)]
pub struct EslintJson;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileResult {
    file_path: String,
    messages: Vec<Message>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Message {
    rule_id: Option<String>,
    #[serde(default)]
    severity: u8,
    #[serde(default)]
    message: String,
    line: Option<u32>,
    column: Option<u32>,
    end_line: Option<u32>,
    end_column: Option<u32>,
}

impl DocumentReader for EslintJson {
    fn read(&self, document: &mut dyn BufRead, sink: &mut Sink<'_>) -> bool {
        let Ok(files) = serde_json::from_reader::<_, Vec<FileResult>>(document) else {
            return false;
        };
        for file in files {
            for message in file.messages {
                sink.push(Found {
                    file: Some(file.file_path.clone()),
                    line: message.line,
                    column: message.column,
                    end_line: message.end_line,
                    end_column: message.end_column,
                    severity: Some(if message.severity == 1 {
                        Severity::Warning
                    } else {
                        Severity::Error
                    }),
                    code: message.rule_id,
                    message: message.message,
                    ..Found::default()
                });
            }
        }
        true
    }
}
