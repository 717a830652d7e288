//! Which delegates may still run: strikes per (delegate, category) pair, the cooldown three
//! strikes bring, and the delegates barred for acting against the repository. Every preset picks
//! its delegates through this one record.

use std::collections::{HashMap, HashSet};

use super::heuristics::Heuristics;
use super::policy::Staff;
use super::{Attempt, STRIKES_FOR_COOLDOWN};
use crate::delegate::{DelegateSpec, Role};
use crate::workspace::Incident;

/// The loop's memory of which delegates may still run.
#[derive(Debug, Default)]
pub struct Standing {
    pub(super) strikes: HashMap<(usize, String), u32>,
    /// Delegates that acted against the repository: not run again.
    barred: HashSet<usize>,
    /// Delegates that have spent their own cap (`[[delegate]] max_cost`, `max_tokens`): they sit
    /// out the rest of the run.
    capped: HashSet<usize>,
}

impl Standing {
    pub fn may_run(&self, delegate: usize, category: &str) -> bool {
        !self.barred.contains(&delegate)
            && !self.capped.contains(&delegate)
            && self
                .strikes
                .get(&(delegate, category.to_string()))
                .copied()
                .unwrap_or(0)
                < STRIKES_FOR_COOLDOWN
    }

    pub fn strike(&mut self, attempt: &Attempt) {
        *self
            .strikes
            .entry((attempt.delegate, attempt.category.clone()))
            .or_default() += 1;
    }

    /// Bars `delegate` for the rest of the run: it acted against the repository.
    pub fn bar(&mut self, delegate: usize) {
        self.barred.insert(delegate);
    }

    /// What an attempt's own conduct costs a fix delegate (`strikes`): a strike for touching the
    /// user's work or leaving the scope; for an attempt undone whole, another strike, and a bar
    /// when it was hostile. A refine role is judged by its campaign's counters instead.
    pub fn judge_conduct(&mut self, attempt: &Attempt, strikes: bool) {
        let trespassed = attempt.incidents.iter().any(|i| {
            matches!(
                i,
                Incident::TouchedProtected { .. }
                    | Incident::CopiedProtected { .. }
                    | Incident::OutOfScope { .. }
            )
        });
        if strikes && trespassed {
            self.strike(attempt);
        }
        if attempt.settled && strikes {
            if attempt.incidents.iter().any(Incident::is_hostile) {
                self.barred.insert(attempt.delegate);
            }
            self.strike(attempt);
        }
    }

    /// The fix delegate for `category`: the first that handles it and may still run; one a
    /// lesson of an earlier run (`heuristics.json`) says made it worse goes after the others.
    pub fn fixer_for(
        &self,
        delegates: &[DelegateSpec],
        category: &str,
        lessons: &Heuristics,
    ) -> Option<usize> {
        let mut able: Vec<usize> = delegates
            .iter()
            .enumerate()
            .filter(|(index, d)| d.handles(category) && self.may_run(*index, category))
            .map(|(index, _)| index)
            .collect();
        able.sort_by_key(|index| lessons.made_worse(&delegates[*index].describe(), category));
        able.first().copied()
    }

    /// The first delegate of `role` that is not barred.
    pub fn with_role(&self, delegates: &[DelegateSpec], role: Role) -> Option<usize> {
        (0..delegates.len()).find(|&index| {
            delegates[index].role == role
                && !self.barred.contains(&index)
                && !self.capped.contains(&index)
        })
    }

    /// `delegate` has spent its own cap: it sits out the rest of the run.
    pub fn cap(&mut self, delegate: usize) {
        self.capped.insert(delegate);
    }

    /// A delegate that could take `staff`'s work sits out for its spent cap.
    pub fn capped_for(&self, delegates: &[DelegateSpec], staff: Staff, category: &str) -> bool {
        (self.capped.iter()).any(|&index| {
            delegates.get(index).is_some_and(|d| match staff {
                Staff::ForCategory => d.handles(category),
                Staff::Role(role) => d.role == role,
            })
        })
    }
}
