//! What a command tells the CI system it runs in, from its report. On GitHub Actions:
//! annotations for the findings that remain (on stdout, where the runner reads workflow
//! commands), the step summary and the step's outputs. Other systems read the files in the
//! state dir. Every mode publishes.

use std::io::Write;

use crate::ci::github::{GitHubFiles, append_outputs, append_step_summary};
use crate::ci::{CiChoice, CiSystem};
use crate::report::{Report, annotations, outputs, step_summary};

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

/// Publishes `report` to the CI system; a surface that cannot be written is a warning, not a
/// failure.
pub fn publish(system: CiSystem, report: &Report, stdout: &mut dyn Write) {
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
        .unwrap_or_else(|| report.target.clone());
    for line in annotations(&report.findings, &workspace, &report.target, redactor) {
        let _ = writeln!(stdout, "{line}");
    }
    if let Some(path) = &files.step_summary {
        // The Action names the artifact it uploads the state dir as.
        let artifact = std::env::var("REFINE_LOOP_ARTIFACT_NAME").ok();
        let artifact = artifact.as_deref().filter(|name| !name.is_empty());
        let text = step_summary(report, artifact, redactor);
        if let Err(error) = append_step_summary(path, &text, redactor) {
            tracing::warn!(%error, "could not write the step summary");
        }
    }
    if let Some(path) = &files.output {
        let outputs = outputs(report);
        let pairs: Vec<(&str, &str)> = outputs
            .iter()
            .map(|(name, value)| (*name, value.as_str()))
            .collect();
        if let Err(error) = append_outputs(path, &pairs, redactor) {
            tracing::warn!(%error, "could not write the step's outputs");
        }
    }
}

/// The step's outputs for a run that ended before any cycle ran and left no report (a campaign
/// found finished, or ended): all nine, as after any run, with its outcome and state dir and the
/// rest empty (cycles 0), so that a workflow reads the same outputs whatever the ending.
pub fn publish_without_report(
    system: CiSystem,
    outcome: crate::model::Outcome,
    state_dir: &std::path::Path,
) {
    if system != CiSystem::GitHub {
        return;
    }
    let files = GitHubFiles::from_lookup(|name| std::env::var(name).ok());
    let (Some(path), Ok(redactor)) = (&files.output, crate::ci::process_redactor()) else {
        return;
    };
    let state_dir = state_dir.display().to_string();
    let pairs = [
        ("outcome", outcome.as_str()),
        ("stop-reason", ""),
        ("failed-before", ""),
        ("failed-after", ""),
        ("cycles", "0"),
        ("patch-path", ""),
        ("report-path", ""),
        ("sarif-path", ""),
        ("state-dir", state_dir.as_str()),
        ("tokens", ""),
        ("cost", ""),
    ];
    if let Err(error) = append_outputs(path, &pairs, redactor) {
        tracing::warn!(%error, "could not write the step's outputs");
    }
}
