//! The cycle engine, once for every preset: the baseline; each cycle the work a policy chooses,
//! a delegate picked for each piece (strikes, cooldown, scope), its turn under watch, the gate's
//! verdict (per attempt or per cycle), keep or roll back to the byte, the record; cancel; the
//! stop rules. A preset ([`refactoring`], [`campaign_run::improve`], [`campaign_run::refine`]) is a [`Policy`].

mod accept;
pub mod baseline;
pub mod campaign_run;
mod confinement;
mod contain;
mod cycle;
mod delivery;
mod earlier_runs;
mod end;
mod error;
mod event;
mod head_lines;
mod heuristics;
mod integrity;
mod isolate;
mod judge;
mod new_since;
mod policy;
mod record;
pub mod refactoring;
mod restore;
mod standing;
mod turn;
mod verify;
mod work;

use std::path::PathBuf;
use std::time::{Duration, Instant};

pub use earlier_runs::set_aside_last;
pub use end::{check_findings, write_findings};
pub use error::RunError;
pub use event::{Event, Observer};
pub use heuristics::Heuristics;
pub use isolate::Isolation;
pub use new_since::{
    campaign_reason as new_since_campaign_reason, note_of, preexisting_at_baseline,
    resolve_new_since,
};
pub(crate) use policy::{CycleNumber, Policy};
pub use refactoring::run_loop;
pub use turn::Attempt;
pub use verify::diagnostics_of;
pub use work::in_scope;

use crate::cancel::Cancel;
use crate::config::Settings;
use crate::deliver::Recorder;
use crate::gate::{CheckResult, Flaky, GateRun};
use crate::model::{CategoryHistory, Diagnostic, GateSummary, StopReason, Trend};
use crate::state;
use crate::workspace::{Snapshot, Workspace};

/// Strikes that put a (delegate, category) pair on cooldown for the run.
pub const STRIKES_FOR_COOLDOWN: u32 = 3;

/// How the engine runs, beside the settings.
pub struct EngineOptions<'a> {
    /// SIGINT and SIGTERM, counted.
    pub cancel: &'a Cancel,
    /// Who watches the run: the events go to it.
    pub observer: &'a mut dyn Observer,
    /// The files earlier runs' delegates left (a campaign's records): where the tree still
    /// holds them uncommitted, the baseline's gate run is confined (see
    /// [`confinement::earlier_runs_work`]).
    pub earlier_work: Vec<crate::campaign::history::WorkFile>,
}

/// The run's observer, as the engine holds it.
struct Watched<'a>(&'a mut dyn Observer);

impl std::fmt::Debug for Watched<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Watched")
    }
}

/// The state the loop keeps: the last accepted gate run.
#[derive(Debug)]
pub struct Kept {
    pub summary: GateSummary,
    /// Its findings (not those the baseline excused as flaky).
    pub diagnostics: Vec<Diagnostic>,
    /// The check each of its findings comes from.
    pub origins: Vec<String>,
    /// Its checks, for the CI reports.
    pub checks: Vec<CheckResult>,
}

impl Kept {
    fn of(run: GateRun) -> Self {
        let (diagnostics, origins) = diagnostics_of(&run);
        Self {
            diagnostics,
            origins,
            summary: run.summary,
            checks: run.checks,
        }
    }
}

/// What the engine leaves when it stops.
#[derive(Debug)]
pub struct EngineEnd {
    pub reason: StopReason,
    pub trend: Trend,
    pub history: CategoryHistory,
    pub heuristics: Heuristics,
    pub baseline: GateSummary,
    pub kept: Kept,
    pub notes: crate::model::BaselineNotes,
    /// Changes delegates made outside the scope, each undone: one line each.
    pub scope_violations: Vec<String>,
    /// Ignored files put back after a delegate, and those not protected: one line each.
    pub ignored_restored: Vec<String>,
    pub ignored_not_protected: Vec<String>,
    /// Why each failing category's findings remain.
    pub remaining: Vec<crate::report::Remaining>,
    /// Changes that made the gate see less, and what came of them.
    pub integrity: crate::report::IntegrityPart,
    /// What the baseline excused: flaky findings, and (pull-request mode) pre-existing ones.
    pub flaky: Flaky,
}

/// Runs `run` in the workspace of `target` (its state in `state_dir`, the tree watched or not),
/// and ends it: the kept bytes stay whenever the run did
/// not end cleanly (they may hold the only copy of a version someone needs, the one the loop
/// expected where someone else wrote).
fn in_workspace<T>(
    place: (&std::path::Path, &std::path::Path, bool),
    run: impl FnOnce(&mut Workspace) -> Result<T, RunError>,
) -> Result<T, RunError> {
    let (target, state_dir, watch) = place;
    let mut workspace = Workspace::open(target, state_dir)?;
    workspace.watch_tree(watch);
    let end = run(&mut workspace);
    workspace.end_run(end.is_ok());
    end
}

