//! The findings of shards as one state, by fingerprint. A finding counts at the end when every
//! shard with authority over it still has it: the shards that knew it (at their baseline or at
//! their end) and whose scope holds its path; when no such shard's scope holds it (outside
//! every scope, or no path), every shard that knew it. So shards that each ran the whole gate
//! with different `--scope`s count as one run over the whole repository, and shards that ran
//! different checks add up. Repeated findings count by multiplicity.

use std::collections::BTreeMap;

use crate::model::{CategorySummary, Diagnostic, GateSummary, Severity};
use crate::scope::Scope;

/// A finding as the union counts it: its fingerprint, category, severity and path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Counted {
    pub fingerprint: String,
    pub category: String,
    pub severity: Severity,
    pub file: Option<String>,
    /// The line a summary shows for it.
    pub detail: String,
}

/// One shard's side of the union: its scope, and what it counted at the start and the end.
#[derive(Debug)]
pub struct Side<'a> {
    pub scope: &'a Scope,
    pub baseline: &'a [Counted],
    pub last: &'a [Counted],
}

/// Everything a gate summary counts, as findings: the kept findings (their category settled)
/// and, for each check whose failure has no finding (unparsed, or the check could not run), one
/// named after the check. `None` when that does not give the summary's counts back (findings
/// left out past the limits, say): then the shard can only be added.
pub fn counted(summary: &GateSummary, findings: &[Diagnostic]) -> Option<Vec<Counted>> {
    let mut out: Vec<Counted> = findings
        .iter()
        .map(|d| Counted {
            // The category too: one tool's finding reported by two checks of different
            // categories (two shards of the gate's checks, say) is two findings.
            fingerprint: format!(
                "{}\u{0}{}",
                d.category.as_deref().unwrap_or_default(),
                d.fingerprint
            ),
            category: d.category.clone().unwrap_or_default(),
            severity: d.severity,
            file: d.file.clone().filter(|_| !d.outside_target),
            detail: d.detail(),
        })
        .collect();
    for check in &summary.checks {
        let (kind, category) = match check.status {
            crate::model::CheckStatus::Infra => ("infra", crate::gate::INFRA_CATEGORY),
            _ if check.unparsed => ("unparsed", check.category.as_str()),
            _ => continue,
        };
        out.push(Counted {
            fingerprint: format!("{kind}:{}", check.name),
            category: category.to_string(),
            severity: Severity::Error,
            file: None,
            detail: format!("{}: failed without a finding ({kind})", check.name),
        });
    }
    let categories = categories_of(&out);
    let agrees = summary.categories.iter().all(|(name, category)| {
        categories
            .get(name)
            .map_or((0, 0), |c| (c.failures, c.warnings))
            == (category.failures, category.warnings)
    }) && categories.iter().all(|(name, category)| {
        summary.categories.contains_key(name) || (category.failures, category.warnings) == (0, 0)
    });
    agrees.then_some(out)
}

