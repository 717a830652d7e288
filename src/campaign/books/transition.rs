//! What opening an existing campaign does, as pure functions of the stored state and the
//! invocation: resume, stay finished, refuse, or start a new segment.

use super::{Backlog, Cooldown, Counters, SegmentConfig};

/// The outcome a cancelled run records; unlike the other terminal outcomes, `--continue` resumes
/// it where it stopped.
pub const CANCELLED: &str = "CANCELLED";

/// Every outcome that ends a segment.
pub const TERMINAL_OUTCOMES: [&str; 5] = ["SUCCESS", "BUDGET", "ERROR", "NEEDS-FIX", CANCELLED];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Decision {
    /// Carry on in the current segment, counters as stored.
    Resume,
    /// A cancelled segment resumed by `--continue`: its outcome cleared, its counters kept.
    ResumeCancelled,
    /// A new segment (`--continue` after a finished segment, or with a changed configuration).
    NewSegment,
    /// Finished, and no `--continue`: do nothing.
    Terminal,
    /// The configuration changed within a segment, without `--continue`.
    ConfigChanged,
}

/// The decision for a stored `outcome` (`None` while a segment runs, or after a killed run),
/// `--continue` or not, and whether this invocation's configuration equals the stored one.
pub(super) fn decide(outcome: Option<&str>, continue_: bool, same_config: bool) -> Decision {
    match (outcome, continue_, same_config) {
        (None, _, true) => Decision::Resume,
        (None, false, false) => Decision::ConfigChanged,
        (Some(_), false, _) => Decision::Terminal,
        (Some(CANCELLED), true, true) => Decision::ResumeCancelled,
        (None | Some(_), true, _) => Decision::NewSegment,
    }
}

/// How an invocation asks to go on: not at all, `--continue`, or `--continue=auto` (a
/// scheduled job: continue what there is, start what there is not, rest when finished).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Continue {
    #[default]
    No,
    Yes,
    Auto,
}

/// The budget of a campaign across its runs (`[campaign]`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Limits {
    pub max_segments: Option<u32>,
    pub max_lifetime_rounds: Option<u32>,
    /// `max_lifetime_cost` / `max_lifetime_tokens`.
    pub lifetime_cap: crate::spending::Cap,
}

/// The stop reasons that leave nothing to do: a later segment with the same intent would find
/// the same.
const DONE: [&str; 3] = ["complete", "plateau", "gate-passed"];

/// Why a continuation finds the campaign finished, if it does: its segments or lifetime rounds
/// are spent; or, for `--continue=auto` with an unchanged intent, its last segment ended with
/// nothing left to do and all its earlier work landed (`unsettled`: some may not have). A
/// running or cancelled segment is never finished here.
pub(super) fn finished(
    counters: &Counters,
    mode: Continue,
    same_intent: bool,
    unsettled: bool,
    limits: Limits,
) -> Option<String> {
    let ended = counters
        .outcome
        .as_deref()
        .is_some_and(|outcome| outcome != CANCELLED);
    if mode == Continue::No || !ended {
        return None;
    }
    if let Some(max) = limits.max_segments
        && counters.segment >= max
    {
        return Some(format!("its {max} segment(s) are spent (max_segments)"));
    }
    if let Some(max) = limits.max_lifetime_rounds
        && counters.lifetime_rounds >= max
    {
        return Some(format!(
            "its {max} lifetime round(s) are spent (max_lifetime_rounds)"
        ));
    }
    if let Some(spent) = limits.lifetime_cap.spent_by(
        &counters.lifetime_spent,
        ("max_lifetime_cost", "max_lifetime_tokens"),
    ) {
        return Some(format!("its lifetime spending cap: {spent}"));
    }
    let reason = counters.stop_reason.as_deref().unwrap_or_default();
    (mode == Continue::Auto && same_intent && !unsettled && DONE.contains(&reason)).then(|| {
        format!(
            "segment {} ended with {reason} and the intent is the same",
            counters.segment
        )
    })
}

/// Starts the next segment of `backlog` with `config`: `segment` + 1; the segment's counters
/// (round, plateau, failures, and the improve preset's no-progress, same-error and residual
/// streaks) and the outcome cleared; candidates, handoffs, rollbacks, cooldowns and lifetime
/// rounds kept. When theta changed, each cooldown `release` accepts is lifted; returns a
/// `(family, reason)` per release, also recorded in `backlog.releases`.
pub(super) fn continue_segment(
    backlog: &mut Backlog,
    config: &SegmentConfig,
    release: &dyn Fn(&Cooldown) -> bool,
) -> Vec<(String, String)> {
    let previous_theta = backlog
        .config
        .as_ref()
        .map(|previous| previous.theta.clone());
    // A new segment starts every counter afresh but the segment's number and the lifetime's
    // rounds.
    let counters = &mut backlog.counters;
    *counters = Counters {
        segment: counters.segment + 1,
        lifetime_rounds: counters.lifetime_rounds,
        lifetime_spent: counters.lifetime_spent,
        ..Counters::default()
    };
    let segment = counters.segment;
    backlog.config = Some(config.clone());

    let Some(previous_theta) = previous_theta.filter(|theta| theta_changed(theta, &config.theta))
    else {
        return Vec::new();
    };
    let (released, kept): (Vec<Cooldown>, Vec<Cooldown>) = std::mem::take(&mut backlog.cooldowns)
        .into_iter()
        .partition(|cooldown| release(cooldown));
    backlog.cooldowns = kept;
    released
        .into_iter()
        .map(|cooldown| {
            let reason = format!(
                "theta {previous_theta} -> {}: qualifies again (cooldown since round {}: {})",
                config.theta, cooldown.since_round, cooldown.reason
            );
            backlog
                .releases
                .push(format!("segment {segment}: {}: {reason}", cooldown.family));
            (cooldown.family, reason)
        })
        .collect()
}

