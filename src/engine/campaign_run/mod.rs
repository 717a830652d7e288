//! A campaign run, for the `refine` and `improve` presets: open (or create, or continue) the
//! campaign's state under its lock, run its rounds or cycles, leave the record (commits on the
//! private ref, patches, manifest) and the campaign report.

mod earlier;
pub mod improve;
mod open;
pub mod refine;
mod round;
mod sweep;

pub(in crate::engine) use earlier::{reapply_plan, settle_reapply};
pub(in crate::engine) use round::{conclude, note_scope_violations, open_round, remember_owned};

use open::Opening;

use super::{Engine, EngineOptions, RunError, delivery};
use crate::campaign::books::Campaign;
use crate::campaign::request::Request;
use crate::config::Settings;
use crate::deliver::Recorder;
use crate::model::{Outcome, Preset};
use crate::report::{CampaignPart, Report};
use crate::workspace::{Workspace, WorkspaceError};

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
    settings: &mut Settings,
    preset: Preset,
    request: &Request,
    options: EngineOptions<'_>,
) -> Result<CampaignEnd, RunError> {
    let (target, state_dir) = (settings.target.clone(), settings.state_dir.clone());
    super::in_workspace((&target, &state_dir, settings.run.watch), |workspace| {
        run_in(settings, preset, request, workspace, options)
    })
}

