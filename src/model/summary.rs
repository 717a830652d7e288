//! `gate-summary.json`: the gate's result for one cycle, by category and by check.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{SeverityCounts, TestCounts};

/// The gate's verdict for one cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum GateResult {
    Passed,
    Failed,
}

/// The contents of `cycle-N/gate-summary.json`. The first keys are the refactoring-loop seed's;
/// `checks` and `notes` add what each check did and what the parsers noticed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateSummary {
    pub format_version: u32,
    pub cycle: u32,
    pub overall_result: GateResult,
    pub failed_count: u64,
    pub warning_count: u64,
    pub categories: BTreeMap<String, CategorySummary>,
    #[serde(default)]
    pub checks: Vec<CheckRecord>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// A stop request ended the gate early: `overall_result` is then FAILED whatever ran.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cancelled: bool,
    /// Checks a cancellation kept from running.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_run: Vec<String>,
    /// Pull-request mode (`--new-since`): the failures new since the base, which are all that
    /// `failed_count` counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_count: Option<u64>,
    /// Pull-request mode: the failures that were there before the change, not counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preexisting_count: Option<u64>,
}

impl GateSummary {
    /// The summary of a gate that found nothing (or did not run), for cycle `cycle`.
    pub fn empty(cycle: u32) -> Self {
        Self {
            format_version: crate::state::format::GATE_SUMMARY,
            cycle,
            overall_result: GateResult::Passed,
            failed_count: 0,
            warning_count: 0,
            categories: BTreeMap::new(),
            checks: Vec::new(),
            notes: Vec::new(),
            cancelled: false,
            not_run: Vec::new(),
            new_count: None,
            preexisting_count: None,
        }
    }

    /// The summary of `categories` for `cycle`: the counts are theirs summed, the result FAILED
    /// when any failure is counted.
    pub fn of_categories(cycle: u32, categories: BTreeMap<String, CategorySummary>) -> Self {
        let failed_count = categories.values().map(|c| c.failures).sum();
        let warning_count = categories.values().map(|c| c.warnings).sum();
        Self {
            overall_result: if failed_count == 0 {
                GateResult::Passed
            } else {
                GateResult::Failed
            },
            failed_count,
            warning_count,
            categories,
            ..Self::empty(cycle)
        }
    }

    /// The identity of the findings (categories, counts and details, in no particular order):
    /// two cycles with the same fingerprint found the same things.
    pub fn state_fingerprint(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut hasher = Sha256::new();
        for (name, category) in &self.categories {
            hasher.update(name.as_bytes());
            hasher.update(category.failures.to_le_bytes());
            hasher.update(category.details_omitted.to_le_bytes());
            let mut details: Vec<&str> = category.details.iter().map(String::as_str).collect();
            details.sort_unstable();
            for detail in details {
                hasher.update(detail.as_bytes());
                hasher.update([0u8]);
            }
            hasher.update([1u8]);
        }
        crate::encoding::hex_digest(hasher)
    }
}

/// One category's result: failures count toward the gate, warnings do not.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CategorySummary {
    pub passed: bool,
    pub failures: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub warnings: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<String>,
    /// Details left out of `details` to keep the file small.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub details_omitted: u64,
    /// A check of this category failed without any finding its parser could read.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unparsed: bool,
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// How one check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckStatus {
    Passed,
    Failed,
    /// The check could not give a result: its command was not found, it could not start, or it
    /// was stopped at its deadline. Counted under the `infra` category, never as its own.
    Infra,
}

/// What one check did: its command's end, and what its parser found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRecord {
    pub name: String,
    pub category: String,
    pub parser: String,
    pub status: CheckStatus,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub duration_ms: u64,
    #[serde(default)]
    pub timed_out: bool,
    pub counts: SeverityCounts,
    /// The counts the tool itself printed, when its parser reads them.
    #[serde(default)]
    pub expected_count: Option<ExpectedCount>,
    #[serde(default)]
    pub tests: Option<TestCounts>,
    #[serde(default)]
    pub unparsed: bool,
    /// A failing exit code (1) for which the parser read only notes, as `exit 1; 1 note, no
    /// errors`: the notes count by their level (they fail nothing), not the exit code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failing_exit: Option<String>,
    pub output_bytes: u64,
    /// Lines longer than the limit, cut with a marker.
    #[serde(default)]
    pub lines_cut: u64,
    #[serde(default)]
    pub infra_reason: Option<String>,
    /// Processes the check left running kept its output open and were stopped.
    #[serde(default)]
    pub leftover_processes_stopped: bool,
    /// A process outside the check's group held its output open; the rest was not read.
    #[serde(default)]
    pub output_abandoned: bool,
    /// Flaky at the baseline: its result changed between runs; its findings are not counted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub flaky: bool,
    /// Findings the baseline found flaky (tests that passed alone, a flaky check's baseline
    /// failures), by test id or detail: not counted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excused: Vec<String>,
    /// Tracked files the check changed (a check must only read), put back after it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wrote_tracked: Vec<String>,
}

/// Counts a tool printed about its own findings (`Found 12 errors`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpectedCount {
    pub error: Option<u64>,
    pub warning: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    impl GateSummary {
        /// A summary of `cycle` whose categories have these failure counts (for tests).
        pub fn with_failures(cycle: u32, categories: &[(&str, u64)]) -> Self {
            let categories: BTreeMap<String, CategorySummary> = categories
                .iter()
                .map(|&(name, failures)| {
                    let summary = CategorySummary {
                        passed: failures == 0,
                        failures,
                        ..CategorySummary::default()
                    };
                    (name.to_string(), summary)
                })
                .collect();
            Self::of_categories(cycle, categories)
        }
    }
}
