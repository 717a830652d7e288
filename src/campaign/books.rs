//! A campaign's state dir: `REFINE-GOAL.md`, `REFINE-BACKLOG.md` and `REFINE-WORKLOG.md` under
//! an exclusive lock; created for a new campaign, validated and resumed, or continued into a new
//! segment.
//!
//! The backlog is the only authority for counters and candidates: its machine-readable block is
//! rewritten atomically by [`Campaign::save`]. The goal is appended to at each continuation and
//! the worklog at each open, never rewritten. Every file is a regular file in the dir, created
//! exclusively, owner-only, and never opened through a symbolic link.

mod backlog;
mod error;
mod files;
mod render;
mod set_aside;
mod stored;
mod transition;

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::campaign::identity::Confirmed;

pub use backlog::{
    Backlog, BaselineFacts, Candidate, Cooldown, Counters, Handoff, Opened, Provenance,
    SegmentConfig,
};
pub use error::CampaignError;
pub use set_aside::Restart;
#[cfg(test)]
pub use transition::CANCELLED;
pub use transition::{Continue, Limits};

/// The state format this build reads and writes.
pub const FORMAT: u32 = crate::state::format::CAMPAIGN;

pub use crate::state::{BACKLOG_FILE, GOAL_FILE, WORKLOG_FILE};
/// The lock file in the state dir; its exclusive lock is held while a run uses the dir.
pub const LOCK_FILE: &str = ".lock";

/// The state dir's lock, held by a run or a check that is not a campaign (a campaign takes it
/// when it opens its state), so that two of them never share a state dir; released when dropped.
#[derive(Debug)]
pub struct StateDirLock(#[expect(dead_code, reason = "held for its lock")] File);

/// Takes the lock of `state_dir`, prepared as a campaign prepares it (created if missing,
/// refused if it is a symbolic link or not a folder).
pub fn lock_state_dir(state_dir: &Path) -> Result<StateDirLock, CampaignError> {
    let dir = files::prepare_dir(state_dir)?;
    let (file, _) = files::lock(&dir)?;
    Ok(StateDirLock(file))
}

/// The three files of a campaign, in the order they are created.
const STATE_FILES: [&str; 3] = [GOAL_FILE, WORKLOG_FILE, BACKLOG_FILE];

/// An open campaign: its state dir locked until this is dropped.
#[derive(Debug)]
pub struct Campaign {
    dir: PathBuf,
    provenance: Provenance,
    pub backlog: Backlog,
    /// The current segment's configuration; [`Campaign::save`] stores it in the backlog.
    pub segment_config: SegmentConfig,
    /// Holds the exclusive lock; closing it releases the lock.
    #[expect(dead_code, reason = "held, never read: dropping it releases the lock")]
    lock: File,
    /// How the stored campaign was found to be this repository's (`None`: new, or by paths).
    confirmed: Option<Confirmed>,
    /// This run's: the budget across runs (`[campaign]`).
    pub limits: Limits,
    /// This run's: what opening found (the identity, a restored state set aside, where earlier
    /// work went), for the report.
    pub notes: Vec<String>,
    /// This run's: the earlier work (by number) to apply again first (`pending = "reapply"`).
    pub reapply: Vec<u32>,
    /// This run's: the earlier work it applied again and kept (carried in its record).
    pub reapplied: Vec<u32>,
}

/// How a run opens its campaign.
#[derive(Clone, Copy)]
pub struct OpenOptions<'a> {
    pub continue_: Continue,
    /// What this run found before it opened the campaign.
    pub baseline: &'a BaselineFacts,
    /// On a continuation with a changed theta: which cooldowns are lifted.
    pub release: &'a dyn Fn(&Cooldown) -> bool,
    /// The repository, to check a stored identity against (without it, the stored paths are).
    pub repo: Option<&'a git2::Repository>,
    pub limits: Limits,
}

