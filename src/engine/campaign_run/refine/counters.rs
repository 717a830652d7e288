//! The refine campaign's record of a round: its counters (plateau, failures, family
//! failures and cooldowns) as the seed keeps them, the facts the stop rules read, the handoffs, and
//! each candidate's status.

use super::{FAMILY_FAILURES_FOR_COOLDOWN, Round};
use crate::campaign::books::{Campaign, Candidate, Cooldown, Handoff};
use crate::campaign::candidates::Proposal;
use crate::engine::Attempt;
use crate::stop::Facts;

/// What the stop rules read of the campaign (its rules: [`crate::stop::refine`]).
pub(super) fn facts_of(campaign: &Campaign, cancelled: bool) -> Facts {
    let counters = &campaign.backlog.counters;
    Facts {
        cancelled,
        critical: active_handoffs(campaign).any(|h| h.critical),
        handoffs: active_handoffs(campaign).next().is_some(),
        held: !campaign.backlog.held.is_empty(),
        operational_errors: counters.fail_count,
        plateau: counters.plateau_count,
        cycles: counters.round,
        lifetime_rounds: counters.lifetime_rounds,
        ..Facts::default()
    }
}

/// The round's counters, as the seed records them.
pub(super) fn settle_round(
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
pub(super) fn active_handoffs(campaign: &Campaign) -> impl Iterator<Item = &Handoff> {
    let counters = &campaign.backlog.counters;
    let segment_start = counters.lifetime_rounds.saturating_sub(counters.round);
    campaign
        .backlog
        .handoffs
        .iter()
        .filter(move |h| h.round > segment_start)
}

pub(super) fn record_handoff(campaign: &mut Campaign, proposal: &Proposal, round: u32) {
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

pub(super) fn note_candidate(
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
