//! The sink a parse session writes into: diagnostics (kept within a count and a byte budget, all
//! counted), the counts the tool printed itself, and test counts. When the sink is full, an error
//! takes the place of a kept warning or note, so the kept list names what fails the gate.

use std::collections::BTreeMap;

use crate::model::{Diagnostic, ExpectedCount, Severity, SeverityCounts, TestCounts};

/// Diagnostics kept per check; more are counted but not stored.
pub const DEFAULT_KEEP: usize = 10_000;
/// Bytes of stored diagnostics per check.
const MAX_STORED_BYTES: usize = 8 << 20;
/// Longest message, code, category or path kept (in characters); longer ones are cut.
const MAX_FIELD_CHARS: usize = 1_000;
/// Distinct categories tracked for findings that were counted only; more go to the check's own.
const MAX_OMITTED_CATEGORIES: usize = 64;

/// One finding as a parser read it: its path as the tool printed it, no fingerprint yet.
#[derive(Debug, Default)]
pub struct Found {
    pub file: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub end_line: Option<u32>,
    pub end_column: Option<u32>,
    /// `None`: an error.
    pub severity: Option<Severity>,
    pub code: Option<String>,
    pub message: String,
    /// `None`: the check's own.
    pub category: Option<String>,
    pub body: Option<String>,
}

#[derive(Debug)]
pub struct Findings {
    diagnostics: Vec<Diagnostic>,
    keep: usize,
    stored_bytes: usize,
    /// Positions of kept warnings and notes: an error may take their place when full.
    replaceable: Vec<usize>,
    /// Every diagnostic found, stored or not.
    pub counts: SeverityCounts,
    /// Diagnostics counted but not stored.
    pub omitted: u64,
    /// Diagnostics (stored or not) that carry a code: `auto` prefers the parser that reads more.
    pub with_code: u64,
    /// The same, without a category of their own (the check's).
    omitted_own: SeverityCounts,
    /// The same, by the category the parser gave them.
    omitted_by_category: BTreeMap<String, SeverityCounts>,
    pub expected: Option<ExpectedCount>,
    pub tests: Option<TestCounts>,
    /// The tool gave the tests it ran as a total (`ran`): the passed count holds them all until
    /// its failures and skips are known.
    pub(crate) passed_from_total: bool,
}

impl Default for Findings {
    fn default() -> Self {
        Self::with_limit(DEFAULT_KEEP)
    }
}

impl Findings {
    pub fn with_limit(keep: usize) -> Self {
        Self {
            diagnostics: Vec::new(),
            keep,
            stored_bytes: 0,
            replaceable: Vec::new(),
            counts: SeverityCounts::default(),
            omitted: 0,
            with_code: 0,
            omitted_own: SeverityCounts::default(),
            omitted_by_category: BTreeMap::new(),
            expected: None,
            tests: None,
            passed_from_total: false,
        }
    }

    /// How many diagnostics a default sink keeps.
    pub fn default_limit() -> usize {
        DEFAULT_KEEP
    }

    fn is_full(&self) -> bool {
        self.diagnostics.len() >= self.keep || self.stored_bytes >= MAX_STORED_BYTES
    }

    /// Whether a diagnostic of `severity` would be stored; when not, callers may only
    /// [`count`](Self::count) it and skip building it.
    pub fn accepts(&self, severity: Severity) -> bool {
        !self.is_full() || (severity == Severity::Error && !self.replaceable.is_empty())
    }

    /// Counts a diagnostic that is not stored.
    pub fn count(&mut self, severity: Severity, category: Option<&str>, has_code: bool) {
        self.counts.add(severity);
        self.with_code += u64::from(has_code);
        self.record_omitted(severity, category);
    }

    /// Keeps (or counts, when full) what `tool` found, its path resolved against `context`'s
    /// target and its fingerprint computed.
    pub fn add(&mut self, tool: &str, context: &super::ParseContext, found: Found) {
        let severity = found.severity.unwrap_or(Severity::Error);
        if !self.accepts(severity) {
            self.count(severity, found.category.as_deref(), found.code.is_some());
            return;
        }
        let resolved = found
            .file
            .as_deref()
            .map(|raw| super::resolve_path(raw, &context.target, &context.cwd_relative));
        let file = resolved.as_ref().map(|r| r.path.clone());
        self.push(Diagnostic {
            fingerprint: Diagnostic::compute_fingerprint(
                tool,
                found.code.as_deref(),
                file.as_deref(),
                &found.message,
            ),
            outside_target: resolved.is_some_and(|r| r.outside_target),
            file,
            line: found.line,
            column: found.column,
            end_line: found.end_line,
            end_column: found.end_column,
            severity,
            code: found.code,
            message: found.message,
            category: found.category,
            body: found.body,
        });
    }

