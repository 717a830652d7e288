//! What a cycle leaves on record: each attempt's delegate report, the trend, the category
//! history and the lessons, the policy's settling, the ledger commit of an accepted cycle, and
//! the lines of the final report's scope section.

use std::path::Path;
use std::time::Instant;

use super::policy::{CycleRecord, Policy};
use super::{Attempt, CycleNumber, Engine, Event, RunError, delivery};
use crate::config::Settings;
use crate::deliver::Recorder;
use crate::gate::SUMMARY_FILE;
use crate::model::{GateSummary, StopReason, TokenUsage};
use crate::report::{DelegateReport, delegate_report};
use crate::state::{self, StateError};

/// Writes `attempt`'s report to `path`.
pub fn write_delegate_report(
    path: &Path,
    cycle: u32,
    attempt: &Attempt,
    settings: &Settings,
) -> Result<(), StateError> {
    let delegate = &settings.delegates[attempt.delegate];
    let text = delegate_report(&DelegateReport {
        cycle,
        category: &attempt.category,
        delegate: &delegate.describe(),
        timeout: delegate.timeout,
        run: &attempt.run,
        changes: &attempt.changes,
        incidents: &attempt.incidents,
        kept: attempt.kept,
        rejected_because: &attempt.rejected_because,
        unmasked: &attempt.unmasked,
        integrity: &attempt.integrity,
        integrity_refused: super::integrity::refusal(settings.run.integrity, &attempt.integrity)
            .is_some(),
    });
    state::write_redacted(path, text.as_bytes())
}

/// The lines of the final report's scope section for an attempt's changes outside the scope.
pub fn scope_violations(attempt: &Attempt, cycle: CycleNumber, settings: &Settings) -> Vec<String> {
    attempt
        .incidents
        .iter()
        .filter(|incident| matches!(incident, crate::workspace::Incident::OutOfScope { .. }))
        .map(|incident| {
            format!(
                "cycle {}, `{}` on {}: {}",
                cycle.index,
                settings.delegates[attempt.delegate].describe(),
                attempt.category,
                incident.describe()
            )
        })
        .collect()
}

/// A cycle whose work is done, to be recorded.
pub(super) struct Finished<'c> {
    pub cycle: CycleNumber,
    pub started: Instant,
    /// The kept state before the cycle.
    pub before: &'c GateSummary,
    pub attempts: &'c [Attempt],
    /// What the cycle's last gate run measured, when one ran.
    pub measured: Option<&'c GateSummary>,
}

