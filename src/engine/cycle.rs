//! The cycle itself: the policy's work, each delegate's turn, the gate's verdict per attempt or
//! per cycle, keep or roll back, and the record. An unverified change is always rolled back.

use std::time::Instant;

use super::judge::{verify_one, verify_together};
use super::policy::{CycleNumber, Judgement, Plan, Policy, Staff, Verification, Work};
use super::record::{Finished, close};
use super::{Attempt, Engine, Event, Kept, RunError, record};
use crate::delegate::Assignment;
use crate::deliver::Recorder;
use crate::model::{GateSummary, Outcome, StopReason};

/// Runs cycles until a stop rule holds; returns it.
pub(super) fn run_cycles(
    engine: &mut Engine<'_>,
    policy: &mut dyn Policy,
    recorder: &mut Recorder<'_>,
) -> Result<StopReason, RunError> {
    engine.counted_until = Instant::now();
    loop {
        // A spent cap ends the run before another turn; a better ending (the gate passed) and
        // a cancel come first, and among the budgets the spending cap is named.
        let stop = policy.stop(engine)?;
        match (stop, engine.ledger.spent_cap()) {
            (Some(reason), Some(why)) if reason.outcome() == Outcome::Budget => {
                return spending_stop(engine, policy, why);
            }
            (Some(reason), _) => return Ok(reason),
            (None, Some(why)) => return spending_stop(engine, policy, why),
            (None, None) => {}
        }
        engine.capped_out = false;
        let cycle = policy.open_cycle(engine)?;
        let cycle_started = Instant::now();
        engine.emit(Event::CycleStarted { cycle: cycle.index });
        let before = engine.kept.summary.clone();
        let plan = policy.plan(engine, cycle)?;
        let (attempts, measured) = match plan {
            Plan::Confirm => (Vec::new(), Some(confirm(engine, cycle)?)),
            Plan::Work {
                items,
                verification,
            } => work(engine, policy, cycle, &items, verification)?,
        };
        let finished = Finished {
            cycle,
            started: cycle_started,
            before: &before,
            attempts: &attempts,
            measured: measured.as_ref(),
        };
        if let Some(reason) = close(engine, policy, recorder, &finished)? {
            return Ok(reason);
        }
        // Every delegate that could take the work is at its own cap.
        if attempts.is_empty() && engine.capped_out {
            let why = "every delegate that could take the work has spent its own cap";
            return spending_stop(engine, policy, why.to_string());
        }
    }
}

/// The run ends at a spending cap: said, kept in `run.json`, and recorded by the policy as its
/// ending (a campaign's segment ends with it).
fn spending_stop(
    engine: &mut Engine<'_>,
    policy: &mut dyn Policy,
    why: String,
) -> Result<StopReason, RunError> {
    let line = format!("refine-loop: no further turn starts: {why}");
    engine.emit(Event::Note(&line));
    engine.notes.spending_cap = Some(why);
    policy.ended_by_engine(StopReason::CostBudget)?;
    Ok(StopReason::CostBudget)
}

/// A cycle without delegates: the gate runs again and its result is the kept state (unless a
/// stop cut it short).
fn confirm(engine: &mut Engine<'_>, cycle: CycleNumber) -> Result<GateSummary, RunError> {
    engine.say(format!("cycle {}: confirming with the gate", cycle.index));
    let run = engine.measure(cycle)?;
    engine.after_gate()?;
    let measured = run.summary.clone();
    if !run.cancelled {
        engine.kept = Kept::of(run);
    }
    Ok(measured)
}

