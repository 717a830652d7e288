//! The `refine` preset: behaviour-preserving refinements, one candidate at a time. Each round
//! discovers candidates (from the gate's findings and from discover delegates), hands
//! behaviour-changing ones off as NEEDS-FIX, ranks the rest by ROI, and carries out the best
//! qualified ones serially through the `execute` delegate until one is accepted: the gate must be
//! no worse and an independent `reviewer` must approve. The campaign's counters decide the
//! outcome, in the seed's order.

mod discover;
mod review;

use std::io::Write;
use std::path::Path;

use crate::campaign::candidates::{self, Proposal};

use super::ledger::CycleStory;
use super::verify::{diagnostics_of, verify};
use super::{Attempt, RunError, take_turn};
use crate::campaign::state::{Campaign, Candidate, Cooldown, Handoff};
use crate::cancel::Cancel;
use crate::config::Settings;
use crate::delegate::{Assignment, Role};
use crate::deliver::Recorder;
use crate::state;
use crate::stop::Outcome;
use crate::workspace::{Snapshot, Workspace};

/// The seed's limits.
pub const PLATEAU_LIMIT: u32 = 3;
pub const MAX_ROUNDS: u32 = 25;
pub const FAILURE_LIMIT: u32 = 3;
/// Rounds in a row a family may fail before it rests.
const FAMILY_FAILURES_FOR_COOLDOWN: u32 = 3;

/// How a refine invocation ended.
#[derive(Debug)]
pub struct RefineEnd {
    pub outcome: Outcome,
    pub reason: String,
}

/// What one round did.
#[derive(Debug, Default)]
struct Round {
    accepted: Option<String>,
    /// A qualified candidate was tried and failed but may be tried again.
    retained: bool,
    operational_error: bool,
    critical: bool,
}

