//! The findings that were there before the change, as a count per line-independent key, and
//! which findings of a later gate run they excuse.

use std::collections::{BTreeMap, HashMap};

use crate::model::Diagnostic;

/// The key a finding is matched by across commits: its check, file, code, severity and message
/// (digits made `0`), never its line, so a finding the change only moved is the same finding,
/// and one it made more severe (a warning now an error) is not.
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
        "{check}\0{}\0{}\0{:?}\0{message}",
        finding
            .file
            .as_deref()
            .unwrap_or_default()
            .trim_start_matches("./"),
        finding.code.as_deref().unwrap_or_default(),
        finding.severity
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

    /// Why the counted findings `after` make a pre-existing finding worse than the counted
    /// findings `before` did: a key there before the change, of which more are counted now
    /// (each given as its check and finding). One sentence a key; empty when none got worse.
    pub fn worse<'a>(
        &self,
        before: impl Iterator<Item = (&'a str, &'a Diagnostic)>,
        after: impl Iterator<Item = (&'a str, &'a Diagnostic)>,
    ) -> Vec<String> {
        let mut counts: BTreeMap<String, (u32, u32, &'a Diagnostic)> = BTreeMap::new();
        for (side, findings) in [(0, before.collect::<Vec<_>>()), (1, after.collect())] {
            for (check, finding) in findings {
                let key = finding_key(check, finding);
                if !self.counts.contains_key(&key) {
                    continue;
                }
                let entry = counts.entry(key).or_insert((0, 0, finding));
                if side == 0 {
                    entry.0 += 1;
                } else {
                    entry.1 += 1;
                    entry.2 = finding;
                }
            }
        }
        counts
            .into_values()
            .filter(|(before, after, _)| after > before)
            .map(|(_, _, finding)| {
                format!(
                    "a finding there before the change got worse (more of it): {}",
                    finding.detail()
                )
            })
            .collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Severity;

    fn finding(file: &str, line: u32, message: &str) -> Diagnostic {
        Diagnostic {
            file: Some(file.into()),
            line: Some(line),
            column: None,
            end_line: None,
            end_column: None,
            severity: Severity::Error,
            code: Some("F401".into()),
            message: message.into(),
            category: None,
            fingerprint: String::new(),
            outside_target: false,
            body: None,
        }
    }

    #[test]
    fn a_key_excuses_as_many_findings_as_were_there_before() {
        let os = finding("a.py", 1, "`os` imported but unused");
        // The line and the digits in the message do not make another key.
        assert_eq!(
            finding_key("ruff", &os),
            finding_key("ruff", &finding("./a.py", 9, "`os` imported but unused"))
        );
        assert_ne!(finding_key("ruff", &os), finding_key("other", &os));
        // A warning the change made an error is not the finding that was there.
        let warning = Diagnostic {
            severity: Severity::Warning,
            ..os.clone()
        };
        assert_ne!(finding_key("ruff", &os), finding_key("ruff", &warning));
        let before = Preexisting::of([finding_key("ruff", &os)]);
        assert_eq!(before.total(), 1);
        let sys = finding("a.py", 2, "`sys` imported but unused");
        let now = [os.clone(), sys.clone(), os.clone()];
        assert_eq!(before.mark("ruff", &now, &|_| false), [true, false, false]);
        // Another check's findings are not its.
        assert_eq!(before.mark("flake8", &now, &|_| false), [false; 3]);
        // What is excused otherwise takes no count.
        let flaky = |d: &Diagnostic| d.line == Some(1);
        assert_eq!(
            before.mark(
                "ruff",
                &[os.clone(), finding("a.py", 5, &os.message)],
                &flaky
            ),
            [false, true]
        );
        assert_eq!(
            Preexisting::default().mark("ruff", &now, &|_| false),
            [false; 3]
        );
    }

    #[test]
    fn more_of_a_preexisting_finding_is_worse() {
        let os = finding("a.py", 1, "`os` imported but unused");
        let sys = finding("a.py", 2, "`sys` imported but unused");
        let before = Preexisting::of([finding_key("ruff", &os)]);
        let counted = |findings: &[&Diagnostic]| -> Vec<String> {
            findings.iter().map(|_| "ruff".to_string()).collect()
        };
        // (counted before, counted after, worse)
        let cases: [(&[&Diagnostic], &[&Diagnostic], usize); 4] = [
            (&[&sys], &[], 0),
            (&[&sys], &[&os], 1),
            (&[&os, &sys], &[&os], 0),
            (&[&sys], &[&sys, &sys], 0),
        ];
        for (was, now, worse) in cases {
            let (was_checks, now_checks) = (counted(was), counted(now));
            let reasons = before.worse(
                was_checks
                    .iter()
                    .map(String::as_str)
                    .zip(was.iter().copied()),
                now_checks
                    .iter()
                    .map(String::as_str)
                    .zip(now.iter().copied()),
            );
            assert_eq!(reasons.len(), worse, "{reasons:?}");
        }
    }
}
