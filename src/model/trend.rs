//! `trend.json` and `category-history.json`: what each cycle's gate said, in sequence.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{GateSummary, Outcome, StopReason, is_breakthrough};
use crate::state::format;

/// The failed and warning counts per cycle, and how the run ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trend {
    pub format_version: u32,
    #[serde(default)]
    pub outcome: Option<Outcome>,
    #[serde(default)]
    pub stop_reason: Option<StopReason>,
    pub cycles: Vec<TrendCycle>,
}

/// One cycle of the trend (cycle 0 is the baseline).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrendCycle {
    pub cycle: u32,
    pub failed_count: u64,
    pub warning_count: u64,
    /// The change from the cycle before (0 for the baseline).
    pub delta: i64,
    pub state_fingerprint: String,
    /// The cycle's changes were kept (`None` for the baseline).
    #[serde(default)]
    pub accepted: Option<bool>,
    /// The cycle's changes were undone.
    #[serde(default)]
    pub rolled_back: bool,
    /// More than half the failures of the cycle before are gone.
    #[serde(default)]
    pub breakthrough: bool,
    /// When the cycle was rolled back: the failed count its changes produced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt_failed_count: Option<u64>,
    /// New findings the cycle's kept changes brought to light outside the files they touched
    /// (a fix that let more code compile or run): taken into the kept state, not a regression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmasked: Option<u64>,
    /// The loop's own work in this cycle: all the time since the cycle before was counted but
    /// the gate's checks (`gate_ms`) and the delegates' processes (`delegate_ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delegate_ms: Option<u64>,
    /// What the cycle's delegates spent, as they reported it: an http delegate's endpoint, a
    /// command delegate's output read by its `usage` reader.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<TokenUsage>,
    /// The cycle's delegate runs whose usage is unknown (no `usage` reader, or nothing it could
    /// read): `tokens` leaves them out, so it is a floor, never their cost of zero.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_unknown: Option<u64>,
    /// Moves of the cycle's changes that made the gate see less: refused (their change rolled
    /// back), allowed by `[[integrity.allow]]`, or only reported (`integrity = "report"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integrity: Option<IntegrityCounts>,
    /// Of `overhead_ms`, the time spent looking for those moves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integrity_ms: Option<u64>,
}

/// A cycle's moves that make the gate see less, by what came of them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntegrityCounts {
    pub refused: u64,
    pub allowed: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reported: u64,
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// What a delegate spent, as it reported it: an http delegate's endpoint, or a command
/// delegate's own output read by its `usage` reader. The cache and cost fields are there when
/// the tool gives them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TokenUsage {
    /// The tokens in, cached ones included.
    pub prompt_tokens: u64,
    /// The tokens out.
    pub completion_tokens: u64,
    pub total_tokens: u64,
    /// Of `prompt_tokens`, those read from the model's prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_tokens: Option<u64>,
    /// Of `prompt_tokens`, those written to the model's prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<u64>,
    /// The cost in US dollars, as the tool computed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// The model's turns (requests), as the tool counted them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<u64>,
}

impl TokenUsage {
    /// The sum of `usages`; `None` when none was reported.
    pub fn total<'a>(usages: impl IntoIterator<Item = &'a TokenUsage>) -> Option<TokenUsage> {
        usages
            .into_iter()
            .fold(None, |sum: Option<TokenUsage>, usage| {
                Some(sum.map_or(*usage, |sum| sum.plus(usage)))
            })
    }

    /// This and `other` together; a figure only one of them gives is kept as it is.
    #[must_use]
    pub fn plus(&self, other: &TokenUsage) -> TokenUsage {
        fn either<T>(a: Option<T>, b: Option<T>, add: impl Fn(T, T) -> T) -> Option<T> {
            match (a, b) {
                (Some(a), Some(b)) => Some(add(a, b)),
                (a, b) => a.or(b),
            }
        }
        TokenUsage {
            prompt_tokens: self.prompt_tokens.saturating_add(other.prompt_tokens),
            completion_tokens: self
                .completion_tokens
                .saturating_add(other.completion_tokens),
            total_tokens: self.total_tokens.saturating_add(other.total_tokens),
            cache_read_tokens: either(
                self.cache_read_tokens,
                other.cache_read_tokens,
                u64::saturating_add,
            ),
            cache_write_tokens: either(
                self.cache_write_tokens,
                other.cache_write_tokens,
                u64::saturating_add,
            ),
            cost_usd: either(self.cost_usd, other.cost_usd, |a, b| a + b),
            turns: either(self.turns, other.turns, u64::saturating_add),
        }
    }

    /// One line: the tokens, and the cache, cost and turns where known.
    pub fn describe(&self) -> String {
        let mut text = format!(
            "{} prompt + {} completion = {}",
            self.prompt_tokens, self.completion_tokens, self.total_tokens
        );
        if let Some(read) = self.cache_read_tokens {
            text.push_str(&format!("; {read} read from cache"));
        }
        if let Some(written) = self.cache_write_tokens {
            text.push_str(&format!("; {written} written to cache"));
        }
        if let Some(cost) = self.cost_usd {
            text.push_str(&format!("; cost {cost:.4} USD"));
        }
        if let Some(turns) = self.turns {
            text.push_str(&format!("; {turns} turn(s)"));
        }
        text
    }
}

