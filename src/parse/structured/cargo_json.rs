//! `cargo … --message-format=json` (and `rustc --error-format=json`): one JSON object a line,
//! read as the lines arrive. cargo reports a library's diagnostics again for its test target;
//! repeats are read once, as cargo's human output prints them.

use std::collections::HashSet;

use serde_json::Value;

use super::{Found, Sink, position};
use crate::model::Severity;
use crate::parse::{Findings, LineOutcome, ParseContext, ParseSession, Parser};

/// Distinct diagnostics remembered to drop repeats; beyond this, repeats are not dropped.
const MAX_SEEN: usize = 100_000;

#[derive(Debug)]
pub struct CargoJson;

impl Parser for CargoJson {
    fn name(&self) -> &str {
        "cargo-json"
    }

    fn category(&self) -> Option<&str> {
        Some("lint")
    }

    fn description(&self) -> &str {
        "cargo/rustc --message-format=json (structured)"
    }

    fn command(&self) -> &str {
        "cargo clippy --all-targets --message-format=json -- -D warnings"
    }

    fn session<'a>(&'a self, context: &'a ParseContext) -> Box<dyn ParseSession + 'a> {
        Box::new(CargoJsonSession {
            context,
            seen: HashSet::new(),
        })
    }
}

struct CargoJsonSession<'a> {
    context: &'a ParseContext,
    seen: HashSet<u64>,
}

impl ParseSession for CargoJsonSession<'_> {
    fn line(&mut self, line: &str, findings: &mut Findings) -> LineOutcome {
        if !line.starts_with('{') {
            return LineOutcome::Unmatched;
        }
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            return LineOutcome::Unmatched;
        };
        let message = match (value["reason"].as_str(), value["$message_type"].as_str()) {
            (Some("compiler-message"), _) => &value["message"],
            (None, Some("diagnostic")) => &value,
            (Some(_), _) => return LineOutcome::Skipped(0),
            _ => return LineOutcome::Unmatched,
        };
        let severity = match message["level"].as_str() {
            Some("error" | "error: internal compiler error") => Severity::Error,
            Some("warning") => Severity::Warning,
            // Notes of their own ("For more information about this error, try …") are chrome;
            // a finding's notes are its children.
            _ => return LineOutcome::Skipped(0),
        };
        let text = message["message"].as_str().unwrap_or_default();
        let primary = message["spans"]
            .as_array()
            .and_then(|spans| spans.iter().find(|span| span["is_primary"] == true));
        // The closing counts ("aborting due to 2 previous errors") are not findings.
        if primary.is_none()
            && (text.starts_with("aborting due to")
                || text.ends_with("warnings emitted")
                || text.ends_with("warning emitted"))
        {
            return LineOutcome::Summary(0);
        }
        let found = Found {
            file: primary
                .and_then(|s| s["file_name"].as_str())
                .map(str::to_string),
            line: primary.and_then(|s| position(&s["line_start"])),
            column: primary.and_then(|s| position(&s["column_start"])),
            end_line: primary.and_then(|s| position(&s["line_end"])),
            end_column: primary.and_then(|s| position(&s["column_end"])),
            severity: Some(severity),
            code: message["code"]["code"].as_str().map(str::to_string),
            message: text.to_string(),
        };
        let key = {
            use std::hash::{Hash, Hasher};
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            (
                &found.file,
                found.line,
                found.column,
                &found.code,
                &found.message,
                severity,
            )
                .hash(&mut hasher);
            hasher.finish()
        };
        if self.seen.contains(&key) {
            return LineOutcome::Skipped(1);
        }
        if self.seen.len() < MAX_SEEN {
            self.seen.insert(key);
        }
        Sink {
            tool: "cargo-json",
            context: self.context,
            findings,
        }
        .push(found);
        LineOutcome::Finding(0)
    }

    fn finish(&mut self, _findings: &mut Findings) {}
}
