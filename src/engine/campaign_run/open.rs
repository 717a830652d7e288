//! Opening a campaign for a run: its provenance and the baseline's facts, the segment's
//! configuration (what the request gives, else what is stored), the cooldowns a new theta
//! releases, the paths its earlier changes own.

use super::CampaignEnd;
use crate::campaign::books::{
    self, BaselineFacts, Campaign, Continue, Limits, OpenOptions, Opened, Provenance, SegmentConfig,
};
use crate::campaign::identity::{Confirmed, Identity};
use crate::campaign::request::{Lens, Request, Theta};
use crate::config::Settings;
use crate::engine::{Event, Observer, RunError};
use crate::model::{Outcome, Preset};
use crate::workspace::Workspace;

/// A campaign opened under its lock.
#[derive(Debug)]
pub(super) enum Opening {
    /// Ready for this run's rounds.
    Open(Campaign),
    /// Its segment already ended, and the request does not continue it.
    Ended(Campaign),
    /// A continuation found it finished (why): nothing runs.
    Finished(Campaign, String),
}

/// Opens (creates, resumes or continues) the campaign in the state dir. The user's work must
/// already be recorded in `workspace`.
pub(super) fn open(
    settings: &Settings,
    preset: Preset,
    request: &Request,
    workspace: &mut Workspace,
) -> Result<Opening, RunError> {
    let (provenance, baseline) = facts(settings, preset, workspace);
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
    let release = |_: &books::Cooldown| false;
    let options = OpenOptions {
        continue_: match (request.auto, request.resume) {
            (true, _) => Continue::Auto,
            (false, true) => Continue::Yes,
            (false, false) => Continue::No,
        },
        baseline: &baseline,
        release: &release,
        repo: Some(workspace.repository()),
        limits: Limits {
            max_segments: settings.campaign.max_segments,
            max_lifetime_rounds: settings.campaign.max_lifetime_rounds,
            lifetime_cap: settings.campaign.lifetime_cap,
        },
    };
    let (mut campaign, opened) =
        Campaign::open_resolving(&settings.state_dir, provenance, &options, resolve)?;
    match opened {
        Opened::Terminal => return Ok(Opening::Ended(campaign)),
        Opened::Finished(why) => return Ok(Opening::Finished(campaign, why)),
        Opened::Continued { .. } => release_cooldowns(&mut campaign, earlier_theta.into_inner())?,
        Opened::Restarted(restart) => {
            let entry = restart.entry();
            campaign
                .notes
                .push(entry.trim_start_matches("- ").to_owned());
        }
        Opened::New | Opened::Resumed => {}
    }
    match campaign.confirmed() {
        Some(Confirmed::ByRemote) => campaign.notes.push(
            "matched by its remote: a shallow clone (this one, or the one it started in) has no root commit to compare".to_owned(),
        ),
        Some(Confirmed::Unconfirmed) => campaign.notes.push(
            "neither a root commit nor a remote could confirm that the campaign is this repository's (a shallow clone without a remote): taken as this one".to_owned(),
        ),
        Some(Confirmed::ByRootCommit) | None => {}
    }
    super::earlier::review(&mut campaign, settings, workspace.repository())?;
    // What earlier runs of this campaign accepted is its own, not the user's work.
    let released = workspace.release_owned(&campaign.backlog.owned);
    if !released.is_empty() {
        tracing::info!(
            paths = released.len(),
            "the campaign's own earlier changes are not protected"
        );
    }
    Ok(Opening::Open(campaign))
}

/// Where the campaign comes from, and what the baseline found before it opened.
fn facts(
    settings: &Settings,
    preset: Preset,
    workspace: &Workspace,
) -> (Provenance, BaselineFacts) {
    let repo = workspace.repository();
    let provenance = Provenance {
        format: books::FORMAT,
        preset: preset.as_str().to_string(),
        target: settings.target.clone(),
        state_dir: settings.state_dir.clone(),
        repository_root: workspace.root().to_path_buf(),
        identity: Some(Identity::of(repo, workspace.root(), &settings.target)),
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
    (provenance, baseline)
}

/// A finished campaign that a continuation found: nothing runs, and it is no failure.
pub(super) fn finished(
    campaign: &mut Campaign,
    why: &str,
    observer: &mut dyn Observer,
) -> Result<CampaignEnd, RunError> {
    let reason = format!("campaign finished: {why}");
    observer.observe(Event::Note(&format!(
        "refine-loop: {reason}; change the intent (or the [campaign] budget) to go on"
    )));
    campaign.append_worklog(&format!(
        "- {}: {reason}; nothing ran",
        crate::clock::now_iso8601()
    ))?;
    Ok(CampaignEnd {
        outcome: Outcome::Success,
        reason,
        report: None,
    })
}

/// An ended campaign without `--continue`: nothing runs, and the console says how to go on.
pub(super) fn already_ended(
    campaign: &Campaign,
    preset: Preset,
    observer: &mut dyn Observer,
) -> CampaignEnd {
    let counters = &campaign.backlog.counters;
    let outcome = counters
        .outcome
        .as_deref()
        .and_then(Outcome::named)
        .unwrap_or(Outcome::Error);
    observer.observe(Event::Note(&format!(
        "refine-loop: this {} campaign already ended with {}; run again with --continue to start its next segment",
        preset.as_str(),
        outcome.as_str()
    )));
    CampaignEnd {
        outcome,
        reason: counters.stop_reason.clone().unwrap_or_default(),
        report: None,
    }
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
