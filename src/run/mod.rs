//! `run`: the refactoring loop. Baseline the gate; each cycle hand every failing category (in
//! priority order) to its delegate, find what changed from git, verify with the gate, keep what
//! is no worse and roll back the rest to the byte; evaluate the stop rules; write every file.

mod accept;
pub mod baseline;
pub mod campaign;
mod campaign_report;
mod heuristics;
pub mod improve;
mod isolate;
mod ledger;
mod progress;
mod record;
pub mod refine;
mod turn;
mod verify;
mod work;

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::time::Instant;

pub use crate::scope::Scope;
pub use accept::reasons_to_reject;
pub use heuristics::Heuristics;
pub use isolate::Isolation;
pub use turn::Attempt;
use turn::take_turn;
pub use verify::diagnostics_of;
use verify::verify;
use work::findings_of;
pub use work::{failing_categories, in_scope};

use crate::cancel::Cancel;
use crate::config::{Settings, Verify};
use crate::delegate::{Assignment, DelegateError};
use crate::deliver::Recorder;
use crate::gate::{GateError, INFRA_CATEGORY, SUMMARY_FILE};
use crate::model::{CategoryHistory, Diagnostic, GateSummary, TokenUsage, Trend};
use crate::state::{self, StateError};
use crate::stop::{CycleFacts, History, Limits, Outcome, StopReason, evaluate};
use crate::workspace::{Change, Incident, Workspace, WorkspaceError, compose};

