//! A campaign's earlier accepted work across runs: judged against HEAD when the campaign opens
//! (landed, in the work tree, pending, stale), its families held or its patches queued to be
//! applied again, and this run's own work remembered when it ends.

use std::path::Path;

use super::super::RunError;
use crate::campaign::books::Campaign;
use crate::campaign::history::{self, EarlierWork, PendingMode, Status, WorkFile};
use crate::config::Settings;
use crate::deliver::Recorder;

/// The family of the work item that applies earlier work again.
pub const REAPPLY: &str = "reapply";

/// Judges the earlier work that is still open against `repo`'s HEAD and says so in the worklog
/// and the report. Pending work's families are held (`skip`) or its patches queued to be applied
/// again first (`reapply`); stale work's families may be worked again.
pub(super) fn review(
    campaign: &mut Campaign,
    settings: &Settings,
    repo: &git2::Repository,
) -> Result<(), RunError> {
    let judged = history::judge_all(&mut campaign.backlog.earlier, repo, &settings.state_dir);
    let mut held = Vec::new();
    let mut stale = Vec::new();
    let mut lines = Vec::new();
    for index in judged {
        let work = &campaign.backlog.earlier[index];
        match (work.status, settings.campaign.pending) {
            (Status::Pending, PendingMode::Skip) => held.extend(work.families.iter().cloned()),
            (Status::Pending, PendingMode::Reapply) => campaign.reapply.push(work.number),
            (Status::Stale, _) => stale.extend(work.families.iter().cloned()),
            _ => {}
        }
        lines.push(format!("earlier work, {}", work.line()));
    }
    held.sort();
    held.dedup();
    if !held.is_empty() {
        lines.push(format!(
            "left alone while their earlier work is pending (pending = \"skip\"): {}",
            held.join(", ")
        ));
    }
    if !campaign.reapply.is_empty() {
        lines.push(
            "the pending work is applied again first, verified by the gate (pending = \"reapply\")"
                .to_owned(),
        );
    }
    campaign.backlog.held = held;
    let backlog = &mut campaign.backlog;
    backlog.cooldowns.retain(|c| !stale.contains(&c.family));
    backlog
        .family_failures
        .retain(|family, _| !stale.contains(family));
    for line in &lines {
        campaign.append_worklog(&format!("- {line}"))?;
    }
    campaign.notes.extend(lines);
    campaign.save()?;
    Ok(())
}

/// The patches of the work queued to be applied again, in order.
pub(super) fn reapply_patches(campaign: &Campaign, state_dir: &Path) -> Vec<std::path::PathBuf> {
    campaign
        .backlog
        .earlier
        .iter()
        .filter(|work| campaign.reapply.contains(&work.number))
        .map(|work| work.patch_path(state_dir))
        .collect()
}

/// The first cycle of a run with earlier work queued: that work, applied again.
pub(in crate::engine) fn reapply_plan() -> crate::engine::policy::Plan {
    use crate::engine::policy::{Plan, Staff, Verification, Work};
    Plan::Work {
        items: vec![Work {
            category: REAPPLY.to_owned(),
            file_name: REAPPLY.to_owned(),
            staff: Staff::Role(crate::delegate::Role::Reapply),
            diagnostics: Vec::new(),
            details: vec!["the campaign's pending earlier work, applied again".to_owned()],
            files: Vec::new(),
            template: None,
        }],
        verification: Verification::Together,
    }
}

/// Settles the queued earlier work after the cycle whose `attempts` applied it again.
pub(in crate::engine) fn settle_reapply(
    campaign: &mut Campaign,
    attempts: &[crate::engine::Attempt],
) {
    if campaign.reapply.is_empty() {
        return;
    }
    let attempt = attempts.iter().find(|a| a.category == REAPPLY);
    let kept = attempt.is_some_and(|a| a.kept);
    let applied = attempt.is_some_and(|a| !a.changes.is_empty());
    reapplied(campaign, kept, applied);
}

