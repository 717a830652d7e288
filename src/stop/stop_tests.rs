//! Every stop rule at its boundaries, as tables.

use std::time::Duration;

use super::*;
use crate::model::{Outcome, is_breakthrough};

/// Cycles as (failed count, state), the baseline first.
type Spec<'a> = &'a [(u64, &'a str)];

/// Cycles from (failed count, state): the baseline first.
fn cycles(spec: &[(u64, &str)]) -> Vec<CycleFacts> {
    spec.iter()
        .map(|&(failed_count, state)| CycleFacts {
            failed_count,
            state: state.to_string(),
            operational_error: false,
            duration: Duration::from_secs(60),
        })
        .collect()
}

fn decide(cycles: &[CycleFacts], rules: &[Rule]) -> Option<StopReason> {
    let history = History {
        cycles,
        elapsed: Duration::from_secs(60 * cycles.len() as u64),
        cancelled: false,
        pass_confirmed: true,
    };
    evaluate(&Facts::of_cycles(&history), rules)
}

/// The refactoring preset's rules with the default budget of five cycles.
fn default_rules() -> Vec<Rule> {
    refactoring(5, None)
}

#[test]
fn gate_passed_diminishing_returns_and_max_cycles() {
    let limits = default_rules();
    let table: [(Spec<'_>, Option<StopReason>); 10] = [
        (&[(5, "a")], None),
        (&[(0, "z")], Some(StopReason::GatePassed)),
        (&[(5, "a"), (3, "b")], None),
        (&[(5, "a"), (0, "z")], Some(StopReason::GatePassed)),
        // One flat cycle is not yet diminishing returns; two are.
        (&[(5, "a"), (3, "b"), (3, "b")], None),
        (
            &[(5, "a"), (3, "b"), (3, "b"), (3, "b")],
            Some(StopReason::DiminishingReturns),
        ),
        // Flat, then a move, then flat once: the run is not flat twice in a row.
        (&[(5, "a"), (5, "a"), (3, "b"), (3, "b")], None),
        // Same count, different findings, twice: still flat by count.
        (
            &[(5, "a"), (4, "b"), (4, "c"), (4, "d")],
            Some(StopReason::DiminishingReturns),
        ),
        // The fifth cycle is the last of the default budget.
        (&[(9, "a"), (8, "b"), (7, "c"), (6, "d"), (5, "e")], None),
        (
            &[(9, "a"), (8, "b"), (7, "c"), (6, "d"), (5, "e"), (4, "f")],
            Some(StopReason::MaxCycles),
        ),
    ];
    for (spec, expected) in table {
        assert_eq!(decide(&cycles(spec), &limits), expected, "{spec:?}");
    }
}

#[test]
fn oscillation() {
    let limits = default_rules();
    let table: [(Spec<'_>, Option<StopReason>); 6] = [
        // Back to the baseline's findings after a detour.
        (
            &[(5, "a"), (3, "b"), (5, "a")],
            Some(StopReason::Oscillation),
        ),
        // Back to the cycle just before is a detour of one step: the same rule catches it a
        // cycle later only if it returns again.
        (&[(5, "a"), (3, "b")], None),
        // Standing still is not oscillating.
        (
            &[(5, "a"), (5, "a"), (5, "a")],
            Some(StopReason::DiminishingReturns),
        ),
        // Counts 5, 3, 5, 3 with new findings each time.
        (
            &[(5, "a"), (3, "b"), (5, "c"), (3, "d")],
            Some(StopReason::Oscillation),
        ),
        (&[(5, "a"), (3, "b"), (5, "c")], None),
        (&[(6, "a"), (5, "b"), (3, "c"), (5, "d")], None),
    ];
    for (spec, expected) in table {
        assert_eq!(decide(&cycles(spec), &limits), expected, "{spec:?}");
    }
}

#[test]
fn the_order_of_the_rules() {
    let limits = default_rules();
    let passing = cycles(&[(5, "a"), (0, "z")]);
    let base = History {
        cycles: &passing,
        elapsed: Duration::ZERO,
        cancelled: true,
        pass_confirmed: true,
    };
    let decide = |history: &History<'_>| evaluate(&Facts::of_cycles(history), &limits);
    assert_eq!(decide(&base), Some(StopReason::Cancelled));
    let passed = History {
        cancelled: false,
        ..base
    };
    assert_eq!(decide(&passed), Some(StopReason::GatePassed));
    let unconfirmed = History {
        cancelled: false,
        pass_confirmed: false,
        ..base
    };
    assert_eq!(decide(&unconfirmed), None);
    // Before the baseline is recorded, only a cancellation stops the run.
    let empty = History {
        cycles: &[],
        ..unconfirmed
    };
    assert_eq!(decide(&empty), None);
    assert_eq!(
        decide(&History {
            cancelled: true,
            ..empty
        }),
        Some(StopReason::Cancelled)
    );
}

#[test]
fn failure_limit() {
    let limits = default_rules();
    // (operational errors at the end, expected)
    let table = [(0, None), (2, None), (3, Some(StopReason::FailureLimit))];
    for (errors, expected) in table {
        let mut spec = cycles(&[(5, "a"), (4, "b"), (3, "c"), (2, "d")]);
        for cycle in spec.iter_mut().rev().take(errors) {
            cycle.operational_error = true;
        }
        assert_eq!(decide(&spec, &limits), expected, "{errors}");
    }
}

#[test]
fn time_budget_judged_by_the_longest_cycle() {
    let mut spec = cycles(&[(9, "a"), (8, "b"), (7, "c")]);
    spec[1].duration = Duration::from_secs(300);
    spec[2].duration = Duration::from_secs(100);
    // (elapsed, budget, expected): the next cycle is judged to take 300 s.
    let table = [
        (600, 900, None),
        (601, 900, Some(StopReason::TimeBudget)),
        (0, 299, Some(StopReason::TimeBudget)),
    ];
    for (elapsed, budget, expected) in table {
        let limits = refactoring(5, Some(Duration::from_secs(budget)));
        let history = History {
            cycles: &spec,
            elapsed: Duration::from_secs(elapsed),
            cancelled: false,
            pass_confirmed: true,
        };
        assert_eq!(
            evaluate(&Facts::of_cycles(&history), &limits),
            expected,
            "{elapsed} of {budget}"
        );
    }
}

#[test]
fn improves_rules_at_their_boundaries() {
    // (no progress, same error, residual streak, cycles, lifetime rounds, only held)
    let facts = |no_progress, same_error, residual, cycles, lifetime_rounds, only_held| Facts {
        no_progress,
        same_error,
        residual,
        cycles,
        lifetime_rounds,
        only_held,
        ..Facts::default()
    };
    let table = [
        (facts(0, 0, 1, 1, 1, false), None),
        (facts(0, 0, 2, 2, 2, false), Some(StopReason::Complete)),
        (facts(2, 2, 0, 2, 2, false), None),
        (facts(3, 0, 0, 3, 3, false), Some(StopReason::NoProgress)),
        (facts(0, 3, 0, 3, 3, false), Some(StopReason::SameError)),
        (facts(3, 3, 0, 3, 3, false), Some(StopReason::SameError)),
        (facts(0, 0, 1, 8, 8, false), Some(StopReason::MaxCycles)),
        (facts(0, 0, 2, 8, 8, false), Some(StopReason::Complete)),
        (facts(0, 0, 0, 7, 7, false), None),
        // Only held families fail: pending work, before any count.
        (facts(3, 3, 2, 8, 8, true), Some(StopReason::PendingWork)),
        // The campaign's lifetime (20 rounds here) is spent first of all.
        (facts(0, 0, 0, 1, 20, true), Some(StopReason::MaxRounds)),
        (facts(0, 0, 0, 1, 19, false), None),
    ];
    let rules = improve(8, Some(20));
    for (facts, expected) in table {
        assert_eq!(evaluate(&facts, &rules), expected, "{facts:?}");
    }
    let cancelled = Facts {
        cancelled: true,
        ..facts(3, 3, 2, 8, 20, true)
    };
    assert_eq!(evaluate(&cancelled, &rules), Some(StopReason::Cancelled));
    // Without a lifetime limit, no lifetime ends the campaign.
    let old = facts(0, 0, 0, 1, 1000, false);
    assert_eq!(evaluate(&old, &improve(8, None)), None);
}

#[test]
fn refines_rules_at_their_boundaries() {
    // (operational errors, critical, plateau, rounds, lifetime rounds, handoffs, held)
    let facts =
        |operational_errors, critical, plateau, cycles, lifetime_rounds, handoffs, held| Facts {
            operational_errors,
            critical,
            plateau,
            cycles,
            lifetime_rounds,
            handoffs,
            held,
            ..Facts::default()
        };
    let table = [
        (facts(0, false, 2, 2, 2, false, false), None),
        (
            facts(0, false, 3, 3, 3, false, false),
            Some(StopReason::Plateau),
        ),
        (
            facts(0, false, 3, 3, 3, true, true),
            Some(StopReason::PlateauWithHandoffs),
        ),
        (
            facts(0, false, 3, 3, 3, false, true),
            Some(StopReason::PendingWork),
        ),
        (facts(2, false, 0, 3, 3, false, false), None),
        (
            facts(3, true, 3, 25, 25, true, false),
            Some(StopReason::FailureLimit),
        ),
        (
            facts(0, true, 3, 25, 25, true, false),
            Some(StopReason::Critical),
        ),
        (facts(0, false, 0, 24, 24, false, false), None),
        (
            facts(0, false, 3, 25, 25, false, false),
            Some(StopReason::MaxRounds),
        ),
        (
            facts(0, false, 0, 25, 25, true, false),
            Some(StopReason::MaxRoundsWithHandoffs),
        ),
        // A lifetime of 30 rounds, 29 of them in earlier segments.
        (
            facts(0, false, 0, 1, 30, true, false),
            Some(StopReason::MaxRoundsWithHandoffs),
        ),
        (facts(0, false, 0, 1, 29, false, false), None),
    ];
    let rules = refine(Some(30));
    for (facts, expected) in table {
        assert_eq!(evaluate(&facts, &rules), expected, "{facts:?}");
    }
}

#[test]
fn every_preset_checks_cancellation_first_and_a_zero_limit_is_off() {
    let everything = Facts {
        cancelled: true,
        critical: true,
        passed: true,
        oscillating: true,
        operational_errors: 9,
        same_error: 9,
        flat: 9,
        no_progress: 9,
        residual: 9,
        plateau: 9,
        cycles: 99,
        lifetime_rounds: 99,
        only_held: true,
        ..Facts::default()
    };
    for rules in [refactoring(5, None), improve(8, Some(1)), refine(Some(1))] {
        assert_eq!(
            evaluate(&everything, &rules),
            Some(StopReason::Cancelled),
            "{rules:?}"
        );
    }
    let counting = [
        Rule::FailureLimit(0),
        Rule::SameError(0),
        Rule::DiminishingReturns(0),
        Rule::NoProgress(0),
        Rule::Complete(0),
        Rule::Plateau(0),
        Rule::MaxRounds(0),
        Rule::LifetimeRounds(0),
    ];
    assert_eq!(evaluate(&everything, &counting), None);
}

#[test]
fn the_error_signature_is_the_failing_findings_in_any_order() {
    use crate::model::{Diagnostic, GateSummary, Severity};
    let finding = |fingerprint: &str| Diagnostic {
        file: None,
        category: Some("lint".to_string()),
        message: fingerprint.to_string(),
        fingerprint: fingerprint.to_string(),
        line: None,
        column: None,
        end_line: None,
        end_column: None,
        severity: Severity::Error,
        code: None,
        outside_target: false,
        body: None,
    };
    let failing = GateSummary {
        failed_count: 2,
        ..GateSummary::empty(1)
    };
    let one = error_signature(&[finding("b"), finding("a"), finding("a")], &failing);
    let two = error_signature(&[finding("a"), finding("b")], &failing);
    assert_eq!(one, two);
    assert_eq!(one.as_deref(), Some("a,b"));
    assert_eq!(
        error_signature(&[], &failing).as_deref(),
        Some("2 failures without findings")
    );
    assert_eq!(
        error_signature(&[finding("a")], &GateSummary::empty(1)),
        None
    );
}

#[test]
fn breakthroughs() {
    let table = [
        (10, 4, true),
        (10, 5, false),
        (10, 6, false),
        (1, 0, true),
        (0, 0, false),
    ];
    for (before, after, expected) in table {
        assert_eq!(
            is_breakthrough(before, after),
            expected,
            "{before} -> {after}"
        );
    }
}

#[test]
fn outcomes_and_exit_codes() {
    let table = [
        (StopReason::GatePassed, Outcome::Success, 0),
        (StopReason::DiminishingReturns, Outcome::NeedsFix, 1),
        (StopReason::Oscillation, Outcome::NeedsFix, 1),
        (StopReason::MaxCycles, Outcome::Budget, 3),
        (StopReason::TimeBudget, Outcome::Budget, 3),
        (StopReason::FailureLimit, Outcome::Error, 4),
        (StopReason::Cancelled, Outcome::Cancelled, 130),
    ];
    for (reason, outcome, code) in table {
        assert_eq!(reason.outcome(), outcome, "{reason:?}");
        assert_eq!(crate::exit_code::of_outcome(outcome), code, "{reason:?}");
    }
    assert_eq!(
        serde_json::to_string(&Outcome::NeedsFix).unwrap(),
        "\"NEEDS-FIX\""
    );
    assert_eq!(
        serde_json::to_string(&StopReason::DiminishingReturns).unwrap(),
        "\"diminishing-returns\""
    );
}
