//! What opening an existing campaign does, as pure functions of the stored state and the
//! invocation: resume, stay finished, refuse, or start a new segment.

use super::{Backlog, Cooldown, SegmentConfig};

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
    let counters = &mut backlog.counters;
    counters.segment += 1;
    counters.round = 0;
    counters.plateau_count = 0;
    counters.fail_count = 0;
    counters.no_progress = 0;
    counters.same_error = 0;
    counters.residual_streak = 0;
    counters.last_error_signature = None;
    counters.outcome = None;
    counters.stop_reason = None;
    counters.round_in_progress = false;
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
