//! Every stop rule at its boundaries, as tables.

use std::time::Duration;

use super::*;
use crate::model::{Outcome, is_breakthrough};

/// Cycles as (failed count, state, accepted), the baseline first.
type Spec<'a> = &'a [(u64, &'a str, bool)];

/// Cycles from (failed count, state, accepted): the baseline first.
fn cycles(spec: &[(u64, &str, bool)]) -> Vec<CycleFacts> {
    spec.iter()
        .map(|&(failed_count, state, accepted)| CycleFacts {
            failed_count,
            state: state.to_string(),
            accepted,
            operational_error: false,
            error_signature: None,
            duration: Duration::from_secs(60),
        })
        .collect()
}

fn decide(cycles: &[CycleFacts], limits: &Limits) -> Option<StopReason> {
    evaluate(
        &History {
            cycles,
            elapsed: Duration::from_secs(60 * cycles.len() as u64),
            cancelled: false,
            critical: false,
            pass_confirmed: true,
        },
        limits,
    )
}

#[test]
fn gate_passed_diminishing_returns_and_max_cycles() {
    let limits = Limits::default();
    let table: [(Spec<'_>, Option<StopReason>); 10] = [
        (&[(5, "a", false)], None),
        (&[(0, "z", false)], Some(StopReason::GatePassed)),
        (&[(5, "a", false), (3, "b", true)], None),
        (
            &[(5, "a", false), (0, "z", true)],
            Some(StopReason::GatePassed),
        ),
        // One flat cycle is not yet diminishing returns; two are.
        (&[(5, "a", false), (3, "b", true), (3, "b", false)], None),
        (
            &[
                (5, "a", false),
                (3, "b", true),
                (3, "b", false),
                (3, "b", false),
            ],
            Some(StopReason::DiminishingReturns),
        ),
        // Flat, then a move, then flat once: the run is not flat twice in a row.
        (
            &[
                (5, "a", false),
                (5, "a", false),
                (3, "b", true),
                (3, "b", false),
            ],
            None,
        ),
        // Same count, different findings, twice: still flat by count.
        (
            &[
                (5, "a", false),
                (4, "b", true),
                (4, "c", true),
                (4, "d", true),
            ],
            Some(StopReason::DiminishingReturns),
        ),
        // The fifth cycle is the last of the default budget.
        (
            &[
                (9, "a", false),
                (8, "b", true),
                (7, "c", true),
                (6, "d", true),
                (5, "e", true),
            ],
            None,
        ),
        (
            &[
                (9, "a", false),
                (8, "b", true),
                (7, "c", true),
                (6, "d", true),
                (5, "e", true),
                (4, "f", true),
            ],
            Some(StopReason::MaxCycles),
        ),
    ];
    for (spec, expected) in table {
        assert_eq!(decide(&cycles(spec), &limits), expected, "{spec:?}");
    }
}

#[test]
fn oscillation() {
    let limits = Limits::default();
    let table: [(Spec<'_>, Option<StopReason>); 6] = [
        // Back to the baseline's findings after a detour.
        (
            &[(5, "a", false), (3, "b", true), (5, "a", true)],
            Some(StopReason::Oscillation),
        ),
        // Back to the cycle just before is a detour of one step: the same rule catches it a
        // cycle later only if it returns again.
        (&[(5, "a", false), (3, "b", true)], None),
        // Standing still is not oscillating.
        (
            &[(5, "a", false), (5, "a", false), (5, "a", false)],
            Some(StopReason::DiminishingReturns),
        ),
        // Counts 5, 3, 5, 3 with new findings each time.
        (
            &[
                (5, "a", false),
                (3, "b", true),
                (5, "c", true),
                (3, "d", true),
            ],
            Some(StopReason::Oscillation),
        ),
        (&[(5, "a", false), (3, "b", true), (5, "c", true)], None),
        (
            &[
                (6, "a", false),
                (5, "b", true),
                (3, "c", true),
                (5, "d", true),
            ],
            None,
        ),
    ];
    for (spec, expected) in table {
        assert_eq!(decide(&cycles(spec), &limits), expected, "{spec:?}");
    }
}

#[test]
fn the_order_of_the_rules() {
    let limits = Limits::default();
    let passing = cycles(&[(5, "a", false), (0, "z", true)]);
    let base = History {
        cycles: &passing,
        elapsed: Duration::ZERO,
        cancelled: true,
        critical: true,
        pass_confirmed: true,
    };
    assert_eq!(evaluate(&base, &limits), Some(StopReason::Cancelled));
    let critical = History {
        cancelled: false,
        ..base
    };
    assert_eq!(evaluate(&critical, &limits), Some(StopReason::Critical));
    let unconfirmed = History {
        cancelled: false,
        critical: false,
        pass_confirmed: false,
        ..base
    };
    assert_eq!(evaluate(&unconfirmed, &limits), None);
    assert_eq!(
        evaluate(
            &History {
                cycles: &[],
                ..base
            },
            &limits
        ),
        None
    );
}

#[test]
fn failure_limit() {
    let limits = Limits::default();
    // (operational errors at the end, expected)
    let table = [(0, None), (2, None), (3, Some(StopReason::FailureLimit))];
    for (errors, expected) in table {
        let mut spec = cycles(&[
            (5, "a", false),
            (4, "b", true),
            (3, "c", true),
            (2, "d", true),
        ]);
        for cycle in spec.iter_mut().rev().take(errors) {
            cycle.operational_error = true;
        }
        assert_eq!(decide(&spec, &limits), expected, "{errors}");
    }
}

#[test]
fn same_error_and_no_progress_when_turned_on() {
    let limits = Limits {
        same_error_after: Some(3),
        no_progress_after: Some(3),
        diminishing_after: 0,
        ..Limits::default()
    };
    let mut spec = cycles(&[
        (5, "a", false),
        (5, "b", false),
        (5, "c", false),
        (4, "d", false),
    ]);
    assert_eq!(decide(&spec, &limits), Some(StopReason::NoProgress));
    spec[3].accepted = true;
    assert_eq!(decide(&spec, &limits), None);
    for cycle in &mut spec[1..] {
        cycle.error_signature = Some("E0308 src/a.rs".into());
    }
    assert_eq!(decide(&spec, &limits), Some(StopReason::SameError));
    spec[1].error_signature = Some("other".into());
    assert_eq!(decide(&spec, &limits), None);
}

#[test]
fn time_budget_judged_by_the_longest_cycle() {
    let mut spec = cycles(&[(9, "a", false), (8, "b", true), (7, "c", true)]);
    spec[1].duration = Duration::from_secs(300);
    spec[2].duration = Duration::from_secs(100);
    // (elapsed, budget, expected): the next cycle is judged to take 300 s.
    let table = [
        (600, 900, None),
        (601, 900, Some(StopReason::TimeBudget)),
        (0, 299, Some(StopReason::TimeBudget)),
    ];
    for (elapsed, budget, expected) in table {
        let limits = Limits {
            time_budget: Some(Duration::from_secs(budget)),
            ..Limits::default()
        };
        let history = History {
            cycles: &spec,
            elapsed: Duration::from_secs(elapsed),
            cancelled: false,
            critical: false,
            pass_confirmed: true,
        };
        assert_eq!(
            evaluate(&history, &limits),
            expected,
            "{elapsed} of {budget}"
        );
    }
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
