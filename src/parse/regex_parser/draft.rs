//! What the `regex` kind assembles: a finding from one or more lines, and the counts of a
//! summary line.

use regex::{Captures, Regex};

use crate::parse::lazy_regex::LazyRegex;

use super::frames::Place;
use crate::parse::Findings;
use crate::parse::matched::Matched;

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
    /// Strings of drafts read before, to be filled again: a deduplicating parser reads a draft
    /// for every repeat and drops it (see [`Draft::recycle`]).
    pub spare: Vec<String>,
}

/// Where a regex's named groups are: looked up once when the parser is compiled rather than by
/// name on every line, and telling which lines need their groups read at all.
#[derive(Debug, Clone, Copy, Default)]
pub struct Groups {
    pub file: Option<usize>,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub end_line: Option<usize>,
    pub end_column: Option<usize>,
    pub severity: Option<usize>,
    pub code: Option<usize>,
    pub message: Option<usize>,
    pub category: Option<usize>,
}

impl Groups {
    /// The named groups of `regex` (unknown names were refused when it was compiled).
    pub fn of(regex: &LazyRegex) -> Self {
        let mut groups = Self::default();
        for (index, name) in regex.capture_names().enumerate() {
            let slot = match name {
                Some("file") => &mut groups.file,
                Some("line") => &mut groups.line,
                Some("column") => &mut groups.column,
                Some("end_line") => &mut groups.end_line,
                Some("end_column") => &mut groups.end_column,
                Some("severity") => &mut groups.severity,
                Some("code") => &mut groups.code,
                Some("message") => &mut groups.message,
                Some("category") => &mut groups.category,
                _ => continue,
            };
            *slot = Some(index);
        }
        groups
    }
}

/// What a draft reads from its lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reads {
    /// Everything: the finding will be stored.
    All,
    /// Only what counting a finding that will not be stored needs: severity, code, category.
    Counting,
    /// What counting needs and the place, which a `same_place` continuation compares (so that
    /// a finding left out takes the same lines as one kept, and is counted the same).
    CountingAndPlace,
    /// What tells a finding that will not be stored from another (see [`crate::parse::repeats`]):
    /// what counting needs, the place, the code and the message, not the body.
    Identity,
}

impl Reads {
    /// Whether the message (not the body) is read.
    fn message(self) -> bool {
        matches!(self, Self::All | Self::Identity)
    }
}

impl Draft {
    /// Fills what is still missing from `captures`, the match of a regex with `groups`, as far as
    /// `reads` says; their place (file, line, column) as `place` says (see [`super::frames`]): a
    /// frame outside the user's code gives none, and a frame of the user's with a line replaces a
    /// place that had none (a suite's file, named before the frame that says where in it loading
    /// failed).
    pub fn fill_placed(
        &mut self,
        captures: Matched<'_>,
        groups: &Groups,
        code_prefix: &str,
        place: Place,
        reads: Reads,
    ) {
        let text = |group: Option<usize>| {
            captures
                .group(group)
                .map(str::trim)
                .filter(|s| !s.is_empty())
        };
        let spare = &mut self.spare;
        fill(&mut self.severity, || {
            text(groups.severity).map(|s| reuse(spare, &[s]))
        });
        fill(&mut self.code, || {
            text(groups.code).map(|code| reuse(spare, &[code_prefix, code]))
        });
        fill(&mut self.category, || {
            text(groups.category).map(|s| reuse(spare, &[s]))
        });
        if reads != Reads::Counting {
            self.fill_place(captures, groups, place);
        }
        if !reads.message() {
            return;
        }
        if self.message.is_none() {
            self.message = text(groups.message).map(|s| reuse(&mut self.spare, &[s]));
        } else if reads == Reads::All
            && let Some(more) = text(groups.message)
            && self.body.len() + more.len() < MAX_BODY_BYTES
        {
            if !self.body.is_empty() {
                self.body.push('\n');
            }
            self.body.push_str(more);
        }
    }

