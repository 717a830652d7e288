//! SARIF 2.1.0: every run's results, at their first physical location.

use std::collections::HashMap;

use serde_json::Value;

use super::{DocumentReader, Found, Sink, position};
use crate::model::Severity;

#[derive(Debug)]
pub struct Sarif;

impl DocumentReader for Sarif {
    fn read(&self, document: &[u8], sink: &mut Sink<'_>) -> bool {
        let Ok(log) = serde_json::from_slice::<Value>(document) else {
            return false;
        };
        let Some(runs) = log["runs"].as_array() else {
            return false;
        };
        if !log["version"].as_str().is_some_and(|v| v.starts_with("2.")) {
            return false;
        }
        for run in runs {
            // A rule's default level applies to results that give none.
            let rule_levels: HashMap<&str, &str> = run["tool"]["driver"]["rules"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|rule| {
                    Some((
                        rule["id"].as_str()?,
                        rule["defaultConfiguration"]["level"].as_str()?,
                    ))
                })
                .collect();
            for result in run["results"].as_array().into_iter().flatten() {
                if matches!(result["kind"].as_str(), Some("pass" | "notApplicable")) {
                    continue;
                }
                let rule = result["ruleId"]
                    .as_str()
                    .or_else(|| result["rule"]["id"].as_str());
                let level = result["level"]
                    .as_str()
                    .or_else(|| rule.and_then(|id| rule_levels.get(id).copied()))
                    .unwrap_or("warning");
                let location = &result["locations"][0]["physicalLocation"];
                let region = &location["region"];
                sink.push(Found {
                    file: location["artifactLocation"]["uri"]
                        .as_str()
                        .map(file_of_uri),
                    line: position(&region["startLine"]),
                    column: position(&region["startColumn"]),
                    end_line: position(&region["endLine"]),
                    end_column: position(&region["endColumn"]),
                    severity: Some(match level {
                        "error" => Severity::Error,
                        "note" | "none" => Severity::Note,
                        _ => Severity::Warning,
                    }),
                    code: rule.map(str::to_string),
                    message: result["message"]["text"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                });
            }
        }
        true
    }
}

/// A path from a SARIF URI: `file://` dropped, percent escapes decoded.
fn file_of_uri(uri: &str) -> String {
    let path = uri
        .strip_prefix("file://")
        .map_or(uri, |rest| rest.strip_prefix("localhost").unwrap_or(rest));
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let hex = bytes
            .get(index + 1..index + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[index], hex) {
            (b'%', Some(byte)) => {
                decoded.push(byte);
                index += 3;
            }
            (byte, _) => {
                decoded.push(byte);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris() {
        let table = [
            ("file:///repo/src/a%20b.rs", "/repo/src/a b.rs"),
            ("src/a.rs", "src/a.rs"),
            ("file://localhost/x", "/x"),
            ("bad%zz", "bad%zz"),
            ("end%", "end%"),
        ];
        for (uri, expected) in table {
            assert_eq!(file_of_uri(uri), expected, "{uri}");
        }
    }
}
