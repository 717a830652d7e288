//! SARIF 2.1.0: every run's results, at their first physical location. Read as a stream into the
//! fields used; everything else in the log is skipped, not held.

use std::io::BufRead;

use serde::Deserialize;

use super::{DocumentReader, Found, Sink};
use crate::model::Severity;

#[derive(Debug)]
pub struct Sarif;

#[derive(Debug, Deserialize)]
struct Log {
    version: String,
    #[serde(default)]
    runs: Vec<Run>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Run {
    tool: Tool,
    results: Vec<SarifResult>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Tool {
    driver: Driver,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Driver {
    rules: Vec<Rule>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Rule {
    id: Option<String>,
    default_configuration: Option<Configuration>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Configuration {
    level: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct SarifResult {
    rule_id: Option<String>,
    rule_index: Option<usize>,
    rule: Option<RuleReference>,
    level: Option<String>,
    kind: Option<String>,
    message: MessageText,
    locations: Vec<Location>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RuleReference {
    id: Option<String>,
    index: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct MessageText {
    text: Option<String>,
    id: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Location {
    physical_location: Option<PhysicalLocation>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: Option<ArtifactLocation>,
    region: Option<Region>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ArtifactLocation {
    uri: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Region {
    start_line: Option<u32>,
    start_column: Option<u32>,
    end_line: Option<u32>,
    end_column: Option<u32>,
}

impl DocumentReader for Sarif {
    fn read(&self, document: &mut dyn BufRead, sink: &mut Sink<'_>) -> bool {
        let Ok(log) = serde_json::from_reader::<_, Log>(document) else {
            return false;
        };
        if !log.version.starts_with("2.") {
            return false;
        }
        for run in log.runs {
            let rules = &run.tool.driver.rules;
            for result in run.results {
                if matches!(result.kind.as_deref(), Some("pass" | "notApplicable")) {
                    continue;
                }
                let index = result
                    .rule_index
                    .or_else(|| result.rule.as_ref().and_then(|r| r.index));
                let rule = index.and_then(|i| rules.get(i)).or_else(|| {
                    let id = result.rule_id.as_deref()?;
                    rules.iter().find(|r| r.id.as_deref() == Some(id))
                });
                let code = result
                    .rule_id
                    .clone()
                    .or_else(|| result.rule.as_ref().and_then(|r| r.id.clone()))
                    .or_else(|| rule.and_then(|r| r.id.clone()));
                // SARIF's defaults: the rule's level, else `warning` for a failure and `none`
                // for the other kinds.
                let level = result
                    .level
                    .clone()
                    .or_else(|| rule.and_then(|r| r.default_configuration.as_ref()?.level.clone()))
                    .unwrap_or_else(|| match result.kind.as_deref() {
                        None | Some("fail") => "warning".to_string(),
                        Some(_) => "none".to_string(),
                    });
                let location = result
                    .locations
                    .into_iter()
                    .next()
                    .and_then(|l| l.physical_location);
                let region = location.as_ref().and_then(|l| l.region.as_ref());
                sink.push(Found {
                    file: location
                        .as_ref()
                        .and_then(|l| l.artifact_location.as_ref()?.uri.as_deref())
                        .map(file_of_uri),
                    line: region.and_then(|r| r.start_line),
                    column: region.and_then(|r| r.start_column),
                    end_line: region.and_then(|r| r.end_line),
                    end_column: region.and_then(|r| r.end_column),
                    severity: Some(match level.as_str() {
                        "error" => Severity::Error,
                        "note" | "none" => Severity::Note,
                        _ => Severity::Warning,
                    }),
                    code,
                    message: result
                        .message
                        .text
                        .or(result.message.id)
                        .unwrap_or_default(),
                    ..Found::default()
                });
            }
        }
        true
    }
}

/// A path from a SARIF URI: `file://` dropped (a Windows drive keeps its letter, a host keeps
/// `//host`), percent escapes decoded.
fn file_of_uri(uri: &str) -> String {
    let path = match uri.strip_prefix("file://") {
        Some(rest) => {
            let rest = rest.strip_prefix("localhost").unwrap_or(rest);
            match rest.as_bytes() {
                [b'/', drive, b':', ..] if drive.is_ascii_alphabetic() => rest[1..].to_string(),
                [b'/', ..] => rest.to_string(),
                _ => format!("//{rest}"),
            }
        }
        None => uri.to_string(),
    };
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
            ("file:///C:/x/y.rs", "C:/x/y.rs"),
            ("file://server/share/a.rs", "//server/share/a.rs"),
            ("bad%zz", "bad%zz"),
            ("end%", "end%"),
        ];
        for (uri, expected) in table {
            assert_eq!(file_of_uri(uri), expected, "{uri}");
        }
    }
}