    /// Fills the place (file, line, column, end) from `captures` as `place` says.
    fn fill_place(&mut self, captures: Matched<'_>, groups: &Groups, place: Place) {
        let text = |group: Option<usize>| {
            captures
                .group(group)
                .map(str::trim)
                .filter(|s| !s.is_empty())
        };
        let number = |group: Option<usize>| text(group).and_then(|s| s.parse::<u32>().ok());
        if place == Place::UserFrame
            && self.line.is_none()
            && captures.group(groups.file).is_some()
            && number(groups.line).is_some()
        {
            self.file = None;
        }
        if place != Place::None {
            let spare = &mut self.spare;
            fill(&mut self.file, || {
                text(groups.file).map(|s| reuse(spare, &[s]))
            });
            fill(&mut self.line, || number(groups.line));
            fill(&mut self.column, || number(groups.column));
            fill(&mut self.end_line, || number(groups.end_line));
            fill(&mut self.end_column, || number(groups.end_column));
        }
    }

    /// Whether a line matched by a regex with `groups` can add anything to this draft, as far as
    /// `reads` says: what counting needs (severity, code, category), the place, and for a finding
    /// that will be stored a `message` group (it adds to the body, or to the message when the
    /// line `wraps`); for one read for its identity, a `message` group that gives or continues
    /// its message.
    pub fn wants(&self, groups: &Groups, reads: Reads, wraps: bool) -> bool {
        let missing = |group: Option<usize>, slot_empty: bool| group.is_some() && slot_empty;
        let counted = missing(groups.severity, self.severity.is_none())
            || missing(groups.code, self.code.is_none())
            || missing(groups.category, self.category.is_none());
        let placed = || {
            missing(groups.file, self.file.is_none())
                || missing(groups.line, self.line.is_none())
                || missing(groups.column, self.column.is_none())
                || missing(groups.end_line, self.end_line.is_none())
                || missing(groups.end_column, self.end_column.is_none())
        };
        let told = || {
            let room = match (&self.message, wraps) {
                (None, _) => true,
                (Some(message), true) => message.len() < MAX_BODY_BYTES,
                (Some(_), false) => reads == Reads::All && self.body.len() < MAX_BODY_BYTES,
            };
            missing(groups.message, room)
        };
        counted || (reads != Reads::Counting && placed()) || (reads.message() && told())
    }
}

impl Draft {
    /// Whether the `file` and `line` groups of `captures` (those it has) name this entry's place.
    pub fn at_place_of(&self, captures: Matched<'_>, groups: &Groups) -> bool {
        let file = captures.group(groups.file).map(str::trim);
        let line = (captures.group(groups.line)).and_then(|line| line.parse::<u32>().ok());
        file.is_none_or(|file| self.file.as_deref() == Some(file))
            && line.is_none_or(|line| self.line == Some(line))
    }

    /// Continues the message with the `message` group of `captures`, after a space (a message
    /// the tool wrapped onto the next line); the other groups fill what the entry lacks, as far
    /// as `reads` says.
    pub fn wrap(&mut self, captures: Matched<'_>, groups: &Groups, reads: Reads) {
        if reads.message() {
            let more = captures.group(groups.message).map(str::trim);
            match (&mut self.message, more) {
                (Some(message), Some(more))
                    if !more.is_empty() && message.len() < MAX_BODY_BYTES =>
                {
                    message.push(' ');
                    message.push_str(more);
                }
                (None, Some(more)) if !more.is_empty() => self.message = Some(more.to_string()),
                _ => {}
            }
        }
        let without_message = Groups {
            message: None,
            ..*groups
        };
        self.fill_placed(captures, &without_message, "", Place::Fill, reads);
    }
}

/// A multi-line entry being read: the pattern that opened it, its draft, its lines so far.
#[derive(Debug)]
pub struct OpenEntry {
    pub pattern: usize,
    pub draft: Draft,
    pub lines: usize,
    /// What is read from its lines: when the finding will not be stored (the sink is full),
    /// only what counting it needs.
    pub reads: Reads,
}

impl OpenEntry {
    /// Reads a line of the entry that a rule with `groups` matched with `captures`.
    pub fn read(
        &mut self,
        captures: Matched<'_>,
        groups: &Groups,
        code_prefix: &str,
        wraps: bool,
        place: Place,
    ) {
        if wraps {
            self.draft.wrap(captures, groups, self.reads);
        } else {
            (self.draft).fill_placed(captures, groups, code_prefix, place, self.reads);
        }
    }
}

