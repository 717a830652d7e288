//! The sink a parse session writes into: diagnostics (kept up to a limit, all counted), the
//! counts the tool printed itself, and test counts.

use crate::model::{Diagnostic, ExpectedCount, Severity, SeverityCounts, TestCounts};

/// Diagnostics kept per check; more are counted but not stored.
pub const DEFAULT_KEEP: usize = 10_000;

#[derive(Debug)]
pub struct Findings {
    diagnostics: Vec<Diagnostic>,
    keep: usize,
    /// Every diagnostic found, stored or not.
    pub counts: SeverityCounts,
    /// Diagnostics counted but not stored.
    pub omitted: u64,
    pub expected: Option<ExpectedCount>,
    pub tests: Option<TestCounts>,
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
            counts: SeverityCounts::default(),
            omitted: 0,
            expected: None,
            tests: None,
        }
    }

    /// How many diagnostics a default sink keeps.
    pub fn default_limit() -> usize {
        DEFAULT_KEEP
    }

    /// True once no more diagnostics are stored: callers may then only [`count`](Self::count).
    pub fn is_full(&self) -> bool {
        self.diagnostics.len() >= self.keep
    }

    /// Counts a diagnostic that is not stored.
    pub fn count(&mut self, severity: Severity) {
        self.counts.add(severity);
        self.omitted += 1;
    }

    pub fn push(&mut self, diagnostic: Diagnostic) {
        self.counts.add(diagnostic.severity);
        if self.diagnostics.len() < self.keep {
            self.diagnostics.push(diagnostic);
        } else {
            self.omitted += 1;
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

    pub fn expected_mut(&mut self) -> &mut ExpectedCount {
        self.expected.get_or_insert_with(ExpectedCount::default)
    }

    pub fn tests_mut(&mut self) -> &mut TestCounts {
        self.tests.get_or_insert_with(TestCounts::default)
    }
}
