//! GitHub Actions surfaces: the step summary, step outputs, annotations and log groups.
//!
//! The functions here are pure (text in, text out) apart from the two `append_*` writers. Each
//! one that takes text from the run takes the [`Redactor`] to use (in a run, the one
//! `crate::ci::process_redactor` returns), and redacts in two passes: every field (messages,
//! paths, names, values) before it is escaped, cut or laid out, because an escaped or half-cut
//! secret no longer matches; then the finished text once more. What they return can be printed
//! or written as it is. [`append_step_summary`] redacts the Markdown it is given too, since a
//! caller may write its own.

mod append;
mod outputs;
mod summary;

use std::path::PathBuf;

pub use outputs::append_outputs;
#[cfg(test)]
pub(crate) use summary::{CLOSING_FENCE, truncation_note};
pub use summary::{MAX_SUMMARY_BYTES, append_step_summary, fit_summary};

use crate::secrets::Redactor;

/// The files and folder the runner names in the environment of a step.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GitHubFiles {
    /// `GITHUB_WORKSPACE`: annotation paths are relative to it.
    pub workspace: Option<PathBuf>,
    /// `GITHUB_STEP_SUMMARY`: Markdown appended here is shown on the run's page.
    pub step_summary: Option<PathBuf>,
    /// `GITHUB_OUTPUT`: the step's outputs.
    pub output: Option<PathBuf>,
}

impl GitHubFiles {
    /// Reads the three variables through `lookup`; an empty value counts as unset.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let path = |name| {
            lookup(name)
                .filter(|value| !value.is_empty())
                .map(PathBuf::from)
        };
        Self {
            workspace: path("GITHUB_WORKSPACE"),
            step_summary: path("GITHUB_STEP_SUMMARY"),
            output: path("GITHUB_OUTPUT"),
        }
    }
}

/// The line that opens a collapsible group in the log (one per cycle): `::group::<name>`.
pub fn group(name: &str, redactor: &Redactor) -> String {
    let name = redactor.redact_str(name);
    let line = format!("::group::{}", escape_data(&name));
    redactor.redact_str(&line).into_owned()
}

/// The line that closes the group [`group`] opened.
pub fn endgroup() -> &'static str {
    "::endgroup::"
}

/// A workflow command's message, escaped as the runner reads it back: `%`, CR and LF.
pub(crate) fn escape_data(text: &str) -> String {
    escape(text, false)
}

/// A workflow command's property value: as [`escape_data`], and `:` and `,`, which end a value.
pub(crate) fn escape_property(text: &str) -> String {
    escape(text, true)
}

/// Secrets are redacted first: escaped, a credential (`Authorization%3A Bearer …`) no longer has
/// the shape the redaction of the written file looks for.
fn escape(text: &str, property: bool) -> String {
    let text = crate::secrets::redacted_text(text);
    let mut out = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            ':' if property => out.push_str("%3A"),
            ',' if property => out.push_str("%2C"),
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_credential_is_redacted_before_it_is_escaped() {
        let header = format!("Authorization: Bearer {}", "a1b2".repeat(6));
        for escaped in [escape_data(&header), escape_property(&header)] {
            assert!(!escaped.contains("a1b2a1b2"), "{escaped}");
            assert!(escaped.contains("REDACTED"), "{escaped}");
        }
    }

    #[test]
    fn escaping_every_special_character() {
        let table = [
            ("plain text", "plain text", "plain text"),
            ("100%", "100%25", "100%25"),
            (
                "%0A stays literal",
                "%250A stays literal",
                "%250A stays literal",
            ),
            ("a\nb", "a%0Ab", "a%0Ab"),
            ("a\r\nb", "a%0D%0Ab", "a%0D%0Ab"),
            ("a:b", "a:b", "a%3Ab"),
            ("a,b", "a,b", "a%2Cb"),
            ("::error::x", "::error::x", "%3A%3Aerror%3A%3Ax"),
            ("é, ü: 100%\n", "é, ü: 100%25%0A", "é%2C ü%3A 100%25%0A"),
            ("", "", ""),
        ];
        for (input, data, property) in table {
            assert_eq!(escape_data(input), data, "{input:?}");
            assert_eq!(escape_property(input), property, "{input:?}");
        }
    }

    #[test]
    fn groups() {
        let redactor =
            Redactor::new([("GITHUB_TOKEN".to_string(), "s3cr3t-value-1".to_string())]).unwrap();
        assert_eq!(group("cycle 3", &redactor), "::group::cycle 3");
        assert_eq!(
            group("cycle 3\n100% s3cr3t-value-1", &redactor),
            "::group::cycle 3%0A100%25 [REDACTED:GITHUB_TOKEN]"
        );
        assert_eq!(endgroup(), "::endgroup::");
    }

    #[test]
    fn files_from_the_environment() {
        let lookup = |name: &str| match name {
            "GITHUB_WORKSPACE" => Some("/home/runner/work/repo/repo".to_string()),
            "GITHUB_STEP_SUMMARY" => Some(String::new()),
            "GITHUB_OUTPUT" => Some("/tmp/output".to_string()),
            _ => None,
        };
        assert_eq!(
            GitHubFiles::from_lookup(lookup),
            GitHubFiles {
                workspace: Some(PathBuf::from("/home/runner/work/repo/repo")),
                step_summary: None,
                output: Some(PathBuf::from("/tmp/output")),
            }
        );
    }
}
