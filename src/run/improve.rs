//! The `improve` preset: the gate's findings become an open backlog — P0 (syntax, types, tests,
//! build errors), P1 (lint and other errors) and P2 deferred (warnings, never executed, never
//! blocking). Each cycle works the open items with the fix delegates and verifies with the gate;
//! the campaign completes only after two cycles in a row with nothing material open and a green
//! gate, the second a confirmation run. No progress three times, or the same error three times,
//! stops it.

use std::io::Write;

use super::ledger::CycleStory;
use super::verify::{diagnostics_of, measure, verify};
use super::{Attempt, RunError, failing_categories, take_turn};
use crate::campaign::state::Campaign;
use crate::cancel::Cancel;
use crate::config::Settings;
use crate::delegate::Assignment;
use crate::deliver::Recorder;
use crate::model::{Diagnostic, GateSummary};
use crate::state;
use crate::stop::Outcome;
use crate::workspace::{Change, Workspace, compose};

/// Cycles when `IMPROVE_LOOP_MAX_CYCLES` is not a positive number.
pub const DEFAULT_MAX_CYCLES: u32 = 8;
/// The counters that stop a campaign that does not move.
pub const NO_PROGRESS_LIMIT: u32 = 3;
pub const SAME_ERROR_LIMIT: u32 = 3;
/// Cycles in a row with nothing material open and a green gate.
pub const RESIDUAL_STREAK: u32 = 2;
/// Categories whose failures are P0.
const P0_CATEGORIES: [&str; 5] = ["syntax", "types", "tests", "build", "factory"];

/// How an improve invocation ended.
#[derive(Debug)]
pub struct ImproveEnd {
    pub outcome: Outcome,
    pub reason: String,
}

/// Records a cycle's landed change (or its rollback) in the backlog, for the report.
fn note_cycle(
    campaign: &mut Campaign,
    number: u32,
    attempts: &[Attempt],
    before: &GateSummary,
    after: &GateSummary,
) {
    let categories: Vec<&str> = attempts
        .iter()
        .filter(|a| !a.changes.is_empty())
        .map(|a| a.category.as_str())
        .collect();
    if categories.is_empty() {
        return;
    }
    if attempts.iter().any(|a| a.kept) {
        campaign
            .backlog
            .candidates
            .push(crate::campaign::state::Candidate {
                id: format!("cycle-{number}"),
                family: categories.join(", "),
                title: format!(
                    "cycle {number}: failed {}→{}",
                    before.failed_count, after.failed_count
                ),
                paths: Vec::new(),
                impact: 0,
                confidence: 0,
                effort: 0,
                roi: 0.0,
                status: "accepted".into(),
                round: number,
                note: "the gate was no worse".into(),
            });
    } else {
        let why: Vec<String> = attempts
            .iter()
            .flat_map(|a| a.rejected_because.iter().cloned())
            .collect();
        campaign.backlog.rollbacks.push(format!(
            "cycle {number}: {}: {}",
            categories.join(", "),
            why.join("; ")
        ));
    }
}

/// The backlog of a gate result: open P0/P1 lines and deferred P2 lines.
pub fn backlog_of(summary: &GateSummary) -> (Vec<String>, Vec<String>) {
    let mut open = Vec::new();
    let mut deferred = Vec::new();
    for (name, category) in &summary.categories {
        let first = category
            .details
            .first()
            .map_or(String::new(), |d| format!(" — first: {d}"));
        if category.failures > 0 && name != crate::gate::INFRA_CATEGORY {
            let priority = if P0_CATEGORIES.contains(&name.as_str()) {
                "P0"
            } else {
                "P1"
            };
            open.push(format!(
                "- [ ] {priority}: {name}: {} failure(s){first}",
                category.failures
            ));
        } else if category.warnings > 0 {
            deferred.push(format!(
                "- [ ] P2: {name}: {} warning(s)",
                category.warnings
            ));
        }
    }
    open.sort();
    (open, deferred)
}