impl Campaign {
    /// Opens the campaign in `state_dir` for `provenance`, with the segment configuration made by
    /// `resolve` from the stored one (`None` for a new campaign; `--continue` inherits what it
    /// does not override): canonicalizes and locks the dir, validates what is in it, then
    /// creates, resumes or continues it. On a continuation with a changed theta,
    /// `options.release` decides which cooldowns are lifted. `provenance.state_dir` is replaced by
    /// the canonical dir and `provenance.format` by [`FORMAT`]. A refused dir is left as it was,
    /// but for its `.lock` file, which must exist before the dir can be inspected under the lock.
    /// With `--continue=auto`, a corrupt or partial state (a cache may restore one) is set aside
    /// and a new segment starts instead of a refusal.
    pub fn open_resolving(
        state_dir: &Path,
        mut provenance: Provenance,
        options: &OpenOptions<'_>,
        resolve: impl FnOnce(Option<&SegmentConfig>) -> SegmentConfig,
    ) -> Result<(Campaign, Opened), CampaignError> {
        let dir = files::prepare_dir(state_dir)?;
        let (lock, _) = files::lock(&dir)?;
        provenance.state_dir = dir.clone();
        provenance.format = FORMAT;
        // Only a campaign that starts needs its repository's root commits (a walk of history).
        let with_roots = |mut provenance: Provenance| {
            if let (Some(identity), Some(repo)) = (provenance.identity.take(), options.repo) {
                provenance.identity = Some(identity.with_roots(repo));
            }
            provenance
        };
        let stored = match stored::read(&dir) {
            Ok(stored) => stored,
            Err(error) if options.continue_ == Continue::Auto && set_aside::applies(&error) => {
                let restart = set_aside::set_aside(&dir, &error)?;
                let config = resolve(None);
                let (mut campaign, _) = Self::create(
                    dir,
                    lock,
                    with_roots(provenance),
                    config,
                    options.baseline,
                    restart.segment,
                )?;
                campaign.limits = options.limits;
                campaign.append_worklog(&restart.entry())?;
                return Ok((campaign, Opened::Restarted(restart)));
            }
            Err(error) => return Err(error),
        };
        let Some((stored, backlog, stored_config)) = stored else {
            let config = resolve(None);
            let (mut campaign, opened) = Self::create(
                dir,
                lock,
                with_roots(provenance),
                config,
                options.baseline,
                1,
            )?;
            campaign.limits = options.limits;
            return Ok((campaign, opened));
        };
        let backlog_path = dir.join(BACKLOG_FILE);
        let confirmed =
            stored::check_provenance(&stored, &provenance, options.repo, &backlog_path, &dir)?;
        // Started in a shallow clone and matched by its remote: a full clone adds the root
        // commits, which then decide (a renamed remote no longer refuses it).
        let mut stored = stored;
        if confirmed == Some(Confirmed::ByRemote)
            && let (Some(identity), Some(repo)) = (stored.identity.take(), options.repo)
        {
            stored.identity = Some(identity.with_roots(repo));
        }
        let config = resolve(Some(&stored_config));
        let mut campaign = Campaign {
            dir,
            provenance: stored,
            backlog,
            segment_config: stored_config,
            lock,
            confirmed,
            limits: options.limits,
            notes: Vec::new(),
            reapply: Vec::new(),
            reapplied: Vec::new(),
        };
        let opened = campaign.resume(config, options)?;
        Ok((campaign, opened))
    }

    fn create(
        dir: PathBuf,
        lock: File,
        provenance: Provenance,
        config: SegmentConfig,
        baseline: &BaselineFacts,
        segment: u32,
    ) -> Result<(Campaign, Opened), CampaignError> {
        let backlog = Backlog {
            counters: Counters {
                segment,
                ..Counters::default()
            },
            config: Some(config.clone()),
            ..Backlog::default()
        };
        let backlog_path = dir.join(BACKLOG_FILE);
        let texts = [
            render::goal(&provenance, &config, baseline),
            render::worklog_header(&provenance, baseline),
            render::backlog(&provenance, &backlog, &backlog_path)?,
        ];
        let mut created: Vec<PathBuf> = Vec::new();
        for (name, text) in STATE_FILES.into_iter().zip(texts) {
            let path = dir.join(name);
            if let Err(error) = files::create_new(&path, &text) {
                // Leave no partial set behind: remove what this run created, only that.
                for path in created {
                    let _ = std::fs::remove_file(path);
                }
                return Err(error);
            }
            created.push(path);
        }
        let mut campaign = Campaign {
            dir,
            provenance,
            backlog,
            segment_config: config,
            lock,
            confirmed: None,
            limits: Limits::default(),
            notes: Vec::new(),
            reapply: Vec::new(),
            reapplied: Vec::new(),
        };
        let entry = render::open_entry("new campaign", &campaign.backlog, baseline, &[]);
        campaign.append_worklog(&entry)?;
        Ok((campaign, Opened::New))
    }