/// Strikes that put a (delegate, category) pair on cooldown for the run.
const STRIKES_FOR_COOLDOWN: u32 = 3;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    #[error(transparent)]
    Gate(#[from] GateError),
    #[error(transparent)]
    State(#[from] StateError),
    #[error(transparent)]
    Delegate(#[from] DelegateError),
    #[error("the run's record: {0}")]
    Deliver(#[from] crate::deliver::DeliverError),
    #[error(transparent)]
    Campaign(#[from] crate::campaign::state::CampaignError),
    #[error("the CI reports: {0}")]
    Reports(#[from] crate::report::CiReportError),
    #[error("infrastructure failure: {tool} (check \"{check}\") is not installed{}", install_suffix(.install.as_deref()))]
    MissingTool {
        check: String,
        tool: String,
        /// The check's `install`, when it had one and it ran.
        install: Option<Box<baseline::Installed>>,
    },
}

fn install_suffix(install: Option<&baseline::Installed>) -> String {
    match install {
        None => "; give the check an `install` command, or install the tool in the job".into(),
        Some(install) => format!(
            "; its install `{}` ran ({}) and the tool is still missing; the install's output ends:\n{}",
            install.command,
            install
                .exit_code
                .map_or("it did not exit".to_string(), |code| format!(
                    "exit code {code}"
                )),
            install.output.trim_end()
        ),
    }
}

/// How a run ended, and its record.
#[derive(Debug)]
pub struct RunReport {
    pub outcome: Outcome,
    pub stop_reason: StopReason,
    pub trend: Trend,
    pub history: CategoryHistory,
    pub heuristics: Heuristics,
    pub baseline_failed: u64,
    pub final_failed: u64,
    /// The commits, patches and manifest of the accepted changes.
    pub delivery: ledger::DeliveryNote,
    /// The findings of the kept state at the end.
    pub remaining: Vec<Diagnostic>,
    /// What the baseline found beside the findings (load, installs, flaky checks).
    pub baseline: baseline::BaselineNotes,
    /// Changes delegates made outside the scope, each undone: one line each.
    pub scope_violations: Vec<String>,
}

/// The loop's memory of which delegates may still run.
#[derive(Debug, Default)]
struct Standing {
    strikes: HashMap<(usize, String), u32>,
    /// Delegates that acted against the repository: not run again.
    barred: HashSet<usize>,
}

impl Standing {
    fn may_run(&self, delegate: usize, category: &str) -> bool {
        !self.barred.contains(&delegate)
            && self
                .strikes
                .get(&(delegate, category.to_string()))
                .copied()
                .unwrap_or(0)
                < STRIKES_FOR_COOLDOWN
    }

    fn strike(&mut self, attempt: &Attempt) {
        *self
            .strikes
            .entry((attempt.delegate, attempt.category.clone()))
            .or_default() += 1;
    }
}

/// Runs the loop until a stop rule holds; `console` gets one line per cycle.
pub fn run_loop(
    settings: &Settings,
    cancel: &Cancel,
    console: &mut dyn Write,
) -> Result<RunReport, RunError> {
    let mut workspace = Workspace::open(&settings.target, &settings.state_dir)?;
    let report = loop_in(settings, &mut workspace, cancel, console);
    // The kept bytes stay only when someone else changed a path: they hold the version the loop
    // expected there.
    if !matches!(
        report,
        Err(RunError::Workspace(WorkspaceError::ConcurrentChange { .. }))
    ) {
        workspace.discard_store();
    }
    report
}

fn loop_in(
    settings: &Settings,
    workspace: &mut Workspace,
    cancel: &Cancel,
    console: &mut dyn Write,
) -> Result<RunReport, RunError> {
    let started = Instant::now();
    // A handle of its own: the record is written between delegates, never during one.
    let record_repository =
        git2::Repository::open(workspace.repository().path()).map_err(WorkspaceError::from)?;
    let mut recorder = Recorder::new(
        &record_repository,
        workspace.base_commit(),
        &crate::clock::new_run_id(),
    )?;
    let limits = Limits {
        max_cycles: settings.run.max_cycles,
        time_budget: settings.run.time_budget,
        ..Limits::default()
    };
    let mut trend = Trend::default();
    let mut history = CategoryHistory::default();
    let mut heuristics = Heuristics::default();
    let mut standing = Standing::default();

    let progress = progress::Progress::start();
    progress.say("cycle 0: the baseline gate".to_string());
    // The user's own work, before anything runs: protected for the whole run.
    workspace.record_baseline()?;
    let baseline::Baseline {
        run: baseline,
        notes: baseline_notes,
    } = baseline::measure_baseline(settings, cancel)?;
    let flaky = baseline.flaky.clone();
    let mut snapshot = workspace.after_gate()?;
    let mut cancelled = baseline.cancelled;
    let mut kept_diagnostics = diagnostics_of(&baseline);
    let mut kept_checks = baseline.checks;
    let mut kept = baseline.summary;
    trend.push(&kept, None, false);
    history.push(&kept);
    let mut facts = vec![facts_of(&kept, false, has_infra(&kept), started.elapsed())];
    let baseline_failed = kept.failed_count;
    let mut scope_violations: Vec<String> = Vec::new();

    let reason = loop {
        let state = History {
            cycles: &facts,
            elapsed: started.elapsed(),
            cancelled: cancelled || cancel.is_requested(),
            critical: false,
            pass_confirmed: true,
        };
        if let Some(reason) = evaluate(&state, &limits) {
            break reason;
        }
        let cycle = u32::try_from(facts.len()).unwrap_or(u32::MAX);
        let cycle_started = Instant::now();
        if settings.run.github_groups {
            workflow_command(&format!("::group::refine-loop cycle {}", facts.len()));
        }
        let mut outside = std::time::Duration::ZERO;
        let cycle_dir = state::cycle_dir(&settings.state_dir, cycle)?;
        let reports_dir = cycle_dir.join("delegate-reports");
        let before = kept.clone();
        let mut attempts: Vec<Attempt> = Vec::new();

        for category in failing_categories(&kept, &settings.run.priority) {
            if cancel.is_requested() {
                break;
            }
            let Some(delegate) = settings
                .delegates
                .iter()
                .enumerate()
                .position(|(i, d)| d.handles(&category) && standing.may_run(i, &category))
            else {
                continue;
            };
            let Some((diagnostics, details)) =
                findings_of(&kept, &kept_diagnostics, &category, &settings.run.scope)
            else {
                continue;
            };
            let assignment = Assignment {
                category: &category,
                cycle,
                scope: &settings.run.scope,
                diagnostics: &diagnostics,
                files: &[],
                details: &details,
                target: &settings.target,
                state_dir: &settings.state_dir,
                reports_dir: &reports_dir,
            };
            progress.say(format!(
                "cycle {cycle}: {category}: `{}`",
                settings.delegates[delegate].describe()
            ));
            let mut attempt = take_turn(
                settings,
                workspace,
                &snapshot,
                (delegate, &settings.delegates[delegate], &assignment),
                cancel,
                &mut outside,
            )?;
            if attempt.incidents.iter().any(|i| {
                matches!(
                    i,
                    Incident::TouchedProtected { .. }
                        | Incident::CopiedProtected { .. }
                        | Incident::OutOfScope { .. }
                )
            }) {
                standing.strike(&attempt);
            }
            scope_violations.extend(
                attempt
                    .incidents
                    .iter()
                    .filter(|incident| matches!(incident, Incident::OutOfScope { .. }))
                    .map(|incident| {
                        format!(
                            "cycle {cycle}, `{}` on {category}: {}",
                            settings.delegates[delegate].describe(),
                            incident.describe()
                        )
                    }),
            );
            if attempt.settled {
                // All of it undone; when it acted against the repository, it does not run again.
                if attempt.incidents.iter().any(Incident::is_hostile) {
                    standing.barred.insert(delegate);
                }
                standing.strike(&attempt);
            } else {
                snapshot = snapshot.advanced(&attempt.changes);
                if settings.run.verify == Verify::PerDelegate && !attempt.changes.is_empty() {
                    let verified = verify(settings, &flaky, cycle, cancel, &kept, &mut outside)?;
                    cancelled |= verified.run.cancelled;
                    attempt.settled = true;
                    if verified.keeps() {
                        kept_diagnostics = diagnostics_of(&verified.run);
                        kept_checks = verified.run.checks;
                        kept = verified.run.summary;
                        attempt.kept = true;
                    } else {
                        workspace.roll_back(&attempt.changes, attempt.started)?;
                        standing.strike(&attempt);
                        attempt.rejected_because = verified.reasons;
                    }
                    // The gate may have written files: the next delegate starts from what is there.
                    snapshot = workspace.after_gate()?;
                }
            }
            attempts.push(attempt);
        }

        let mut measured = None;
        if settings.run.verify == Verify::PerCycle {
            let open: Vec<&Attempt> = attempts.iter().filter(|a| !a.settled).collect();
            let steps: Vec<&[Change]> = open.iter().map(|a| a.changes.as_slice()).collect();
            let changes = compose(&steps);
            let since = open.iter().map(|a| a.started).min();
            if let (false, Some(since)) = (changes.is_empty(), since) {
                if cancel.is_requested() {
                    // Unverified changes are not kept.
                    workspace.roll_back(&changes, since)?;
                } else {
                    progress.say(format!("cycle {cycle}: verifying with the gate"));
                    let mut verified =
                        verify(settings, &flaky, cycle, cancel, &kept, &mut outside)?;
                    cancelled |= verified.run.cancelled;
                    let open = attempts
                        .iter_mut()
                        .filter(|a| !a.settled && !a.changes.is_empty());
                    if verified.keeps() {
                        kept_diagnostics = diagnostics_of(&verified.run);
                        kept_checks = std::mem::take(&mut verified.run.checks);
                        kept = verified.run.summary.clone();
                        open.for_each(|a| a.kept = true);
                    } else {
                        workspace.roll_back(&changes, since)?;
                        for attempt in open {
                            standing.strike(attempt);
                            attempt.rejected_because = verified.reasons.clone();
                        }
                    }
                    measured = Some(verified.run.summary);
                }
                snapshot = workspace.after_gate()?;
            }
        }
        cancelled |= cancel.is_requested();

        let mut cycle_summary = kept.clone();
        cycle_summary.cycle = cycle;
        if measured.is_none() {
            // No gate ran this cycle (nothing changed): its summary is the kept state's.
            state::write_json(&cycle_dir.join(SUMMARY_FILE), &cycle_summary)?;
        }
        let accepted = attempts.iter().any(|a| a.kept);
        let undone = attempts.iter().any(|a| !a.kept && !a.changes.is_empty());
        trend.push(&cycle_summary, Some(accepted), undone);
        if let Some(last) = trend.cycles.last_mut() {
            last.tokens = TokenUsage::total(attempts.iter().filter_map(|a| a.run.usage.as_ref()));
        }
        if let (Some(measured), false) = (&measured, accepted)
            && let Some(last) = trend.cycles.last_mut()
        {
            last.attempt_failed_count = Some(measured.failed_count);
        }
        let regressions = history.push(measured.as_ref().unwrap_or(&cycle_summary));
        heuristics.observe(
            cycle,
            &attempts,
            &regressions,
            &settings.delegates,
            &standing.strikes,
        );
        for attempt in &attempts {
            record::write_delegate_report(&attempt.run.files.report, cycle, attempt, settings)?;
        }
        let operational = has_infra(&kept)
            || (!attempts.is_empty() && attempts.iter().all(|a| a.run.spawn_error.is_some()));
        facts.push(facts_of(
            &kept,
            accepted,
            operational,
            cycle_started.elapsed(),
        ));

        let rolled_back = attempts
            .iter()
            .filter(|a| !a.kept && !a.changes.is_empty())
            .count();
        let state = History {
            cycles: &facts,
            elapsed: started.elapsed(),
            cancelled: cancelled || cancel.is_requested(),
            critical: false,
            pass_confirmed: true,
        };
        let next = evaluate(&state, &limits);
        if accepted {
            let story = ledger::CycleStory {
                cycle,
                before: &before,
                after: &kept,
                attempts: &attempts,
                next,
            };
            ledger::record_cycle(&mut recorder, workspace.store(), settings, &story)?;
        }
        // The loop's own work: all of the cycle but the gate and the delegates, the record too.
        let overhead = cycle_started.elapsed().saturating_sub(outside);
        if let Some(last) = trend.cycles.last_mut() {
            last.overhead_ms = Some(u64::try_from(overhead.as_millis()).unwrap_or(u64::MAX));
        }
        let line = format!(
            "refine-loop cycle {cycle}/{} · failed {}→{} · accepted {} · rolled back {rolled_back} · {}",
            limits.max_cycles,
            before.failed_count,
            kept.failed_count,
            attempts.iter().filter(|a| a.kept).count(),
            next.map_or("continuing".to_string(), |r| format!(
                "stopping: {}",
                r.as_str()
            ))
        );
        progress.above(|| {
            let _ = writeln!(console, "{line}");
        });
        if settings.run.github_groups {
            workflow_command(crate::ci::github::endgroup());
        }
    };
    progress.finish();

    trend.finish(reason);
    let delivery = ledger::write_delivery(
        &recorder,
        settings,
        reason.outcome().as_str(),
        reason.as_str(),
    )?;
    let report = RunReport {
        outcome: reason.outcome(),
        stop_reason: reason,
        trend,
        history,
        heuristics,
        baseline_failed,
        final_failed: kept.failed_count,
        delivery,
        remaining: kept_diagnostics,
        baseline: baseline_notes,
        scope_violations,
    };
    record::write_run_files(settings, &report, &kept)?;
    // The CI reports describe the state the run leaves.
    let anchor = crate::report::config_anchor(&settings.target, &settings.config_file);
    crate::report::write_ci_reports(
        &settings.state_dir,
        &crate::report::CiReportInput::new(&kept, &kept_checks, anchor),
    )?;
    Ok(report)
}

/// A GitHub Actions workflow command: the runner reads them from stdout.
fn workflow_command(line: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{line}");
    let _ = stdout.flush();
}

fn facts_of(
    summary: &GateSummary,
    accepted: bool,
    operational_error: bool,
    duration: std::time::Duration,
) -> CycleFacts {
    CycleFacts {
        failed_count: summary.failed_count,
        state: summary.state_fingerprint(),
        accepted,
        operational_error,
        error_signature: None,
        duration,
    }
}

fn has_infra(summary: &GateSummary) -> bool {
    summary
        .categories
        .get(INFRA_CATEGORY)
        .is_some_and(|c| c.failures > 0)
}
