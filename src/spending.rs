//! What the delegates may spend, and what they spent. A config caps the spending of a run (a
//! campaign's segment), of each delegate in it, and of a campaign over its whole life
//! ([`Caps`]), in US dollars, tokens or both. The [`Ledger`] adds up each turn as its reader
//! reported it ([`Spend`]), says what the next turn of a delegate may spend before it passes a
//! cap ([`Allowance`], which a streaming reader holds it to while it runs), and whether a cap is
//! spent: then no further turn starts and the run ends `cost-budget`.
//!
//! A turn whose cost (or tokens) is unknown under a cap in that unit leaves the cap unable to
//! hold: it counts as the cap spent, never as free.

use crate::model::{Spend, TokenUsage, format_usd};

/// A cap in US dollars, tokens, or both; neither is no cap.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Cap {
    pub cost_usd: Option<f64>,
    pub tokens: Option<u64>,
}

impl Cap {
    pub fn is_set(&self) -> bool {
        self.cost_usd.is_some() || self.tokens.is_some()
    }

    /// What is left of it after `spent`: the same units, never below zero.
    fn left_after(&self, spent: &Spend) -> Allowance {
        Allowance {
            cost_usd: self.cost_usd.map(|cap| (cap - spent.cost_usd).max(0.0)),
            tokens: self.tokens.map(|cap| cap.saturating_sub(spent.tokens)),
        }
    }

    /// Why `spent` leaves nothing of it, if it does: a figure at or past its cap, or unknown
    /// under it. `what` names the cap (`[loop] max_cost`).
    pub fn spent_by(&self, spent: &Spend, what: (&str, &str)) -> Option<String> {
        let (cost_key, tokens_key) = what;
        if let Some(cap) = self.cost_usd {
            if spent.cost_unknown > 0 {
                return Some(format!(
                    "{cost_key} = \"{}\" cannot hold: the cost of {} turn(s) is unknown",
                    format_usd(cap),
                    spent.cost_unknown
                ));
            }
            if spent.cost_usd >= cap {
                return Some(format!(
                    "{cost_key} = \"{}\" is spent ({} spent)",
                    format_usd(cap),
                    format_usd(spent.cost_usd)
                ));
            }
        }
        if let Some(cap) = self.tokens {
            if spent.tokens_unknown > 0 {
                return Some(format!(
                    "{tokens_key} = {cap} cannot hold: the tokens of {} turn(s) are unknown",
                    spent.tokens_unknown
                ));
            }
            if spent.tokens >= cap {
                return Some(format!(
                    "{tokens_key} = {cap} is spent ({} tokens spent)",
                    spent.tokens
                ));
            }
        }
        None
    }
}

/// Every cap of a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Caps {
    /// `[loop] max_cost` / `max_tokens`: this run, or this segment of a campaign.
    pub run: Cap,
    /// `[campaign] max_lifetime_cost` / `max_lifetime_tokens`: all the campaign's runs.
    pub lifetime: Cap,
    /// Each `[[delegate]]`'s `max_cost` / `max_tokens`, in config order.
    pub delegates: Vec<Cap>,
}

/// What a turn may spend before it passes a cap; `None`: no cap in that unit.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Allowance {
    pub cost_usd: Option<f64>,
    pub tokens: Option<u64>,
}

impl Allowance {
    /// `usage`, read so far, spends more than this allows.
    pub fn passed_by(&self, usage: &TokenUsage) -> bool {
        let over_cost =
            matches!((self.cost_usd, usage.cost_usd), (Some(left), Some(cost)) if cost > left);
        let over_tokens = self.tokens.is_some_and(|left| usage.total_tokens > left);
        over_cost || over_tokens
    }

    /// No cap in either unit.
    pub fn is_unlimited(&self) -> bool {
        self.cost_usd.is_none() && self.tokens.is_none()
    }

    /// The smaller of this and `other`, unit by unit.
    fn least(self, other: Allowance) -> Allowance {
        fn least<T: PartialOrd>(a: Option<T>, b: Option<T>) -> Option<T> {
            match (a, b) {
                (Some(a), Some(b)) => Some(if b < a { b } else { a }),
                (a, b) => a.or(b),
            }
        }
        Allowance {
            cost_usd: least(self.cost_usd, other.cost_usd),
            tokens: least(self.tokens, other.tokens),
        }
    }
}