/// Each work item's turn, verified as the plan says; returns the attempts and what the cycle's
/// last gate run measured.
fn work(
    engine: &mut Engine<'_>,
    policy: &mut dyn Policy,
    cycle: CycleNumber,
    items: &[Work],
    verification: Verification,
) -> Result<(Vec<Attempt>, Option<GateSummary>), RunError> {
    let mut attempts: Vec<(usize, Attempt)> = Vec::new();
    let mut measured = None;
    for (index, item) in items.iter().enumerate() {
        if engine.cancel.is_requested() || engine.ledger.spent_cap().is_some() {
            break;
        }
        // A fix delegate is given its category's findings as the kept state has them now (an
        // earlier attempt of the cycle may have been kept).
        let refreshed;
        let item = match item.staff {
            Staff::ForCategory => {
                let Some(work) = super::work::refreshed(&engine.kept, item, &engine.reach()) else {
                    continue;
                };
                refreshed = work;
                &refreshed
            }
            Staff::Role(_) => item,
        };
        let Some(attempt) = turn(engine, cycle, item)? else {
            if policy.unstaffed(index, cycle)? {
                continue;
            }
            break;
        };
        // On the books at once: a run killed later in the cycle has still spent it.
        policy.book_spending(engine.ledger.segment(), engine.ledger.lifetime())?;
        let strikes = item.staff == Staff::ForCategory;
        engine.standing.judge_conduct(&attempt, strikes);
        engine
            .scope_violations
            .extend(record::scope_violations(&attempt, cycle, engine.settings));
        engine
            .ignored_restored
            .extend(record::ignored_restored(&attempt, cycle));
        let mut attempt = attempt;
        let kept = match verification {
            Verification::Together => {
                if !attempt.settled {
                    engine.snapshot = engine.snapshot.advanced(&attempt.changes);
                } else {
                    policy.judged(index, &attempt, &Judgement::Undone)?;
                }
                false
            }
            Verification::EachAttempt { .. } => {
                let (judgement, decided) = verify_one(engine, policy, cycle, index, &mut attempt)?;
                engine.settle()?;
                // The gate's or the review's verdict is a strike; a stop's is not.
                if judgement == Judgement::RolledBack && strikes && decided {
                    engine.standing.strike(&attempt);
                }
                policy.judged(index, &attempt, &judgement)?;
                judgement == Judgement::Kept
            }
        };
        attempts.push((index, attempt));
        if kept
            && verification
                == (Verification::EachAttempt {
                    until_accepted: true,
                })
        {
            break;
        }
    }
    if verification == Verification::Together {
        measured = verify_together(engine, policy, cycle, &mut attempts)?;
        engine.settle()?;
    }
    Ok((attempts.into_iter().map(|(_, a)| a).collect(), measured))
}

/// Picks the delegate for `item` and runs it; `None` when no delegate may take it.
fn turn(
    engine: &mut Engine<'_>,
    cycle: CycleNumber,
    item: &Work,
) -> Result<Option<Attempt>, RunError> {
    let settings = engine.settings;
    let delegate = match item.staff {
        Staff::ForCategory => {
            engine
                .standing
                .fixer_for(&settings.delegates, &item.category, &engine.lessons)
        }
        Staff::Role(role) => engine.standing.with_role(&settings.delegates, role),
    };
    let Some(delegate) = delegate else {
        // Nobody may take it, and some who could sit out for their spent caps.
        engine.capped_out |=
            (engine.standing).capped_for(&settings.delegates, item.staff, &item.category);
        return Ok(None);
    };
    if let Some(why) = engine.ledger.refuses(delegate) {
        let line = format!(
            "refine-loop: cycle {}: {}: not started: {why}",
            cycle.index, item.category
        );
        engine.emit(Event::Note(&line));
        engine.capped_out = true;
        return Ok(None);
    }
    let mut spec = settings.delegates[delegate].clone();
    if let Some(template) = item.template
        && spec.template == crate::delegate::DEFAULT_TEMPLATE
    {
        spec.template = template.to_string();
    }
    let reports_dir = engine.reports_dir(cycle)?;
    let refused = engine.integrity.take_refused_lines(delegate);
    let assignment = Assignment {
        category: &item.file_name,
        cycle: cycle.index,
        scope: &settings.run.scope,
        diagnostics: &item.diagnostics,
        files: &item.files,
        details: &item.details,
        target: &settings.target,
        state_dir: &settings.state_dir,
        reports_dir: &reports_dir,
        refused: &refused,
    };
    engine.say(format!(
        "cycle {}: {}: `{}`",
        cycle.index,
        item.category,
        spec.describe()
    ));
    let mut attempt = engine.take_turn(delegate, &spec, &assignment)?;
    attempt.category.clone_from(&item.category);
    Ok(Some(attempt))
}
