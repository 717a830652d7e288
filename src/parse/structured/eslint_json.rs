//! ESLint `-f json`: an array of files, each with its messages.

use serde_json::Value;

use super::{DocumentReader, Found, Sink, position};
use crate::model::Severity;

#[derive(Debug)]
pub struct EslintJson;

impl DocumentReader for EslintJson {
    fn read(&self, document: &[u8], sink: &mut Sink<'_>) -> bool {
        let Ok(Value::Array(files)) = serde_json::from_slice::<Value>(document) else {
            return false;
        };
        if !files
            .iter()
            .all(|f| f["filePath"].is_string() && f["messages"].is_array())
        {
            return false;
        }
        for file in &files {
            for message in file["messages"].as_array().into_iter().flatten() {
                sink.push(Found {
                    file: file["filePath"].as_str().map(str::to_string),
                    line: position(&message["line"]),
                    column: position(&message["column"]),
                    end_line: position(&message["endLine"]),
                    end_column: position(&message["endColumn"]),
                    severity: Some(match message["severity"].as_u64() {
                        Some(1) => Severity::Warning,
                        _ => Severity::Error,
                    }),
                    code: message["ruleId"].as_str().map(str::to_string),
                    message: message["message"].as_str().unwrap_or_default().to_string(),
                });
            }
        }
        true
    }
}
