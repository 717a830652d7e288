//! Every way a run ends. Each preset's stop rules are values: a list of [`Rule`]s with their
//! limits ([`refactoring`], [`improve`], [`refine`]), checked in order by the one [`evaluate`]
//! against the [`Facts`] after each cycle; the first rule that holds is the run's stop reason.
//! The facts are counts (cycles in a row without progress, with the same error, flat...) that
//! the refactoring loop derives from its recorded cycles ([`Facts::of_cycles`]) and a campaign
//! keeps in its counters across runs ([`Facts::of_counters`]). No clock, no I/O: elapsed time
//! and cycle durations are data. DESIGN.md §7 lists the rules.

use std::time::Duration;

pub use crate::model::StopReason;
use crate::model::{Diagnostic, GateSummary};

/// A stop rule and its limit. A limit of 0 turns a counting rule off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// SIGINT or SIGTERM was received.
    Cancelled,
    /// This many operational errors in a row (a delegate that could not start, the gate's
    /// `infra` category).
    FailureLimit(u32),
    /// A delegate reported a critical, behaviour-changing finding.
    Critical,
    /// The gate passed (and the confirmation run agreed, when one is made).
    GatePassed,
    /// The findings came back to an earlier, non-adjacent state, or the counts alternate.
    Oscillation,
    /// This many cycles in a row ended with the same error signature.
    SameError(u32),
    /// This many cycles in a row left the failed count where it was.
    DiminishingReturns(u32),
    /// This many cycles in a row without progress.
    NoProgress(u32),
    /// This many cycles in a row with a green gate and nothing material open (`complete`).
    Complete(u32),
    /// Every failing category is held: its earlier work is pending (`pending-work`).
    OnlyHeld,
    /// This many rounds over the campaign's whole life (`max-rounds`).
    LifetimeRounds(u32),
    /// This many cycles in this run or segment.
    MaxCycles(u32),
    /// This many rounds in the segment (`max-rounds`, with handoffs when there are).
    MaxRounds(u32),
    /// This many rounds in a row without a candidate kept (`plateau`, with handoffs when there
    /// are, `pending-work` when families are held).
    Plateau(u32),
    /// Another cycle, as long as the longest so far, would not fit in this budget.
    TimeBudget(Duration),
}

/// What the rules read after a cycle.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    pub cancelled: bool,
    pub critical: bool,
    /// The last cycle's gate passed, without an operational error, confirmed.
    pub passed: bool,
    /// The findings returned to an earlier state.
    pub oscillating: bool,
    /// Counts of cycles in a row, at the end.
    pub operational_errors: u32,
    pub same_error: u32,
    pub flat: u32,
    pub no_progress: u32,
    pub residual: u32,
    pub plateau: u32,
    /// Cycles (rounds) done in this run or segment, and over a campaign's life.
    pub cycles: u32,
    pub lifetime_rounds: u32,
    /// A campaign has open handoffs, held families, and nothing failing but held families.
    pub handoffs: bool,
    pub held: bool,
    pub only_held: bool,
    pub elapsed: Duration,
    /// The longest cycle so far: what the next one is expected to take.
    pub longest_cycle: Duration,
}

/// The `refactoring` preset's rules (the default), with the run's budgets.
pub fn refactoring(max_cycles: u32, time_budget: Option<Duration>) -> Vec<Rule> {
    let mut rules = vec![
        Rule::Cancelled,
        Rule::FailureLimit(3),
        Rule::GatePassed,
        Rule::Oscillation,
        Rule::DiminishingReturns(2),
        Rule::MaxCycles(max_cycles),
    ];
    rules.extend(time_budget.map(Rule::TimeBudget));
    rules
}

/// The `improve` preset's cycles when `IMPROVE_LOOP_MAX_CYCLES` does not say.
pub const IMPROVE_MAX_CYCLES: u32 = 8;
/// improve: cycles in a row whose failed count did not drop, or that ended with the same error.
pub const IMPROVE_NO_PROGRESS: u32 = 3;
pub const IMPROVE_SAME_ERROR: u32 = 3;
/// improve: cycles in a row with nothing material open and a green gate, the second a
/// confirmation run.
pub const IMPROVE_RESIDUAL: u32 = 2;

/// The `improve` preset's rules: its cycles, and the campaign's lifetime rounds if limited.
pub fn improve(max_cycles: u32, lifetime_rounds: Option<u32>) -> Vec<Rule> {
    let mut rules = vec![Rule::Cancelled];
    rules.extend(lifetime_rounds.map(Rule::LifetimeRounds));
    rules.extend([
        Rule::OnlyHeld,
        Rule::Complete(IMPROVE_RESIDUAL),
        Rule::SameError(IMPROVE_SAME_ERROR),
        Rule::NoProgress(IMPROVE_NO_PROGRESS),
        Rule::MaxCycles(max_cycles),
    ]);
    rules
}

/// refine (the seed's limits): rounds in a row without a candidate kept, rounds in a segment,
/// operational errors in a row.
pub const REFINE_PLATEAU: u32 = 3;
pub const REFINE_MAX_ROUNDS: u32 = 25;
pub const REFINE_FAILURES: u32 = 3;

/// The `refine` preset's rules (the seed's order), and the campaign's lifetime rounds if
/// limited.
pub fn refine(lifetime_rounds: Option<u32>) -> Vec<Rule> {
    let mut rules = vec![
        Rule::Cancelled,
        Rule::FailureLimit(REFINE_FAILURES),
        Rule::Critical,
        Rule::MaxRounds(REFINE_MAX_ROUNDS),
    ];
    rules.extend(lifetime_rounds.map(Rule::LifetimeRounds));
    rules.push(Rule::Plateau(REFINE_PLATEAU));
    rules
}

