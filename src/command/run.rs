//! `refine-loop run`: the loop with its preset, its report published, its outcome the exit
//! code.

#![expect(
    clippy::disallowed_methods,
    reason = "the run's console lines and its error line go to stderr"
)]

use std::io::Write;

use super::CommandError;
use super::check::overrides;
use crate::campaign::request::{Request, parse_request};
use crate::cancel::Cancel;
use crate::cli::RunArgs;
use crate::config::{self, ConfigError, Isolate, Overrides, Settings};
use crate::engine::EngineOptions;
use crate::engine::campaign_run::run_campaign;
use crate::engine::run_loop;
use crate::exit_code;
use crate::model::Preset;
use crate::report::Report;

/// Runs the loop; returns the exit code.
pub fn run(args: &RunArgs, cancel: &Cancel, stdout: &mut dyn Write) -> Result<i32, CommandError> {
    let (preset, request) = preset_and_request(args)?;
    let mut loaded = load_settings(args, &request)?;
    if preset.is_campaign() && loaded.run.new_since.as_deref().map(str::trim) == Some("auto") {
        // `auto` asks for the pull request's base where there is one; a campaign has none.
        loaded.run.new_since = None;
        loaded.run.new_since_skipped = Some(crate::engine::new_since_campaign_reason());
    }
    if preset.is_campaign() && loaded.run.new_since.is_some() {
        return Err(CommandError::Usage(
            "--new-since is for the refactoring loop; a campaign (--preset refine or improve) works the whole tree".to_string(),
        ));
    }

    if let Some(reason) = crate::workspace::refuse_state_dir(&loaded.target, &loaded.state_dir) {
        return Err(CommandError::Usage(reason));
    }
    // Two runs never share a state dir (a campaign takes this lock when it opens its state).
    let _lock = match preset.is_campaign() {
        true => None,
        false => Some(
            crate::campaign::books::lock_state_dir(&loaded.state_dir)
                .map_err(CommandError::Campaign)?,
        ),
    };
    super::recover::refuse_interrupted(&loaded.target)?;
    // Before anything runs: a base git cannot resolve is a usage error.
    crate::engine::resolve_new_since(&mut loaded, &|name| std::env::var(name).ok(), cancel)
        .map_err(|error| match error {
            crate::engine::RunError::NewSince(error) => CommandError::Usage(error.to_string()),
            error => CommandError::Run(error),
        })?;
    if preset.is_campaign() && loaded.run.isolate == Isolate::Worktree {
        return Err(CommandError::Usage(
            "a campaign (--preset refine or improve) works in the target itself, where its state and its earlier changes are; --isolate worktree (or [loop] isolate) is for the refactoring loop".to_string(),
        ));
    }
    // Removed (with its branch) when the run ends, however it ends.
    let (_isolation, mut settings) = match loaded.run.isolate {
        Isolate::Worktree => {
            let (isolation, settings) = crate::engine::Isolation::enter(loaded)?;
            tracing::info!(worktree = %settings.target.display(), "working in a linked worktree");
            (Some(isolation), settings)
        }
        Isolate::None => (None, loaded),
    };
    let system = super::publish::ci_system(args.gate.ci);
    let began = std::time::SystemTime::now();
    let ended = {
        // Not locked for the whole run: the signal thread and the logs write to stderr too.
        let mut lines = std::io::stderr();
        // GitHub reads its workflow commands (each cycle's group) from stdout.
        let mut out = &mut *stdout;
        let commands =
            (system == crate::ci::CiSystem::GitHub).then_some(&mut out as &mut dyn Write);
        let mut console = super::console::Console::new(&mut lines, commands);
        let options = EngineOptions {
            cancel,
            observer: &mut console,
            earlier_work: Vec::new(),
        };
        if preset.is_campaign() {
            run_campaign_preset(&mut settings, preset, &request, options)
        } else {
            run_loop(&settings, options)
                .map(|report| (report.outcome, outcome_line(&report), Some(report)))
                .map_err(CommandError::from)
        }
    };
    let (outcome, line, report) = match ended {
        Ok(ended) => ended,
        // A usage error stops before anything runs; any other error ends a run that began: CI
        // still gets its outputs, its summary and the report, and `--exit-zero=all` holds.
        Err(error) if error.exit_code() != exit_code::USAGE => {
            let report = error_report(&settings, preset, &error, began);
            // Never into a state dir that is not this run's: another run's (its lock) or
            // another repository's, or one that cannot be read.
            if !foreign_state(&error) {
                let _ = write_error_report(&report);
            }
            super::publish::publish(system, &report, stdout);
            let _ = writeln!(std::io::stderr(), "error: {error}");
            return Ok(exit_code::with_exit_zero(
                error.exit_code(),
                args.exit_zero.unwrap_or_default(),
            ));
        }
        Err(error) => return Err(error),
    };
    match &report {
        Some(report) => super::publish::publish(system, report, stdout),
        None => super::publish::publish_without_report(system, outcome, &settings.state_dir),
    }
    super::print(stdout, &line);
    Ok(exit_code::with_exit_zero(
        exit_code::of_outcome(outcome),
        args.exit_zero.unwrap_or_default(),
    ))
}