/// Whether two thetas differ: by value when both are numbers (`2` is `2.0`), else as text.
pub(super) fn theta_changed(previous: &str, current: &str) -> bool {
    match (previous.parse::<f64>(), current.parse::<f64>()) {
        (Ok(previous), Ok(current)) => previous != current,
        _ => previous != current,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions() {
        use Decision::*;
        let table: [(Option<&str>, bool, bool, Decision); 14] = [
            (None, false, true, Resume),
            (None, false, false, ConfigChanged),
            (None, true, true, Resume),
            (None, true, false, NewSegment),
            (Some("SUCCESS"), false, true, Terminal),
            (Some("SUCCESS"), false, false, Terminal),
            (Some("SUCCESS"), true, true, NewSegment),
            (Some("BUDGET"), true, false, NewSegment),
            (Some("ERROR"), true, true, NewSegment),
            (Some("NEEDS-FIX"), true, true, NewSegment),
            (Some("CANCELLED"), false, true, Terminal),
            (Some("CANCELLED"), false, false, Terminal),
            (Some("CANCELLED"), true, true, ResumeCancelled),
            (Some("CANCELLED"), true, false, NewSegment),
        ];
        for (outcome, continue_, same, expected) in table {
            assert_eq!(
                decide(outcome, continue_, same),
                expected,
                "{outcome:?} continue={continue_} same={same}"
            );
        }
    }

    #[test]
    fn a_campaign_is_finished_at_its_boundaries() {
        let counters = |segment, lifetime_rounds, outcome: Option<&str>, reason: &str| Counters {
            segment,
            lifetime_rounds,
            outcome: outcome.map(str::to_owned),
            stop_reason: Some(reason.to_owned()),
            ..Counters::default()
        };
        let limits = Limits {
            max_segments: Some(3),
            max_lifetime_rounds: Some(20),
            lifetime_cap: crate::spending::Cap::default(),
        };
        let none = Limits::default();
        let done = counters(1, 4, Some("SUCCESS"), "complete");
        let table = [
            (done.clone(), Continue::Auto, true, none, true),
            // Its accepted work has not been seen landed yet.
            (done.clone(), Continue::Auto, true, none, false),
            (done.clone(), Continue::Auto, false, none, false),
            (done.clone(), Continue::Yes, true, none, false),
            (done.clone(), Continue::No, true, none, false),
            (
                counters(1, 4, Some("SUCCESS"), "plateau"),
                Continue::Auto,
                true,
                none,
                true,
            ),
            (
                counters(1, 4, Some("NEEDS-FIX"), "pending-work"),
                Continue::Auto,
                true,
                none,
                false,
            ),
            (
                counters(1, 4, Some("BUDGET"), "max-cycles"),
                Continue::Auto,
                true,
                none,
                false,
            ),
            (counters(1, 4, None, ""), Continue::Auto, true, none, false),
            (
                counters(1, 4, Some("CANCELLED"), "cancelled"),
                Continue::Auto,
                true,
                none,
                false,
            ),
            (
                counters(2, 4, Some("BUDGET"), "max-cycles"),
                Continue::Yes,
                true,
                limits,
                false,
            ),
            (
                counters(3, 4, Some("BUDGET"), "max-cycles"),
                Continue::Yes,
                false,
                limits,
                true,
            ),
            (
                counters(3, 4, None, ""),
                Continue::Yes,
                false,
                limits,
                false,
            ),
            (
                counters(1, 19, Some("BUDGET"), "max-rounds"),
                Continue::Auto,
                false,
                limits,
                false,
            ),
            (
                counters(1, 20, Some("BUDGET"), "max-rounds"),
                Continue::Auto,
                false,
                limits,
                true,
            ),
        ];
        for (index, (state, mode, same_intent, limits, expected)) in table.into_iter().enumerate() {
            let unsettled = index == 1;
            let why = finished(&state, mode, same_intent, unsettled, limits);
            assert_eq!(
                why.is_some(),
                expected,
                "{state:?} {mode:?} {same_intent} {why:?}"
            );
        }
    }

    #[test]
    fn theta_changes() {
        let table = [
            ("2.0", "2.0", false),
            ("2", "2.0", false),
            ("2.0", "1.5", true),
            ("2.0", "3", true),
            ("odd", "odd", false),
            ("odd", "2.0", true),
        ];
        for (previous, current, expected) in table {
            assert_eq!(
                theta_changed(previous, current),
                expected,
                "{previous} {current}"
            );
        }
    }
}
