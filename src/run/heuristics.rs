//! `heuristics.json`: lessons the run drew from its own record, for the next run and a person.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use super::{Attempt, STRIKES_FOR_COOLDOWN};
use crate::delegate::DelegateSpec;
use crate::model::{FORMAT_VERSION, Regression};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Heuristics {
    pub format_version: u32,
    pub heuristics: Vec<Heuristic>,
    /// Cycles each category was still failing in (after the baseline).
    #[serde(skip)]
    failing_cycles: BTreeMap<String, u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Heuristic {
    pub cycle: u32,
    pub kind: String,
    pub message: String,
}

impl Default for Heuristics {
    fn default() -> Self {
        Self {
            format_version: FORMAT_VERSION,
            heuristics: Vec::new(),
            failing_cycles: BTreeMap::new(),
        }
    }
}

impl Heuristics {
    /// Learns from one cycle: regressions next to the delegates that ran, categories that keep
    /// failing, pairs that reached their cooldown.
    pub fn observe(
        &mut self,
        cycle: u32,
        attempts: &[Attempt],
        regressions: &[Regression],
        delegates: &[DelegateSpec],
        strikes: &HashMap<(usize, String), u32>,
    ) {
        for regression in regressions {
            for attempt in attempts.iter().filter(|a| !a.changes.is_empty()) {
                if attempt.category != regression.category {
                    self.add(
                        cycle,
                        "regression",
                        format!(
                            "{} fixes broke {} in cycle {cycle}: run the {} checks before the {} fixes",
                            attempt.category, regression.category, regression.category, attempt.category
                        ),
                    );
                }
            }
        }
        for attempt in attempts {
            let count = self
                .failing_cycles
                .entry(attempt.category.clone())
                .or_default();
            *count += 1;
            if *count == 2 {
                self.add(
                    cycle,
                    "persistent",
                    format!(
                        "{} kept failing after two cycles of `{}`: it needs another fixer or a person",
                        attempt.category, delegates[attempt.delegate].describe()
                    ),
                );
            }
            if strikes.get(&(attempt.delegate, attempt.category.clone()))
                == Some(&STRIKES_FOR_COOLDOWN)
                && !attempt.kept
                && !attempt.changes.is_empty()
            {
                self.add(
                    cycle,
                    "cooldown",
                    format!(
                        "`{}` made {} worse {STRIKES_FOR_COOLDOWN} times: it rests for the rest of the run",
                        delegates[attempt.delegate].describe(), attempt.category
                    ),
                );
            }
        }
    }

    fn add(&mut self, cycle: u32, kind: &str, message: String) {
        if !self.heuristics.iter().any(|h| h.message == message) {
            self.heuristics.push(Heuristic {
                cycle,
                kind: kind.to_string(),
                message,
            });
        }
    }
}