/// After the run's first cycle applied the queued work again. Kept, it is carried in this
/// run's record, and becomes `reapplied` only when that record is written ([`remember`]): a run
/// that dies before leaves it pending, to be judged again. Not kept (the gate rolled it back,
/// or it did not apply after the other pending work), it stays pending and its families are
/// held.
fn reapplied(campaign: &mut Campaign, kept: bool, applied: bool) {
    let queued = std::mem::take(&mut campaign.reapply);
    let mut held = Vec::new();
    for work in &mut campaign.backlog.earlier {
        if !queued.contains(&work.number) {
            continue;
        }
        let what = match (kept, applied) {
            (true, _) => "applied again, and the gate kept it: this run's record carries it",
            (false, true) => "applied again, and the gate rolled it back: left alone",
            (false, false) => "it did not apply after the other pending work: left alone",
        };
        if !kept {
            held.extend(work.families.iter().cloned());
            work.note = what.to_owned();
        }
        campaign.notes.push(format!(
            "earlier work, segment {} (run {}): {what}",
            work.segment, work.run_id
        ));
    }
    if kept {
        campaign.reapplied = queued;
    }
    campaign.backlog.held.extend(held);
}

/// Remembers what this run accepted since `head` (its cumulative patch and the
/// files' digests) for the campaign's later runs; `families` are the families it worked in.
/// When the run built on the earlier record this checkout holds (its recorder's base is not
/// HEAD), that record's work is carried in this one, which starts at HEAD.
pub(super) fn remember(
    campaign: &mut Campaign,
    recorder: &Recorder<'_>,
    state_dir: &Path,
    head: git2::Oid,
    mut families: Vec<String>,
) -> Result<(), RunError> {
    if recorder.tip().is_none() {
        return Ok(());
    }
    let forward = recorder.patch_since(head)?;
    if forward.contents.is_empty() {
        return Ok(());
    }
    let segment = campaign.backlog.counters.segment;
    families.extend(carry(campaign, recorder.base() != head));
    families.retain(|family| family != REAPPLY);
    families.sort();
    families.dedup();
    let work = EarlierWork {
        number: campaign
            .backlog
            .earlier
            .iter()
            .map(|w| w.number)
            .max()
            .unwrap_or(0)
            + 1,
        segment,
        run_id: recorder
            .reference()
            .trim_start_matches(crate::deliver::REF_PREFIX)
            .to_owned(),
        base_commit: head.to_string(),
        commits: recorder.iterations().len(),
        families,
        files: recorder
            .files_since(head)?
            .into_iter()
            .map(|file| WorkFile {
                path: file.path,
                before: file.before.and_then(|v| v.sha256),
                after: file.after.and_then(|v| v.sha256),
            })
            .collect(),
        status: Status::Recorded,
        note: "recorded by its run".to_owned(),
    };
    history_dir(state_dir)?;
    crate::state::write_redacted(&work.patch_path(state_dir), &forward.contents)?;
    campaign.backlog.earlier.push(work);
    campaign.save()?;
    Ok(())
}

/// Settles the earlier work this run's record carries: applied again and kept, or (`chained`)
/// built on in this checkout. Returns their families.
fn carry(campaign: &mut Campaign, chained: bool) -> Vec<String> {
    let segment = campaign.backlog.counters.segment;
    let mut families = Vec::new();
    for work in &mut campaign.backlog.earlier {
        let carried = campaign.reapplied.contains(&work.number)
            || (chained && work.status == Status::InWorkTree);
        if !carried {
            continue;
        }
        families.extend(work.families.iter().cloned());
        (work.status, work.note) = if work.status == Status::InWorkTree {
            (
                Status::Superseded,
                format!(
                    "a later run of segment {segment} built on it in this checkout; in that run's record"
                ),
            )
        } else {
            (
                Status::Reapplied,
                format!(
                    "applied again in segment {segment}, verified by the gate; in that run's record"
                ),
            )
        };
    }
    families
}

/// The state dir's `history/`, created when missing; a link or a file there is refused.
fn history_dir(state_dir: &Path) -> Result<(), crate::state::StateError> {
    let dir = state_dir.join(history::HISTORY_DIR);
    let refuse = |source| crate::state::StateError {
        path: dir.clone(),
        source,
    };
    match std::fs::symlink_metadata(&dir) {
        Ok(metadata) if !metadata.is_dir() => Err(refuse(std::io::Error::other(
            "not a folder (a symbolic link?): refusing to write the run's history through it",
        ))),
        Ok(_) => Ok(()),
        Err(_) => std::fs::create_dir(&dir).map_err(refuse),
    }
}
