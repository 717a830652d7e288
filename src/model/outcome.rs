//! How a run ended: its outcome (the five of the seeds) and the stop rule that decided it, with
//! the names every file and the console use.

use serde::{Deserialize, Serialize};

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING-KEBAB-CASE")]
pub enum Outcome {
    Success,
    NeedsFix,
    Budget,
    Error,
    Cancelled,
}

impl Outcome {
    /// The name written in files and printed (`NEEDS-FIX`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Success => "SUCCESS",
            Self::NeedsFix => "NEEDS-FIX",
            Self::Budget => "BUDGET",
            Self::Error => "ERROR",
            Self::Cancelled => "CANCELLED",
        }
    }

    /// The outcome named `name` (as [`Outcome::as_str`] writes it).
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|outcome| outcome.as_str() == name)
    }

    /// Every outcome.
    pub const ALL: [Self; 5] = [
        Self::Success,
        Self::NeedsFix,
        Self::Budget,
        Self::Error,
        Self::Cancelled,
    ];
}

/// Why a run stopped, in the order the rules are evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    Cancelled,
    FailureLimit,
    #[serde(rename = "critical finding")]
    Critical,
    GatePassed,
    Oscillation,
    SameError,
    DiminishingReturns,
    NoProgress,
    MaxCycles,
    TimeBudget,
    /// A spending cap (`max_cost`, `max_tokens`, a campaign's lifetime ones) is spent, or a
    /// delegate was stopped at it.
    CostBudget,
    /// `improve`: two cycles in a row with nothing material open and a green gate.
    Complete,
    /// `refine`: no qualified candidate for several rounds.
    Plateau,
    /// `refine`: a plateau while behaviour-changing findings wait for a person.
    #[serde(rename = "plateau with handoffs")]
    PlateauWithHandoffs,
    /// `refine`: the round budget is spent.
    MaxRounds,
    /// `refine`: the round budget is spent while handoffs wait for a person.
    #[serde(rename = "max-rounds with handoffs")]
    MaxRoundsWithHandoffs,
    /// A campaign: all that is left is in families whose earlier accepted work waits to land
    /// (`pending = "skip"`).
    PendingWork,
}

impl StopReason {
    pub fn outcome(self) -> Outcome {
        match self {
            Self::Cancelled => Outcome::Cancelled,
            Self::FailureLimit => Outcome::Error,
            Self::GatePassed => Outcome::Success,
            Self::Critical
            | Self::Oscillation
            | Self::SameError
            | Self::DiminishingReturns
            | Self::NoProgress => Outcome::NeedsFix,
            Self::MaxCycles | Self::TimeBudget | Self::CostBudget | Self::MaxRounds => {
                Outcome::Budget
            }
            Self::Complete | Self::Plateau => Outcome::Success,
            Self::PlateauWithHandoffs | Self::MaxRoundsWithHandoffs | Self::PendingWork => {
                Outcome::NeedsFix
            }
        }
    }

    /// The name written in files and the console (`diminishing-returns`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Cancelled => "cancelled",
            Self::FailureLimit => "failure-limit",
            Self::Critical => "critical finding",
            Self::GatePassed => "gate-passed",
            Self::Oscillation => "oscillation",
            Self::SameError => "same-error",
            Self::DiminishingReturns => "diminishing-returns",
            Self::NoProgress => "no-progress",
            Self::MaxCycles => "max-cycles",
            Self::TimeBudget => "time-budget",
            Self::CostBudget => "cost-budget",
            Self::Complete => "complete",
            Self::Plateau => "plateau",
            Self::PlateauWithHandoffs => "plateau with handoffs",
            Self::MaxRounds => "max-rounds",
            Self::MaxRoundsWithHandoffs => "max-rounds with handoffs",
            Self::PendingWork => "pending-work",
        }
    }

    /// The reason in plain words, for reports and the console.
    pub fn explain(self) -> &'static str {
        match self {
            Self::Cancelled => "stopped by a signal; the state is saved",
            Self::FailureLimit => "the run itself failed several cycles in a row",
            Self::Critical => "a delegate reported a behaviour-changing finding for a person",
            Self::GatePassed => "the gate passed",
            Self::Oscillation => {
                "the fixes undo each other: the findings came back to an earlier state"
            }
            Self::SameError => "the same error came back cycle after cycle",
            Self::DiminishingReturns => "the failure count stopped moving",
            Self::NoProgress => "no change was accepted for several cycles",
            Self::MaxCycles => "the cycle budget is spent",
            Self::TimeBudget => "the next cycle would not fit in the time budget",
            Self::CostBudget => "the spending cap is spent",
            Self::Complete => "nothing material is open and the gate passed twice in a row",
            Self::Plateau => "no candidate qualified for several rounds",
            Self::PlateauWithHandoffs => {
                "no candidate qualified for several rounds; findings wait for a person"
            }
            Self::MaxRounds => "the round budget is spent",
            Self::MaxRoundsWithHandoffs => "the round budget is spent; findings wait for a person",
            Self::PendingWork => {
                "what is left waits on earlier accepted work that has not landed (its pull request)"
            }
        }
    }
}

impl StopReason {
    /// Every stop reason.
    pub const ALL: [Self; 17] = [
        Self::Cancelled,
        Self::FailureLimit,
        Self::Critical,
        Self::GatePassed,
        Self::Oscillation,
        Self::SameError,
        Self::DiminishingReturns,
        Self::NoProgress,
        Self::MaxCycles,
        Self::TimeBudget,
        Self::CostBudget,
        Self::Complete,
        Self::Plateau,
        Self::PlateauWithHandoffs,
        Self::MaxRounds,
        Self::MaxRoundsWithHandoffs,
        Self::PendingWork,
    ];

    /// The reason named `name` (as [`StopReason::as_str`] writes it).
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|reason| reason.as_str() == name)
    }
}

/// A cycle that cut the failures by more than half.
pub fn is_breakthrough(before: u64, after: u64) -> bool {
    before > 0 && after.saturating_mul(2) < before
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_serde_and_as_str() {
        for reason in StopReason::ALL {
            let json = serde_json::to_string(&reason).unwrap();
            assert_eq!(json, format!("\"{}\"", reason.as_str()));
            assert_eq!(StopReason::named(reason.as_str()), Some(reason));
        }
        for outcome in Outcome::ALL {
            assert_eq!(Outcome::named(outcome.as_str()), Some(outcome));
        }
    }
}
