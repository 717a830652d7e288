//! A preset is a policy: which work a cycle takes, which counters it keeps and which stop rules
//! apply. The engine owns the cycle (baseline, turns, verification, accept or roll back, record,
//! cancel); it asks the policy only these questions.

use std::time::Duration;

use super::verify::Verified;
use super::{Attempt, Engine, RunError};
use crate::delegate::Role;
use crate::model::{Diagnostic, GateSummary, StopReason};

/// The numbers of one cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CycleNumber {
    /// The cycle's folder, `cycle-N` (0 is the baseline); unique in the state dir, across the
    /// runs of a campaign.
    pub index: u32,
    /// The number a person reads: the cycle, or a campaign's round in its segment.
    pub shown: u32,
}

/// How the delegate for a piece of work is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Staff {
    /// A fix delegate bound to the work's category (strikes and cooldown apply).
    ForCategory,
    /// The delegate of this role.
    Role(Role),
}

/// One piece of a cycle's work: what one delegate is given.
#[derive(Debug, Clone)]
pub struct Work {
    /// The category (or a refine candidate's family) the attempt is recorded under.
    pub category: String,
    /// The name its files get in the cycle's `delegate-reports/`.
    pub file_name: String,
    pub staff: Staff,
    pub diagnostics: Vec<Diagnostic>,
    pub details: Vec<String>,
    /// Paths the work is about beyond those the diagnostics name.
    pub files: Vec<String>,
    /// A prompt template in place of the delegate's default one.
    pub template: Option<&'static str>,
}

/// When the gate verifies the attempts of a cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verification {
    /// Once, after every delegate has had its turn; all kept or all rolled back.
    Together,
    /// After each attempt that changed something; `until_accepted` ends the cycle's work at
    /// the first attempt kept.
    EachAttempt { until_accepted: bool },
}

/// What a cycle does.
#[derive(Debug)]
pub enum Plan {
    /// Delegates take the work in order.
    Work {
        items: Vec<Work>,
        verification: Verification,
    },
    /// No delegate runs; the gate runs again to confirm the kept state.
    Confirm,
}

/// How an attempt was judged, as the policy hears of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judgement {
    Kept,
    /// Rolled back: the gate or the policy's review rejected it, or a stop left it unverified.
    RolledBack,
    /// Undone at once for its own conduct (an act against the repository, a secret written).
    Undone,
    /// Not verified, for this reason the policy gave (undone when it changed anything).
    Screened(String),
    /// It changed nothing.
    NoChange,
}

/// One finished cycle.
#[derive(Debug)]
pub struct CycleRecord<'c> {
    pub number: CycleNumber,
    /// The kept state before the cycle, and after it.
    pub before: &'c GateSummary,
    pub after: &'c GateSummary,
    pub attempts: &'c [Attempt],
    /// What the cycle's last gate run measured (kept or not), when one ran.
    pub measured: Option<&'c GateSummary>,
    pub accepted: bool,
    /// A stop was asked for during the cycle (or its gate was cut short).
    pub cancelled: bool,
    pub duration: Duration,
}

impl CycleRecord<'_> {
    pub fn kept_count(&self) -> usize {
        self.attempts.iter().filter(|a| a.kept).count()
    }

    pub fn rolled_back_count(&self) -> usize {
        self.attempts
            .iter()
            .filter(|a| !a.kept && !a.changes.is_empty())
            .count()
    }
}

/// The policy's word after a cycle.
#[derive(Debug, Clone, Copy, Default)]
pub struct Settled {
    /// The stop rule that holds now, if any (said in the cycle's line and ledger).
    pub next: Option<StopReason>,
    /// Stop now, whatever the rules say next time.
    pub stop_now: Option<StopReason>,
}

/// A preset's questions and counters.
pub trait Policy {
    /// After the baseline, before the first cycle: the run's opening line for a person, if any.
    fn begin(&mut self, _engine: &mut Engine<'_>) -> Result<Option<String>, RunError> {
        Ok(None)
    }

    /// The stop rule that holds before another cycle, if any.
    fn stop(&mut self, engine: &Engine<'_>) -> Result<Option<StopReason>, RunError>;

    /// Opens the next cycle (a campaign marks its round in progress).
    fn open_cycle(&mut self, engine: &Engine<'_>) -> Result<CycleNumber, RunError>;

    /// The cycle's work.
    fn plan(&mut self, engine: &mut Engine<'_>, cycle: CycleNumber) -> Result<Plan, RunError>;

    /// No delegate can take work item `index`: `true` to go on with the next item.
    fn unstaffed(&mut self, _index: usize, _cycle: CycleNumber) -> Result<bool, RunError> {
        Ok(true)
    }

    /// A reason not to verify an attempt at all (each-attempt verification only).
    fn screen(&self, _engine: &Engine<'_>, _attempt: &Attempt) -> Option<String> {
        None
    }

    /// Reasons to reject an attempt the gate accepted (each-attempt verification only).
    fn review(
        &mut self,
        _engine: &mut Engine<'_>,
        _index: usize,
        _attempt: &Attempt,
        _verified: &Verified,
        _cycle: CycleNumber,
    ) -> Result<Vec<String>, RunError> {
        Ok(Vec::new())
    }

    /// How work item `index`'s attempt was judged.
    fn judged(
        &mut self,
        _index: usize,
        _attempt: &Attempt,
        _judgement: &Judgement,
    ) -> Result<(), RunError> {
        Ok(())
    }

    /// The cycle's attempts are on record (their delegate reports written).
    fn recorded(&mut self, _record: &CycleRecord<'_>) -> Result<(), RunError> {
        Ok(())
    }

    /// A stop was asked for and nothing was kept: `true` when the cycle does not count (a
    /// campaign does it again on its next run); the run then ends as cancelled.
    fn discard_cancelled(&mut self, _record: &CycleRecord<'_>) -> Result<bool, RunError> {
        Ok(false)
    }

    /// Updates the counters after a cycle.
    fn settle(
        &mut self,
        engine: &Engine<'_>,
        record: &CycleRecord<'_>,
    ) -> Result<Settled, RunError>;

    /// The engine ends the run for a reason of its own (a spending cap): the policy records it
    /// as the run's ending, as it would one of its own rules.
    fn ended_by_engine(&mut self, _reason: StopReason) -> Result<(), RunError> {
        Ok(())
    }

    /// What the delegates spent so far, in this segment and over the campaign's life: a
    /// campaign keeps it in its books (after each cycle and at the end).
    fn book_spending(
        &mut self,
        _segment: crate::model::Spend,
        _lifetime: crate::model::Spend,
    ) -> Result<(), RunError> {
        Ok(())
    }

    /// A campaign's open backlog and stop-condition state, for the ledger of an accepted cycle.
    fn ledger_notes(&self) -> Option<(Vec<String>, String)> {
        None
    }

    /// Closes the cycle (the policy's own files) and returns its line for a person.
    fn close_cycle(
        &mut self,
        engine: &mut Engine<'_>,
        record: &CycleRecord<'_>,
        next: Option<StopReason>,
    ) -> Result<String, RunError>;
}
