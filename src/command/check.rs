//! `refine-loop check`: run the gate once, write cycle 0, print the table.

use std::io::Write;

use super::CommandError;
use crate::cancel::Cancel;
use crate::cli::{CheckArgs, GateArgs};
use crate::config::{self, Overrides};
use crate::exit_code;
use crate::gate::{self, SUMMARY_FILE};
use crate::model::{CheckStatus, GateResult};
use crate::report::render_table;
use crate::state;

/// Runs the gate once; returns the exit code.
pub fn check(
    args: &CheckArgs,
    cancel: &Cancel,
    stdout: &mut dyn Write,
) -> Result<i32, CommandError> {
    let settings = config::load(&overrides(&args.gate).with_environment()?)?;
    let cycle_dir = state::cycle_dir(&settings.state_dir, 0)?;
    let run = gate::run_gate(&settings, &gate::Flaky::default(), 0, &cycle_dir, cancel)?;
    let summary_path = cycle_dir.join(SUMMARY_FILE);
    state::write_json(&summary_path, &run.summary)?;
    let anchor = crate::report::config_anchor(&settings.target, &settings.config_file);
    crate::report::write_ci_reports(
        &settings.state_dir,
        &crate::report::CiReportInput::from_run(&run, anchor),
    )
    .map_err(CommandError::Reports)?;

    for note in &run.summary.notes {
        tracing::warn!("{note}");
    }
    let summary = &run.summary;
    let infra = summary
        .checks
        .iter()
        .filter(|c| c.status == CheckStatus::Infra)
        .count();
    let verdict = match (run.cancelled, infra, summary.overall_result) {
        (true, _, _) => Verdict::Cancelled,
        (false, 1.., _) => Verdict::Error,
        (false, 0, GateResult::Passed) => Verdict::Passed,
        (false, 0, GateResult::Failed) => Verdict::Failed,
    };
    let text = format!(
        "{}gate {}: {} failures, {} warnings; {}\n",
        render_table(summary),
        verdict.label(),
        summary.failed_count,
        summary.warning_count,
        summary_path.display()
    );
    if let Err(error) = stdout.write_all(text.as_bytes())
        && error.kind() != std::io::ErrorKind::BrokenPipe
    {
        tracing::warn!(%error, "could not print the table");
    }
    let publication = super::publish::Publication {
        outcome: verdict.label().to_uppercase(),
        stop_reason: None,
        categories: summary
            .categories
            .iter()
            .map(|(name, c)| crate::ci::github::CategoryChange {
                name: name.clone(),
                before: c.failures,
                after: c.failures,
            })
            .collect(),
        trend: vec![summary.failed_count],
        findings: crate::engine::diagnostics_of(&run),
        report_path: summary_path.clone(),
        outputs: vec![
            ("outcome", verdict.label().to_uppercase()),
            ("failed-after", summary.failed_count.to_string()),
            ("report-path", summary_path.display().to_string()),
            ("state-dir", settings.state_dir.display().to_string()),
        ],
    };
    super::publish::publish(
        super::publish::ci_system(args.gate.ci),
        &settings,
        &publication,
        stdout,
    );
    Ok(verdict.exit_code())
}

/// The layers above the file that `check` and `run` share.
pub fn overrides(args: &GateArgs) -> Overrides {
    Overrides {
        target: args.target.target.clone(),
        config: args.target.config.clone(),
        state_dir: args.state_dir.clone(),
        gate_timeout: args.gate_timeout,
        kill_grace: args.kill_grace,
        log_limit: args.log_limit,
        ..Overrides::default()
    }
}

/// How one gate run ended, as `check` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Passed,
    Failed,
    /// A check could not give a result (not found, not executable, stopped at its deadline).
    Error,
    Cancelled,
}

impl Verdict {
    fn label(self) -> &'static str {
        match self {
            Self::Passed => "PASSED",
            Self::Failed => "FAILED",
            Self::Error => "ERROR (infrastructure failure)",
            Self::Cancelled => "CANCELLED",
        }
    }

    fn exit_code(self) -> i32 {
        match self {
            Self::Passed => exit_code::SUCCESS,
            Self::Failed => exit_code::NEEDS_FIX,
            Self::Error => exit_code::ERROR,
            Self::Cancelled => exit_code::CANCELLED,
        }
    }
}