/// The cycle limit: `IMPROVE_LOOP_MAX_CYCLES` when a positive number, else 8.
pub fn max_cycles() -> u32 {
    std::env::var("IMPROVE_LOOP_MAX_CYCLES")
        .ok()
        .and_then(|text| text.trim().parse::<u32>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(DEFAULT_MAX_CYCLES)
}

/// What failed, as one comparable signature: the sorted fingerprints of the failing findings.
fn error_signature(diagnostics: &[Diagnostic], summary: &GateSummary) -> Option<String> {
    if summary.failed_count == 0 {
        return None;
    }
    let mut prints: Vec<&str> = diagnostics.iter().map(|d| d.fingerprint.as_str()).collect();
    prints.sort_unstable();
    prints.dedup();
    Some(if prints.is_empty() {
        format!("{} failures without findings", summary.failed_count)
    } else {
        prints.join(",")
    })
}

/// Runs cycles until the campaign completes or a counter stops it.
pub fn run_cycles(
    settings: &Settings,
    campaign: &mut Campaign,
    workspace: &mut Workspace,
    recorder: &mut Recorder<'_>,
    cancel: &Cancel,
    console: &mut dyn Write,
) -> Result<ImproveEnd, RunError> {
    let limit = max_cycles();
    let baseline = super::baseline::measure_baseline(settings, cancel)?.run;
    let flaky = baseline.flaky.clone();
    let mut snapshot = workspace.after_gate()?;
    let mut kept = baseline.summary.clone();
    let mut kept_diagnostics = diagnostics_of(&baseline);
    let (open, deferred) = backlog_of(&kept);
    card(
        campaign,
        console,
        &format!(
            "▸ improve · kickoff · goal: {} · open P0/P1: {} · deferred P2: {} · at most {limit} cycles",
            campaign.segment_config.intent,
            open.len(),
            deferred.len()
        ),
    )?;
    loop {
        if cancel.is_requested() || baseline.cancelled {
            return cancelled(campaign);
        }
        let counters = &campaign.backlog.counters;
        if let Some(end) = stop_of(counters, limit) {
            campaign.backlog.counters.outcome = Some(end.outcome.as_str().into());
            campaign.backlog.counters.stop_reason = Some(end.reason.clone());
            campaign.save()?;
            return Ok(end);
        }
        campaign.backlog.counters.round_in_progress = true;
        campaign.save()?;
        let number = campaign.backlog.counters.round + 1;
        let cycle = campaign.backlog.counters.lifetime_rounds + 1;
        let before = kept.clone();
        let (open, _) = backlog_of(&kept);
        let mut attempts: Vec<Attempt> = Vec::new();
        let mut outside = std::time::Duration::ZERO;
        if open.is_empty() {
            // Residual: nothing material open; the gate runs again to confirm.
            let confirmed = measure(settings, &flaky, cycle, cancel)?;
            snapshot = workspace.after_gate()?;
            kept_diagnostics = diagnostics_of(&confirmed);
            kept = confirmed.summary;
        } else {
            let reports_dir =
                state::cycle_dir(&settings.state_dir, cycle)?.join("delegate-reports");
            for category in failing_categories(&kept, &P0_CATEGORIES.map(String::from)) {
                if cancel.is_requested() {
                    break;
                }
                let Some(delegate) = settings.delegates.iter().position(|d| d.handles(&category))
                else {
                    continue;
                };
                let Some((diagnostics, details)) =
                    super::findings_of(&kept, &kept_diagnostics, &category, &settings.run.scope)
                else {
                    continue;
                };
                let assignment = Assignment {
                    category: &category,
                    cycle,
                    scope: &settings.run.scope,
                    diagnostics: &diagnostics,
                    files: &[],
                    details: &details,
                    target: &settings.target,
                    state_dir: &settings.state_dir,
                    reports_dir: &reports_dir,
                };
                let attempt = take_turn(
                    settings,
                    workspace,
                    &snapshot,
                    (delegate, &settings.delegates[delegate], &assignment),
                    cancel,
                    &mut outside,
                )?;
                if !attempt.settled {
                    snapshot = snapshot.advanced(&attempt.changes);
                }
                attempts.push(attempt);
            }
            let open_steps: Vec<&[Change]> = attempts
                .iter()
                .filter(|a| !a.settled)
                .map(|a| a.changes.as_slice())
                .collect();
            let changes = compose(&open_steps);
            let since = attempts.iter().map(|a| a.started).min();
            if let (false, Some(since)) = (changes.is_empty(), since) {
                let verified = verify(settings, &flaky, cycle, cancel, &kept, &mut outside)?;
                if verified.keeps() {
                    kept_diagnostics = diagnostics_of(&verified.run);
                    kept = verified.run.summary;
                    attempts
                        .iter_mut()
                        .filter(|a| !a.settled && !a.changes.is_empty())
                        .for_each(|a| a.kept = true);
                } else {
                    workspace.roll_back(&changes, since)?;
                    for attempt in attempts.iter_mut().filter(|a| !a.settled) {
                        attempt.rejected_because.clone_from(&verified.reasons);
                    }
                }
                snapshot = workspace.after_gate()?;
            }
        }
        super::campaign::record_attempts(settings, campaign, (cycle, number), &attempts)?;
        if cancel.is_requested() && !attempts.iter().any(|a| a.kept) {
            return cancelled(campaign);
        }
        settle(campaign, &before, &kept, &kept_diagnostics);
        note_cycle(campaign, number, &attempts, &before, &kept);
        let (open, deferred) = backlog_of(&kept);
        campaign.backlog.open_items.clone_from(&open);
        campaign.backlog.deferred.clone_from(&deferred);
        let counters = &campaign.backlog.counters;
        let stop_state = format!(
            "cycle {number} of at most {limit}; no-progress {}/{NO_PROGRESS_LIMIT}; same-error {}/{SAME_ERROR_LIMIT}; residual streak {}/{RESIDUAL_STREAK}",
            counters.no_progress, counters.same_error, counters.residual_streak
        );
        if attempts.iter().any(|a| a.kept) {
            let story = CycleStory {
                cycle: number,
                before: &before,
                after: &kept,
                attempts: &attempts,
                next: None,
            };
            super::campaign::record_accepted(
                recorder,
                (workspace, settings),
                campaign,
                &story,
                (&open, &stop_state),
            )?;
        }
        campaign.save()?;
        let landed = attempts.iter().filter(|a| a.kept).count();
        let (was_open, _) = backlog_of(&before);
        let key = |line: &String| line.split(':').take(2).collect::<Vec<_>>().join(":");
        let closed = was_open
            .iter()
            .filter(|w| !open.iter().any(|o| key(o) == key(w)))
            .count();
        let discovered = open
            .iter()
            .filter(|o| !was_open.iter().any(|w| key(w) == key(o)))
            .count();
        card(
            campaign,
            console,
            &format!(
                "▸ improve · cycle {number}/{limit} · failed {}→{} · landed {landed} · discovered {discovered} · closed {closed} · open P0/P1: {} · deferred P2: {} · {stop_state}",
                before.failed_count,
                kept.failed_count,
                open.len(),
                deferred.len()
            ),
        )?;
    }
}

/// The counters after a cycle.
fn settle(
    campaign: &mut Campaign,
    before: &GateSummary,
    after: &GateSummary,
    found: &[Diagnostic],
) {
    let counters = &mut campaign.backlog.counters;
    counters.round += 1;
    counters.lifetime_rounds += 1;
    counters.round_in_progress = false;
    counters.no_progress = if after.failed_count < before.failed_count || after.failed_count == 0 {
        0
    } else {
        counters.no_progress + 1
    };
    let signature = error_signature(found, after);
    // Cycles in a row that ended with this same error (the first counts one).
    counters.same_error = match (&signature, &counters.last_error_signature) {
        (Some(now), Some(last)) if now == last => counters.same_error + 1,
        (Some(_), _) => 1,
        (None, _) => 0,
    };
    counters.last_error_signature = signature;
    let (open, _) = backlog_of(after);
    counters.residual_streak = if open.is_empty() && after.failed_count == 0 {
        counters.residual_streak + 1
    } else {
        0
    };
}

/// A stop rule that holds, in order: complete, same error, no progress, cycles spent.
fn stop_of(counters: &crate::campaign::state::Counters, limit: u32) -> Option<ImproveEnd> {
    let end = |outcome, reason: &str| {
        Some(ImproveEnd {
            outcome,
            reason: reason.to_string(),
        })
    };
    if counters.residual_streak >= RESIDUAL_STREAK {
        end(Outcome::Success, "complete")
    } else if counters.same_error >= SAME_ERROR_LIMIT {
        end(Outcome::NeedsFix, "same-error")
    } else if counters.no_progress >= NO_PROGRESS_LIMIT {
        end(Outcome::NeedsFix, "no-progress")
    } else if counters.round >= limit {
        end(Outcome::Budget, "max-cycles")
    } else {
        None
    }
}

fn cancelled(campaign: &mut Campaign) -> Result<ImproveEnd, RunError> {
    campaign.append_worklog("- cancelled; the cycle starts again on the next run")?;
    campaign.save()?;
    Ok(ImproveEnd {
        outcome: Outcome::Cancelled,
        reason: "cancelled".into(),
    })
}

/// A card: one line on the console, and in the worklog.
fn card(campaign: &mut Campaign, console: &mut dyn Write, text: &str) -> Result<(), RunError> {
    let _ = writeln!(console, "{text}");
    campaign.append_worklog(&format!("- {text}"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::state::Counters;

    #[test]
    fn the_stop_rules_hold_at_their_boundaries() {
        let counters = |no_progress, same_error, residual_streak, round| Counters {
            no_progress,
            same_error,
            residual_streak,
            round,
            ..Counters::default()
        };
        let table = [
            (counters(0, 0, 1, 1), None),
            (counters(0, 0, 2, 2), Some("complete")),
            (counters(2, 2, 0, 2), None),
            (counters(3, 0, 0, 3), Some("no-progress")),
            (counters(0, 3, 0, 3), Some("same-error")),
            (counters(3, 3, 0, 3), Some("same-error")),
            (counters(0, 0, 1, 8), Some("max-cycles")),
            (counters(0, 0, 2, 8), Some("complete")),
            (counters(0, 0, 0, 7), None),
        ];
        for (state, expected) in table {
            let reason = stop_of(&state, 8).map(|end| end.reason);
            assert_eq!(reason.as_deref(), expected, "{state:?}");
        }
    }
}