    pub fn push(&mut self, mut diagnostic: Diagnostic) {
        self.counts.add(diagnostic.severity);
        self.with_code += u64::from(diagnostic.code.is_some());
        bound_fields(&mut diagnostic);
        let size = stored_size(&diagnostic);
        if !self.is_full() {
            if diagnostic.severity != Severity::Error {
                self.replaceable.push(self.diagnostics.len());
            }
            self.stored_bytes += size;
            self.diagnostics.push(diagnostic);
        } else if diagnostic.severity == Severity::Error
            && let Some(slot) = self.replaceable.pop()
        {
            let old = std::mem::replace(&mut self.diagnostics[slot], diagnostic);
            self.stored_bytes = self.stored_bytes.saturating_sub(stored_size(&old)) + size;
            self.record_omitted(old.severity, old.category.as_deref());
        } else {
            self.record_omitted(diagnostic.severity, diagnostic.category.as_deref());
        }
    }

    /// Takes out the stored diagnostics `drop` says to, from the counts too; returns how many.
    pub fn remove_where(&mut self, drop: impl Fn(&Diagnostic) -> bool) -> u64 {
        let before = self.diagnostics.len();
        let mut removed = Vec::new();
        self.diagnostics.retain(|d| {
            let gone = drop(d);
            if gone {
                removed.push((d.severity, d.code.is_some(), stored_size(d)));
            }
            !gone
        });
        for (severity, coded, size) in &removed {
            let count = match severity {
                Severity::Error => &mut self.counts.error,
                Severity::Warning => &mut self.counts.warning,
                _ => &mut self.counts.note,
            };
            *count = count.saturating_sub(1);
            self.with_code = self.with_code.saturating_sub(u64::from(*coded));
            self.stored_bytes = self.stored_bytes.saturating_sub(*size);
        }
        if self.diagnostics.len() != before {
            self.replaceable = (self.diagnostics.iter().enumerate())
                .filter(|(_, d)| d.severity != Severity::Error)
                .map(|(i, _)| i)
                .collect();
        }
        removed.len() as u64
    }

    fn record_omitted(&mut self, severity: Severity, category: Option<&str>) {
        self.omitted += 1;
        let Some(category) = category else {
            self.omitted_own.add(severity);
            return;
        };
        if let Some(counts) = self.omitted_by_category.get_mut(category) {
            counts.add(severity);
        } else if self.omitted_by_category.len() < MAX_OMITTED_CATEGORIES {
            let mut counts = SeverityCounts::default();
            counts.add(severity);
            self.omitted_by_category
                .insert(category.to_string(), counts);
        } else {
            // Past the limit of categories, new ones count under the check's own.
            self.omitted_own.add(severity);
        }
    }

    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    pub fn diagnostics_mut(&mut self) -> &mut [Diagnostic] {
        &mut self.diagnostics
    }

    pub fn into_diagnostics(self) -> Vec<Diagnostic> {
        self.diagnostics
    }

    /// Counted-only findings by the category their parser gave them (`None`: the check's own).
    pub fn omitted_by_category(&self) -> impl Iterator<Item = (Option<&str>, &SeverityCounts)> {
        let own =
            (self.omitted_own != SeverityCounts::default()).then_some((None, &self.omitted_own));
        own.into_iter().chain(
            self.omitted_by_category
                .iter()
                .map(|(category, counts)| (Some(category.as_str()), counts)),
        )
    }

    pub fn expected_mut(&mut self) -> &mut ExpectedCount {
        self.expected.get_or_insert_with(ExpectedCount::default)
    }

    pub fn tests_mut(&mut self) -> &mut TestCounts {
        self.tests.get_or_insert_with(TestCounts::default)
    }
}

