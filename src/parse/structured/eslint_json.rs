//! ESLint `-f json`: an array of files, each with its messages; `-f json-with-metadata`: the same
//! array as `results`, beside the rules' `metadata`. Read as a stream into the few fields used (a
//! file's `source`, the metadata and the rest are skipped, not held).

use std::io::BufRead;

use serde::Deserialize;

use super::{DocumentReader, Found, Sink};
use crate::model::Severity;

#[derive(Debug)]
pub struct EslintJson;

/// `-f json-with-metadata`: `{"results": [...], "metadata": {...}}`.
#[derive(Debug, Deserialize)]
struct WithMetadata {
    results: Vec<FileResult>,
}

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
        // The document starts with `[` (json) or `{` (json-with-metadata); the session skipped
        // what came before (whitespace, a BOM), but the reader sees it again.
        let object = loop {
            let Ok(buffer) = document.fill_buf() else {
                return false;
            };
            let Some(&first) = buffer.first() else {
                return false;
            };
            if first.is_ascii_whitespace() || matches!(first, 0xEF | 0xBB | 0xBF) {
                document.consume(1);
                continue;
            }
            break first == b'{';
        };
        let files = if object {
            serde_json::from_reader::<_, WithMetadata>(document).map(|w| w.results)
        } else {
            serde_json::from_reader::<_, Vec<FileResult>>(document)
        };
        let Ok(files) = files else {
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