/// What this run spent, against its caps and what the campaign's earlier runs spent.
#[derive(Debug, Clone, Default)]
pub struct Ledger {
    caps: Caps,
    /// This run's turns.
    run: Spend,
    /// Each delegate's turns in this run, in config order.
    delegates: Vec<Spend>,
    /// The campaign's earlier runs: of this segment, and of its whole life.
    segment_before: Spend,
    lifetime_before: Spend,
}

impl Ledger {
    pub fn new(caps: Caps) -> Self {
        let delegates = vec![Spend::default(); caps.delegates.len()];
        Self {
            caps,
            delegates,
            ..Self::default()
        }
    }

    /// A campaign's earlier runs: what they spent in this segment and over its life.
    pub fn carry(&mut self, segment: Spend, lifetime: Spend) {
        self.segment_before = segment;
        self.lifetime_before = lifetime;
    }

    /// What this run spent.
    pub fn spent(&self) -> Spend {
        self.run
    }

    /// What this segment spent, earlier runs included.
    pub fn segment(&self) -> Spend {
        self.segment_before.plus(&self.run)
    }

    /// What the campaign spent over its life, this run included.
    pub fn lifetime(&self) -> Spend {
        self.lifetime_before.plus(&self.run)
    }

    /// What `delegate`'s next turn may spend before it passes a cap.
    pub fn allowance(&self, delegate: usize) -> Allowance {
        let own = (self.caps.delegates.get(delegate))
            .zip(self.delegates.get(delegate))
            .map_or_else(Allowance::default, |(cap, spent)| cap.left_after(spent));
        self.caps
            .run
            .left_after(&self.segment())
            .least(self.caps.lifetime.left_after(&self.lifetime()))
            .least(own)
    }

    /// Adds a turn of `delegate`: `usage` as its reader reported it (up to where it was
    /// stopped, if it was), `free` for `usage = "none"`. A turn stopped for passing its
    /// allowance has spent, by its own report, past the cap that allowance came from.
    pub fn record(&mut self, delegate: usize, usage: Option<&TokenUsage>, free: bool) {
        let turn = Spend::of_turn(usage, free);
        self.run = self.run.plus(&turn);
        if let Some(spent) = self.delegates.get_mut(delegate) {
            *spent = spent.plus(&turn);
        }
    }

    /// Why `delegate` may not start another turn, if it may not: a cap over it is spent.
    pub fn refuses(&self, delegate: usize) -> Option<String> {
        self.spent_cap().or_else(|| {
            let cap = self.caps.delegates.get(delegate)?;
            let spent = self.delegates.get(delegate)?;
            cap.spent_by(
                spent,
                (
                    &format!("delegate[{delegate}] max_cost"),
                    &format!("delegate[{delegate}] max_tokens"),
                ),
            )
        })
    }

