//! The cycle itself: the policy's work, each delegate's turn, the gate's verdict per attempt or
//! per cycle, keep or roll back, and the record. An unverified change is always rolled back.

use std::io::Write;
use std::time::Instant;

use super::policy::{CycleNumber, CycleRecord, Judgement, Plan, Policy, Staff, Verification, Work};
use super::{Attempt, Engine, Kept, RunError, ledger, record};
use crate::delegate::Assignment;
use crate::deliver::Recorder;
use crate::gate::SUMMARY_FILE;
use crate::model::{GateSummary, StopReason, TokenUsage};
use crate::state;
use crate::workspace::{Change, compose};

/// Runs cycles until a stop rule holds; returns it.
pub(super) fn run_cycles(
    engine: &mut Engine<'_>,
    policy: &mut dyn Policy,
    recorder: &mut Recorder<'_>,
    console: &mut dyn Write,
) -> Result<StopReason, RunError> {
    loop {
        if let Some(reason) = policy.stop(engine)? {
            return Ok(reason);
        }
        let cycle = policy.open_cycle(engine)?;
        let cycle_started = Instant::now();
        engine.outside = std::time::Duration::ZERO;
        let grouped = engine.github_groups
            && crate::ci::process_redactor().is_ok_and(|redactor| {
                let name = format!("refine-loop cycle {}", cycle.index);
                workflow_command(&crate::ci::github::group(&name, redactor));
                true
            });
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
        let stop = close(engine, policy, recorder, console, &finished)?;
        if grouped {
            workflow_command(crate::ci::github::endgroup());
        }
        if let Some(reason) = stop {
            return Ok(reason);
        }
    }
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
        if engine.cancel.is_requested() {
            break;
        }
        // A fix delegate is given its category's findings as the kept state has them now (an
        // earlier attempt of the cycle may have been kept).
        let refreshed;
        let item = match item.staff {
            Staff::ForCategory => {
                let scope = &engine.settings.run.scope;
                let Some(work) = super::work::refreshed(&engine.kept, item, scope) else {
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
        let strikes = item.staff == Staff::ForCategory;
        engine.standing.judge_conduct(&attempt, strikes);
        engine
            .scope_violations
            .extend(record::scope_violations(&attempt, cycle, engine.settings));
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
        return Ok(None);
    };
    let mut spec = settings.delegates[delegate].clone();
    if let Some(template) = item.template
        && spec.template == crate::delegate::DEFAULT_TEMPLATE
    {
        spec.template = template.to_string();
    }
    let reports_dir = engine.reports_dir(cycle)?;
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

/// Verifies one attempt on its own: screened out by the policy, undone for its conduct, or
/// judged by the gate and then the policy's review. Returns the judgement, and whether the gate
/// (and the review) decided it, rather than a stop that left it unverified. The kept state is
/// the cycle's record: a rejected gate run is not (as when nothing changed).
fn verify_one(
    engine: &mut Engine<'_>,
    policy: &mut dyn Policy,
    cycle: CycleNumber,
    index: usize,
    attempt: &mut Attempt,
) -> Result<(Judgement, bool), RunError> {
    if let Some(reason) = policy.screen(engine, attempt) {
        engine.roll_back(attempt)?;
        return Ok((Judgement::Screened(reason), false));
    }
    if attempt.settled {
        return Ok((Judgement::Undone, false));
    }
    if attempt.changes.is_empty() {
        return Ok((Judgement::NoChange, false));
    }
    if engine.cancel.is_requested() {
        engine.roll_back(attempt)?;
        attempt.settled = true;
        attempt.rejected_because =
            vec!["cancelled before the gate ran: an unverified change is not kept".into()];
        return Ok((Judgement::RolledBack, false));
    }
    engine.say(format!("cycle {}: verifying with the gate", cycle.index));
    let verified = engine.verify(cycle)?;
    let mut reasons = verified.reasons.clone();
    if verified.run.cancelled {
        reasons.push("cancelled before the gate finished".into());
    }
    if reasons.is_empty() {
        reasons = policy.review(engine, index, attempt, &verified, cycle)?;
    }
    attempt.settled = true;
    let decided = !verified.run.cancelled;
    let judgement = if reasons.is_empty() {
        engine.kept = Kept::of(verified.run);
        attempt.kept = true;
        Judgement::Kept
    } else {
        engine
            .workspace
            .roll_back(&attempt.changes, attempt.started)?;
        attempt.rejected_because = reasons;
        Judgement::RolledBack
    };
    engine.after_gate()?;
    Ok((judgement, decided))
}

/// Verifies the cycle's open attempts as one change: kept together or rolled back together.
/// A stop asked for before the gate runs leaves the change unverified: it is rolled back.
fn verify_together(
    engine: &mut Engine<'_>,
    policy: &mut dyn Policy,
    cycle: CycleNumber,
    attempts: &mut [(usize, Attempt)],
) -> Result<Option<GateSummary>, RunError> {
    let open: Vec<&Attempt> = attempts
        .iter()
        .map(|(_, a)| a)
        .filter(|a| !a.settled)
        .collect();
    let steps: Vec<&[Change]> = open.iter().map(|a| a.changes.as_slice()).collect();
    let changes = compose(&steps);
    let since = open.iter().map(|a| a.started).min();
    let (false, Some(since)) = (changes.is_empty(), since) else {
        for (index, attempt) in attempts.iter().filter(|(_, a)| !a.settled) {
            policy.judged(*index, attempt, &Judgement::NoChange)?;
        }
        return Ok(None);
    };
    let mut measured = None;
    // Why the change goes, and whether the gate said so (a strike) or a stop left it unverified.
    let (reasons, verdict) = if engine.cancel.is_requested() {
        let why = "cancelled before the gate ran: an unverified change is not kept";
        (vec![why.to_string()], false)
    } else {
        engine.say(format!("cycle {}: verifying with the gate", cycle.index));
        let verified = engine.verify(cycle)?;
        measured = Some(verified.run.summary.clone());
        if verified.keeps() {
            engine.kept = Kept::of(verified.run);
            (Vec::new(), true)
        } else if verified.run.cancelled {
            let why = "cancelled before the gate finished: an unverified change is not kept";
            (vec![why.to_string()], false)
        } else {
            (verified.reasons, true)
        }
    };
    if !reasons.is_empty() {
        engine.workspace.roll_back(&changes, since)?;
    }
    for (index, attempt) in attempts.iter_mut().filter(|(_, a)| !a.settled) {
        // Every attempt of the cycle shares the verdict on the change they made together.
        attempt.rejected_because.clone_from(&reasons);
        let judgement = if attempt.changes.is_empty() {
            Judgement::NoChange
        } else if reasons.is_empty() {
            attempt.kept = true;
            Judgement::Kept
        } else {
            if verdict {
                engine.standing.strike(attempt);
            }
            Judgement::RolledBack
        };
        policy.judged(*index, attempt, &judgement)?;
    }
    engine.after_gate()?;
    Ok(measured)
}

/// A cycle whose work is done, to be recorded.
struct Finished<'c> {
    cycle: CycleNumber,
    started: Instant,
    /// The kept state before the cycle.
    before: &'c GateSummary,
    attempts: &'c [Attempt],
    /// What the cycle's last gate run measured, when one ran.
    measured: Option<&'c GateSummary>,
}

/// Records the cycle, lets the policy settle it, writes the ledger of an accepted cycle and the
/// cycle's line. Returns a stop that holds at once.
fn close(
    engine: &mut Engine<'_>,
    policy: &mut dyn Policy,
    recorder: &mut Recorder<'_>,
    console: &mut dyn Write,
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
        record::write_delegate_report(&attempt.run.files.report, cycle.index, attempt, settings)?;
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
    let settled = policy.settle(engine, &cycle_record)?;
    if cycle_record.accepted {
        let notes = policy.ledger_notes();
        let story = ledger::CycleStory {
            cycle: cycle.shown,
            before,
            after: &after,
            attempts,
            next: settled.next,
        };
        let notes = notes
            .as_ref()
            .map(|(open, stop_state)| (open.as_slice(), stop_state.as_str()));
        ledger::record_cycle(recorder, engine.workspace.store(), settings, &story, notes)?;
    }
    // The loop's own work: all of the cycle but the gate and the delegates, the record too.
    let overhead = cycle_started.elapsed().saturating_sub(engine.outside);
    if let Some(last) = engine.trend.cycles.last_mut() {
        last.overhead_ms = Some(u64::try_from(overhead.as_millis()).unwrap_or(u64::MAX));
    }
    policy.close_cycle(engine, &cycle_record, settled.next, console)?;
    let _ = console.flush();
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
    if let Some(last) = engine.trend.cycles.last_mut() {
        last.tokens =
            TokenUsage::total(record.attempts.iter().filter_map(|a| a.run.usage.as_ref()));
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

/// A GitHub Actions workflow command: the runner reads them from stdout.
fn workflow_command(line: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{line}");
    let _ = stdout.flush();
}
