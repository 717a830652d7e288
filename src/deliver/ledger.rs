//! The ledger of one iteration: the sections of its commit body, written for a person to read and
//! for a program to read back, also after `git am` (the tests' `Ledger::parse` does).
//!
//! Each section is `Label: first line`, its further lines indented by two spaces, a blank line
//! between sections:
//!
//! ```text
//! Thesis: lint first: its failures hide the test failures
//!
//! Test evidence: cargo test: 140 passed
//!   cargo clippy: 0 warnings
//! ```
//!
//! Every line of the body then starts with a label or with white space, so nothing in a value can
//! look like a mail header, a `---` patch separator or an mbox `From ` line. Values are stored as
//! `git am` would leave them.

/// The commit body sections of one accepted iteration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ledger {
    pub thesis: String,
    pub outcome: String,
    pub test_evidence: String,
    pub what_landed: String,
    pub notes: String,
    pub next_backlog: String,
    pub stop_condition_state: String,
}

/// The section labels, in the order they are written.
const LABELS: [&str; 7] = [
    "Thesis",
    "Outcome",
    "Test evidence",
    "What landed",
    "Notes",
    "Next backlog",
    "Stop-condition state",
];

/// What continues a value on the next line.
const INDENT: &str = "  ";

impl Ledger {
    fn values(&self) -> [&String; 7] {
        [
            &self.thesis,
            &self.outcome,
            &self.test_evidence,
            &self.what_landed,
            &self.notes,
            &self.next_backlog,
            &self.stop_condition_state,
        ]
    }

    /// The commit body: every section in order, each ending in a newline.
    pub fn to_body(&self) -> String {
        let mut body = String::new();
        for (index, (label, value)) in LABELS.iter().zip(self.values()).enumerate() {
            if index > 0 {
                body.push('\n');
            }
            body.push_str(label);
            body.push(':');
            let lines = normalized_lines(value);
            for (number, line) in lines.iter().enumerate() {
                match (number, line.is_empty()) {
                    (0, _) => {
                        body.push(' ');
                        body.push_str(line);
                    }
                    (_, true) => {}
                    (_, false) => {
                        body.push_str(INDENT);
                        body.push_str(line);
                    }
                }
                body.push('\n');
            }
            if lines.is_empty() {
                body.push('\n');
            }
        }
        body
    }
}

