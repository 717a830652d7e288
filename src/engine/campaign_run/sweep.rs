//! The open surface of a campaign's segment (`sweep = true`).

use super::super::RunError;
use crate::campaign::books::Campaign;
use crate::cancel::Cancel;
use crate::config::Settings;

/// The open surface, swept once per segment (`sweep = true`): read from GitHub at the first run
/// of a segment and written to `sweep.json`; read back from there by a later run of the same
/// segment. A sweep that cannot read GitHub is recorded as skipped, with the reason: the sweep
/// informs the campaign, it does not gate it.
pub(super) fn sweep_segment(
    settings: &Settings,
    campaign: &mut Campaign,
    cancel: &Cancel,
) -> Result<crate::sweep::Sweep, RunError> {
    let path = crate::state::Layout::new(&settings.state_dir).sweep();
    let segment = campaign.backlog.counters.segment;
    if campaign.backlog.swept_segment == Some(segment)
        && let Some(sweep) = crate::state::read_own(&path, crate::state::OWN_FILE_LIMIT)
            .ok()
            .flatten()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
    {
        return Ok(sweep);
    }
    let sweep = match crate::sweep::SweepOptions::from_environment(settings.target.clone(), None)
        .and_then(|options| crate::sweep::run_sweep(&options, cancel))
    {
        Ok(sweep) => sweep,
        // Not done: the next run of the segment sweeps; this one ends at its first cancel check.
        Err(crate::sweep::SweepError::Cancelled) => {
            return Ok(crate::sweep::Sweep::skipped(None, "cancelled"));
        }
        Err(error) => {
            tracing::warn!(%error, "the sweep could not read GitHub");
            crate::sweep::Sweep::skipped(None, format!("the sweep could not read GitHub: {error}"))
        }
    };
    crate::sweep::write_sweep_json(&settings.state_dir, &sweep)?;
    let line = match &sweep.skipped {
        Some(reason) => format!("- segment {segment}: the open surface was not swept: {reason}"),
        None => format!(
            "- segment {segment}: swept the open surface of {}: {} open PRs, {} merged read, {} baseline failures, {} in-tree findings (sweep.json)",
            sweep.repository.as_deref().unwrap_or("?"),
            sweep.open_prs.len(),
            sweep.merged_prs.len(),
            sweep.baseline_failures.len(),
            sweep.findings.len()
        ),
    };
    campaign.append_worklog(&line)?;
    campaign.backlog.swept_segment = Some(segment);
    campaign.save()?;
    Ok(sweep)
}

/// The sweep when the configuration asks for one (`sweep = true`), and the candidates it
/// proposes.
pub(super) fn sweep_if_asked(
    settings: &Settings,
    campaign: &mut Campaign,
    cancel: &Cancel,
) -> Result<
    (
        Option<crate::sweep::Sweep>,
        Vec<crate::campaign::candidates::Proposal>,
    ),
    RunError,
> {
    if !settings.sweep {
        return Ok((None, Vec::new()));
    }
    let sweep = sweep_segment(settings, campaign, cancel)?;
    let proposals = crate::sweep::candidates(&sweep);
    Ok((Some(sweep), proposals))
}
