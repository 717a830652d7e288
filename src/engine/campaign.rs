//! A campaign run, for the `refine` and `improve` presets: open (or create, or continue) the
//! campaign's state under its lock, run its rounds or cycles, leave the record (commits on the
//! private ref, patches, manifest) and the campaign report.

use std::io::Write;

use super::policy::{CycleNumber, CycleRecord};
use super::{Attempt, Engine, EngineOptions, RunError, improve, ledger, refine};
use crate::campaign::request::{Lens, Request, Theta};
use crate::campaign::state::{self, BaselineFacts, Campaign, Opened, Provenance, SegmentConfig};
use crate::cancel::Cancel;
use crate::config::Settings;
use crate::deliver::Recorder;
use crate::model::{Outcome, Preset, StopReason};
use crate::report::{CampaignPart, Report};
use crate::workspace::{Incident, Workspace, WorkspaceError};

/// How a campaign invocation ended.
#[derive(Debug)]
pub struct CampaignEnd {
    pub outcome: Outcome,
    pub reason: String,
    /// The run's report, when the campaign ran.
    pub report: Option<Box<Report>>,
}

/// Runs the campaign `request` asks for.
pub fn run_campaign(
    settings: &Settings,
    preset: Preset,
    request: &Request,
    options: EngineOptions<'_>,
    console: &mut dyn Write,
) -> Result<CampaignEnd, RunError> {
    let mut workspace = Workspace::open(&settings.target, &settings.state_dir)?;
    let end = run_in(settings, preset, request, &mut workspace, options, console);
    // Kept only when someone else changed a path: then it holds the version the loop expected.
    if !matches!(
        end,
        Err(RunError::Workspace(WorkspaceError::ConcurrentChange { .. }))
    ) {
        workspace.discard_store();
    }
    end
}