fn bound_fields(diagnostic: &mut Diagnostic) {
    for field in [
        Some(&mut diagnostic.message),
        diagnostic.file.as_mut(),
        diagnostic.code.as_mut(),
        diagnostic.category.as_mut(),
    ]
    .into_iter()
    .flatten()
    {
        if field.char_indices().nth(MAX_FIELD_CHARS).is_none() {
            continue;
        }
        // Redacted before it is cut: a secret cut in two is no longer recognisable, and its
        // first half would be written as it is (every field is redacted again when written).
        let whole = crate::secrets::redacted(field.as_bytes());
        let whole = String::from_utf8_lossy(&whole);
        if let Some((cut, _)) = whole.char_indices().nth(MAX_FIELD_CHARS) {
            // A new string: truncating in place would keep the long one's capacity.
            *field = format!("{}…", &whole[..cut]);
        } else {
            *field = whole.into_owned();
        }
    }
}

fn stored_size(diagnostic: &Diagnostic) -> usize {
    size_of::<Diagnostic>()
        + diagnostic.message.len()
        + diagnostic.fingerprint.len()
        + [
            &diagnostic.file,
            &diagnostic.code,
            &diagnostic.category,
            &diagnostic.body,
        ]
        .into_iter()
        .flatten()
        .map(String::len)
        .sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diagnostic(severity: Severity, category: Option<&str>, message: &str) -> Diagnostic {
        Diagnostic {
            file: None,
            line: None,
            column: None,
            end_line: None,
            end_column: None,
            severity,
            code: None,
            message: message.to_string(),
            category: category.map(str::to_string),
            fingerprint: String::new(),
            outside_target: false,
            body: None,
        }
    }

    #[test]
    fn errors_take_the_place_of_warnings_when_full() {
        let mut findings = Findings::with_limit(2);
        findings.push(diagnostic(Severity::Warning, None, "w1"));
        findings.push(diagnostic(Severity::Warning, Some("style"), "w2"));
        assert!(!findings.accepts(Severity::Warning));
        assert!(findings.accepts(Severity::Error));
        findings.push(diagnostic(Severity::Error, Some("types"), "e1"));
        findings.push(diagnostic(Severity::Error, None, "e2"));
        findings.push(diagnostic(Severity::Error, None, "e3"));
        let kept: Vec<&str> = findings
            .diagnostics()
            .iter()
            .map(|d| d.message.as_str())
            .collect();
        assert_eq!(kept, ["e2", "e1"]);
        assert_eq!(findings.omitted, 3);
        let omitted: Vec<_> = findings.omitted_by_category().collect();
        assert_eq!(omitted.len(), 2);
        assert_eq!(omitted[0].0, None);
        assert_eq!((omitted[0].1.error, omitted[0].1.warning), (1, 1));
        assert_eq!(omitted[1].0, Some("style"));
        assert_eq!(omitted[1].1.warning, 1);
        assert_eq!(findings.counts.error, 3);
        assert_eq!(findings.counts.warning, 2);
    }

    #[test]
    fn long_fields_are_cut() {
        let mut findings = Findings::default();
        findings.push(diagnostic(Severity::Error, None, &"x".repeat(70_000)));
        let message = &findings.diagnostics()[0].message;
        assert_eq!(message.chars().count(), MAX_FIELD_CHARS + 1);
        assert!(message.ends_with('…'));
    }

    #[test]
    fn a_secret_across_the_cut_is_redacted_before_the_field_is_cut() {
        let token = format!("ghp_{}", "aZ09".repeat(9));
        // (characters before the token): the token straddles the cut, ends at it, starts at it.
        for before in [
            MAX_FIELD_CHARS - 10,
            MAX_FIELD_CHARS - token.len(),
            MAX_FIELD_CHARS,
        ] {
            let message = format!("{} {token} and more after it", "m".repeat(before - 1));
            let mut findings = Findings::default();
            findings.push(diagnostic(Severity::Error, None, &message));
            let kept = &findings.diagnostics()[0].message;
            assert!(!kept.contains("ghp_"), "{before}: {kept}");
            assert!(!kept.contains("aZ09aZ09"), "{before}: {kept}");
            assert!(kept.chars().count() <= MAX_FIELD_CHARS + 1, "{before}");
        }
    }

    #[test]
    fn the_byte_budget_bounds_storage() {
        let mut findings = Findings::with_limit(usize::MAX);
        let long = "y".repeat(MAX_FIELD_CHARS);
        for _ in 0..20_000 {
            findings.push(diagnostic(Severity::Error, None, &long));
        }
        assert!(findings.stored_bytes <= MAX_STORED_BYTES + 2 * MAX_FIELD_CHARS + 512);
        assert_eq!(findings.counts.error, 20_000);
        assert_eq!(
            findings.diagnostics().len() as u64 + findings.omitted,
            20_000
        );
    }
}
