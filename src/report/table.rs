//! The short table `check` prints: category, passed, failures, warnings.

use crate::model::GateSummary;

/// Renders the summary as an aligned plain-text table, one category a row.
pub fn render_table(summary: &GateSummary) -> String {
    let header = ["CATEGORY", "PASSED", "FAILURES", "WARNINGS"];
    let rows: Vec<[String; 4]> = summary
        .categories
        .iter()
        .map(|(name, category)| {
            [
                name.clone(),
                if category.passed { "yes" } else { "no" }.to_string(),
                category.failures.to_string(),
                category.warnings.to_string(),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut push_row = |cells: [&str; 4]| {
        let line = format!(
            "{:<w0$}  {:<w1$}  {:>w2$}  {:>w3$}",
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
            w3 = widths[3]
        );
        out.push_str(line.trim_end());
        out.push('\n');
    };
    push_row(header);
    for row in &rows {
        push_row([&row[0], &row[1], &row[2], &row[3]]);
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::model::{CategorySummary, GateResult};

    #[test]
    fn aligned_rows() {
        let mut categories = BTreeMap::new();
        categories.insert(
            "lint".to_string(),
            CategorySummary {
                passed: false,
                failures: 12,
                warnings: 3,
                ..CategorySummary::default()
            },
        );
        categories.insert(
            "tests".to_string(),
            CategorySummary {
                passed: true,
                ..CategorySummary::default()
            },
        );
        let summary = GateSummary {
            format_version: 1,
            cycle: 0,
            overall_result: GateResult::Failed,
            failed_count: 12,
            warning_count: 3,
            categories,
            checks: Vec::new(),
            notes: Vec::new(),
            cancelled: false,
            not_run: Vec::new(),
            new_count: None,
            preexisting_count: None,
        };
        assert_eq!(
            render_table(&summary),
            "CATEGORY  PASSED  FAILURES  WARNINGS\n\
             lint      no            12         3\n\
             tests     yes            0         0\n"
        );
    }

    #[test]
    fn the_table_of_a_run() {
        let report = crate::report::fixture::report(crate::report::Mode::Check);
        insta::assert_snapshot!(render_table(&report.baseline));
    }
}