    /// Resumes or continues the stored campaign with this invocation's `config`.
    fn resume(
        &mut self,
        config: SegmentConfig,
        options: &OpenOptions<'_>,
    ) -> Result<Opened, CampaignError> {
        let OpenOptions {
            continue_,
            baseline,
            release,
            ..
        } = *options;
        let same_intent = config.intent == self.segment_config.intent;
        let unsettled = self.backlog.earlier.iter().any(|work| work.status.open());
        if let Some(why) = transition::finished(
            &self.backlog.counters,
            continue_,
            same_intent,
            unsettled,
            options.limits,
        ) {
            return Ok(Opened::Finished(why));
        }
        let outcome = self.backlog.counters.outcome.clone();
        let decision = transition::decide(
            outcome.as_deref(),
            continue_ != Continue::No,
            config == self.segment_config,
        );
        match decision {
            transition::Decision::Terminal => Ok(Opened::Terminal),
            transition::Decision::ConfigChanged => Err(CampaignError::ConfigChanged {
                dir: self.dir.clone(),
                segment: self.backlog.counters.segment,
                changes: config_changes(&self.segment_config, &config),
            }),
            transition::Decision::Resume => {
                let entry = render::open_entry("resumed", &self.backlog, baseline, &[]);
                self.append_worklog(&entry)?;
                Ok(Opened::Resumed)
            }
            transition::Decision::ResumeCancelled => {
                self.backlog.counters.outcome = None;
                self.backlog.counters.stop_reason = None;
                self.save()?;
                let entry = render::open_entry(
                    "resumed with --continue after CANCELLED",
                    &self.backlog,
                    baseline,
                    &[],
                );
                self.append_worklog(&entry)?;
                Ok(Opened::Resumed)
            }
            transition::Decision::NewSegment => {
                let released = transition::continue_segment(&mut self.backlog, &config, release);
                self.segment_config = config;
                self.save()?;
                let section = render::goal_segment(
                    self.backlog.counters.segment,
                    &self.segment_config,
                    &baseline.date,
                    &released,
                );
                files::append(&self.dir.join(GOAL_FILE), &section)?;
                let event = format!(
                    "continued after {}: segment {}",
                    outcome.as_deref().unwrap_or("an unfinished segment"),
                    self.backlog.counters.segment
                );
                let entry = render::open_entry(&event, &self.backlog, baseline, &released);
                self.append_worklog(&entry)?;
                Ok(Opened::Continued {
                    released: released.into_iter().map(|(family, _)| family).collect(),
                })
            }
        }
    }

    /// Rewrites the backlog atomically: the summary and the machine-readable block, with
    /// [`Campaign::segment_config`] as the segment's configuration.
    pub fn save(&mut self) -> Result<(), CampaignError> {
        self.backlog.config = Some(self.segment_config.clone());
        let path = self.dir.join(BACKLOG_FILE);
        let text = render::backlog(&self.provenance, &self.backlog, &path)?;
        files::replace(&path, &text)
    }

    /// Appends `entry` to the worklog (after a blank line); never truncates, and refuses a
    /// worklog that is not a regular file.
    pub fn append_worklog(&mut self, entry: &str) -> Result<(), CampaignError> {
        files::append(&self.dir.join(WORKLOG_FILE), &render::worklog_entry(entry))
    }

    /// How the stored campaign was found to be this repository's.
    pub fn confirmed(&self) -> Option<Confirmed> {
        self.confirmed
    }

    pub fn worklog_path(&self) -> PathBuf {
        self.dir.join(WORKLOG_FILE)
    }
}

/// What differs between two segment configurations, e.g. `theta 2.0 -> 1.5; intent`.
fn config_changes(stored: &SegmentConfig, current: &SegmentConfig) -> String {
    let mut changes = Vec::new();
    if stored.theta != current.theta {
        changes.push(format!("theta {} -> {}", stored.theta, current.theta));
    }
    if stored.focus != current.focus {
        changes.push(format!(
            "focus {} -> {}",
            stored.focus.join(","),
            current.focus.join(",")
        ));
    }
    if stored.intent != current.intent {
        changes.push("intent".to_owned());
    }
    changes.join("; ")
}

#[cfg(test)]
#[path = "books_tests.rs"]
mod tests;
