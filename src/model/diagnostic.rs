//! One finding reported by a tool, and the counts that go with a list of them.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// How serious a finding is. Tools use many words for these; parsers map them here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Note,
}

impl Severity {
    /// Maps a tool's own word for a severity. Unknown words are kept as errors (never dropped),
    /// because a finding the loop cannot classify must not silently pass the gate.
    pub fn from_label(label: &str) -> Self {
        const WARNING: [&str; 3] = ["warning", "warn", "w"];
        const NOTE: [&str; 8] = [
            "note",
            "help",
            "info",
            "information",
            "hint",
            "i",
            "n",
            "notice",
        ];
        // Without a lowercase copy: this runs for every finding of a large log.
        let label = label.trim();
        let is = |words: &[&str]| words.iter().any(|word| label.eq_ignore_ascii_case(word));
        if is(&WARNING) {
            Self::Warning
        } else if is(&NOTE) {
            Self::Note
        } else {
            Self::Error
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warning => "warning",
            Self::Note => "note",
        }
    }
}

/// A single finding: where, how serious, which rule, what it says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub file: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub end_line: Option<u32>,
    pub end_column: Option<u32>,
    pub severity: Severity,
    pub code: Option<String>,
    pub message: String,
    pub category: Option<String>,
    pub fingerprint: String,
    /// The path points outside the target; it is kept as the tool printed it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub outside_target: bool,
    /// Continuation lines of a multi-line entry (bounded); the message is its first line.
    #[serde(skip)]
    pub body: Option<String>,
}

impl Diagnostic {
    /// The line written into a summary's `details`: `file:line:column: code: message`, leaving out
    /// what is unknown.
    pub fn detail(&self) -> String {
        let mut out = String::new();
        if let Some(file) = &self.file {
            out.push_str(file);
            for number in [self.line, self.column].into_iter().map_while(|n| n) {
                out.push(':');
                out.push_str(&number.to_string());
            }
            out.push_str(": ");
        }
        if let Some(code) = &self.code {
            out.push_str(code);
            out.push_str(": ");
        }
        out.push_str(&self.message);
        out
    }

    /// A stable identity for the finding that survives edits moving it to another line: the tool,
    /// the code, the path and the message with its digits normalised, hashed with sha256.
    pub fn compute_fingerprint(
        tool: &str,
        code: Option<&str>,
        file: Option<&str>,
        message: &str,
    ) -> String {
        let mut hasher = Sha256::new();
        for part in [tool, code.unwrap_or(""), file.unwrap_or("")] {
            hasher.update(part.as_bytes());
            hasher.update([0u8]);
        }
        // The message with its words joined by one space and every ASCII digit a `0`, so that
        // line numbers and counts in it do not change the fingerprint; built in place (this
        // runs for every finding kept).
        let mut normalized = Vec::with_capacity(message.len());
        for word in message.split_whitespace() {
            if !normalized.is_empty() {
                normalized.push(b' ');
            }
            normalized.extend(
                word.bytes()
                    .map(|byte| if byte.is_ascii_digit() { b'0' } else { byte }),
            );
        }
        hasher.update(&normalized);
        hasher.update([0u8]);
        crate::encoding::hex_digest(hasher)
    }
}

/// Findings counted by severity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeverityCounts {
    pub error: u64,
    pub warning: u64,
    pub note: u64,
}

impl SeverityCounts {
    pub fn add(&mut self, severity: Severity) {
        match severity {
            Severity::Error => self.error += 1,
            Severity::Warning => self.warning += 1,
            Severity::Note => self.note += 1,
        }
    }
}

/// What a test runner said it ran.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestCounts {
    pub passed: u64,
    pub failed: u64,
    pub skipped: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severity_labels() {
        let table = [
            ("error", Severity::Error),
            ("ERROR", Severity::Error),
            ("fatal", Severity::Error),
            ("deny", Severity::Error),
            ("something-new", Severity::Error),
            ("warning", Severity::Warning),
            ("W", Severity::Warning),
            ("note", Severity::Note),
            ("help", Severity::Note),
        ];
        for (label, expected) in table {
            assert_eq!(Severity::from_label(label), expected, "{label}");
        }
    }

    #[test]
    fn fingerprint_ignores_line_numbers_but_not_paths() {
        let a = Diagnostic::compute_fingerprint("clippy", None, Some("src/a.rs"), "x at 10");
        let b = Diagnostic::compute_fingerprint("clippy", None, Some("src/a.rs"), "x at 12");
        let c = Diagnostic::compute_fingerprint("clippy", None, Some("src/b.rs"), "x at 10");
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.len(), 64);
    }

    /// Fingerprints are a contract (baselines and campaigns compare them across versions): the
    /// values of sha256 over `tool\0code\0file\0message\0`, the message's words joined by one
    /// space and its ASCII digits `0`, computed with Python's hashlib.
    #[test]
    fn fingerprints_keep_their_values() {
        let table = [
            (
                ("clippy", None, Some("src/a.rs"), "x at 10"),
                "727e66124ce31cdbfbbb714605d9132fd814061189c453160d2ef93f345151ef",
            ),
            (
                (
                    "ruff",
                    Some("E501"),
                    Some("src/prix été.py"),
                    "  prix  été\t12 ok \u{a0}٣ ",
                ),
                "3fbd06ca355df6a3fba465cc2adf522433301320967e971c4e0a1a7613ab486a",
            ),
        ];
        for ((tool, code, file, message), expected) in table {
            assert_eq!(
                Diagnostic::compute_fingerprint(tool, code, file, message),
                expected,
                "{message:?}"
            );
        }
    }

    #[test]
    fn detail_leaves_out_unknown_parts() {
        let mut diagnostic = Diagnostic {
            file: Some("src/a.rs".into()),
            line: Some(10),
            column: Some(5),
            end_line: None,
            end_column: None,
            severity: Severity::Error,
            code: Some("clippy::needless_return".into()),
            message: "unneeded `return` statement".into(),
            category: None,
            fingerprint: String::new(),
            outside_target: false,
            body: None,
        };
        assert_eq!(
            diagnostic.detail(),
            "src/a.rs:10:5: clippy::needless_return: unneeded `return` statement"
        );
        diagnostic.column = None;
        diagnostic.code = None;
        assert_eq!(
            diagnostic.detail(),
            "src/a.rs:10: unneeded `return` statement"
        );
        diagnostic.file = None;
        assert_eq!(diagnostic.detail(), "unneeded `return` statement");
    }
}
