//! `refine-loop run`: the loop, with its outcome as the exit code.

use std::io::Write;

use super::CommandError;
use super::check::overrides;
use crate::cancel::Cancel;
use crate::cli::{IsolateMode, RunArgs, VerifyMode};
use crate::config::{self, ConfigError, Isolate, Overrides, Verify};
use crate::exit_code;
use crate::run::run_loop;

/// Runs the loop; returns the exit code.
pub fn run(args: &RunArgs, cancel: &Cancel, stdout: &mut dyn Write) -> Result<i32, CommandError> {
    let layers = Overrides {
        max_cycles: args.max_cycles,
        time_budget: args.time_budget,
        verify: args.verify.map(|mode| match mode {
            VerifyMode::PerCycle => Verify::PerCycle,
            VerifyMode::PerDelegate => Verify::PerDelegate,
        }),
        isolate: args.isolate.map(|mode| match mode {
            IsolateMode::None => Isolate::None,
            IsolateMode::Worktree => Isolate::Worktree,
        }),
        ..overrides(&args.gate)
    };
    let mut settings = config::load(&layers.with_environment()?)?;
    if settings.delegates.is_empty() {
        return Err(ConfigError::invalid_at(
            &settings.config_file,
            "",
            None,
            "delegate",
            "run needs at least one [[delegate]] (a fixer or an agent command bound to categories)",
        )
        .into());
    }
    // Not locked for the whole run: the signal thread and the logs write to stderr too.
    let mut console = std::io::stderr();
    // Removed (with its branch) when the run ends, however it ends.
    let _isolation = match settings.run.isolate {
        Isolate::Worktree => {
            let isolation = crate::run::Isolation::enter(&mut settings)?;
            tracing::info!(worktree = %settings.target.display(), "working in a linked worktree");
            Some(isolation)
        }
        Isolate::None => None,
    };
    let report = run_loop(&settings, cancel, &mut console)?;
    let outcome = report.outcome.as_str();
    let text = format!(
        "{outcome}: {} ({}); failed {} → {} in {} cycles; {}\n",
        report.stop_reason.as_str(),
        report.stop_reason.explain(),
        report.baseline_failed,
        report.final_failed,
        report.trend.cycles.len().saturating_sub(1),
        settings.state_dir.join("REFINE-LOOP-FINAL.md").display()
    );
    if let Err(error) = stdout.write_all(text.as_bytes())
        && error.kind() != std::io::ErrorKind::BrokenPipe
    {
        tracing::warn!(%error, "could not print the outcome");
    }
    Ok(if args.exit_zero {
        exit_code::SUCCESS
    } else {
        report.outcome.exit_code()
    })
}
