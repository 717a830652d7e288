//! The accept rule: a change is kept when it made nothing worse. A fixer that lets more of the
//! code compile or run can bring findings to light that were there all along, hidden behind an
//! error it fixed: those are *unmasked*, not a regression, and become part of the kept state.

use std::collections::{HashMap, HashSet};

use crate::config::Accept;
use crate::gate::INFRA_CATEGORY;
use crate::model::{Diagnostic, GateSummary, Severity};

/// A gate run as the accept rule reads it: its summary, its findings, and the check each came
/// from (`checks[i]` is `findings[i]`'s).
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    pub summary: &'a GateSummary,
    pub findings: &'a [Diagnostic],
    pub checks: &'a [String],
}

/// The rule's verdict on a change.
#[derive(Debug, Default)]
pub struct Verdict {
    /// Why the change goes; empty when it may be kept.
    pub reasons: Vec<String>,
    /// New findings the change brought to light outside what it touched, in categories that
    /// failed already (kept changes only).
    pub unmasked: Vec<Diagnostic>,
}

/// Judges the change from `before` to `after` by `rule`; `changed` says whether a file (as the
/// findings name it, relative to the target) is one the change touched.
///
/// `strict`: total failures did not rise, no category got more failures, the gate still ran.
/// `unmask` (the default): the same, but that a new finding in a file the change did not touch,
/// in a category that failed before, is unmasked rather than worse, as long as the change also
/// removed a finding of the same check (the fix that let more of what that check reads compile
/// or run). A new finding in a touched file, or without a file, or in a category that passed, or
/// from a check where the change removed nothing, is a regression.
pub fn judge(
    rule: Accept,
    before: Side<'_>,
    after: Side<'_>,
    changed: &dyn Fn(&str) -> bool,
) -> Verdict {
    let strict = reasons_to_reject(before.summary, after.summary, &HashMap::new());
    if rule == Accept::Strict || strict.is_empty() {
        return Verdict {
            reasons: strict,
            unmasked: Vec::new(),
        };
    }
    let (new, resolved) = new_failures(before, after);
    if resolved.is_empty() {
        // It fixed nothing: what appeared is its doing, whatever file it is in.
        return Verdict {
            reasons: strict,
            unmasked: Vec::new(),
        };
    }
    let failed_before = |category: &str| {
        before
            .summary
            .categories
            .get(category)
            .is_some_and(|c| c.failures > 0)
    };
    let (unmasked, _regressed): (Vec<_>, Vec<_>) = new.into_iter().partition(|(check, d)| {
        let category = d.category.as_deref().unwrap_or_default();
        d.file.as_deref().is_some_and(|file| !changed(file))
            && !d.outside_target
            && failed_before(category)
            && resolved.contains(*check)
    });
    let unmasked: Vec<&Diagnostic> = unmasked.into_iter().map(|(_, d)| d).collect();
    let mut allowance: HashMap<&str, u64> = HashMap::new();
    for d in &unmasked {
        *allowance
            .entry(d.category.as_deref().unwrap_or_default())
            .or_default() += 1;
    }
    let reasons = reasons_to_reject(before.summary, after.summary, &allowance);
    if !reasons.is_empty() {
        return Verdict {
            reasons,
            unmasked: Vec::new(),
        };
    }
    Verdict {
        reasons,
        unmasked: unmasked.into_iter().cloned().collect(),
    }
}

/// The failing findings of `after` that `before` did not have (by check and fingerprint,
/// counting repeats), with their check; and the checks some of whose findings in `before` are
/// gone.
fn new_failures<'a>(
    before: Side<'_>,
    after: Side<'a>,
) -> (Vec<(&'a str, &'a Diagnostic)>, HashSet<String>) {
    let mut left: HashMap<(String, &str), usize> = HashMap::new();
    for (d, check) in before.findings.iter().zip(before.checks) {
        if d.severity == Severity::Error {
            *left
                .entry((check.clone(), d.fingerprint.as_str()))
                .or_default() += 1;
        }
    }
    let mut new = Vec::new();
    for (d, check) in after.findings.iter().zip(after.checks) {
        if d.severity != Severity::Error {
            continue;
        }
        match left.get_mut(&(check.clone(), d.fingerprint.as_str())) {
            Some(count) if *count > 0 => *count -= 1,
            _ => new.push((check.as_str(), d)),
        }
    }
    let resolved = (left.into_iter())
        .filter(|(_, count)| *count > 0)
        .map(|((check, _), _)| check)
        .collect();
    (new, resolved)
}

/// Why `after` is worse than `before`, beyond the failures `allowed` per category (unmasked
/// ones); empty when the change may be kept: total failures did not rise, no category got more
/// failures (so none that passed now fails), and the gate still ran.
fn reasons_to_reject(
    before: &GateSummary,
    after: &GateSummary,
    allowed: &HashMap<&str, u64>,
) -> Vec<String> {
    let mut reasons = Vec::new();
    let allowed_total: u64 = allowed.values().sum();
    if after.failed_count > before.failed_count + allowed_total {
        reasons.push(format!(
            "failures rose from {} to {}",
            before.failed_count, after.failed_count
        ));
    }
    // The same, check by check, where a category has several.
    for check in after.checks.iter().filter(|check| check.unparsed) {
        let earlier = before.checks.iter().find(|c| c.name == check.name);
        if let Some(earlier) = earlier.filter(|c| !c.unparsed && c.counts.error > 0)
            && before
                .categories
                .get(&check.category)
                .is_some_and(|c| c.unparsed)
        {
            reasons.push(format!(
                "check {} failed with {}, where it had {} finding(s): its result cannot be \
                 compared",
                check.name,
                unread_failure(&check.counts),
                earlier.counts.error
            ));
        }
    }
    for (name, category) in &after.categories {
        let earlier = before.categories.get(name);
        let was = earlier.map_or(0, |c| c.failures);
        let may = was + allowed.get(name.as_str()).copied().unwrap_or(0);
        if category.unparsed && earlier.is_some_and(|c| !c.unparsed && c.failures > 0) {
            // A tool that crashed before it printed a finding (on a file the change added)
            // fails once where it failed many times: no fix, and no result to compare.
            let mut read = crate::model::SeverityCounts::default();
            for check in (after.checks.iter()).filter(|c| c.unparsed && c.category == *name) {
                read.warning += check.counts.warning;
                read.note += check.counts.note;
            }
            reasons.push(format!(
                "{name} failed with {}, where it had {was} finding(s): its result cannot be \
                 compared",
                unread_failure(&read)
            ));
        } else if name == INFRA_CATEGORY && category.failures > 0 {
            reasons.push("the gate could not run every check (infra)".to_string());
        } else if category.failures > may {
            let how = if was == 0 {
                "passed and now fails"
            } else {
                "got worse"
            };
            reasons.push(format!("{name} {how} ({was} → {})", category.failures));
        }
    }
    reasons
}

/// How an unparsed failure is named: `nothing its parser could read`, or, when its parser read
/// warnings or notes, `no error its parser could read (it read 1 note)`.
fn unread_failure(counts: &crate::model::SeverityCounts) -> String {
    let read = crate::gate::read_besides(counts);
    if read.is_empty() {
        "nothing its parser could read".to_string()
    } else {
        format!("no error its parser could read{read}")
    }
}

#[cfg(test)]
#[path = "accept_tests.rs"]
mod tests;
