//! The `refactoring` preset (the default): each cycle hands every failing category, in priority
//! order, to its fix delegate; the gate verifies per cycle (or per delegate); the stop rules are
//! DESIGN.md §7's, evaluated on the recorded history.

use super::policy::{CycleNumber, CycleRecord, Plan, Policy, Settled, Verification};
use super::work::category_work;
use super::{Engine, RunError};
use crate::config::Verify;
use crate::gate::INFRA_CATEGORY;
use crate::model::{GateSummary, Preset, StopReason};
use crate::report::Report;
use crate::stop::{self, CycleFacts, Facts, History, Rule};

/// The refactoring loop's counters: each cycle's facts, as the stop rules read them.
#[derive(Debug)]
pub struct Refactoring {
    rules: Vec<Rule>,
    max_cycles: u32,
    facts: Vec<CycleFacts>,
}

impl Refactoring {
    /// The policy for a run of `engine`'s settings, its baseline recorded.
    pub fn new(engine: &Engine<'_>) -> Self {
        let settings = engine.settings();
        let max_cycles = settings.run.max_cycles;
        let baseline = engine.baseline();
        let facts = vec![facts_of(baseline, has_infra(baseline), engine.elapsed())];
        Self {
            rules: stop::refactoring(max_cycles, settings.run.time_budget),
            max_cycles,
            facts,
        }
    }

    fn evaluate(&self, engine: &Engine<'_>) -> Option<StopReason> {
        let history = History {
            cycles: &self.facts,
            elapsed: engine.elapsed(),
            cancelled: engine.cancelled(),
            pass_confirmed: true,
        };
        stop::evaluate(&Facts::of_cycles(&history), &self.rules)
    }
}

impl Policy for Refactoring {
    fn stop(&mut self, engine: &Engine<'_>) -> Result<Option<StopReason>, RunError> {
        Ok(self.evaluate(engine))
    }

    fn open_cycle(&mut self, _engine: &Engine<'_>) -> Result<CycleNumber, RunError> {
        let index = u32::try_from(self.facts.len()).unwrap_or(u32::MAX);
        Ok(CycleNumber {
            index,
            shown: index,
        })
    }

    fn plan(&mut self, engine: &mut Engine<'_>, _cycle: CycleNumber) -> Result<Plan, RunError> {
        let settings = engine.settings();
        let kept = engine.kept();
        let mut priority = settings.run.priority.clone();
        engine.lessons.order_priority(&mut priority);
        let items = category_work(kept, &priority, &engine.reach());
        let verification = match settings.run.verify {
            Verify::PerCycle => Verification::Together,
            Verify::PerDelegate => Verification::EachAttempt {
                until_accepted: false,
            },
        };
        Ok(Plan::Work {
            items,
            verification,
        })
    }

    fn settle(
        &mut self,
        engine: &Engine<'_>,
        record: &CycleRecord<'_>,
    ) -> Result<Settled, RunError> {
        let attempts = record.attempts;
        let operational = has_infra(record.after)
            || (!attempts.is_empty() && attempts.iter().all(|a| a.run.spawn_error.is_some()));
        self.facts
            .push(facts_of(record.after, operational, record.duration));
        Ok(Settled {
            next: self.evaluate(engine),
            stop_now: None,
        })
    }

    fn close_cycle(
        &mut self,
        _engine: &mut Engine<'_>,
        record: &CycleRecord<'_>,
        next: Option<StopReason>,
    ) -> Result<String, RunError> {
        Ok(format!(
            "refine-loop cycle {}/{} · failed {}→{} · accepted {} · rolled back {} · {}",
            record.number.index,
            self.max_cycles,
            record.before.failed_count,
            record.after.failed_count,
            record.kept_count(),
            record.rolled_back_count(),
            next.map_or("continuing".to_string(), |r| format!(
                "stopping: {}",
                r.as_str()
            ))
        ))
    }
}

fn facts_of(
    summary: &GateSummary,
    operational_error: bool,
    duration: std::time::Duration,
) -> CycleFacts {
    CycleFacts {
        failed_count: summary.failed_count,
        state: summary.state_fingerprint(),
        operational_error,
        duration,
    }
}

fn has_infra(summary: &GateSummary) -> bool {
    summary
        .categories
        .get(INFRA_CATEGORY)
        .is_some_and(|c| c.failures > 0)
}

/// Runs the refactoring loop until a stop rule holds; the observer gets one line per cycle.
/// The last run's files are set aside first (see [`super::earlier_runs`]); when the tree holds
/// its accepted changes, this run's commits go on after them.
pub fn run_loop(
    settings: &crate::config::Settings,
    mut options: super::EngineOptions<'_>,
) -> Result<Report, RunError> {
    let layout = crate::state::Layout::new(&settings.state_dir);
    let last = super::earlier_runs::set_aside_last(&layout)?;
    let place = (&*settings.target, &*settings.state_dir, settings.run.watch);
    super::in_workspace(place, |workspace| {
        // A handle of its own: the record is written between delegates, never during one.
        let record_repository = git2::Repository::open(workspace.repository().path())
            .map_err(crate::workspace::WorkspaceError::from)?;
        let run_id = crate::clock::new_run_id();
        let held = super::earlier_runs::held(&record_repository, workspace.root(), &layout, &last);
        let base = held.tip.unwrap_or_else(|| workspace.base_commit());
        let mut recorder = crate::deliver::Recorder::new(&record_repository, base, &run_id)?;
        super::protect_users_work(workspace, settings, options.cancel)?;
        if let Some(line) = super::earlier_runs::announcement(&held) {
            options.observer.observe(super::Event::Note(&line));
            // What they accepted is theirs, not the user's own work: this run may go on with it.
            let owned = (workspace.protected().iter())
                .filter(|(path, _)| held.paths.contains(&path.to_string()))
                .map(|(path, state)| (path.to_string(), state.key()))
                .collect();
            workspace.release_owned(&owned);
        }
        options.earlier_work = last.work_files();
        let engine = Engine::start(settings, workspace, options)?;
        let mut policy = Refactoring::new(&engine);
        let end = engine.drive(&mut policy, &mut recorder)?;
        let (outcome, reason) = (end.reason.outcome(), end.reason.as_str());
        let delivery =
            super::delivery::write_delivery(&recorder, settings, outcome.as_str(), reason)?;
        let keep = usize::try_from(settings.run.keep_runs).unwrap_or(usize::MAX);
        super::earlier_runs::prune(
            &record_repository,
            &layout,
            (keep, recorder.reference()),
            &held,
        );
        end.conclude(
            settings,
            Preset::Refactoring,
            delivery,
            workspace,
            |report| {
                if let Some(run) = report.run.as_mut() {
                    run.earlier = held.runs.clone();
                }
            },
        )
    })
}
