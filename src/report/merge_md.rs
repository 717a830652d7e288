//! The merged report of `refine-loop merge`: the totals, a row per shard, the categories.

use std::fmt::Write as _;

use super::Report;
use crate::markdown::inline;

pub(super) fn merged_report(report: &Report) -> String {
    let last = &report.last;
    let mut text = String::from("# refine-loop: merged report\n\n");
    let _ = writeln!(
        text,
        "{} shards, {} failures and {} warnings in all.\n",
        report.shards.len(),
        last.failed_count,
        last.warning_count
    );
    text.push_str("| shard | cycles | failed first → last |\n|---|---|---|\n");
    for shard in &report.shards {
        let _ = writeln!(
            text,
            "| {} | {} | {} → {} |",
            inline(&shard.dir.display().to_string()),
            shard.cycles,
            shard.first_failed,
            shard.last_failed
        );
    }
    text.push('\n');
    text.push_str(&categories_section(last));
    text
}

/// `## Categories`: each category's failures and warnings.
pub(super) fn categories_section(summary: &crate::model::GateSummary) -> String {
    let mut text = String::from("## Categories\n\n");
    for (name, category) in &summary.categories {
        let _ = writeln!(
            text,
            "- {}: {} failures, {} warnings",
            inline(name),
            category.failures,
            category.warnings
        );
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Mode, fixture};

    #[test]
    fn the_merged_report() {
        insta::assert_snapshot!(merged_report(&fixture::report(Mode::Merge)));
    }
}