fn run_in(
    settings: &Settings,
    preset: Preset,
    request: &Request,
    workspace: &mut Workspace,
    options: EngineOptions<'_>,
    console: &mut dyn Write,
) -> Result<CampaignEnd, RunError> {
    let cancel = options.cancel;
    workspace.record_baseline()?;
    let repo = workspace.repository();
    let provenance = Provenance {
        format: state::FORMAT,
        preset: preset.as_str().to_string(),
        target: settings.target.clone(),
        state_dir: settings.state_dir.clone(),
        repository_root: workspace.root().to_path_buf(),
        git_common_dir: repo
            .commondir()
            .canonicalize()
            .unwrap_or_else(|_| repo.commondir().to_path_buf()),
    };
    let baseline = BaselineFacts {
        date: crate::clock::now_iso8601(),
        baseline_revision: baseline_revision(repo),
        protected_paths: workspace
            .protected()
            .keys()
            .map(ToString::to_string)
            .collect(),
        baseline_checks: settings
            .gate
            .checks
            .iter()
            .map(|c| format!("{}: {}", c.name, c.run))
            .collect(),
    };
    // Not given: the stored segment's value (on a resume or --continue), else the default.
    let earlier_theta = std::cell::RefCell::new(None::<String>);
    let resolve = |stored: Option<&SegmentConfig>| {
        *earlier_theta.borrow_mut() = stored.map(|s| s.theta.clone());
        SegmentConfig {
            theta: request
                .theta
                .map(|theta| theta.to_string())
                .or_else(|| stored.map(|s| s.theta.clone()))
                .unwrap_or_else(|| Theta::DEFAULT.to_string()),
            focus: request
                .focus
                .as_ref()
                .map(|lenses| lenses.iter().map(|l| l.as_str().to_string()).collect())
                .or_else(|| stored.map(|s| s.focus.clone()))
                .unwrap_or_else(|| Lens::ALL.iter().map(|l| l.as_str().to_string()).collect()),
            intent: if request.intent.is_empty() {
                stored.map(|s| s.intent.clone()).unwrap_or_default()
            } else {
                request.intent.clone()
            },
        }
    };
    // Released below, only where the family's candidate qualifies at the new theta.
    let release = |_: &state::Cooldown| false;
    let (mut campaign, opened) = Campaign::open_resolving(
        &settings.state_dir,
        provenance,
        request.resume,
        &baseline,
        &release,
        resolve,
    )?;
    if matches!(opened, Opened::Continued { .. }) {
        release_cooldowns(&mut campaign, earlier_theta.into_inner())?;
    }
    // What earlier runs of this campaign accepted is its own, not the user's work.
    let released = workspace.release_owned(&campaign.backlog.owned);
    if !released.is_empty() {
        tracing::info!(
            paths = released.len(),
            "the campaign's own earlier changes are not protected"
        );
    }
    if matches!(opened, Opened::Terminal) {
        let counters = &campaign.backlog.counters;
        let outcome = counters
            .outcome
            .as_deref()
            .and_then(Outcome::named)
            .unwrap_or(Outcome::Error);
        let _ = writeln!(
            console,
            "refine-loop: this {} campaign already ended with {}; run again with --continue to start its next segment",
            preset.as_str(),
            outcome.as_str()
        );
        return Ok(CampaignEnd {
            outcome,
            reason: counters.stop_reason.clone().unwrap_or_default(),
            report: None,
        });
    }
    let record_repository =
        git2::Repository::open(workspace.repository().path()).map_err(WorkspaceError::from)?;
    // While HEAD has not moved, this run's commits continue the campaign's earlier record.
    let head = workspace.base_commit();
    let base = match (&campaign.backlog.record_base, &campaign.backlog.record_tip) {
        (Some(base), Some(tip)) if *base == head.to_string() => git2::Oid::from_str(tip)
            .ok()
            .filter(|tip| record_repository.find_commit(*tip).is_ok())
            .unwrap_or(head),
        _ => head,
    };
    let mut recorder = Recorder::new(&record_repository, base, &crate::clock::new_run_id())?;
    let sweep = if settings.sweep {
        Some(sweep_segment(settings, &mut campaign, cancel)?)
    } else {
        None
    };
    let sweep_proposals = sweep
        .as_ref()
        .map(crate::sweep::candidates)
        .unwrap_or_default();
    // The cards this run writes to the worklog go into the report too.
    let worklog_start = std::fs::metadata(campaign.worklog_path()).map_or(0, |m| m.len());
    let engine = Engine::start(settings, workspace, options)?;
    let end = match preset {
        Preset::Refine => {
            let mut policy = refine::Refine::new(&mut campaign, sweep_proposals);
            engine.drive(&mut policy, &mut recorder, console)?
        }
        Preset::Improve | Preset::Refactoring => {
            let mut policy = improve::Improve::new(&mut campaign);
            engine.drive(&mut policy, &mut recorder, console)?
        }
    };
    let (outcome, reason) = (end.reason.outcome(), end.reason.as_str().to_string());
    if let Some(tip) = recorder.tip() {
        campaign.backlog.record_base = Some(head.to_string());
        campaign.backlog.record_tip = Some(tip.to_string());
        campaign.save()?;
    }
    let delivery = ledger::write_delivery(&recorder, settings, outcome.as_str(), &reason)?;
    let cards: Vec<String> = std::fs::read(campaign.worklog_path())
        .map(|bytes| {
            let start = usize::try_from(worklog_start).unwrap_or(0).min(bytes.len());
            String::from_utf8_lossy(&bytes[start..])
                .lines()
                .filter_map(|line| line.strip_prefix("- "))
                .filter(|line| line.starts_with('▸') || line.starts_with("refine-loop round"))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let mut report = end.report(settings, preset, delivery);
    report.campaign = Some(CampaignPart {
        intent: campaign.segment_config.intent.clone(),
        backlog: campaign.backlog.clone(),
        cards,
    });
    report.sweep = sweep;
    end.write_state_files(&report)?;
    crate::report::write_report_files(&report)?;
    campaign.append_worklog(&format!(
        "- {}: {} ({reason}); report in REFINE-LOOP-FINAL.md",
        crate::clock::now_iso8601(),
        outcome.as_str()
    ))?;
    Ok(CampaignEnd {
        outcome,
        reason,
        report: Some(Box::new(report)),
    })
}

/// Each change a round's (or cycle's) delegates made outside the scope (undone), in the worklog
/// as a card, so that the campaign report lists it.
pub(super) fn note_scope_violations(
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
pub(super) fn open_round(campaign: &mut Campaign) -> Result<CycleNumber, RunError> {
    campaign.backlog.counters.round_in_progress = true;
    campaign.save()?;
    let counters = &campaign.backlog.counters;
    Ok(CycleNumber {
        index: counters.lifetime_rounds + 1,
        shown: counters.round + 1,
    })
}

/// Writes a terminal outcome into the campaign.
pub(super) fn conclude(campaign: &mut Campaign, reason: StopReason) -> Result<(), RunError> {
    let counters = &mut campaign.backlog.counters;
    counters.outcome = Some(reason.outcome().as_str().into());
    counters.stop_reason = Some(reason.as_str().into());
    campaign.save()?;
    Ok(())
}

/// The open surface, swept once per segment (`sweep = true`): read from GitHub at the first run
/// of a segment and written to `sweep.json`; read back from there by a later run of the same
/// segment. A sweep that cannot read GitHub is recorded as skipped, with the reason: the sweep
/// informs the campaign, it does not gate it.
fn sweep_segment(
    settings: &Settings,
    campaign: &mut Campaign,
    cancel: &Cancel,
) -> Result<crate::sweep::Sweep, RunError> {
    let path = crate::state::Layout::new(&settings.state_dir).sweep();
    let segment = campaign.backlog.counters.segment;
    if campaign.backlog.swept_segment == Some(segment)
        && let Some(sweep) = std::fs::read(&path)
            .ok()
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

/// On a continuation with a new theta, a resting family whose last candidate now qualifies
/// (its ROI at or above the new theta) is released; each release is recorded.
fn release_cooldowns(campaign: &mut Campaign, earlier: Option<String>) -> Result<(), RunError> {
    let now = campaign.segment_config.theta.clone();
    let (Some(earlier), Ok(theta)) = (earlier, now.parse::<f64>()) else {
        return Ok(());
    };
    if earlier.parse::<f64>().ok() == Some(theta) {
        return Ok(());
    }
    let backlog = &mut campaign.backlog;
    let mut released = Vec::new();
    let mut families = Vec::new();
    let candidates = backlog.candidates.clone();
    let segment = backlog.counters.segment;
    backlog.cooldowns.retain(|cooldown| {
        let roi = candidates
            .iter()
            .rev()
            .find(|c| c.family == cooldown.family)
            .map(|c| c.roi);
        let qualifies = roi.is_some_and(|roi| roi >= theta);
        if qualifies {
            families.push(cooldown.family.clone());
            released.push(format!(
                "segment {segment}: {} released: theta {earlier} → {now}, its ROI {:.2} qualifies",
                cooldown.family,
                roi.unwrap_or_default()
            ));
        }
        !qualifies
    });
    backlog
        .family_failures
        .retain(|family, _| !families.contains(family));
    for release in released {
        campaign.backlog.releases.push(release.clone());
        campaign.append_worklog(&format!("- {release}"))?;
    }
    campaign.save()?;
    Ok(())
}

/// `main @ <sha>`, or `DETACHED <sha>`.
fn baseline_revision(repo: &git2::Repository) -> String {
    let Ok(head) = repo.head() else {
        return "unknown".into();
    };
    let id = head.target().map_or_else(String::new, |id| id.to_string());
    if repo.head_detached().unwrap_or(false) {
        format!("DETACHED {id}")
    } else {
        format!("{} @ {id}", head.shorthand().unwrap_or("HEAD"))
    }
}

/// Notes the paths the kept attempts changed, with the state they left: on a later run of the
/// campaign they are its own.
pub(super) fn remember_owned(campaign: &mut Campaign, attempts: &[Attempt]) {
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