fn run_in(
    settings: &mut Settings,
    preset: Preset,
    request: &Request,
    workspace: &mut Workspace,
    mut options: EngineOptions<'_>,
) -> Result<CampaignEnd, RunError> {
    let cancel = options.cancel;
    super::protect_users_work(workspace, settings, cancel)?;
    let mut campaign = match open::open(settings, preset, request, workspace)? {
        Opening::Open(campaign) => campaign,
        Opening::Ended(campaign) => {
            return Ok(open::already_ended(&campaign, preset, options.observer));
        }
        Opening::Finished(mut campaign, why) => {
            return open::finished(&mut campaign, &why, options.observer);
        }
    };
    let patches = earlier::reapply_patches(&campaign, &settings.state_dir);
    if !patches.is_empty() {
        settings.delegates.push(reapply_delegate(patches));
    }
    let settings: &Settings = settings;
    let record_repository =
        git2::Repository::open(workspace.repository().path()).map_err(WorkspaceError::from)?;
    let head = workspace.base_commit();
    let base = record_base(&campaign, &record_repository, head);
    let mut recorder = Recorder::new(&record_repository, base, &crate::clock::new_run_id())?;
    let (sweep, sweep_proposals) = sweep::sweep_if_asked(settings, &mut campaign, cancel)?;
    let first_candidate = campaign.backlog.candidates.len();
    // The cards this run writes to the worklog go into the report too.
    let worklog_start = std::fs::metadata(campaign.worklog_path()).map_or(0, |m| m.len());
    options.earlier_work = (campaign.backlog.earlier.iter())
        .flat_map(|work| work.files.iter().cloned())
        .collect();
    let mut engine = Engine::start(settings, workspace, options)?;
    let counters = &campaign.backlog.counters;
    engine
        .ledger
        .carry(counters.segment_spent, counters.lifetime_spent);
    let end = match preset {
        Preset::Refine => {
            let mut policy = refine::Refine::new(&mut campaign, sweep_proposals);
            engine.drive(&mut policy, &mut recorder)?
        }
        Preset::Improve | Preset::Refactoring => {
            let mut policy = improve::Improve::new(&mut campaign, settings.run.improve_max_cycles);
            engine.drive(&mut policy, &mut recorder)?
        }
    };
    let (outcome, reason) = (end.reason.outcome(), end.reason.as_str().to_string());
    let delivery = keep_record(
        &mut campaign,
        &recorder,
        settings,
        head,
        first_candidate,
        (outcome, &reason),
    )?;
    let report = end.conclude(settings, preset, delivery, workspace, |report| {
        report.campaign = Some(CampaignPart {
            intent: campaign.segment_config.intent.clone(),
            backlog: campaign.backlog.clone(),
            cards: cards_since(&campaign, worklog_start),
            notes: campaign.notes.clone(),
            first_candidate,
            scheduled: request.auto,
        });
        report.sweep = sweep;
    })?;
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

/// Keeps this run's record: where a later run's commits go on while HEAD stays, the patches and
/// manifest, and the accepted work (unless its patches were refused) for later runs to judge.
fn keep_record(
    campaign: &mut Campaign,
    recorder: &Recorder<'_>,
    settings: &Settings,
    head: git2::Oid,
    first_candidate: usize,
    (outcome, reason): (Outcome, &str),
) -> Result<crate::deliver::DeliveryNote, RunError> {
    if let Some(tip) = recorder.tip() {
        campaign.backlog.record_base = Some(head.to_string());
        campaign.backlog.record_tip = Some(tip.to_string());
        campaign.save()?;
    }
    let delivery = delivery::write_delivery(recorder, settings, outcome.as_str(), reason)?;
    if delivery.refused.is_none() {
        let families = accepted_families(campaign, first_candidate);
        earlier::remember(campaign, recorder, &settings.state_dir, head, families)?;
    }
    Ok(delivery)
}

/// The delegate that applies the campaign's pending earlier work again, first.
fn reapply_delegate(patches: Vec<std::path::PathBuf>) -> crate::delegate::DelegateSpec {
    crate::delegate::DelegateSpec {
        categories: Vec::new(),
        role: crate::delegate::Role::Reapply,
        lens: None,
        launch: crate::delegate::Launch::Reapply(patches),
        template: crate::delegate::DEFAULT_TEMPLATE.to_owned(),
        prompt_on_stdin: false,
        timeout: std::time::Duration::from_secs(600),
        idle_timeout: None,
        env: Vec::new(),
        on_paths: None,
        whole_tree: false,
        // It applies patches: it spends nothing.
        usage: Some(crate::delegate::UsageReader::None),
        cap: crate::spending::Cap::default(),
    }
}

/// Keeps what the delegates spent in the campaign's books: in this segment and over its life.
pub(in crate::engine) fn book_spending(
    campaign: &mut Campaign,
    segment: crate::model::Spend,
    lifetime: crate::model::Spend,
) -> Result<(), RunError> {
    let counters = &mut campaign.backlog.counters;
    if counters.segment_spent != segment || counters.lifetime_spent != lifetime {
        counters.segment_spent = segment;
        counters.lifetime_spent = lifetime;
        campaign.save()?;
    }
    Ok(())
}

/// The families of the candidates this run accepted (from index `first` on).
fn accepted_families(campaign: &Campaign, first: usize) -> Vec<String> {
    campaign.backlog.candidates[first.min(campaign.backlog.candidates.len())..]
        .iter()
        .filter(|candidate| candidate.status == "accepted")
        .flat_map(|candidate| candidate.family.split(", ").map(str::to_owned))
        .collect()
}

/// Where this run's commits go on: while HEAD has not moved and this checkout's work tree holds
/// the campaign's last record, after that record; else on HEAD (a fresh clone, or the earlier
/// work is not here).
fn record_base(campaign: &Campaign, repository: &git2::Repository, head: git2::Oid) -> git2::Oid {
    let holds_last = campaign
        .backlog
        .earlier
        .last()
        .is_none_or(|work| work.status == crate::campaign::history::Status::InWorkTree);
    match (&campaign.backlog.record_base, &campaign.backlog.record_tip) {
        (Some(base), Some(tip)) if *base == head.to_string() && holds_last => {
            git2::Oid::from_str(tip)
                .ok()
                .filter(|tip| repository.find_commit(*tip).is_ok())
                .unwrap_or(head)
        }
        _ => head,
    }
}

/// The cards this run wrote to the worklog (from byte `start` on), for the report.
fn cards_since(campaign: &Campaign, start: u64) -> Vec<String> {
    crate::state::read_own(&campaign.worklog_path(), crate::state::OWN_FILE_LIMIT)
        .ok()
        .flatten()
        .map(|bytes| {
            let start = usize::try_from(start).unwrap_or(0).min(bytes.len());
            String::from_utf8_lossy(&bytes[start..])
                .lines()
                .filter_map(|line| line.strip_prefix("- "))
                .filter(|line| line.starts_with('▸') || line.starts_with("refine-loop round"))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}