/// The first of `rules` that holds for `facts`, if any.
pub fn evaluate(facts: &Facts, rules: &[Rule]) -> Option<StopReason> {
    rules.iter().find_map(|rule| holds(*rule, facts))
}

/// The stop reason of `rule`, when it holds for `facts`.
fn holds(rule: Rule, facts: &Facts) -> Option<StopReason> {
    let reached = |count: u32, limit: u32| limit > 0 && count >= limit;
    let rounds_spent = || {
        if facts.handoffs {
            StopReason::MaxRoundsWithHandoffs
        } else {
            StopReason::MaxRounds
        }
    };
    let (holds, reason) = match rule {
        Rule::Cancelled => (facts.cancelled, StopReason::Cancelled),
        Rule::FailureLimit(limit) => (
            reached(facts.operational_errors, limit),
            StopReason::FailureLimit,
        ),
        Rule::Critical => (facts.critical, StopReason::Critical),
        Rule::GatePassed => (facts.passed, StopReason::GatePassed),
        Rule::Oscillation => (facts.oscillating, StopReason::Oscillation),
        Rule::SameError(limit) => (reached(facts.same_error, limit), StopReason::SameError),
        Rule::DiminishingReturns(limit) => {
            (reached(facts.flat, limit), StopReason::DiminishingReturns)
        }
        Rule::NoProgress(limit) => (reached(facts.no_progress, limit), StopReason::NoProgress),
        Rule::Complete(limit) => (reached(facts.residual, limit), StopReason::Complete),
        Rule::OnlyHeld => (facts.only_held, StopReason::PendingWork),
        Rule::LifetimeRounds(limit) => (reached(facts.lifetime_rounds, limit), rounds_spent()),
        Rule::MaxCycles(limit) => (facts.cycles >= limit, StopReason::MaxCycles),
        Rule::MaxRounds(limit) => (reached(facts.cycles, limit), rounds_spent()),
        Rule::Plateau(limit) => (
            reached(facts.plateau, limit),
            if facts.handoffs {
                StopReason::PlateauWithHandoffs
            } else if facts.held {
                // Not finished: the held families come back when their earlier work lands.
                StopReason::PendingWork
            } else {
                StopReason::Plateau
            },
        ),
        Rule::TimeBudget(budget) => (
            facts.elapsed.saturating_add(facts.longest_cycle) > budget,
            StopReason::TimeBudget,
        ),
    };
    holds.then_some(reason)
}

/// One cycle as the refactoring loop records it. Cycle 0 is the baseline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CycleFacts {
    pub failed_count: u64,
    /// Identity of the findings (not just their count): equal states are the same findings.
    pub state: String,
    /// The run itself failed in this cycle (a delegate could not start, the gate was `infra`).
    pub operational_error: bool,
    pub duration: Duration,
}

/// The record so far: the baseline first, then each cycle.
#[derive(Debug, Clone, Copy)]
pub struct History<'a> {
    pub cycles: &'a [CycleFacts],
    pub elapsed: Duration,
    pub cancelled: bool,
    /// The gate passed again on a confirmation run (when one is made).
    pub pass_confirmed: bool,
}

impl Facts {
    /// The facts of a recorded history: the counts of cycles in a row are read off its end.
    /// Before the baseline is recorded nothing holds but cancellation.
    pub fn of_cycles(history: &History<'_>) -> Self {
        let cycles = history.cycles;
        let Some(last) = cycles.last() else {
            return Self {
                cancelled: history.cancelled,
                cycles: 0,
                ..Self::default()
            };
        };
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Self {
            cancelled: history.cancelled,
            passed: last.failed_count == 0 && !last.operational_error && history.pass_confirmed,
            oscillating: oscillates(cycles),
            operational_errors: trailing(cycles, |c| c.operational_error),
            flat: count(
                cycles
                    .windows(2)
                    .rev()
                    .take_while(|pair| pair[0].failed_count == pair[1].failed_count)
                    .count(),
            ),
            cycles: count(cycles.len() - 1),
            elapsed: history.elapsed,
            longest_cycle: (cycles[1..].iter().map(|c| c.duration).max())
                .unwrap_or(cycles[0].duration),
            ..Self::default()
        }
    }
}

/// How many cycles at the end satisfy `holds`, in a row.
fn trailing(cycles: &[CycleFacts], holds: impl Fn(&CycleFacts) -> bool) -> u32 {
    let count = cycles.iter().rev().take_while(|c| holds(c)).count();
    u32::try_from(count).unwrap_or(u32::MAX)
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

/// What failed, as one comparable signature: the sorted fingerprints of the failing findings;
/// `None` when the gate passed.
pub fn error_signature(findings: &[Diagnostic], summary: &GateSummary) -> Option<String> {
    if summary.failed_count == 0 {
        return None;
    }
    let mut prints: Vec<&str> = findings.iter().map(|d| d.fingerprint.as_str()).collect();
    prints.sort_unstable();
    prints.dedup();
    Some(if prints.is_empty() {
        format!("{} failures without findings", summary.failed_count)
    } else {
        prints.join(",")
    })
}

#[cfg(test)]
#[path = "stop_tests.rs"]
mod tests;
