//! What a run tells the CI system it runs in. On GitHub Actions: annotations for the findings
//! that remain (on stdout, where the runner reads workflow commands), the step summary and the
//! step's outputs. Other systems read the files in the state dir.

use std::io::Write;

use crate::ci::github::{
    CategoryChange, GitHubFiles, SummaryInput, annotations, append_outputs, append_step_summary,
    step_summary,
};
use crate::ci::{CiChoice, CiSystem};
use crate::config::Settings;
use crate::run::RunReport;

/// The CI system: `--ci`, else `REFINE_LOOP_CI`, else detected.
pub fn ci_system(flag: Option<CiChoice>) -> CiSystem {
    let lookup = |name: &str| std::env::var(name).ok();
    let choice = flag
        .or_else(|| {
            lookup("REFINE_LOOP_CI")
                .filter(|value| !value.is_empty())
                .and_then(|value| value.parse().ok())
        })
        .unwrap_or_default();
    choice.resolve(lookup)
}

/// Publishes a finished run; a surface that cannot be written is a warning, not a failed run.
pub fn publish_run(
    system: CiSystem,
    settings: &Settings,
    report: &RunReport,
    stdout: &mut dyn Write,
) {
    if system != CiSystem::GitHub {
        return;
    }
    let redactor = match crate::ci::process_redactor() {
        Ok(redactor) => redactor,
        Err(error) => {
            tracing::warn!(%error, "nothing is published to GitHub");
            return;
        }
    };
    let files = GitHubFiles::from_lookup(|name| std::env::var(name).ok());
    let workspace = files
        .workspace
        .clone()
        .unwrap_or_else(|| settings.target.clone());
    for line in annotations(&report.remaining, &workspace, &settings.target, redactor) {
        let _ = writeln!(stdout, "{line}");
    }
    let report_path = settings.state_dir.join("REFINE-LOOP-FINAL.md");
    let patch_path = settings.state_dir.join("refine-loop.patch");
    if let Some(path) = &files.step_summary {
        let categories = report
            .history
            .categories
            .iter()
            .map(|(name, cycles)| CategoryChange {
                name: name.clone(),
                before: cycles.first().map_or(0, |c| c.failures),
                after: cycles.last().map_or(0, |c| c.failures),
            })
            .collect();
        let input = SummaryInput {
            outcome: report.outcome.as_str().to_string(),
            stop_reason: Some(report.stop_reason.as_str().to_string()),
            categories,
            trend: report.trend.cycles.iter().map(|c| c.failed_count).collect(),
            findings: report.remaining.clone(),
            report_path: Some(report_path.display().to_string()),
        };
        if let Err(error) = append_step_summary(path, &step_summary(&input, redactor), redactor) {
            tracing::warn!(%error, "could not write the step summary");
        }
    }
    if let Some(path) = &files.output {
        let cycles = report.trend.cycles.len().saturating_sub(1).to_string();
        let (before, after) = (
            report.baseline_failed.to_string(),
            report.final_failed.to_string(),
        );
        let patch = if patch_path.exists() {
            patch_path.display().to_string()
        } else {
            String::new()
        };
        let pairs = [
            ("outcome", report.outcome.as_str()),
            ("stop-reason", report.stop_reason.as_str()),
            ("failed-before", before.as_str()),
            ("failed-after", after.as_str()),
            ("cycles", cycles.as_str()),
            ("patch-path", patch.as_str()),
            ("report-path", &report_path.display().to_string()),
        ];
        if let Err(error) = append_outputs(path, &pairs, redactor) {
            tracing::warn!(%error, "could not write the step's outputs");
        }
    }
}
