//! The findings that were there before the change, as a count per line-independent key, and
//! which findings of a later gate run they excuse.

use std::collections::{BTreeMap, HashMap};

use crate::model::Diagnostic;

/// The key a finding is matched by across commits: its check, file, code and message (digits
/// made `0`), never its line, so a finding the change only moved is the same finding.
pub fn finding_key(check: &str, finding: &Diagnostic) -> String {
    let message: String = finding
        .message
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .map(|c| if c.is_ascii_digit() { '0' } else { c })
        .collect();
    format!(
        "{check}\0{}\0{}\0{message}",
        finding
            .file
            .as_deref()
            .unwrap_or_default()
            .trim_start_matches("./"),
        finding.code.as_deref().unwrap_or_default()
    )
}

/// The pre-existing findings, counted by key: a key seen twice before the change excuses two
/// findings, and a third one is new. So a pre-existing finding that gets worse (more of it)
/// counts against the change.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Preexisting {
    counts: BTreeMap<String, u32>,
}

impl Preexisting {
    /// Counts `keys`.
    pub fn of(keys: impl IntoIterator<Item = String>) -> Self {
        let mut counts = BTreeMap::new();
        for key in keys {
            *counts.entry(key).or_insert(0) += 1;
        }
        Self { counts }
    }

    /// Findings they stand for.
    pub fn total(&self) -> u64 {
        self.counts.values().map(|&count| u64::from(count)).sum()
    }

    /// For each of a check's findings, in order, whether it is pre-existing: the first findings
    /// of each key, as many as were there before. `skip` names findings excused otherwise (they
    /// take no count).
    pub fn mark(
        &self,
        check: &str,
        findings: &[Diagnostic],
        skip: &dyn Fn(&Diagnostic) -> bool,
    ) -> Vec<bool> {
        let mut used: HashMap<String, u32> = HashMap::new();
        findings
            .iter()
            .map(|finding| {
                if self.counts.is_empty() || skip(finding) {
                    return false;
                }
                let key = finding_key(check, finding);
                let Some(&allowed) = self.counts.get(&key) else {
                    return false;
                };
                let taken = used.entry(key).or_insert(0);
                if *taken < allowed {
                    *taken += 1;
                    true
                } else {
                    false
                }
            })
            .collect()
    }
}