/// Records the cycle, lets the policy settle it, writes the ledger of an accepted cycle and the
/// cycle's line. Returns a stop that holds at once.
pub(super) fn close(
    engine: &mut Engine<'_>,
    policy: &mut dyn Policy,
    recorder: &mut Recorder<'_>,
    finished: &Finished<'_>,
) -> Result<Option<StopReason>, RunError> {
    let Finished {
        cycle,
        started: cycle_started,
        before,
        attempts,
        measured,
    } = *finished;
    let settings = engine.settings;
    for attempt in attempts {
        write_delegate_report(&attempt.run.files.report, cycle.index, attempt, settings)?;
        if !attempt.kept {
            *engine.tried.entry(attempt.category.clone()).or_default() += 1;
        }
    }
    let after = engine.kept.summary.clone();
    let cycle_record = CycleRecord {
        number: cycle,
        before,
        after: &after,
        attempts,
        measured,
        accepted: attempts.iter().any(|a| a.kept),
        cancelled: engine.cancelled(),
        duration: cycle_started.elapsed(),
    };
    policy.recorded(&cycle_record)?;
    if cycle_record.cancelled
        && !cycle_record.accepted
        && policy.discard_cancelled(&cycle_record)?
    {
        return Ok(Some(StopReason::Cancelled));
    }
    record_trend(engine, &cycle_record)?;
    policy.book_spending(engine.ledger.segment(), engine.ledger.lifetime())?;
    let settled = policy.settle(engine, &cycle_record)?;
    if cycle_record.accepted {
        let notes = policy.ledger_notes();
        let story = delivery::CycleStory {
            cycle: cycle.shown,
            before,
            after: &after,
            attempts,
            next: settled.next,
        };
        let notes = notes
            .as_ref()
            .map(|(open, stop_state)| (open.as_slice(), stop_state.as_str()));
        delivery::record_cycle(recorder, engine.workspace.store(), settings, &story, notes)?;
    }
    // The loop's own work: everything since the last cycle's was counted (the end of that
    // cycle's record and line too), but the gate's checks and the delegates' processes.
    let now = Instant::now();
    let spent = now.duration_since(engine.counted_until);
    let outside = engine.gate_time + engine.delegate_time;
    if let Some(last) = engine.trend.cycles.last_mut() {
        last.overhead_ms = Some(millis(spent.saturating_sub(outside)));
        last.gate_ms = Some(millis(engine.gate_time));
        last.delegate_ms = Some(millis(engine.delegate_time));
        if engine.settings.run.integrity != crate::integrity::Mode::Off {
            last.integrity_ms = Some(millis(engine.integrity.time));
        }
    }
    engine.integrity.time = std::time::Duration::ZERO;
    engine.counted_until = now;
    engine.gate_time = std::time::Duration::ZERO;
    engine.delegate_time = std::time::Duration::ZERO;
    // The cycle's line says the run stops when a spending cap ends it next (see `run_cycles`).
    let next = match (settled.next, engine.ledger.spent_cap()) {
        (Some(reason), Some(_)) if reason.outcome() == crate::model::Outcome::Budget => {
            Some(StopReason::CostBudget)
        }
        (None, Some(_)) => Some(StopReason::CostBudget),
        (next, _) => next,
    };
    let line = policy.close_cycle(engine, &cycle_record, next)?;
    engine.emit(Event::CycleClosed {
        cycle: cycle.index,
        line: &line,
    });
    Ok(settled.stop_now)
}

/// The cycle in `trend.json` and `category-history.json`, and what it teaches
/// (`heuristics.json`). A cycle whose gate did not run has the kept state's summary.
fn record_trend(engine: &mut Engine<'_>, record: &CycleRecord<'_>) -> Result<(), RunError> {
    let mut summary = engine.kept.summary.clone();
    summary.cycle = record.number.index;
    if record.measured.is_none() {
        let dir = state::cycle_dir(&engine.settings.state_dir, record.number.index)?;
        state::write_json(&dir.join(SUMMARY_FILE), &summary)?;
    }
    let undone = record.rolled_back_count() > 0;
    engine.trend.push(&summary, Some(record.accepted), undone);
    let unmasked = std::mem::take(&mut engine.unmasked);
    if let Some(last) = engine.trend.cycles.last_mut() {
        last.unmasked = (unmasked > 0).then_some(unmasked);
        last.tokens =
            TokenUsage::total(record.attempts.iter().filter_map(|a| a.run.usage.as_ref()));
        let unknown = (record.attempts.iter())
            .filter(|attempt| attempt.run.usage_unknown.is_some())
            .count();
        last.usage_unknown = (unknown > 0).then_some(unknown as u64);
        if engine.settings.run.integrity != crate::integrity::Mode::Off {
            last.integrity = Some(engine.integrity.take_cycle());
        }
        if let (Some(measured), false, false) =
            (record.measured, record.accepted, record.attempts.is_empty())
        {
            last.attempt_failed_count = Some(measured.failed_count);
        }
    }
    let regressions = engine.history.push(record.measured.unwrap_or(&summary));
    engine.heuristics.observe(
        record.number.index,
        record.attempts,
        &regressions,
        &engine.settings.delegates,
        &engine.standing.strikes,
    );
    Ok(())
}

/// The ignored files put back after `attempt`, one line each.
pub fn ignored_restored(attempt: &Attempt, cycle: CycleNumber) -> Vec<String> {
    attempt
        .incidents
        .iter()
        .filter_map(|incident| match incident {
            crate::workspace::Incident::IgnoredRestored { path } => {
                let path = crate::markdown::code_span(&path.to_string());
                Some(format!("{path} (cycle {})", cycle.index))
            }
            _ => None,
        })
        .collect()
}

fn millis(duration: std::time::Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
