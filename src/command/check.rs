//! `refine-loop check`: run the gate once, write cycle 0 (the files of the run or check before
//! it set aside first), print the table.

use std::io::Write;

use super::CommandError;
use crate::cancel::Cancel;
use crate::cli::{CheckArgs, GateArgs};
use crate::config::Settings;
use crate::config::{self, Overrides};
use crate::exit_code;
use crate::gate;
use crate::model::{CategoryHistory, CheckStatus, GateResult, Outcome, Trend};
use crate::report::{Mode, Report, render_table};
use crate::state::{self, Layout};

/// Runs the gate once; returns the exit code.
pub fn check(
    args: &CheckArgs,
    cancel: &Cancel,
    stdout: &mut dyn Write,
) -> Result<i32, CommandError> {
    let mut settings = config::load(&overrides(&args.gate).with_environment()?)?;
    if let Some(reason) = crate::workspace::refuse_state_dir(&settings.target, &settings.state_dir)
    {
        return Err(CommandError::Usage(reason));
    }
    let _lock = crate::campaign::books::lock_state_dir(&settings.state_dir)
        .map_err(CommandError::Campaign)?;
    super::recover::refuse_interrupted(&settings.target)?;
    // Pull-request mode: only the findings new since the base count.
    let skipped =
        crate::engine::resolve_new_since(&mut settings, &|name| std::env::var(name).ok(), cancel)
            .map_err(|error| match error {
            crate::engine::RunError::NewSince(error) => CommandError::Usage(error.to_string()),
            error => CommandError::Run(error),
        })?;
    let layout = Layout::new(&settings.state_dir);
    // The files of the run or check before this one go first: the folder holds this check's.
    crate::engine::set_aside_last(&layout)?;
    let cycle_dir = state::cycle_dir(layout.dir(), 0)?;
    let mut run = gate::run_gate(
        &settings,
        &gate::Flaky::default(),
        (0, &cycle_dir),
        cancel,
        None,
        None,
    )?;
    if let Some(since) = &settings.run.since
        && !run.cancelled
    {
        let preexisting = crate::engine::preexisting_at_baseline(since, &run.checks, &run.flaky)?;
        run.flaky.preexisting = Some(preexisting);
        let summary = gate::summarize(0, &run.checks, Some(&run.flaky));
        run.summary = crate::model::GateSummary {
            cancelled: run.summary.cancelled,
            not_run: std::mem::take(&mut run.summary.not_run),
            ..summary
        };
    }
    if let Some(reason) = skipped {
        run.summary.notes.push(reason);
    }
    state::write_json(&layout.cycle_summary(0), &run.summary)?;
    for note in &run.summary.notes {
        tracing::warn!("{note}");
    }
    let report = report_of(&settings, layout, &run);
    crate::engine::write_findings(
        &report.layout.cycle_findings(0),
        &report.findings,
        &run.checks,
    )?;
    crate::report::write_report_files(&report).map_err(CommandError::Reports)?;
    let summary = &run.summary;
    // Why each check that gave no result gave none (a command not found names the command),
    // and what a failing exit stood for when its parser read no error.
    let infra: String = (summary.checks.iter())
        .filter_map(|check| {
            let why = (check.infra_reason.as_ref()).or(check.failing_exit.as_ref())?;
            Some(format!("check \"{}\": {why}\n", check.name))
        })
        .collect();
    let text = format!(
        "{}{infra}gate {}: {} failures, {} warnings; {}\n",
        render_table(summary),
        verdict(&report),
        summary.failed_count,
        summary.warning_count,
        report.main_file().display()
    );
    super::print(stdout, &text);
    super::publish::publish(super::publish::ci_system(args.gate.ci), &report, stdout);
    Ok(exit_code::of_outcome(report.outcome))
}

/// The gate run as the one report.
fn report_of(settings: &Settings, layout: Layout, run: &gate::GateRun) -> Report {
    let summary = &run.summary;
    let infra = summary
        .checks
        .iter()
        .any(|c| c.status == CheckStatus::Infra);
    let outcome = match (run.cancelled, infra, summary.overall_result) {
        (true, _, _) => Outcome::Cancelled,
        (false, true, _) => Outcome::Error,
        (false, false, GateResult::Passed) => Outcome::Success,
        (false, false, GateResult::Failed) => Outcome::NeedsFix,
    };
    let mut trend = Trend::default();
    trend.push(summary, None, false);
    let mut history = CategoryHistory::default();
    history.push(summary);
    Report {
        layout,
        trend,
        history,
        findings: crate::engine::diagnostics_of(run).0,
        checks: crate::engine::check_findings(summary, &run.checks, &run.flaky),
        new_since: (settings.run.since.as_ref())
            .map(|since| crate::engine::note_of(since, summary)),
        ..Report::new(Mode::Check, outcome, settings, summary.clone())
    }
}

/// How the gate ended, in the table's last line.
fn verdict(report: &Report) -> &'static str {
    match report.outcome {
        Outcome::Success => "PASSED",
        Outcome::Error => "ERROR (infrastructure failure)",
        Outcome::Cancelled => "CANCELLED",
        Outcome::NeedsFix | Outcome::Budget => "FAILED",
    }
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
        shard: args.shard,
        config_from_ref: args.config_from_ref.clone(),
        new_since: args.new_since.clone(),
        ..Overrides::default()
    }
}
