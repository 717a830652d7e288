//! What the refine and improve policies share about a campaign's round (or cycle): opening it,
//! its scope violations as worklog cards, the paths its kept changes own, a terminal outcome.

use super::super::policy::{CycleNumber, CycleRecord};
use super::super::{Attempt, RunError};
use crate::campaign::books::Campaign;
use crate::model::StopReason;
use crate::workspace::Incident;

/// Each change a round's (or cycle's) delegates made outside the scope (undone), in the worklog
/// as a card, so that the campaign report lists it.
pub(in crate::engine) fn note_scope_violations(
    campaign: &mut Campaign,
    record: &CycleRecord<'_>,
) -> Result<(), RunError> {
    for attempt in record.attempts {
        for incident in &attempt.incidents {
            if matches!(incident, Incident::OutOfScope { .. }) {
                campaign.append_worklog(&format!(
                    "- ▸ scope violation in round {} ({}): {}",
                    record.number.shown,
                    attempt.category,
                    incident.describe()
                ))?;
            }
        }
    }
    Ok(())
}

/// Opens the next round (or cycle): marked in progress in the saved state.
pub(in crate::engine) fn open_round(campaign: &mut Campaign) -> Result<CycleNumber, RunError> {
    campaign.backlog.counters.round_in_progress = true;
    campaign.save()?;
    let counters = &campaign.backlog.counters;
    Ok(CycleNumber {
        index: counters.lifetime_rounds + 1,
        shown: counters.round + 1,
    })
}

/// Writes a terminal outcome into the campaign.
pub(in crate::engine) fn conclude(
    campaign: &mut Campaign,
    reason: StopReason,
) -> Result<(), RunError> {
    let counters = &mut campaign.backlog.counters;
    counters.outcome = Some(reason.outcome().as_str().into());
    counters.stop_reason = Some(reason.as_str().into());
    campaign.save()?;
    Ok(())
}

/// Notes the paths the kept attempts changed, with the state they left: on a later run of the
/// campaign they are its own.
pub(in crate::engine) fn remember_owned(campaign: &mut Campaign, attempts: &[Attempt]) {
    let kept: Vec<&[crate::workspace::Change]> = attempts
        .iter()
        .filter(|a| a.kept)
        .map(|a| a.changes.as_slice())
        .collect();
    for change in crate::workspace::compose(&kept) {
        campaign
            .backlog
            .owned
            .insert(change.path.to_string(), change.after.key());
    }
}
