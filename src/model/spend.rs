//! What the delegates spent, as `run.json`, the campaign's counters and the reports keep it.

use serde::{Deserialize, Serialize};

use super::TokenUsage;

/// Tokens and US dollars spent, as the delegates' readers reported them, and the turns whose
/// figures are unknown: the sums are a floor then, never those turns' cost of zero.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Spend {
    pub tokens: u64,
    pub cost_usd: f64,
    /// Delegate turns that ran: those with usage = "none" (free on purpose) included.
    pub turns: u64,
    /// Turns whose tokens are unknown (no reader, or nothing it could read).
    pub tokens_unknown: u64,
    /// Turns whose cost is unknown (their reader gives none, or read none).
    pub cost_unknown: u64,
}

impl Spend {
    /// One turn's spend: `usage` as its reader reported it, `free` when the delegate says
    /// `usage = "none"` on purpose.
    pub fn of_turn(usage: Option<&TokenUsage>, free: bool) -> Self {
        let known_cost = usage.and_then(|u| u.cost_usd);
        Self {
            tokens: usage.map_or(0, |u| u.total_tokens),
            cost_usd: known_cost.unwrap_or(0.0),
            turns: 1,
            tokens_unknown: u64::from(!free && usage.is_none()),
            cost_unknown: u64::from(!free && known_cost.is_none()),
        }
    }

    /// This and `other` together.
    #[must_use]
    pub fn plus(&self, other: &Spend) -> Spend {
        Spend {
            tokens: self.tokens.saturating_add(other.tokens),
            cost_usd: self.cost_usd + other.cost_usd,
            turns: self.turns.saturating_add(other.turns),
            tokens_unknown: self.tokens_unknown.saturating_add(other.tokens_unknown),
            cost_unknown: self.cost_unknown.saturating_add(other.cost_unknown),
        }
    }

    /// One line: `12345 tokens, 0.0284 USD`, with the unknown turns named.
    pub fn describe(&self) -> String {
        let mut text = format!("{} tokens, {}", self.tokens, format_usd(self.cost_usd));
        if self.tokens_unknown > 0 {
            text.push_str(&format!(
                " (and {} turn(s) whose usage is unknown, not counted as free)",
                self.tokens_unknown
            ));
        } else if self.cost_unknown > 0 {
            text.push_str(&format!(
                " (and {} turn(s) whose cost is unknown, not counted as free)",
                self.cost_unknown
            ));
        }
        text
    }
}

/// `5.00 USD`, `0.07 USD`, `0.0284 USD`: to the cent, or to four decimals when the amount has
/// parts of a cent.
pub fn format_usd(amount: f64) -> String {
    let cents = amount * 100.0;
    if (cents - cents.round()).abs() > 1e-9 {
        format!("{amount:.4} USD")
    } else {
        format!("{amount:.2} USD")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_without_figures_is_unknown_unless_free() {
        let usage = TokenUsage {
            total_tokens: 100,
            cost_usd: Some(0.25),
            ..TokenUsage::default()
        };
        let tokens_only = TokenUsage {
            cost_usd: None,
            ..usage
        };
        // (usage, free) → (tokens, cost, tokens unknown, cost unknown)
        let table = [
            (Some(&usage), false, (100, 0.25, 0, 0)),
            (Some(&tokens_only), false, (100, 0.0, 0, 1)),
            (None, false, (0, 0.0, 1, 1)),
            (None, true, (0, 0.0, 0, 0)),
        ];
        for (usage, free, expected) in table {
            let spend = Spend::of_turn(usage, free);
            let got = (
                spend.tokens,
                spend.cost_usd,
                spend.tokens_unknown,
                spend.cost_unknown,
            );
            assert_eq!(got, expected, "{usage:?} free={free}");
            assert_eq!(spend.turns, 1);
        }
    }

    #[test]
    fn amounts_are_written_to_the_cent_or_below_it() {
        for (amount, text) in [
            (5.0, "5.00 USD"),
            (0.0, "0.00 USD"),
            (0.0283541, "0.0284 USD"),
            (1.234, "1.2340 USD"),
            (0.07, "0.07 USD"),
        ] {
            assert_eq!(format_usd(amount), text);
        }
    }
}
