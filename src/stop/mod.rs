//! Stop rules: pure functions of the recorded history and the limits. No clock, no I/O: elapsed
//! time and cycle durations are data. Evaluated after every cycle in DESIGN.md §7's order; the
//! first rule that holds decides the outcome.

use std::time::Duration;

pub use crate::model::StopReason;

/// One cycle as the rules see it. Cycle 0 is the baseline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CycleFacts {
    pub failed_count: u64,
    /// Identity of the findings (not just their count): equal states are the same findings.
    pub state: String,
    /// A change was accepted in this cycle (the baseline: false).
    pub accepted: bool,
    /// The run itself failed in this cycle (a delegate could not start, the gate was `infra`).
    pub operational_error: bool,
    /// The signature of the cycle's leading error, for `same-error`.
    pub error_signature: Option<String>,
    pub duration: Duration,
}

/// What the rules are checked against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    pub max_cycles: u32,
    pub time_budget: Option<Duration>,
    /// Flat cycles (failed count equal to the cycle before) in a row that stop the run.
    pub diminishing_after: u32,
    /// Operational errors in a row that stop the run.
    pub failure_limit: u32,
    /// Cycles in a row with the same error signature; `None` turns the rule off.
    pub same_error_after: Option<u32>,
    /// Cycles in a row without an accepted change; `None` turns the rule off.
    pub no_progress_after: Option<u32>,
}

impl Default for Limits {
    /// The `refactoring` preset.
    fn default() -> Self {
        Self {
            max_cycles: 5,
            time_budget: None,
            diminishing_after: 2,
            failure_limit: 3,
            same_error_after: None,
            no_progress_after: None,
        }
    }
}

/// The record so far: the baseline first, then each cycle.
#[derive(Debug, Clone, Copy)]
pub struct History<'a> {
    pub cycles: &'a [CycleFacts],
    pub elapsed: Duration,
    pub cancelled: bool,
    pub critical: bool,
    /// The gate passed again on a confirmation run (when one is made).
    pub pass_confirmed: bool,
}

/// The first rule that holds after the last recorded cycle, if any.
pub fn evaluate(history: &History<'_>, limits: &Limits) -> Option<StopReason> {
    let cycles = history.cycles;
    let last = cycles.last()?;
    let done = u32::try_from(cycles.len() - 1).unwrap_or(u32::MAX);
    if history.cancelled {
        return Some(StopReason::Cancelled);
    }
    if limits.failure_limit > 0 && trailing(cycles, |c| c.operational_error) >= limits.failure_limit
    {
        return Some(StopReason::FailureLimit);
    }
    if history.critical {
        return Some(StopReason::Critical);
    }
    if last.failed_count == 0 && !last.operational_error && history.pass_confirmed {
        return Some(StopReason::GatePassed);
    }
    if oscillates(cycles) {
        return Some(StopReason::Oscillation);
    }
    if let Some(limit) = limits.same_error_after
        && same_error_run(cycles) >= limit
    {
        return Some(StopReason::SameError);
    }
    if limits.diminishing_after > 0 && flat_run(cycles) >= limits.diminishing_after {
        return Some(StopReason::DiminishingReturns);
    }
    if let Some(limit) = limits.no_progress_after
        && trailing(&cycles[1..], |c| !c.accepted) >= limit
    {
        return Some(StopReason::NoProgress);
    }
    if done >= limits.max_cycles {
        return Some(StopReason::MaxCycles);
    }
    if let Some(budget) = limits.time_budget
        && !next_cycle_fits(cycles, history.elapsed, budget)
    {
        return Some(StopReason::TimeBudget);
    }
    None
}

/// How many cycles at the end satisfy `holds`, in a row.
fn trailing(cycles: &[CycleFacts], holds: impl Fn(&CycleFacts) -> bool) -> u32 {
    let count = cycles.iter().rev().take_while(|c| holds(c)).count();
    u32::try_from(count).unwrap_or(u32::MAX)
}

/// Cycles in a row, at the end, whose failed count equals the cycle's before.
fn flat_run(cycles: &[CycleFacts]) -> u32 {
    let count = cycles
        .windows(2)
        .rev()
        .take_while(|pair| pair[0].failed_count == pair[1].failed_count)
        .count();
    u32::try_from(count).unwrap_or(u32::MAX)
}

/// Cycles in a row, at the end, with the same error signature.
fn same_error_run(cycles: &[CycleFacts]) -> u32 {
    let Some(signature) = cycles.last().and_then(|c| c.error_signature.as_ref()) else {
        return 0;
    };
    trailing(cycles, |c| c.error_signature.as_ref() == Some(signature))
}

/// The findings came back to a state seen before, not just the cycle before; or the counts
/// alternate a, b, a, b.
fn oscillates(cycles: &[CycleFacts]) -> bool {
    let n = cycles.len();
    if n >= 3 {
        // A return, not a standstill: the cycle before was somewhere else.
        let last = &cycles[n - 1];
        if cycles[n - 2].state != last.state
            && cycles[..n - 2]
                .iter()
                .any(|earlier| earlier.state == last.state)
        {
            return true;
        }
    }
    if n >= 4 {
        let c: Vec<u64> = cycles[n - 4..].iter().map(|c| c.failed_count).collect();
        return c[0] == c[2] && c[1] == c[3] && c[0] != c[1];
    }
    false
}

/// Whether another cycle fits in the budget, judged by the longest cycle so far.
fn next_cycle_fits(cycles: &[CycleFacts], elapsed: Duration, budget: Duration) -> bool {
    let longest = cycles[1..]
        .iter()
        .map(|c| c.duration)
        .max()
        .unwrap_or_else(|| cycles[0].duration);
    elapsed.saturating_add(longest) <= budget
}

#[cfg(test)]
#[path = "stop_tests.rs"]
mod tests;
