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
use crate::engine::RunReport;

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

/// What a command tells the CI system.
pub struct Publication {
    pub outcome: String,
    pub stop_reason: Option<String>,
    pub categories: Vec<CategoryChange>,
    pub trend: Vec<u64>,
    pub findings: Vec<crate::model::Diagnostic>,
    pub report_path: std::path::PathBuf,
    /// The step's outputs.
    pub outputs: Vec<(&'static str, String)>,
}

/// A finished run, as CI shows it.
pub fn of_run(settings: &Settings, report: &RunReport) -> Publication {
    let patch_path = settings.state_dir.join("refine-loop.patch");
    let report_path = settings.state_dir.join("REFINE-LOOP-FINAL.md");
    Publication {
        outcome: report.outcome.as_str().to_string(),
        stop_reason: Some(report.stop_reason.as_str().to_string()),
        categories: report
            .end
            .history
            .categories
            .iter()
            .map(|(name, cycles)| CategoryChange {
                name: name.clone(),
                before: cycles.first().map_or(0, |c| c.failures),
                after: cycles.last().map_or(0, |c| c.failures),
            })
            .collect(),
        trend: report
            .end
            .trend
            .cycles
            .iter()
            .map(|c| c.failed_count)
            .collect(),
        findings: report.end.kept.diagnostics.clone(),
        outputs: vec![
            ("outcome", report.outcome.as_str().to_string()),
            ("stop-reason", report.stop_reason.as_str().to_string()),
            (
                "failed-before",
                report.end.baseline.failed_count.to_string(),
            ),
            (
                "failed-after",
                report.end.kept.summary.failed_count.to_string(),
            ),
            (
                "cycles",
                report.end.trend.cycles.len().saturating_sub(1).to_string(),
            ),
            (
                "patch-path",
                if patch_path.exists() {
                    patch_path.display().to_string()
                } else {
                    String::new()
                },
            ),
            ("report-path", report_path.display().to_string()),
            ("state-dir", settings.state_dir.display().to_string()),
        ],
        report_path,
    }
}

/// Publishes to the CI system; a surface that cannot be written is a warning, not a failure.
pub fn publish(
    system: CiSystem,
    settings: &Settings,
    publication: &Publication,
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
    for line in annotations(
        &publication.findings,
        &workspace,
        &settings.target,
        redactor,
    ) {
        let _ = writeln!(stdout, "{line}");
    }
    if let Some(path) = &files.step_summary {
        let input = SummaryInput {
            outcome: publication.outcome.clone(),
            stop_reason: publication.stop_reason.clone(),
            categories: publication.categories.clone(),
            trend: publication.trend.clone(),
            findings: publication.findings.clone(),
            report_path: Some(publication.report_path.display().to_string()),
        };
        if let Err(error) = append_step_summary(path, &step_summary(&input, redactor), redactor) {
            tracing::warn!(%error, "could not write the step summary");
        }
    }
    if let Some(path) = &files.output {
        let pairs: Vec<(&str, &str)> = publication
            .outputs
            .iter()
            .map(|(name, value)| (*name, value.as_str()))
            .collect();
        if let Err(error) = append_outputs(path, &pairs, redactor) {
            tracing::warn!(%error, "could not write the step's outputs");
        }
    }
}
