//! The gate's verdict on a cycle's attempts, one at a time or all together, and what follows:
//! kept, or rolled back to the byte; a verdict of the gate (or of the policy's review) is a
//! strike, a stop that leaves a change unverified is not, and that change is always undone.

use super::policy::{CycleNumber, Judgement, Policy};
use super::{Attempt, Engine, Kept, RunError};
use crate::model::{Diagnostic, GateSummary};
use crate::workspace::{Change, Incident, compose};

/// Verifies one attempt on its own: screened out by the policy, undone for its conduct, or
/// judged by the gate and then the policy's review. Returns the judgement, and whether the gate
/// (and the review) decided it, rather than a stop that left it unverified. The kept state is
/// the cycle's record: a rejected gate run is not (as when nothing changed).
pub(super) fn verify_one(
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
    let verified = engine.verify(cycle, &attempt.changes)?;
    attempt.integrity.clone_from(&verified.integrity);
    // What the gate run did that it must not is the change's doing, and comes first.
    let mut reasons = hold_to_account(engine, attempt, &verified.incidents);
    reasons.extend(verified.reasons.iter().cloned());
    if verified.run.cancelled {
        reasons.push("cancelled before the gate finished".into());
    }
    if reasons.is_empty() {
        reasons = policy.review(engine, index, attempt, &verified, cycle)?;
    }
    attempt.settled = true;
    let decided = !verified.run.cancelled;
    engine.note_integrity(cycle, attempt, true);
    let judgement = if reasons.is_empty() {
        attempt.unmasked = verified.unmasked.iter().map(Diagnostic::detail).collect();
        engine.note_unmasked(&verified.unmasked);
        engine.kept = Kept::of(verified.run);
        attempt.kept = true;
        Judgement::Kept
    } else {
        // What code it planted made while the gate ran goes with it.
        let undone = [&attempt.changes[..], &verified.made[..]].concat();
        engine
            .workspace
            .roll_back_attempts(&undone, attempt.started)?;
        attempt.rejected_because = reasons;
        Judgement::RolledBack
    };
    engine.after_gate()?;
    Ok((judgement, decided))
}

/// Verifies the cycle's open attempts as one change: kept together or rolled back together.
/// A stop asked for before the gate runs leaves the change unverified: it is rolled back.
pub(super) fn verify_together(
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
    let mut unmasked: Vec<String> = Vec::new();
    // What code they planted made while the gate ran: rolled back with their change.
    let mut made = Vec::new();
    // Why the change goes, and whether the gate said so (a strike) or a stop left it unverified.
    let (reasons, verdict) = if engine.cancel.is_requested() {
        let why = "cancelled before the gate ran: an unverified change is not kept";
        (vec![why.to_string()], false)
    } else {
        engine.say(format!("cycle {}: verifying with the gate", cycle.index));
        let verified = engine.verify(cycle, &changes)?;
        measured = Some(verified.run.summary.clone());
        made.clone_from(&verified.made);
        let together = attempts.iter().filter(|(_, a)| !a.settled).count();
        for (_, attempt) in attempts.iter_mut().filter(|(_, a)| !a.settled) {
            let (integrity, its_own) = super::integrity::of_attempt(
                engine.settings,
                engine.workspace.root(),
                attempt,
                &verified,
            );
            attempt.integrity = integrity;
            // A move of no file (a runner's totals), or in a file the gate made, is every
            // attempt's to read, but it counts against a delegate only when the delegate was
            // alone, or made a move of its own.
            let its_own = together == 1 || its_own;
            engine.note_integrity(cycle, attempt, its_own);
        }
        let mut held = Vec::new();
        for (_, attempt) in attempts.iter_mut().filter(|(_, a)| !a.settled) {
            held = hold_to_account(engine, attempt, &verified.incidents);
        }
        if !held.is_empty() {
            held.extend(verified.reasons);
            (held, true)
        } else if verified.keeps() {
            unmasked = verified.unmasked.iter().map(Diagnostic::detail).collect();
            engine.note_unmasked(&verified.unmasked);
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
        engine
            .workspace
            .roll_back_attempts(&[&changes[..], &made[..]].concat(), since)?;
    }
    for (index, attempt) in attempts.iter_mut().filter(|(_, a)| !a.settled) {
        // Every attempt of the cycle shares the verdict on the change they made together.
        attempt.rejected_because.clone_from(&reasons);
        let judgement = if attempt.changes.is_empty() {
            Judgement::NoChange
        } else if reasons.is_empty() {
            attempt.kept = true;
            attempt.unmasked.clone_from(&unmasked);
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

impl Engine<'_> {
    /// Records what `attempt`'s change was found to do that makes the gate see less; a delegate
    /// refused for moves of its own (`its_own`) again and again is barred, as one that keeps
    /// failing.
    fn note_integrity(&mut self, cycle: CycleNumber, attempt: &Attempt, its_own: bool) {
        if attempt.integrity.is_empty() {
            return;
        }
        let mode = self.settings.run.integrity;
        let refused = super::integrity::refusal(mode, &attempt.integrity).is_some();
        let name = self.settings.delegates[attempt.delegate].describe();
        let refusals = self
            .integrity
            .record(cycle.index, attempt, &name, refused, its_own);
        if refusals >= super::integrity::REFUSALS_FOR_BAR {
            tracing::warn!(delegate = %name, refusals, "it keeps weakening the gate: barred for the run");
            self.standing.bar(attempt.delegate);
        }
    }
}

/// Holds what a gate run on `attempt`'s change did that it must not against it: the incidents
/// join its own, and its delegate, having acted against the repository, is barred. Returns the
/// reasons to roll the change back.
fn hold_to_account(
    engine: &mut Engine<'_>,
    attempt: &mut Attempt,
    incidents: &[Incident],
) -> Vec<String> {
    if incidents.is_empty() {
        return Vec::new();
    }
    attempt.incidents.extend(incidents.iter().cloned());
    engine.standing.bar(attempt.delegate);
    incidents.iter().map(Incident::describe).collect()
}
