//! `findings.json`: every finding of a gate run that counts (not those the baseline excused as
//! flaky), so that `merge` can unite shards by fingerprint instead of adding their counts.

use serde::{Deserialize, Serialize};

use super::Diagnostic;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FindingsFile {
    pub format_version: u32,
    /// Every finding was kept: when `false`, some were only counted (past the per-check limits)
    /// and the list is not the whole state.
    pub complete: bool,
    pub findings: Vec<Diagnostic>,
}

impl FindingsFile {
    pub fn new(findings: Vec<Diagnostic>, complete: bool) -> Self {
        Self {
            format_version: crate::state::format::FINDINGS,
            complete,
            findings,
        }
    }
}