/// Runs rounds until an outcome; the campaign's files are saved after every step.
pub fn run_rounds(
    settings: &Settings,
    (campaign, swept): (&mut Campaign, &[Proposal]),
    workspace: &mut Workspace,
    recorder: &mut Recorder<'_>,
    cancel: &Cancel,
    console: &mut dyn Write,
) -> Result<RefineEnd, RunError> {
    let theta: f64 = campaign.segment_config.theta.parse().unwrap_or(2.0);
    let baseline = super::baseline::measure_baseline(settings, cancel)?.run;
    let flaky = baseline.flaky.clone();
    let mut snapshot = workspace.after_gate()?;
    let mut kept = baseline.summary.clone();
    let mut kept_diagnostics = diagnostics_of(&baseline);
    loop {
        if let Some(end) = outcome_of(campaign, cancel.is_requested() || baseline.cancelled) {
            campaign.save()?;
            return Ok(end);
        }
        campaign.backlog.counters.round_in_progress = true;
        campaign.save()?;
        let number = campaign.backlog.counters.round + 1;
        let cycle = campaign.backlog.counters.lifetime_rounds + 1;
        let reports_dir = state::cycle_dir(&settings.state_dir, cycle)?.join("delegate-reports");
        let mut outside = std::time::Duration::ZERO;
        let before = kept.clone();

        // Discover and classify.
        let (mut proposals, rejected, discover_failed) = discover::discover(
            settings,
            workspace,
            &snapshot,
            (&kept, &kept_diagnostics),
            (&reports_dir, cycle),
            &campaign.segment_config.focus.clone(),
            cancel,
        )?;
        for reason in &rejected {
            campaign.append_worklog(&format!("- round {number}: rejected a proposal: {reason}"))?;
        }
        // The sweep's findings stand for the whole segment, each until it is accepted.
        proposals.extend(
            swept
                .iter()
                .filter(|p| {
                    !campaign.backlog.candidates.iter().any(|c| {
                        c.family == p.family && c.title == p.title && c.status == "accepted"
                    })
                })
                .cloned(),
        );
        proposals.retain(|p| {
            !campaign
                .backlog
                .cooldowns
                .iter()
                .any(|cooldown| cooldown.family == p.family)
        });
        // A candidate that would change paths outside the scope is not for this run.
        let scope = &settings.run.scope;
        proposals.retain(|p| {
            let inside = p.paths.iter().all(|path| scope.holds(path));
            if !inside {
                note_candidate(
                    campaign,
                    p,
                    number,
                    "parked",
                    "touches paths outside the scope",
                );
            }
            inside
        });
        let mut round = Round {
            operational_error: discover_failed,
            ..Round::default()
        };
        for proposal in proposals.iter().filter(|p| p.behaviour_changing) {
            round.critical |= proposal.critical;
            record_handoff(campaign, proposal, cycle);
        }
        let protected = workspace.protected();
        let (executable, blocked): (Vec<&Proposal>, Vec<&Proposal>) =
            candidates::rank(&proposals, theta)
                .into_iter()
                .partition(|p| {
                    !p.paths
                        .iter()
                        .any(|path| protected.keys().any(|q| q.to_string() == *path))
                });
        for proposal in &blocked {
            // Still actionable once the user's work there is committed: not a plateau.
            round.retained = true;
            note_candidate(
                campaign,
                proposal,
                number,
                "blocked",
                "touches a path that held the user's own work before the run",
            );
        }
        for proposal in proposals
            .iter()
            .filter(|p| !p.behaviour_changing && p.roi() < theta)
        {
            note_candidate(campaign, proposal, number, "parked", "ROI below theta");
        }

        // Execute serially, until one is accepted.
        let mut attempts: Vec<Attempt> = Vec::new();
        if !round.critical {
            for proposal in executable {
                if cancel.is_requested() {
                    break;
                }
                let Some(executor) = settings
                    .delegates
                    .iter()
                    .position(|d| d.role == Role::Execute)
                else {
                    round.operational_error = true;
                    campaign.append_worklog(&format!(
                        "- round {number}: no execute delegate is configured; nothing was tried"
                    ))?;
                    break;
                };
                let mut attempt = execute(
                    settings,
                    workspace,
                    &snapshot,
                    (executor, proposal),
                    (&reports_dir, cycle),
                    cancel,
                    &mut outside,
                )?;
                let failed = attempt.run.spawn_error.is_some()
                    || attempt.run.end.stopped.is_some()
                    || attempt.run.end.exit_code.is_some_and(|code| code != 0)
                    || attempt.run.end.signal.is_some();
                if failed {
                    round.operational_error = true;
                }
                if failed || attempt.settled || attempt.changes.is_empty() {
                    if !attempt.settled && !attempt.changes.is_empty() {
                        workspace.roll_back(&attempt.changes, attempt.started)?;
                    }
                    round.retained = true;
                    let note = if failed {
                        format!(
                            "the execute delegate failed ({}); its change, if any, was undone",
                            attempt.run.spawn_error.clone().unwrap_or_else(|| {
                                let end = crate::process::describe_end(
                                    &attempt.run.end,
                                    None,
                                    settings.delegates[executor].timeout,
                                );
                                match &attempt.run.note {
                                    Some(note) => format!("{end}: {note}"),
                                    None => end,
                                }
                            })
                        )
                    } else if let Some(note) = &attempt.run.note {
                        format!("the execute delegate changed nothing: {note}")
                    } else if attempt.changes.is_empty() {
                        "the execute delegate changed nothing".to_string()
                    } else {
                        attempt.rejected_because.join("; ")
                    };
                    note_candidate(campaign, proposal, number, "rolled-back", &note);
                    attempts.push(attempt);
                    continue;
                }
                let verified = verify(settings, &flaky, cycle, cancel, &kept, &mut outside)?;
                let mut reasons = verified.reasons.clone();
                if verified.run.cancelled {
                    reasons.push("cancelled before the gate finished".into());
                }
                if reasons.is_empty() {
                    match review::review(
                        settings,
                        workspace,
                        proposal,
                        &attempt,
                        &verified.run.summary,
                        (&reports_dir, cycle),
                        cancel,
                    )? {
                        review::Decision::Approve => {}
                        review::Decision::Reject(why) => reasons.push(format!("reviewer: {why}")),
                        review::Decision::Unavailable(why) => {
                            round.operational_error = true;
                            reasons.push(why);
                        }
                    }
                }
                if reasons.is_empty() {
                    kept_diagnostics = diagnostics_of(&verified.run);
                    kept = verified.run.summary;
                    attempt.kept = true;
                    round.accepted = Some(proposal.family.clone());
                    note_candidate(
                        campaign,
                        proposal,
                        number,
                        "accepted",
                        "checks and reviewer passed",
                    );
                    attempts.push(attempt);
                    snapshot = workspace.after_gate()?;
                    break;
                }
                workspace.roll_back(&attempt.changes, attempt.started)?;
                snapshot = workspace.after_gate()?;
                round.retained = true;
                let note = reasons.join("; ");
                campaign
                    .backlog
                    .rollbacks
                    .push(format!("round {number}: {}: {note}", proposal.family));
                note_candidate(campaign, proposal, number, "rolled-back", &note);
                attempt.rejected_because = reasons;
                attempts.push(attempt);
            }
        }
        super::campaign::record_attempts(settings, campaign, (cycle, number), &attempts)?;
        if cancel.is_requested() && round.accepted.is_none() {
            // The round is not counted: the next run does it again, from the files.
            campaign.append_worklog(&format!(
                "- round {number}: cancelled; it starts again on the next run"
            ))?;
            campaign.save()?;
            return Ok(RefineEnd {
                outcome: Outcome::Cancelled,
                reason: "cancelled".into(),
            });
        }
        settle_round(campaign, &round, &attempts, &proposals, number);
        if round.accepted.is_some() {
            let story = CycleStory {
                cycle: number,
                before: &before,
                after: &kept,
                attempts: &attempts,
                next: None,
            };
            let counters = &campaign.backlog.counters;
            let stop_state = format!(
                "round {} of at most {MAX_ROUNDS}; plateau {}/{PLATEAU_LIMIT}; failures {}/{FAILURE_LIMIT}; segment {}",
                counters.round, counters.plateau_count, counters.fail_count, counters.segment
            );
            let open: Vec<String> = active_handoffs(campaign)
                .map(|h| format!("- [ ] NEEDS-FIX: {} ({})", h.title, h.family))
                .collect();
            crate::run::campaign::record_accepted(
                recorder,
                (workspace, settings),
                campaign,
                &story,
                (&open, &stop_state),
            )?;
        }
        campaign.save()?;
        let counters = &campaign.backlog.counters;
        let line = format!(
            "refine-loop round {} · accepted {} · plateau {}/{PLATEAU_LIMIT} · failures {}/{FAILURE_LIMIT} · handoffs {}",
            counters.round,
            round.accepted.as_deref().unwrap_or("none"),
            counters.plateau_count,
            counters.fail_count,
            campaign.backlog.handoffs.len()
        );
        let _ = writeln!(console, "{line}");
        campaign.append_worklog(&format!("- {line}"))?;
        if round.critical {
            campaign.backlog.counters.outcome = Some(Outcome::NeedsFix.as_str().into());
            campaign.backlog.counters.stop_reason = Some("critical finding".into());
            campaign.save()?;
            return Ok(RefineEnd {
                outcome: Outcome::NeedsFix,
                reason: "critical finding".into(),
            });
        }
    }
}

