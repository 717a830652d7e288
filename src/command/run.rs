//! `refine-loop run`: the loop, with its outcome as the exit code.

use std::io::Write;

use super::CommandError;
use super::check::overrides;
use crate::campaign::request::{Request, parse_request};
use crate::cancel::Cancel;
use crate::cli::{IsolateMode, PresetMode, RunArgs, VerifyMode};
use crate::config::{self, ConfigError, Isolate, Overrides, Verify};
use crate::engine::campaign::{Preset, run_campaign};
use crate::engine::run_loop;
use crate::exit_code;

/// Runs the loop; returns the exit code.
pub fn run(args: &RunArgs, cancel: &Cancel, stdout: &mut dyn Write) -> Result<i32, CommandError> {
    let preset = match args.preset {
        None | Some(PresetMode::Refactoring) => None,
        Some(PresetMode::Refine) => Some(Preset::Refine),
        Some(PresetMode::Improve) => Some(Preset::Improve),
    };
    let request = match preset {
        Some(_) => {
            parse_request(&args.request).map_err(|error| CommandError::Usage(error.to_string()))?
        }
        None if args.request.is_empty() => Request::default(),
        None => {
            return Err(CommandError::Usage(format!(
                "unexpected argument {:?}: a request (intent, --continue, theta=…) is for --preset refine or improve",
                args.request[0]
            )));
        }
    };
    if preset == Some(Preset::Improve) && (request.theta.is_some() || request.focus.is_some()) {
        return Err(CommandError::Usage(
            "theta= and focus= are for --preset refine".to_string(),
        ));
    }
    let mut gate = args.gate.clone();
    if let Some(target) = &request.target {
        gate.target.target = Some(target.clone());
    }
    if let Some(state_dir) = &request.state_dir {
        gate.state_dir = Some(state_dir.clone());
    }
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
        offline: args.offline,
        scope: args.scope.clone(),
        priority: args.priority.clone(),
        ..overrides(&gate)
    };
    let mut settings = config::load(&layers.with_environment()?)?;
    // An http delegate's key is needed from the first cycle: a missing one stops the run before
    // anything runs.
    for (index, delegate) in settings.delegates.iter().enumerate() {
        if let crate::delegate::Launch::Http(http) = &delegate.launch {
            http.key().map_err(|reason| {
                CommandError::Usage(format!("delegate[{index}].api_key_env: {reason}"))
            })?;
        }
    }
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
    if preset.is_some() && settings.run.isolate == Isolate::Worktree {
        return Err(CommandError::Usage(
            "a campaign (--preset refine or improve) works in the target itself, where its state and its earlier changes are; --isolate worktree (or [loop] isolate) is for the refactoring loop".to_string(),
        ));
    }
    // Not locked for the whole run: the signal thread and the logs write to stderr too.
    let mut console = std::io::stderr();
    // Removed (with its branch) when the run ends, however it ends.
    let _isolation = match settings.run.isolate {
        Isolate::Worktree => {
            let isolation = crate::engine::Isolation::enter(&mut settings)?;
            tracing::info!(worktree = %settings.target.display(), "working in a linked worktree");
            Some(isolation)
        }
        Isolate::None => None,
    };
    if let Some(preset) = preset {
        if request.intent.is_empty()
            && !settings
                .state_dir
                .join(crate::campaign::state::GOAL_FILE)
                .exists()
        {
            return Err(CommandError::Usage(
                "a new campaign needs an intent: what to refine or improve, after the options"
                    .to_string(),
            ));
        }
        let options = crate::engine::EngineOptions {
            github_groups: super::publish::ci_system(args.gate.ci) == crate::ci::CiSystem::GitHub,
        };
        let end = run_campaign(&settings, preset, &request, (cancel, options), &mut console)?;
        let text = format!(
            "{}: {}; {}\n",
            end.outcome.as_str(),
            end.reason,
            settings.state_dir.join("REFINE-LOOP-FINAL.md").display()
        );
        if let Err(error) = stdout.write_all(text.as_bytes())
            && error.kind() != std::io::ErrorKind::BrokenPipe
        {
            tracing::warn!(%error, "could not print the outcome");
        }
        return Ok(if args.exit_zero {
            exit_code::SUCCESS
        } else {
            exit_code::of_outcome(end.outcome)
        });
    }
    let system = super::publish::ci_system(args.gate.ci);
    let options = crate::engine::EngineOptions {
        github_groups: system == crate::ci::CiSystem::GitHub,
    };
    let report = run_loop(&settings, (cancel, options), &mut console)?;
    super::publish::publish(
        system,
        &settings,
        &super::publish::of_run(&settings, &report),
        stdout,
    );
    let outcome = report.outcome.as_str();
    let text = format!(
        "{outcome}: {} ({}); failed {} → {} in {} cycles; {}\n",
        report.stop_reason.as_str(),
        report.stop_reason.explain(),
        report.end.baseline.failed_count,
        report.end.kept.summary.failed_count,
        report.end.trend.cycles.len().saturating_sub(1),
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
        exit_code::of_outcome(report.outcome)
    })
}