/// A refine or improve campaign: its outcome, its line on stdout, its report when it ran.
fn run_campaign_preset(
    settings: &mut Settings,
    preset: Preset,
    request: &Request,
    options: EngineOptions<'_>,
) -> Result<(crate::model::Outcome, String, Option<Report>), CommandError> {
    let layout = crate::state::Layout::new(&settings.state_dir);
    if request.intent.is_empty() && !layout.goal().exists() {
        return Err(CommandError::Usage(
            "a new campaign needs an intent: what to refine or improve, after the options"
                .to_string(),
        ));
    }
    let end = run_campaign(settings, preset, request, options)?;
    let line = format!(
        "{}: {}; {}\n",
        end.outcome.as_str(),
        end.reason,
        layout.final_report().display()
    );
    Ok((end.outcome, line, end.report.map(|report| *report)))
}

/// The error says the state dir is not this run's to write: another run holds it, it belongs to
/// another repository, or it cannot be read as a campaign's.
fn foreign_state(error: &CommandError) -> bool {
    use crate::campaign::books::CampaignError;
    matches!(
        error,
        CommandError::Campaign(
            CampaignError::LockHeld { .. }
                | CampaignError::ProvenanceMismatch { .. }
                | CampaignError::Corrupt { .. }
                | CampaignError::PartialSet { .. }
                | CampaignError::UnsupportedFormat { .. }
        )
    )
}

/// Writes an error report's final report: only that (no CI reports, whose emptiness would read
/// as every finding fixed).
fn write_error_report(report: &Report) -> Result<(), crate::state::StateError> {
    let dir = report.layout.dir();
    std::fs::create_dir_all(dir).map_err(|source| crate::state::StateError {
        path: dir.to_path_buf(),
        source,
    })?;
    crate::state::write_redacted(
        &report.layout.final_report(),
        crate::report::final_report(report).as_bytes(),
    )
}

/// The report of a run that ended in an error: the baseline when this run measured one (its
/// cycle-0 summary, written after `began`), the outcome ERROR and the error's message.
fn error_report(
    settings: &Settings,
    preset: Preset,
    error: &CommandError,
    began: std::time::SystemTime,
) -> Report {
    let layout = crate::state::Layout::new(&settings.state_dir);
    let path = layout.cycle_summary(0);
    let this_run = std::fs::metadata(&path)
        .and_then(|metadata| metadata.modified())
        .is_ok_and(|modified| modified >= began);
    let baseline: Option<crate::model::GateSummary> = this_run
        .then(|| crate::state::read_own(&path, crate::state::OWN_FILE_LIMIT).ok())
        .flatten()
        .flatten()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok());
    let measured = baseline.is_some();
    let baseline = baseline.unwrap_or_else(|| crate::model::GateSummary::empty(0));
    // No trend when the baseline did not run: no counts are published as if it had.
    let mut trend = crate::model::Trend::default();
    if measured {
        trend.push(&baseline, None, false);
    }
    Report {
        layout,
        trend,
        error: Some(if measured {
            error.to_string()
        } else {
            format!("{error} (before the baseline gate ran)")
        }),
        ..Report::new(
            crate::report::Mode::Run(preset),
            match error {
                CommandError::Run(error) if error.is_cancelled() => {
                    crate::model::Outcome::Cancelled
                }
                _ => crate::model::Outcome::Error,
            },
            settings,
            baseline,
        )
    }
}

/// The preset, and the campaign's request after the options (only a campaign takes one).
fn preset_and_request(args: &RunArgs) -> Result<(Preset, Request), CommandError> {
    let preset = args.preset.unwrap_or(Preset::Refactoring);
    let request = if preset.is_campaign() {
        parse_request(&args.request).map_err(|error| CommandError::Usage(error.to_string()))?
    } else if let Some(first) = args.request.first() {
        return Err(CommandError::Usage(format!(
            "unexpected argument {first:?}: a request (intent, --continue, theta=…) is for --preset refine or improve"
        )));
    } else {
        Request::default()
    };
    if preset == Preset::Improve && (request.theta.is_some() || request.focus.is_some()) {
        return Err(CommandError::Usage(
            "theta= and focus= are for --preset refine".to_string(),
        ));
    }
    Ok((preset, request))
}

/// The settings of the layers (flags, environment, file), checked for what a run needs: at
/// least one delegate, and every http delegate's key.
fn load_settings(args: &RunArgs, request: &Request) -> Result<Settings, CommandError> {
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
        verify: args.verify,
        isolate: args.isolate,
        offline: args.offline,
        scope: args.scope.clone(),
        priority: args.priority.clone(),
        ..overrides(&gate)
    };
    let settings = config::load(&layers.with_environment()?)?;
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
        return Err(ConfigError::from(crate::parse::InvalidValue::at(
            &settings.config_file,
            "",
            None,
            "delegate",
            "run needs at least one [[delegate]] (a fixer or an agent command bound to categories)",
        ))
        .into());
    }
    Ok(settings)
}

/// The refactoring run's last line on stdout.
fn outcome_line(report: &Report) -> String {
    let reason = report.stop_reason;
    let changes = (report.run.as_ref())
        .filter(|run| run.delivery.commits > 0 || !run.earlier.is_empty())
        .map(|run| format!("{}\n", crate::report::where_changes_are(report, run)))
        .unwrap_or_default();
    format!(
        "{}: {} ({}); failed {} → {} in {} cycles; {}\n{changes}",
        report.outcome.as_str(),
        reason.map_or("", |r| r.as_str()),
        reason.map_or("", |r| r.explain()),
        report.baseline.failed_count,
        report.last.failed_count,
        report.cycles(),
        report.layout.final_report().display()
    )
}