/// The lines of `value` with trailing white space cut, no blank line at either end and no two
/// blank lines in a row.
fn normalized_lines(value: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = Vec::new();
    for line in value.lines().map(str::trim_end) {
        let blank = line.is_empty();
        let after_blank = lines.last().is_none_or(|previous| previous.is_empty());
        if blank && after_blank {
            continue;
        }
        lines.push(line);
    }
    if lines.last().is_some_and(|line| line.is_empty()) {
        lines.pop();
    }
    lines
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Why a message is not a ledger.
    #[derive(Debug, PartialEq, Eq)]
    pub(in crate::deliver) enum ParseError {
        Missing(&'static str),
        Repeated(&'static str),
    }

    /// The reader of what [`Ledger::to_body`] writes: the tests' proof that a ledger reads back
    /// from its commit, also after `git am`.
    impl Ledger {
        fn values_mut(&mut self) -> [&mut String; 7] {
            [
                &mut self.thesis,
                &mut self.outcome,
                &mut self.test_evidence,
                &mut self.what_landed,
                &mut self.notes,
                &mut self.next_backlog,
                &mut self.stop_condition_state,
            ]
        }

        /// The ledger as a commit message keeps it: trailing white space cut from every line, blank
        /// lines cut at both ends of a value and runs of them made one (what `git am` does to a
        /// message). `parse(to_body())` gives this back.
        pub(in crate::deliver) fn normalized(&self) -> Self {
            let mut normal = self.clone();
            for value in normal.values_mut() {
                *value = normalized_lines(value).join("\n");
            }
            normal
        }

        /// Reads the sections back from a commit message (or a body). Lines before the first section
        /// (the subject) and lines at the margin that start no section (trailers such as
        /// `Signed-off-by:`) are ignored. Every section must be there, once.
        pub(in crate::deliver) fn parse(message: &str) -> Result<Self, ParseError> {
            let mut found: [Option<Vec<&str>>; 7] = Default::default();
            let mut current: Option<usize> = None;
            for line in message.lines() {
                if let Some((index, first)) = section_start(line) {
                    if found[index].is_some() {
                        return Err(ParseError::Repeated(LABELS[index]));
                    }
                    found[index] = Some(vec![first]);
                    current = Some(index);
                    continue;
                }
                let Some(lines) = current.and_then(|index| found[index].as_mut()) else {
                    continue;
                };
                if line.trim().is_empty() {
                    lines.push("");
                } else if line.starts_with([' ', '\t']) {
                    lines.push(
                        line.strip_prefix(INDENT)
                            .or_else(|| line.strip_prefix([' ', '\t']))
                            .unwrap_or(line),
                    );
                } else {
                    current = None;
                }
            }
            let mut ledger = Self::default();
            for ((label, value), lines) in LABELS.iter().zip(ledger.values_mut()).zip(found) {
                let mut lines = lines.ok_or(ParseError::Missing(label))?;
                while lines.last().is_some_and(|line| line.trim().is_empty()) {
                    lines.pop();
                }
                *value = lines.join("\n");
            }
            Ok(ledger)
        }
    }

    /// `Label: rest` for one of the labels: its index and the rest (one separating space removed).
    fn section_start(line: &str) -> Option<(usize, &str)> {
        LABELS.iter().enumerate().find_map(|(index, label)| {
            let rest = line.strip_prefix(label)?.strip_prefix(':')?;
            Some((index, rest.strip_prefix(' ').unwrap_or(rest)))
        })
    }

    /// A plain ledger, its values already normal.
    pub(in crate::deliver) fn sample(cycle: u32) -> Ledger {
        Ledger {
            thesis: format!("cycle {cycle}: lint first, its failures hide the test failures"),
            outcome: "failed 12\u{2192}7".to_string(),
            test_evidence: "cargo test: 140 passed\ncargo clippy: 0 warnings".to_string(),
            what_landed: "- src/lib.rs: the answer\n- run.sh: executable".to_string(),
            notes: String::new(),
            next_backlog: "tests (3)".to_string(),
            stop_condition_state: "2 of 10 cycles, no stall".to_string(),
        }
    }

    /// A ledger whose values hold what mail and patch parsers look for.
    pub(in crate::deliver) fn tricky() -> Ledger {
        let evidence = [
            "---",
            "diff --git a/x b/x",
            "--- a/x",
            "+++ b/x",
            "From 0000 Mon Sep 17 00:00:00 2001",
            "Subject: not a header",
        ];
        Ledger {
            thesis: "  indented first line\nsecond line".to_string(),
            outcome: "From the gate: failed 3\u{2192}0".to_string(),
            test_evidence: evidence.join("\n"),
            what_landed: "first paragraph\n\nsecond paragraph\n    code block".to_string(),
            notes: "Thesis: not a section here".to_string(),
            next_backlog: String::new(),
            stop_condition_state: "done \u{2014} all green".to_string(),
        }
    }

    #[test]
    fn the_ledger_reads_back_from_the_message() {
        let tricky = tricky();
        let message = format!(
            "refine-loop: iteration 4 \u{2014} x\n\n{}",
            tricky.to_body()
        );
        assert_eq!(Ledger::parse(&message).unwrap(), tricky.normalized());
        assert_eq!(tricky.normalized().normalized(), tricky.normalized());
        // Already normal values come back exactly.
        let plain = sample(1);
        assert_eq!(Ledger::parse(&plain.to_body()).unwrap(), plain);
        // Trailers after the last section do not join it.
        let signed = format!("{message}\nSigned-off-by: Someone <someone@example.invalid>\n");
        assert_eq!(Ledger::parse(&signed).unwrap(), tricky.normalized());
        // What a person sees.
        assert!(
            message.contains("\nTest evidence: ---\n  diff --git a/x b/x\n"),
            "{message}"
        );
        assert!(
            message.contains(
                "\nWhat landed: first paragraph\n\n  second paragraph\n      code block\n"
            ),
            "{message}"
        );
        assert!(message.contains("\nNext backlog:\n"), "{message}");
    }

    #[test]
    fn messy_values_are_normalised_like_git_am_would() {
        let ledger = Ledger {
            thesis: "\n\n  first  \t\n\n\n\nsecond   \r\n\n".to_string(),
            ..Ledger::default()
        };
        let normal = ledger.normalized();
        assert_eq!(normal.thesis, "  first\n\nsecond");
        assert_eq!(Ledger::parse(&ledger.to_body()).unwrap(), normal);
    }

    #[test]
    fn a_ledger_with_a_missing_or_repeated_section_is_refused() {
        let body = sample(1).to_body();
        let missing = body.replace("Notes:", "Remarks:");
        assert!(matches!(
            Ledger::parse(&missing),
            Err(ParseError::Missing("Notes"))
        ));
        let repeated = format!("{body}\nOutcome: again\n");
        assert!(matches!(
            Ledger::parse(&repeated),
            Err(ParseError::Repeated("Outcome"))
        ));
    }
}