/// The seed's order: cancelled, failure limit, critical, max rounds, plateau. A terminal outcome
/// is written into the campaign; cancelled is not (the campaign resumes where it was).
fn outcome_of(campaign: &mut Campaign, cancelled: bool) -> Option<RefineEnd> {
    if cancelled {
        return Some(RefineEnd {
            outcome: Outcome::Cancelled,
            reason: "cancelled".into(),
        });
    }
    let handoffs = active_handoffs(campaign).next().is_some();
    let critical = active_handoffs(campaign).any(|h| h.critical);
    let counters = &campaign.backlog.counters;
    let (outcome, reason) = if counters.fail_count >= FAILURE_LIMIT {
        (Outcome::Error, "failure-limit")
    } else if critical {
        (Outcome::NeedsFix, "critical finding")
    } else if counters.round >= MAX_ROUNDS {
        if handoffs {
            (Outcome::NeedsFix, "max-rounds with handoffs")
        } else {
            (Outcome::Budget, "max-rounds")
        }
    } else if counters.plateau_count >= PLATEAU_LIMIT {
        if handoffs {
            (Outcome::NeedsFix, "plateau with handoffs")
        } else {
            (Outcome::Success, "plateau")
        }
    } else {
        return None;
    };
    campaign.backlog.counters.outcome = Some(outcome.as_str().into());
    campaign.backlog.counters.stop_reason = Some(reason.into());
    Some(RefineEnd {
        outcome,
        reason: reason.into(),
    })
}