/// The baseline of the shards as one: each fingerprint as many times as the shard that counted
/// it most.
pub fn baseline(sides: &[Side<'_>]) -> Vec<Counted> {
    let mut most: BTreeMap<&str, Vec<&Counted>> = BTreeMap::new();
    for side in sides {
        for (fingerprint, group) in grouped(side.baseline) {
            let entry = most.entry(fingerprint).or_default();
            if group.len() > entry.len() {
                *entry = group;
            }
        }
    }
    most.into_values().flatten().cloned().collect()
}

/// The end of the shards as one: each fingerprint as many times as every shard with authority
/// over it still counts it (the fewest).
pub fn last(sides: &[Side<'_>]) -> Vec<Counted> {
    let groups: Vec<BTreeMap<&str, Vec<&Counted>>> = sides
        .iter()
        .map(|side| grouped(side.last).into_iter().collect())
        .collect();
    let bases: Vec<BTreeMap<&str, Vec<&Counted>>> = sides
        .iter()
        .map(|side| grouped(side.baseline).into_iter().collect())
        .collect();
    let mut out = Vec::new();
    let mut seen: BTreeMap<&str, ()> = BTreeMap::new();
    for group in &groups {
        for (fingerprint, found) in group {
            if seen.insert(fingerprint, ()).is_some() {
                continue;
            }
            let knew: Vec<usize> = (0..sides.len())
                .filter(|&s| {
                    groups[s].contains_key(fingerprint) || bases[s].contains_key(fingerprint)
                })
                .collect();
            let holds = |s: &usize| {
                found[0]
                    .file
                    .as_deref()
                    .is_some_and(|file| sides[*s].scope.holds(file))
            };
            let scoped: Vec<usize> = knew.iter().copied().filter(holds).collect();
            let authority = if scoped.is_empty() { knew } else { scoped };
            let fewest = authority
                .iter()
                .map(|&s| groups[s].get(fingerprint).map_or(0, Vec::len))
                .min()
                .unwrap_or(0);
            // The copies of a shard with authority: every one of them has at least `fewest`.
            let copies = authority
                .first()
                .and_then(|&s| groups[s].get(fingerprint))
                .unwrap_or(found);
            out.extend(copies.iter().take(fewest).map(|c| (*c).clone()));
        }
    }
    out.sort();
    out
}

/// The categories of counted findings: errors are failures, warnings warnings; the first 100
/// lines are kept as details.
pub fn categories_of(counted: &[Counted]) -> BTreeMap<String, CategorySummary> {
    let mut categories: BTreeMap<String, CategorySummary> = BTreeMap::new();
    for finding in counted {
        let category = categories.entry(finding.category.clone()).or_default();
        match finding.severity {
            Severity::Error => category.failures += 1,
            Severity::Warning => category.warnings += 1,
            Severity::Note => continue,
        }
        if finding.severity == Severity::Error {
            if category.details.len() < 100 {
                category.details.push(finding.detail.clone());
            } else {
                category.details_omitted += 1;
            }
        }
    }
    for category in categories.values_mut() {
        category.passed = category.failures == 0;
    }
    categories
}

fn grouped(counted: &[Counted]) -> BTreeMap<&str, Vec<&Counted>> {
    let mut groups: BTreeMap<&str, Vec<&Counted>> = BTreeMap::new();
    for finding in counted {
        groups
            .entry(finding.fingerprint.as_str())
            .or_default()
            .push(finding);
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(fingerprint: &str, file: Option<&str>) -> Counted {
        Counted {
            fingerprint: fingerprint.into(),
            category: "lint".into(),
            severity: Severity::Error,
            file: file.map(Into::into),
            detail: fingerprint.into(),
        }
    }

    fn names(counted: &[Counted]) -> Vec<&str> {
        counted.iter().map(|c| c.fingerprint.as_str()).collect()
    }

    #[test]
    fn the_end_counts_what_every_shard_with_authority_still_has() {
        let everything = Scope::default();
        let a = Scope::of_patterns(&["a".into()]).unwrap();
        let b = Scope::of_patterns(&["b".into()]).unwrap();
        let all = [
            finding("fa", Some("a/x.rs")),
            finding("fb", Some("b/x.rs")),
            finding("fc", Some("c/x.rs")),
            finding("fn", None),
        ];
        // (case, shards as (scope, baseline, last), counted at the end)
        type Shards<'a> = Vec<(&'a Scope, Vec<Counted>, Vec<Counted>)>;
        let table: [(&str, Shards<'_>, &[&str]); 5] = [
            (
                "each fixed its own scope",
                vec![
                    (
                        &a,
                        all.to_vec(),
                        vec![all[1].clone(), all[2].clone(), all[3].clone()],
                    ),
                    (
                        &b,
                        all.to_vec(),
                        vec![all[0].clone(), all[2].clone(), all[3].clone()],
                    ),
                ],
                &["fc", "fn"],
            ),
            (
                "a change outside a shard's scope does not count",
                vec![
                    (&a, all.to_vec(), all.to_vec()),
                    (
                        &b,
                        all.to_vec(),
                        vec![all[1].clone(), all[2].clone(), all[3].clone()],
                    ),
                ],
                &["fa", "fb", "fc", "fn"],
            ),
            (
                "a finding new in one scope counts",
                vec![
                    (&a, vec![], vec![finding("new", Some("a/y.rs"))]),
                    (&b, vec![], vec![]),
                ],
                &["new"],
            ),
            (
                "shards of different checks add up",
                vec![
                    (&everything, vec![all[0].clone()], vec![all[0].clone()]),
                    (&everything, vec![all[1].clone()], vec![all[1].clone()]),
                ],
                &["fa", "fb"],
            ),
            (
                "a finding with no path is gone when one shard that knew it lost it",
                vec![
                    (&a, vec![all[3].clone()], vec![]),
                    (&b, vec![all[3].clone()], vec![all[3].clone()]),
                ],
                &[],
            ),
        ];
        for (case, shards, expected) in table {
            let sides: Vec<Side<'_>> = shards
                .iter()
                .map(|(scope, baseline, last)| Side {
                    scope,
                    baseline,
                    last,
                })
                .collect();
            assert_eq!(names(&last(&sides)), expected, "{case}");
        }
    }

    #[test]
    fn repeated_findings_count_by_multiplicity() {
        let everything = Scope::default();
        let twice = vec![finding("f", Some("x")), finding("f", Some("x"))];
        let once = vec![finding("f", Some("x"))];
        let sides = [
            Side {
                scope: &everything,
                baseline: &twice,
                last: &twice,
            },
            Side {
                scope: &everything,
                baseline: &twice,
                last: &once,
            },
        ];
        assert_eq!(baseline(&sides).len(), 2);
        assert_eq!(last(&sides).len(), 1);
    }

    #[test]
    fn the_copies_come_from_a_shard_with_authority() {
        let a = Scope::of_patterns(&["a".into()]).unwrap();
        let b = Scope::of_patterns(&["b".into()]).unwrap();
        let twice = vec![finding("f", Some("b/x")), finding("f", Some("b/x"))];
        let once = vec![finding("f", Some("b/x"))];
        // A (no authority over b/x) lost a copy; B, which has it, kept both.
        let sides = [
            Side {
                scope: &a,
                baseline: &twice,
                last: &once,
            },
            Side {
                scope: &b,
                baseline: &twice,
                last: &twice,
            },
        ];
        assert_eq!(last(&sides).len(), 2);
    }
}
