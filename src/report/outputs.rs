//! The step's outputs (`$GITHUB_OUTPUT`), the same names for every mode: `outcome`,
//! `stop-reason`, `failed-before`, `failed-after`, `cycles`, `patch-path`, `report-path`,
//! `sarif-path`, `state-dir`, and what the delegates spent: `tokens`, `cost` (in US dollars;
//! `unknown` when a turn's figure is unknown, empty when no run).

use super::Report;

/// A count, or nothing when no gate ran (a run that ended in an error before its baseline).
fn counted(report: &Report, count: u64) -> String {
    if report.trend.cycles.is_empty() {
        String::new()
    } else {
        count.to_string()
    }
}

/// The outputs of `report`, as (name, value) pairs.
pub fn outputs(report: &Report) -> Vec<(&'static str, String)> {
    let patch = report
        .run
        .as_ref()
        .filter(|run| run.delivery.reference.is_some() && run.delivery.refused.is_none())
        .map_or(String::new(), |_| {
            report.layout.patch().display().to_string()
        });
    vec![
        ("outcome", report.outcome_label()),
        (
            "stop-reason",
            report
                .stop_reason
                .map_or(String::new(), |reason| reason.as_str().to_string()),
        ),
        (
            "failed-before",
            counted(report, report.baseline.failed_count),
        ),
        ("failed-after", counted(report, report.last.failed_count)),
        ("cycles", report.cycles().to_string()),
        ("patch-path", patch),
        ("report-path", report.main_file().display().to_string()),
        (
            "sarif-path",
            if report.mode == super::Mode::Merge || report.error.is_some() {
                String::new()
            } else {
                report
                    .layout
                    .dir()
                    .join(crate::state::SARIF_FILE)
                    .display()
                    .to_string()
            },
        ),
        ("state-dir", report.layout.dir().display().to_string()),
        (
            "tokens",
            report.spent().map_or(String::new(), |spent| {
                if spent.tokens_unknown > 0 {
                    "unknown".to_string()
                } else {
                    spent.tokens.to_string()
                }
            }),
        ),
        (
            "cost",
            report.spent().map_or(String::new(), |spent| {
                if spent.cost_unknown > 0 {
                    "unknown".to_string()
                } else {
                    format!("{:.4}", spent.cost_usd)
                }
            }),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Preset;
    use crate::report::{Mode, fixture};

    #[test]
    fn the_outputs_of_a_run_and_of_a_check() {
        for (name, mode) in [
            ("run", Mode::Run(Preset::Refactoring)),
            ("check", Mode::Check),
        ] {
            let lines: Vec<String> = outputs(&fixture::report(mode))
                .into_iter()
                .map(|(key, value)| format!("{key}={value}"))
                .collect();
            insta::assert_snapshot!(name, lines.join("\n"));
        }
    }
}