/// The user's own work, before anything runs: recorded, and protected for the whole run with
/// the ignored files the budget allows.
/// A stop signal meanwhile ends it at once (`WorkspaceError::Cancelled`): nothing ran yet.
fn protect_users_work(
    workspace: &mut Workspace,
    settings: &Settings,
    cancel: &Cancel,
) -> Result<(), RunError> {
    workspace.record_baseline(cancel)?;
    let budget = crate::workspace::IgnoredBudget {
        max_bytes: settings.run.protect_ignored_max,
        skip: settings.run.protect_ignored_skip.clone(),
    };
    workspace.protect_ignored(&budget, cancel)?;
    Ok(())
}

/// The engine's state while it runs: the kept state, the tree as last seen, who may run, and
/// the record so far.
#[derive(Debug)]
pub struct Engine<'a> {
    pub(crate) settings: &'a Settings,
    pub(crate) cancel: &'a Cancel,
    pub(crate) workspace: &'a mut Workspace,
    observer: Watched<'a>,
    kept: Kept,
    baseline: GateSummary,
    notes: crate::model::BaselineNotes,
    flaky: Flaky,
    snapshot: Snapshot,
    standing: standing::Standing,
    /// Lessons of an earlier run's `heuristics.json`, and this run's.
    lessons: Heuristics,
    heuristics: Heuristics,
    trend: Trend,
    history: CategoryHistory,
    scope_violations: Vec<String>,
    ignored_restored: Vec<String>,
    cancelled: bool,
    /// Findings unmasked by the changes kept in the current cycle.
    unmasked: u64,
    /// Fingerprints of the findings kept changes unmasked.
    unmasked_prints: std::collections::HashSet<String>,
    /// Per category, the fix attempts that left no kept change.
    tried: std::collections::BTreeMap<String, u32>,
    /// The user's own uncommitted files (protected), relative to the target.
    protected_files: std::collections::HashSet<String>,
    started: Instant,
    /// Time of the current cycle spent in the gate's checks and the delegates' processes.
    gate_time: Duration,
    delegate_time: Duration,
    /// When the last cycle's own work was counted (or the cycles began): the next cycle's
    /// overhead runs from here, so nothing between two cycles goes uncounted.
    counted_until: Instant,
    /// The journal of the turns not judged yet: what the tree returns to on any error.
    pending: Option<crate::workspace::Journal>,
    /// The kernel's hold on command delegates, when it confines them.
    confiner: Option<crate::confine::Confiner>,
    /// Its hold on the gate's runs after the baseline (see [`confinement::for_gate`]).
    gate_confiner: Option<crate::confine::Confiner>,
    /// Moves that made the gate see less, found in the changes so far.
    integrity: integrity::IntegrityLog,
    /// What the delegates spent, against the caps.
    pub(crate) ledger: crate::spending::Ledger,
    /// A delegate was not started in the current cycle because its own cap is spent.
    capped_out: bool,
}

impl<'a> Engine<'a> {
    /// Runs the baseline (cycle 0) and returns the engine ready for its first cycle. The
    /// user's own work must already be recorded (`Workspace::record_baseline`).
    pub fn start<'o: 'a>(
        settings: &'a Settings,
        workspace: &'a mut Workspace,
        options: EngineOptions<'o>,
    ) -> Result<Self, RunError> {
        let observer: &'a mut dyn Observer = options.observer;
        let cancel = options.cancel;
        let started = Instant::now();
        let (confinement, confiner) = confinement::decide(settings, workspace)?;
        let gate_confiner = confiner.as_ref().and_then(confinement::for_gate);
        let mut confinement = confinement;
        let baseline_confiner = confinement::for_baseline(
            (settings, &*workspace),
            &options.earlier_work,
            (&mut confinement, gate_confiner.as_ref()),
        );
        observer.observe(Event::Doing("cycle 0: the baseline gate"));
        let lessons = Heuristics::read(&settings.state_dir);
        let seal = workspace.seal()?;
        let baseline::Baseline { run, mut notes } = baseline::measure_baseline(
            settings,
            confinement,
            cancel,
            (Some(&*workspace), baseline_confiner),
        )?;
        let on = contain::GateOn::Baseline;
        contain::after_gate_run(workspace, &mut notes, settings, &seal, Some(&run), 0, on)?;
        let snapshot = workspace.after_gate()?;
        let mut confiner = confiner;
        let mut gate_confiner = gate_confiner;
        private_after_gate(workspace, [&mut confiner, &mut gate_confiner]);
        for confiner in [&mut confiner, &mut gate_confiner].into_iter().flatten() {
            confiner.settle_search_paths();
        }
        let flaky = run.flaky.clone();
        let cancelled = run.cancelled;
        let kept = Kept::of(run);
        write_findings(
            &state::Layout::new(&settings.state_dir).cycle_findings(0),
            &kept.diagnostics,
            &kept.checks,
        )?;
        let mut trend = Trend::default();
        trend.push(&kept.summary, None, false);
        let mut history = CategoryHistory::default();
        history.push(&kept.summary);
        let protected_files = verify::target_relative(
            workspace.root(),
            &settings.target,
            workspace.protected().keys(),
        );
        Ok(Self {
            settings,
            cancel,
            workspace,
            observer: Watched(observer),
            baseline: kept.summary.clone(),
            kept,
            notes,
            flaky,
            snapshot,
            standing: standing::Standing::default(),
            // The lessons go on: this run's are added to the earlier ones.
            heuristics: lessons.carried(),
            lessons,
            trend,
            history,
            scope_violations: Vec::new(),
            ignored_restored: Vec::new(),
            cancelled,
            unmasked: 0,
            protected_files,
            unmasked_prints: std::collections::HashSet::new(),
            tried: std::collections::BTreeMap::new(),
            started,
            gate_time: Duration::ZERO,
            delegate_time: Duration::ZERO,
            counted_until: Instant::now(),
            pending: None,
            confiner,
            gate_confiner,
            integrity: integrity::IntegrityLog::default(),
            ledger: crate::spending::Ledger::new(caps_of(settings)),
            capped_out: false,
        })
    }