impl Default for Trend {
    fn default() -> Self {
        Self {
            format_version: format::TREND,
            outcome: None,
            stop_reason: None,
            cycles: Vec::new(),
        }
    }
}

impl Trend {
    /// Records a cycle's gate; `accepted` is `None` for the baseline; `rolled_back` when the
    /// cycle's changes were undone.
    pub fn push(&mut self, summary: &GateSummary, accepted: Option<bool>, rolled_back: bool) {
        let before = self.cycles.last().map(|c| c.failed_count);
        let after = summary.failed_count;
        let delta = before.map_or(0, |before| {
            i64::try_from(after).unwrap_or(i64::MAX) - i64::try_from(before).unwrap_or(i64::MAX)
        });
        self.cycles.push(TrendCycle {
            cycle: summary.cycle,
            failed_count: after,
            warning_count: summary.warning_count,
            delta,
            state_fingerprint: summary.state_fingerprint(),
            accepted,
            rolled_back,
            breakthrough: before.is_some_and(|before| is_breakthrough(before, after)),
            ..TrendCycle::default()
        });
    }

    /// Records how the run ended.
    pub fn finish(&mut self, reason: StopReason) {
        self.stop_reason = Some(reason);
        self.outcome = Some(reason.outcome());
    }
}

/// Each category's pass/fail and count per cycle, and the regressions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CategoryHistory {
    pub format_version: u32,
    pub categories: BTreeMap<String, Vec<CategoryCycle>>,
    #[serde(default)]
    pub regressions: Vec<Regression>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CategoryCycle {
    pub cycle: u32,
    pub passed: bool,
    pub failures: u64,
}

/// A category that passed in one cycle and failed in the next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Regression {
    pub category: String,
    /// The cycle in which it failed.
    pub cycle: u32,
    pub failures: u64,
}

impl Default for CategoryHistory {
    fn default() -> Self {
        Self {
            format_version: format::CATEGORY_HISTORY,
            categories: BTreeMap::new(),
            regressions: Vec::new(),
        }
    }
}

impl CategoryHistory {
    /// Records a cycle's categories; returns the regressions it found.
    pub fn push(&mut self, summary: &GateSummary) -> Vec<Regression> {
        let mut found = Vec::new();
        for (name, category) in &summary.categories {
            let cycles = self.categories.entry(name.clone()).or_default();
            if cycles.last().is_some_and(|last| last.passed) && !category.passed {
                found.push(Regression {
                    category: name.clone(),
                    cycle: summary.cycle,
                    failures: category.failures,
                });
            }
            cycles.push(CategoryCycle {
                cycle: summary.cycle,
                passed: category.passed,
                failures: category.failures,
            });
        }
        self.regressions.extend(found.iter().cloned());
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(cycle: u32, categories: &[(&str, u64)]) -> GateSummary {
        GateSummary::with_failures(cycle, categories)
    }

    #[test]
    fn trend_deltas_breakthroughs_and_outcome() {
        let mut trend = Trend::default();
        trend.push(&summary(0, &[("lint", 10), ("tests", 2)]), None, false);
        trend.push(&summary(1, &[("lint", 3), ("tests", 2)]), Some(true), false);
        trend.push(&summary(2, &[("lint", 3), ("tests", 4)]), Some(false), true);
        trend.finish(StopReason::DiminishingReturns);
        let deltas: Vec<i64> = trend.cycles.iter().map(|c| c.delta).collect();
        assert_eq!(deltas, [0, -7, 2]);
        let breakthroughs: Vec<bool> = trend.cycles.iter().map(|c| c.breakthrough).collect();
        assert_eq!(breakthroughs, [false, true, false]);
        assert!(trend.cycles[2].rolled_back);
        assert_eq!(trend.outcome, Some(Outcome::NeedsFix));
        let json = serde_json::to_value(&trend).unwrap();
        assert_eq!(json["stop_reason"], "diminishing-returns");
        assert_eq!(json["format_version"], 1);
    }

    #[test]
    fn regressions_are_categories_that_passed_then_failed() {
        let mut history = CategoryHistory::default();
        assert!(
            history
                .push(&summary(0, &[("lint", 4), ("tests", 0)]))
                .is_empty()
        );
        let found = history.push(&summary(1, &[("lint", 0), ("tests", 2)]));
        assert_eq!(
            found,
            [Regression {
                category: "tests".into(),
                cycle: 1,
                failures: 2
            }]
        );
        assert!(
            history
                .push(&summary(2, &[("lint", 1), ("tests", 2)]))
                .len()
                == 1
        );
        assert_eq!(history.regressions.len(), 2);
        assert_eq!(history.categories["lint"].len(), 3);
    }

    #[test]
    fn the_state_fingerprint_follows_the_findings_not_their_order() {
        let mut a = summary(0, &[("lint", 2)]);
        let mut b = summary(1, &[("lint", 2)]);
        a.categories.get_mut("lint").unwrap().details = vec!["x".into(), "y".into()];
        b.categories.get_mut("lint").unwrap().details = vec!["y".into(), "x".into()];
        assert_eq!(a.state_fingerprint(), b.state_fingerprint());
        b.categories.get_mut("lint").unwrap().details = vec!["y".into(), "z".into()];
        assert_ne!(a.state_fingerprint(), b.state_fingerprint());
    }
}
