//! What the `regex` kind assembles: a finding from one or more lines, and the counts of a
//! summary line.

use regex::Captures;

use super::Findings;
use super::frames::Place;

/// Bytes of continuation text kept per entry.
const MAX_BODY_BYTES: usize = 4 * 1024;

/// A finding being assembled from one or more lines.
#[derive(Debug, Default)]
pub struct Draft {
    pub file: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub end_line: Option<u32>,
    pub end_column: Option<u32>,
    pub severity: Option<String>,
    pub code: Option<String>,
    pub message: Option<String>,
    pub category: Option<String>,
    pub body: String,
}

impl Draft {
    /// Fills what is still missing from `captures`; their place (file, line, column) as `place`
    /// says (see [`super::frames`]): a frame outside the user's code gives none, and a frame of
    /// the user's with a line replaces a place that had none (a suite's file, named before the
    /// frame that says where in it loading failed).
    pub fn fill_placed(&mut self, captures: &Captures<'_>, code_prefix: &str, place: Place) {
        let text = |name: &str| {
            captures
                .name(name)
                .map(|m| m.as_str().trim().to_string())
                .filter(|s| !s.is_empty())
        };
        let number = |name: &str| text(name).and_then(|s| s.parse::<u32>().ok());
        if place == Place::UserFrame
            && self.line.is_none()
            && captures.name("file").is_some()
            && number("line").is_some()
        {
            self.file = None;
        }
        if place != Place::None {
            fill(&mut self.file, || text("file"));
            fill(&mut self.line, || number("line"));
            fill(&mut self.column, || number("column"));
            fill(&mut self.end_line, || number("end_line"));
            fill(&mut self.end_column, || number("end_column"));
        }
        fill(&mut self.severity, || text("severity"));
        fill(&mut self.code, || {
            text("code").map(|c| format!("{code_prefix}{c}"))
        });
        fill(&mut self.category, || text("category"));
        if self.message.is_none() {
            self.message = text("message");
        } else if let Some(more) = text("message")
            && self.body.len() + more.len() < MAX_BODY_BYTES
        {
            if !self.body.is_empty() {
                self.body.push('\n');
            }
            self.body.push_str(&more);
        }
    }
}

impl Draft {
    /// Whether the `file` and `line` groups of `captures` (those it has) name this entry's place.
    pub fn at_place_of(&self, captures: &Captures<'_>) -> bool {
        let file = captures.name("file").map(|m| m.as_str().trim());
        let line = captures
            .name("line")
            .and_then(|m| m.as_str().parse::<u32>().ok());
        file.is_none_or(|file| self.file.as_deref() == Some(file))
            && line.is_none_or(|line| self.line == Some(line))
    }

    /// Continues the message with the `message` group of `captures`, after a space (a message
    /// the tool wrapped onto the next line); the other groups fill what the entry lacks.
    pub fn wrap(&mut self, captures: &Captures<'_>) {
        let more = captures.name("message").map(|m| m.as_str().trim());
        match (&mut self.message, more) {
            (Some(message), Some(more)) if !more.is_empty() && message.len() < MAX_BODY_BYTES => {
                message.push(' ');
                message.push_str(more);
            }
            (None, Some(more)) if !more.is_empty() => self.message = Some(more.to_string()),
            _ => {}
        }
        let message = self.message.take();
        self.fill_placed(captures, "", Place::Fill);
        self.message = message;
    }
}

fn fill<T>(slot: &mut Option<T>, value: impl FnOnce() -> Option<T>) {
    if slot.is_none() {
        *slot = value();
    }
}

/// Adds the counts of one summary line. `warnings` less `duplicates` (cargo's "(2 duplicates)");
/// failed tests count as expected errors.
pub fn apply_summary(captures: &Captures<'_>, findings: &mut Findings) {
    let count = |name: &str| {
        captures
            .name(name)
            .and_then(|m| m.as_str().parse::<u64>().ok())
    };
    if let Some(errors) = count("errors") {
        let expected = findings.expected_mut();
        expected.error = Some(expected.error.unwrap_or(0).saturating_add(errors));
    }
    if let Some(warnings) = count("warnings") {
        let new = warnings.saturating_sub(count("duplicates").unwrap_or(0));
        let expected = findings.expected_mut();
        expected.warning = Some(expected.warning.unwrap_or(0).saturating_add(new));
    }
    let (passed, failed, skipped) = (count("passed"), count("failed"), count("skipped"));
    if passed.is_some() || failed.is_some() || skipped.is_some() {
        let tests = findings.tests_mut();
        tests.passed = tests.passed.saturating_add(passed.unwrap_or(0));
        tests.failed = tests.failed.saturating_add(failed.unwrap_or(0));
        tests.skipped = tests.skipped.saturating_add(skipped.unwrap_or(0));
        if let Some(failed) = failed {
            let expected = findings.expected_mut();
            expected.error = Some(expected.error.unwrap_or(0).saturating_add(failed));
        }
    }
}
