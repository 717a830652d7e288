//! `heuristics.json`: lessons the run drew from its own record, for a person and for the next
//! run in the same state dir, which reads them back: a category whose fixes broke another is
//! worked after it, and a delegate that made a category worse three times is tried for it last.
//! Writes the kernel's confinement refused a delegate are told here too, with how to allow them.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::Attempt;
use super::STRIKES_FOR_COOLDOWN;
use crate::delegate::DelegateSpec;
use crate::model::Regression;
pub use crate::state::HEURISTICS_FILE;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Heuristics {
    pub format_version: u32,
    pub heuristics: Vec<Heuristic>,
    /// Cycles each category was still failing in (after the baseline).
    #[serde(skip)]
    failing_cycles: BTreeMap<String, u32>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Heuristic {
    pub cycle: u32,
    pub kind: String,
    pub message: String,
    /// The category the lesson is about (whose fixes broke another, that kept failing, or that
    /// a delegate made worse).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// A regression: the category those fixes broke.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broke: Option<String>,
    /// A cooldown: the delegate, as the report names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delegate: Option<String>,
}

impl Default for Heuristics {
    fn default() -> Self {
        Self {
            format_version: crate::state::format::HEURISTICS,
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
                    self.add(Heuristic {
                        cycle,
                        kind: "regression".into(),
                        message: format!(
                            "{} fixes broke {} in cycle {cycle}: run the {} checks before the {} fixes",
                            attempt.category, regression.category, regression.category, attempt.category
                        ),
                        category: Some(attempt.category.clone()),
                        broke: Some(regression.category.clone()),
                        delegate: None,
                    });
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
                self.add(Heuristic {
                    cycle,
                    kind: "persistent".into(),
                    message: format!(
                        "{} kept failing after two cycles of `{}`: it needs another fixer or a person",
                        attempt.category, delegates[attempt.delegate].describe()
                    ),
                    category: Some(attempt.category.clone()),
                    ..Heuristic::default()
                });
            }
            if let Some(first) = attempt.run.kernel_refused.first() {
                let delegate = delegates[attempt.delegate].describe();
                self.add(Heuristic {
                    cycle,
                    kind: "confined".into(),
                    message: format!(
                        "the kernel refused `{delegate}` on {} {} write(s) in cycle {cycle}; the first: {first}",
                        attempt.category,
                        attempt.run.kernel_refused.len()
                    ),
                    category: Some(attempt.category.clone()),
                    broke: None,
                    delegate: Some(delegate),
                });
            }
            if strikes.get(&(attempt.delegate, attempt.category.clone()))
                == Some(&STRIKES_FOR_COOLDOWN)
                && !attempt.kept
                && !attempt.changes.is_empty()
            {
                let delegate = delegates[attempt.delegate].describe();
                self.add(Heuristic {
                    cycle,
                    kind: "cooldown".into(),
                    message: format!(
                        "`{delegate}` made {} worse {STRIKES_FOR_COOLDOWN} times: it rests for the rest of the run",
                        attempt.category
                    ),
                    category: Some(attempt.category.clone()),
                    broke: None,
                    delegate: Some(delegate),
                });
            }
        }
    }

    /// Keeps `lesson` unless one with its message is kept already.
    fn add(&mut self, lesson: Heuristic) {
        if !self.heuristics.iter().any(|h| h.message == lesson.message) {
            self.heuristics.push(lesson);
        }
    }

    /// The lessons an earlier run left in `state_dir` (none when there is no readable file).
    pub fn read(state_dir: &Path) -> Self {
        crate::state::read_own(
            &state_dir.join(HEURISTICS_FILE),
            crate::state::OWN_FILE_LIMIT,
        )
        .ok()
        .flatten()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
    }

    /// The lessons, to go on in this run's file (what a run learns about cycles starts anew).
    pub fn carried(&self) -> Self {
        Self {
            heuristics: self.heuristics.clone(),
            ..Self::default()
        }
    }

    /// A lesson says `delegate` (as described) made `category` worse until its cooldown.
    pub fn made_worse(&self, delegate: &str, category: &str) -> bool {
        self.heuristics.iter().any(|h| {
            h.kind == "cooldown"
                && h.delegate.as_deref() == Some(delegate)
                && h.category.as_deref() == Some(category)
        })
    }

    /// Reorders the category priority so that a category another one's fixes broke is worked
    /// before it.
    pub fn order_priority(&self, priority: &mut Vec<String>) {
        for lesson in self.heuristics.iter().filter(|h| h.kind == "regression") {
            let (Some(fixed), Some(broke)) = (&lesson.category, &lesson.broke) else {
                continue;
            };
            let position = |list: &[String], name: &str| list.iter().position(|p| p == name);
            match (position(priority, fixed), position(priority, broke)) {
                (Some(fixed_at), Some(broke_at)) if broke_at > fixed_at => {
                    let broke = priority.remove(broke_at);
                    priority.insert(fixed_at, broke);
                }
                (Some(fixed_at), None) => priority.insert(fixed_at, broke.clone()),
                (None, None) => priority.extend([broke.clone(), fixed.clone()]),
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regression(fixed: &str, broke: &str) -> Heuristic {
        Heuristic {
            cycle: 1,
            kind: "regression".into(),
            message: format!("{fixed} broke {broke}"),
            category: Some(fixed.into()),
            broke: Some(broke.into()),
            delegate: None,
        }
    }

    #[test]
    fn a_category_another_ones_fixes_broke_is_worked_first() {
        // (priority, lessons as (fixed, broke), the priority after)
        type Row<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a [&'a str]);
        let table: [Row<'_>; 5] = [
            (&["lint", "tests"], &[("lint", "tests")], &["tests", "lint"]),
            (&["tests", "lint"], &[("lint", "tests")], &["tests", "lint"]),
            (&["lint"], &[("lint", "tests")], &["tests", "lint"]),
            (
                &["types"],
                &[("lint", "tests")],
                &["types", "tests", "lint"],
            ),
            (&["lint", "types"], &[], &["lint", "types"]),
        ];
        for (priority, lessons, expected) in table {
            let lessons = Heuristics {
                heuristics: lessons.iter().map(|(f, b)| regression(f, b)).collect(),
                ..Heuristics::default()
            };
            let mut order: Vec<String> = priority.iter().map(|p| p.to_string()).collect();
            lessons.order_priority(&mut order);
            assert_eq!(order, expected, "{priority:?}");
        }
    }

    #[test]
    fn a_delegate_that_made_a_category_worse_is_named_by_its_lesson() {
        let dir = tempfile::tempdir().unwrap();
        let lessons = Heuristics {
            heuristics: vec![Heuristic {
                cycle: 3,
                kind: "cooldown".into(),
                message: "m".into(),
                category: Some("lint".into()),
                broke: None,
                delegate: Some("ruff --fix".into()),
            }],
            ..Heuristics::default()
        };
        std::fs::write(
            dir.path().join(HEURISTICS_FILE),
            serde_json::to_vec(&lessons).unwrap(),
        )
        .unwrap();
        let read = Heuristics::read(dir.path());
        assert!(read.made_worse("ruff --fix", "lint"));
        assert!(!read.made_worse("ruff --fix", "types"));
        assert!(!read.made_worse("eslint --fix", "lint"));
        assert!(
            Heuristics::read(&dir.path().join("none"))
                .heuristics
                .is_empty()
        );
    }
}
