//! The accept rule: a change is kept when the gate is no worse anywhere.

use crate::gate::INFRA_CATEGORY;
use crate::model::GateSummary;

/// Why `after` is worse than `before`; empty when the change may be kept: total failures did not
/// rise, no category got more failures (so none that passed now fails), and the gate still ran.
pub fn reasons_to_reject(before: &GateSummary, after: &GateSummary) -> Vec<String> {
    let mut reasons = Vec::new();
    if after.failed_count > before.failed_count {
        reasons.push(format!(
            "failures rose from {} to {}",
            before.failed_count, after.failed_count
        ));
    }
    for (name, category) in &after.categories {
        let was = before.categories.get(name).map_or(0, |c| c.failures);
        if name == INFRA_CATEGORY && category.failures > 0 {
            reasons.push("the gate could not run every check (infra)".to_string());
        } else if category.failures > was {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Categories and their failure counts.
    type Counts<'a> = &'a [(&'a str, u64)];

    fn summary(categories: Counts<'_>) -> GateSummary {
        GateSummary::with_failures(0, categories)
    }

    #[test]
    fn the_rule_at_its_boundaries() {
        // (before, after, kept)
        let table: [(Counts<'_>, Counts<'_>, bool); 8] = [
            (&[("lint", 5)], &[("lint", 3)], true),
            (&[("lint", 5)], &[("lint", 5)], true),
            (&[("lint", 5)], &[("lint", 6)], false),
            (
                &[("lint", 5), ("tests", 0)],
                &[("lint", 0), ("tests", 1)],
                false,
            ),
            (
                &[("lint", 5), ("tests", 2)],
                &[("lint", 2), ("tests", 3)],
                false,
            ),
            (&[("lint", 5)], &[("lint", 2), ("types", 1)], false),
            (
                &[("lint", 5), ("tests", 1)],
                &[("lint", 0), ("tests", 0)],
                true,
            ),
            (&[("lint", 5)], &[("lint", 0), ("infra", 1)], false),
        ];
        for (before, after, kept) in table {
            let reasons = reasons_to_reject(&summary(before), &summary(after));
            assert_eq!(
                reasons.is_empty(),
                kept,
                "{before:?} -> {after:?}: {reasons:?}"
            );
        }
    }
}