impl Draft {
    /// A draft whose strings are taken from `spare` as it is filled.
    pub fn with_spare(spare: Vec<String>) -> Self {
        Self {
            spare,
            ..Self::default()
        }
    }

    /// The strings of a draft that is not kept, for the next one to fill.
    pub fn recycle(self) -> Vec<String> {
        let Self {
            file,
            severity,
            code,
            message,
            category,
            mut spare,
            ..
        } = self;
        let strings = [file, severity, code, message, category]
            .into_iter()
            .flatten();
        // A long string is not kept: a short finding stored in it would hold its capacity, which
        // the findings' memory bound (it counts lengths) does not see.
        let small = strings.filter(|string| string.capacity() <= MAX_SPARE_BYTES);
        spare.extend(small.take(MAX_SPARE.saturating_sub(spare.len())));
        spare
    }
}

/// Strings kept for later drafts, and the longest kept.
const MAX_SPARE: usize = 16;
const MAX_SPARE_BYTES: usize = 256;

/// `parts` joined, in a string from `spare` when there is one.
fn reuse(spare: &mut Vec<String>, parts: &[&str]) -> String {
    let mut string = spare.pop().unwrap_or_default();
    string.clear();
    for part in parts {
        string.push_str(part);
    }
    string
}

fn fill<T>(slot: &mut Option<T>, value: impl FnOnce() -> Option<T>) {
    if slot.is_none() {
        *slot = value();
    }
}

/// Adds the counts of one summary line. `warnings` less `duplicates` (cargo's "(2 duplicates)");
/// failed tests count as expected errors; `xfailed`, `deselected` and `todo` tests as skipped.
pub fn apply_summary(regex: &Regex, captures: &Captures<'_>, findings: &mut Findings) {
    // The groups by position (a summary line of a dense log is read often; by name is a lookup).
    let count = |name: &str| {
        let group = regex.capture_names().position(|n| n == Some(name))?;
        captures.get(group)?.as_str().parse::<u64>().ok()
    };
    // A tool that fixed some of what it found ("Found 28 errors (14 fixed, 14 remaining).")
    // prints the rest: those are the errors to expect.
    if let Some(errors) = count("remaining").or_else(|| count("errors")) {
        let expected = findings.expected_mut();
        expected.error = Some(expected.error.unwrap_or(0).saturating_add(errors));
    }
    if let Some(warnings) = count("warnings") {
        let new = warnings.saturating_sub(count("duplicates").unwrap_or(0));
        let expected = findings.expected_mut();
        expected.warning = Some(expected.warning.unwrap_or(0).saturating_add(new));
    }
    // Tests expected to fail, left out, or still to write did not run: skipped, as far as the
    // count of tests run goes.
    let not_run = ["skipped", "xfailed", "deselected", "todo"].map(count);
    let skipped = not_run
        .iter()
        .flatten()
        .copied()
        .reduce(u64::saturating_add);
    // A tool that says how many tests ran, then which failed, erred or were skipped (unittest's
    // "Ran 8 tests", "FAILED (failures=3, errors=2, skipped=1)"): the rest passed.
    if let Some(ran) = count("ran") {
        let tests = findings.tests_mut();
        tests.passed = tests.passed.saturating_add(ran);
        findings.passed_from_total = true;
    }
    let (passed, failed) = (count("passed"), count("failed"));
    if passed.is_some() || failed.is_some() || skipped.is_some() {
        let from_total = findings.passed_from_total;
        let tests = findings.tests_mut();
        tests.passed = tests.passed.saturating_add(passed.unwrap_or(0));
        tests.failed = tests.failed.saturating_add(failed.unwrap_or(0));
        tests.skipped = tests.skipped.saturating_add(skipped.unwrap_or(0));
        if from_total {
            let not_passed = [failed, skipped, count("errors")]
                .into_iter()
                .flatten()
                .sum();
            tests.passed = tests.passed.saturating_sub(not_passed);
        }
        if let Some(failed) = failed {
            let expected = findings.expected_mut();
            expected.error = Some(expected.error.unwrap_or(0).saturating_add(failed));
        }
    }
}