/// The round's counters, as the seed records them.
fn settle_round(
    campaign: &mut Campaign,
    round: &Round,
    attempts: &[Attempt],
    proposals: &[Proposal],
    number: u32,
) {
    let backlog = &mut campaign.backlog;
    let counters = &mut backlog.counters;
    counters.round += 1;
    counters.lifetime_rounds += 1;
    counters.round_in_progress = false;
    if round.accepted.is_some() {
        counters.plateau_count = 0;
    } else if !round.retained && !round.operational_error {
        counters.plateau_count += 1;
    }
    if round.operational_error {
        counters.fail_count += 1;
    } else {
        counters.fail_count = 0;
    }
    // A family that fails three rounds running rests.
    let tried: Vec<&str> = attempts
        .iter()
        .map(|attempt| attempt.category.as_str())
        .collect();
    backlog
        .family_failures
        .retain(|family, _| tried.contains(&family.as_str()));
    for family in proposals.iter().map(|p| p.family.as_str()) {
        if round.accepted.as_deref() == Some(family) {
            backlog.family_failures.remove(family);
        } else if tried.contains(&family) {
            let failures = backlog
                .family_failures
                .entry(family.to_string())
                .or_default();
            *failures += 1;
            if *failures >= FAMILY_FAILURES_FOR_COOLDOWN
                && !backlog.cooldowns.iter().any(|c| c.family == family)
            {
                backlog.cooldowns.push(Cooldown {
                    family: family.to_string(),
                    since_round: number,
                    reason: format!(
                        "no accepted refinement in {FAMILY_FAILURES_FOR_COOLDOWN} rounds running"
                    ),
                });
            }
        }
    }
}

/// The handoffs of the current segment (recorded by lifetime round): a continuation starts
/// without the earlier ones, which stay in the history; discovery records them again while
/// they are still there.
fn active_handoffs(campaign: &Campaign) -> impl Iterator<Item = &Handoff> {
    let counters = &campaign.backlog.counters;
    let segment_start = counters.lifetime_rounds.saturating_sub(counters.round);
    campaign
        .backlog
        .handoffs
        .iter()
        .filter(move |h| h.round > segment_start)
}

fn record_handoff(campaign: &mut Campaign, proposal: &Proposal, round: u32) {
    let handoffs = &mut campaign.backlog.handoffs;
    if let Some(existing) = handoffs
        .iter_mut()
        .find(|h| h.family == proposal.family && h.title == proposal.title)
    {
        existing.round = round;
        return;
    }
    handoffs.push(Handoff {
        family: proposal.family.clone(),
        title: proposal.title.clone(),
        severity: proposal.severity.clone(),
        evidence: proposal.evidence.clone(),
        critical: proposal.critical,
        round,
    });
}

fn note_candidate(
    campaign: &mut Campaign,
    proposal: &Proposal,
    round: u32,
    status: &str,
    note: &str,
) {
    let id = format!("{}#{round}", proposal.family);
    let candidate = Candidate {
        id: id.clone(),
        family: proposal.family.clone(),
        title: proposal.title.clone(),
        paths: proposal.paths.clone(),
        impact: proposal.impact,
        confidence: proposal.confidence,
        effort: proposal.effort,
        roi: proposal.roi(),
        status: status.to_string(),
        round,
        note: note.to_string(),
    };
    let candidates = &mut campaign.backlog.candidates;
    match candidates.iter_mut().find(|c| c.id == id) {
        Some(existing) => *existing = candidate,
        None => candidates.push(candidate),
    }
}

/// Runs the execute delegate on one candidate.
fn execute(
    settings: &Settings,
    workspace: &mut Workspace,
    snapshot: &Snapshot,
    (executor, proposal): (usize, &Proposal),
    (reports_dir, cycle): (&Path, u32),
    cancel: &Cancel,
    outside: &mut std::time::Duration,
) -> Result<Attempt, RunError> {
    let mut spec = settings.delegates[executor].clone();
    if spec.template == crate::delegate::DEFAULT_TEMPLATE {
        spec.template = include_str!("../../../templates/refine/execute.md").to_string();
    }
    let mut details = vec![
        format!("title: {}", proposal.title),
        format!("family: {}", proposal.family),
        format!("paths: {}", proposal.paths.join(", ")),
    ];
    details.extend(proposal.evidence.lines().map(|l| format!("evidence: {l}")));
    let assignment = Assignment {
        category: &proposal.family.replace('/', "-"),
        cycle,
        scope: &settings.run.scope,
        diagnostics: &proposal.diagnostics,
        files: &proposal.paths,
        details: &details,
        target: &settings.target,
        state_dir: &settings.state_dir,
        reports_dir,
    };
    let mut attempt = take_turn(
        settings,
        workspace,
        snapshot,
        (executor, &spec, &assignment),
        cancel,
        outside,
    )?;
    attempt.category.clone_from(&proposal.family);
    Ok(attempt)
}
