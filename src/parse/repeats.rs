//! Findings counted once: a tool that prints the same diagnostic again is read as having printed
//! it once. cargo compiles a file once per target that includes it (lib, lib test, a bin that
//! names it with `mod`, every integration test with `mod common;`) and prints each copy whose
//! text differs from one it printed before; in its default format the text of one diagnostic
//! differs from target to target (rustc adds a lint's "on by default" note only to its first
//! diagnostic in each compilation) and from one macro expansion to the next (the expansion site).

use std::collections::HashSet;
use std::hash::BuildHasher;

use foldhash::quality::RandomState;

use crate::model::{ExpectedCount, Severity, SeverityCounts};

/// Distinct findings remembered; past this many, a new one is not: its repeats count again.
const MAX_SEEN: usize = 100_000;

/// What makes two findings the same: their place, severity, code and message.
#[derive(Debug, Clone, Copy, Hash)]
pub struct Identity<'a> {
    pub file: Option<&'a str>,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub severity: Severity,
    pub code: Option<&'a str>,
    pub message: &'a str,
}

/// The findings of one output seen so far, and the repeats left out.
#[derive(Debug, Default)]
pub struct Repeats {
    seen: HashSet<u64, RandomState>,
    hasher: RandomState,
    /// Findings left out as repeats, by severity.
    dropped: SeverityCounts,
}

impl Repeats {
    /// Whether `identity` is seen for the first time; a repeat is counted as left out.
    pub fn first_time(&mut self, identity: &Identity<'_>) -> bool {
        let key = self.hasher.hash_one(identity);
        if self.seen.contains(&key) {
            self.dropped.add(identity.severity);
            return false;
        }
        if self.seen.len() < MAX_SEEN {
            self.seen.insert(key);
        }
        true
    }

    /// Takes the repeats left out off the counts the tool printed about its output (cargo's
    /// "generated 5 warnings (2 duplicates)" counts what it printed, repeats included).
    pub fn discount(&self, expected: Option<&mut ExpectedCount>) {
        let Some(expected) = expected else {
            return;
        };
        let less = |count: &mut Option<u64>, dropped: u64| {
            if let Some(count) = count {
                *count = count.saturating_sub(dropped);
            }
        };
        less(&mut expected.error, self.dropped.error);
        less(&mut expected.warning, self.dropped.warning);
    }
}

#[cfg(test)]
#[path = "repeats_tests.rs"]
mod tests;