    /// Why no further turn may start, if none may: the run's (segment's) or the campaign's
    /// lifetime cap is spent.
    pub fn spent_cap(&self) -> Option<String> {
        self.caps
            .run
            .spent_by(&self.segment(), ("[loop] max_cost", "[loop] max_tokens"))
            .or_else(|| {
                self.caps.lifetime.spent_by(
                    &self.lifetime(),
                    (
                        "[campaign] max_lifetime_cost",
                        "[campaign] max_lifetime_tokens",
                    ),
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(tokens: u64, cost: Option<f64>) -> TokenUsage {
        TokenUsage {
            total_tokens: tokens,
            cost_usd: cost,
            ..TokenUsage::default()
        }
    }

    fn cap(cost: Option<f64>, tokens: Option<u64>) -> Cap {
        Cap {
            cost_usd: cost,
            tokens,
        }
    }

    #[test]
    fn a_cap_is_spent_when_reached_or_unknown_under_it() {
        // (cap, turns as (tokens, cost or unknown, free)) → spent
        type Turns<'a> = &'a [(u64, Option<f64>, bool)];
        let table: [(Cap, Turns<'_>, bool); 10] = [
            (cap(Some(1.0), None), &[], false),
            (cap(Some(1.0), None), &[(10, Some(0.4), false)], false),
            (
                cap(Some(1.0), None),
                &[(10, Some(0.4), false), (10, Some(0.6), false)],
                true,
            ),
            (cap(Some(1.0), None), &[(10, Some(1.5), false)], true),
            // A turn of unknown cost: the cap cannot hold.
            (cap(Some(1.0), None), &[(10, None, false)], true),
            // usage = "none": free on purpose.
            (cap(Some(1.0), None), &[(0, None, true)], false),
            (cap(None, Some(100)), &[(99, None, false)], false),
            (cap(None, Some(100)), &[(100, None, false)], true),
            // Only tokens capped: an unknown cost does not matter.
            (
                cap(None, Some(100)),
                &[(50, None, false), (49, None, false)],
                false,
            ),
            (Cap::default(), &[(1_000_000, None, false)], false),
        ];
        for (run, turns, spent) in table {
            let mut ledger = Ledger::new(Caps {
                run,
                ..Caps::default()
            });
            for (tokens, cost, free) in turns {
                let usage = (!free).then(|| usage(*tokens, *cost));
                ledger.record(0, usage.as_ref(), *free);
            }
            assert_eq!(ledger.spent_cap().is_some(), spent, "{run:?} {turns:?}");
        }
    }

    #[test]
    fn the_allowance_is_the_least_of_what_each_cap_leaves() {
        let mut ledger = Ledger::new(Caps {
            run: cap(Some(5.0), Some(10_000)),
            lifetime: cap(Some(2.0), None),
            delegates: vec![cap(None, Some(3_000)), Cap::default()],
        });
        ledger.carry(
            Spend::default(),
            Spend {
                cost_usd: 1.5,
                ..Spend::default()
            },
        );
        ledger.record(0, Some(&usage(1_000, Some(0.25))), false);
        let first = ledger.allowance(0);
        assert!((first.cost_usd.unwrap() - 0.25).abs() < 1e-9, "{first:?}");
        assert_eq!(first.tokens, Some(2_000));
        let second = ledger.allowance(1);
        assert_eq!(second.tokens, Some(9_000));
        assert!(Ledger::new(Caps::default()).allowance(0).is_unlimited());
    }

    #[test]
    fn a_delegate_at_its_own_cap_is_refused_while_others_go_on() {
        let mut ledger = Ledger::new(Caps {
            delegates: vec![cap(Some(0.5), None), Cap::default()],
            ..Caps::default()
        });
        ledger.record(0, Some(&usage(10, Some(0.5))), false);
        let refused = ledger.refuses(0).unwrap();
        assert!(refused.contains("delegate[0] max_cost"), "{refused}");
        assert_eq!(ledger.refuses(1), None);
        assert_eq!(ledger.spent_cap(), None);
    }

    #[test]
    fn a_segment_counts_its_earlier_runs() {
        let mut ledger = Ledger::new(Caps {
            run: cap(Some(1.0), None),
            ..Caps::default()
        });
        let before = Spend {
            cost_usd: 0.9,
            turns: 2,
            ..Spend::default()
        };
        ledger.carry(before, before);
        assert_eq!(ledger.spent_cap(), None);
        ledger.record(0, Some(&usage(10, Some(0.1))), false);
        assert!(ledger.spent_cap().is_some());
        assert_eq!(ledger.spent().turns, 1);
        assert_eq!(ledger.lifetime().turns, 3);
    }

    #[test]
    fn an_allowance_is_passed_only_beyond_it() {
        let allowance = Allowance {
            cost_usd: Some(0.5),
            tokens: Some(100),
        };
        for (tokens, cost, passed) in [
            (100, Some(0.5), false),
            (101, None, true),
            (10, Some(0.51), true),
            (10, None, false),
        ] {
            assert_eq!(
                allowance.passed_by(&usage(tokens, cost)),
                passed,
                "{tokens} {cost:?}"
            );
        }
    }
}