    /// Runs cycles until the policy's stop rules hold; accepted cycles go to `recorder`.
    pub fn drive(
        mut self,
        policy: &mut dyn Policy,
        recorder: &mut Recorder<'_>,
    ) -> Result<EngineEnd, RunError> {
        let driven = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            if let Some(card) = policy.begin(&mut self)? {
                self.emit(Event::Note(&card));
            }
            cycle::run_cycles(&mut self, policy, recorder)
        }))
        .unwrap_or_else(|panic| Err(RunError::Panicked(restore::panic_message(panic.as_ref()))));
        // What was spent stays on the books however the run ends.
        let booked = policy.book_spending(self.ledger.segment(), self.ledger.lifetime());
        let driven = driven.and_then(|reason| booked.map(|()| reason));
        let reason = match driven {
            Ok(reason) => reason,
            Err(error) => return Err(self.restore_pending(error)),
        };
        // Every path to a stop judges what it changed; a change left unjudged is not kept.
        if let Some(journal) = self.pending.take() {
            tracing::warn!(turn = %journal.turn, "a change was left unjudged; it is undone");
            self.workspace.restore(&journal)?;
        }
        self.emit(Event::Stopped(reason));
        self.trend.finish(reason);
        self.notes.spent = Some(self.ledger.spent());
        state::write_json(&self.settings.state_dir.join(state::RUN_FILE), &self.notes)?;
        let remaining = end::remaining(&self);
        Ok(EngineEnd {
            reason,
            trend: self.trend,
            history: self.history,
            heuristics: self.heuristics,
            baseline: self.baseline,
            kept: self.kept,
            notes: self.notes,
            scope_violations: self.scope_violations,
            ignored_restored: self.ignored_restored,
            ignored_not_protected: self.workspace.ignored_not_protected(),
            remaining,
            integrity: self.integrity.part(self.settings.run.integrity),
            flaky: self.flaky,
        })
    }

    pub fn settings(&self) -> &Settings {
        self.settings
    }

    /// The kept state.
    pub fn kept(&self) -> &Kept {
        &self.kept
    }

    /// The baseline's gate summary.
    pub fn baseline(&self) -> &GateSummary {
        &self.baseline
    }

    /// A stop was asked for (a signal, or a gate run cut short by one).
    pub fn cancelled(&self) -> bool {
        self.cancelled || self.cancel.is_requested()
    }

    /// Time since the run started.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Counts the findings a kept change unmasked, and remembers them for the report.
    fn note_unmasked(&mut self, unmasked: &[Diagnostic]) {
        self.unmasked += unmasked.len() as u64;
        self.unmasked_prints
            .extend(unmasked.iter().map(|d| d.fingerprint.clone()));
    }

    /// What fix delegates may reach: the scope, less the user's own uncommitted files.
    pub(crate) fn reach(&self) -> work::Reach<'_> {
        work::Reach {
            scope: &self.settings.run.scope,
            protected: &self.protected_files,
        }
    }

    /// The user's own work, as the baseline found it.
    pub fn protected_paths(&self) -> Vec<String> {
        self.workspace
            .protected()
            .keys()
            .map(ToString::to_string)
            .collect()
    }

    /// `cycle-N/delegate-reports/`.
    pub fn reports_dir(&self, cycle: CycleNumber) -> Result<PathBuf, RunError> {
        state::cycle_dir(&self.settings.state_dir, cycle.index)?;
        Ok(state::Layout::new(&self.settings.state_dir).delegate_reports(cycle.index))
    }

    /// Says what the loop is doing.
    pub fn say(&mut self, message: String) {
        self.emit(Event::Doing(&message));
    }

    /// Tells whoever watches the run.
    pub fn emit(&mut self, event: Event<'_>) {
        self.observer.0.observe(event);
    }

    /// The gate for `cycle` on a delegate's change, judged against the kept state; what it
    /// changed that it must not is put back before, and held against the change.
    fn verify(
        &mut self,
        cycle: CycleNumber,
        changes: &[crate::workspace::Change],
    ) -> Result<verify::Verified, RunError> {
        let (run, incidents) = self.gate(cycle, contain::GateOn::Change)?;
        let (made, too_large) = self.workspace.made_by_gate()?;
        let written = self.workspace.written_in_gate(&made);
        // The files the changes touched, as findings name them.
        let touched = verify::target_relative(
            self.workspace.root(),
            &self.settings.target,
            changes.iter().map(|change| &change.path),
        );
        let mut verified = verify::judged(self.settings, &self.kept, run, &|file| {
            touched.contains(file.trim_start_matches("./"))
        });
        verified.incidents = incidents;
        verified.incidents.extend(too_large);
        // What is put back already (a protected file, one the guard put back) is named once.
        for path in written {
            let named = |incident: &crate::workspace::Incident| matches!(incident, crate::workspace::Incident::GateChangedProtected { path: p } if *p == path);
            if !verified.incidents.iter().any(named) {
                verified
                    .incidents
                    .push(crate::workspace::Incident::GateWroteTree { path });
            }
        }
        let mode = self.settings.run.integrity;
        if mode != crate::integrity::Mode::Off && !verified.run.cancelled {
            let started = Instant::now();
            let judged: Vec<_> = changes.iter().chain(&made).cloned().collect();
            verified.integrity = integrity::moves_of(
                self.settings,
                self.workspace.root(),
                self.workspace.store(),
                &judged,
                &self.kept,
                &verified.run,
            );
            verified
                .reasons
                .extend(integrity::refusal(mode, &verified.integrity));
            self.integrity.time += started.elapsed();
        }
        verified.made = made;
        Ok(verified)
    }

    /// The gate for `cycle`, for the record only.
    fn measure(&mut self, cycle: CycleNumber) -> Result<GateRun, RunError> {
        Ok(self.gate(cycle, contain::GateOn::Kept)?.0)
    }

    /// Runs the gate for `cycle` inside the seal, and counts its time; what it changed that it
    /// must not is put back (see [`contain::after_gate_run`]) and returned.
    fn gate(
        &mut self,
        cycle: CycleNumber,
        on: contain::GateOn,
    ) -> Result<(GateRun, Vec<crate::workspace::Incident>), RunError> {
        let seal = self.workspace.seal()?;
        if on == contain::GateOn::Change {
            self.workspace.begin_gate();
        }
        let started = Instant::now();
        // After the baseline, a gate run may run what a delegate planted: it is confined as
        // the delegates are.
        let run = verify::measure(
            self.settings,
            &self.flaky,
            cycle.index,
            self.cancel,
            (Some(&*self.workspace), self.gate_confiner.as_ref()),
        );
        self.gate_time += started.elapsed();
        let incidents = contain::after_gate_run(
            self.workspace,
            &mut self.notes,
            self.settings,
            &seal,
            run.as_ref().ok(),
            cycle.index,
            on,
        );
        let run = run?;
        let incidents = incidents?;
        self.cancelled |= run.cancelled;
        Ok((run, incidents))
    }

    /// The gate may have written files: the next delegate starts from what is there.
    fn after_gate(&mut self) -> Result<(), RunError> {
        self.snapshot = self.workspace.after_gate()?;
        private_after_gate(
            self.workspace,
            [&mut self.confiner, &mut self.gate_confiner],
        );
        Ok(())
    }
}

/// The run's spending caps: the config's, the campaign's lifetime ones for a campaign.
fn caps_of(settings: &Settings) -> crate::spending::Caps {
    crate::spending::Caps {
        run: settings.run.spending,
        lifetime: settings.campaign.lifetime_cap,
        delegates: settings.delegates.iter().map(|d| d.cap).collect(),
    }
}

/// What git ignores as the gate's run left it (a build folder it made) is written by each
/// delegate and each later gate run in a layer of its own.
fn private_after_gate(
    workspace: &Workspace,
    confiners: [&mut Option<crate::confine::Confiner>; 2],
) {
    let folders = workspace.ignored_folders_after_gate();
    for confiner in confiners.into_iter().flatten() {
        confiner.also_private(&folders);
    }
}
