//! `cargo … --message-format=json` (and `rustc --error-format=json`): one JSON object a line,
//! read as the lines arrive. cargo reports a file's diagnostics again for every target that
//! compiles it (a library's for its test target); repeats are read once, as the `clippy` and
//! `rustc` parsers read cargo's human output.

use serde_json::Value;

use super::{Found, Sink, position};
use crate::model::Severity;
use crate::parse::repeats::{Identity, Repeats};
use crate::parse::{Findings, LineOutcome, ParseContext, ParseSession, Parser};

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

    fn reads_documents(&self) -> bool {
        true
    }

    /// The `clippy` definition's: the same codes (clippy lints, rustc error codes).
    fn rule_help(&self) -> Option<&crate::parse::RuleHelp> {
        static HELP: std::sync::LazyLock<crate::parse::RuleHelp> =
            std::sync::LazyLock::new(|| crate::parse::built_in::built_in_rule_help("clippy"));
        Some(&HELP)
    }

    fn session<'a>(&'a self, context: &'a ParseContext) -> Box<dyn ParseSession + 'a> {
        Box::new(CargoJsonSession {
            context,
            repeats: Repeats::default(),
            pending: Vec::new(),
            discarding: false,
            read: 0,
            too_long: 0,
        })
    }
}

/// The longest JSON line read: cargo's lines carry the rendered message, which can be long, so
/// this reader splits the raw output itself instead of taking the (64 KiB) cleaned lines.
const MAX_JSON_LINE: usize = 16 << 20;

struct CargoJsonSession<'a> {
    context: &'a ParseContext,
    /// The diagnostics read so far: a repeat is read once.
    repeats: Repeats,
    /// The line being assembled from raw chunks.
    pending: Vec<u8>,
    /// The current line passed the limit: the rest of it is dropped.
    discarding: bool,
    /// JSON lines read as cargo messages (for `auto`).
    read: u64,
    too_long: u64,
}

impl CargoJsonSession<'_> {
    fn raw_line(&mut self, findings: &mut Findings) {
        let line = std::mem::take(&mut self.pending);
        let text = String::from_utf8_lossy(&line);
        if self.read_message(text.trim_end_matches('\r'), findings) != LineOutcome::Unmatched {
            self.read += 1;
        }
    }

    fn append(&mut self, part: &[u8]) {
        if self.discarding {
            return;
        }
        if self.pending.len() + part.len() > MAX_JSON_LINE {
            self.discarding = true;
            self.too_long += 1;
            self.pending = Vec::new();
        } else {
            self.pending.extend_from_slice(part);
        }
    }

    /// Reads one line of cargo's output.
    fn read_message(&mut self, line: &str, findings: &mut Findings) -> LineOutcome {
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
            ..Found::default()
        };
        let first_time = self.repeats.first_time(&Identity {
            file: found.file.as_deref(),
            line: found.line,
            column: found.column,
            severity,
            code: found.code.as_deref(),
            message: &found.message,
        });
        if !first_time {
            return LineOutcome::Skipped(1);
        }
        Sink {
            tool: "cargo-json",
            context: self.context,
            findings,
        }
        .push(found);
        LineOutcome::Finding(0)
    }
}

impl ParseSession for CargoJsonSession<'_> {
    fn line(&mut self, line: &str, findings: &mut Findings) -> LineOutcome {
        self.read_message(line, findings)
    }

    fn bytes(&mut self, mut chunk: &[u8], findings: &mut Findings) {
        while let Some(newline) = memchr::memchr(b'\n', chunk) {
            self.append(&chunk[..newline]);
            if !self.discarding {
                self.raw_line(findings);
            }
            self.pending.clear();
            self.discarding = false;
            chunk = &chunk[newline + 1..];
        }
        self.append(chunk);
    }

    fn finish(&mut self, findings: &mut Findings) {
        if !self.pending.is_empty() && !self.discarding {
            self.raw_line(findings);
        }
        if self.too_long > 0 {
            tracing::warn!(
                lines = self.too_long,
                "cargo-json: JSON lines longer than {MAX_JSON_LINE} bytes were not read"
            );
        }
    }

    fn explained_lines(&self, _lines: u64) -> u64 {
        self.read
    }
}
