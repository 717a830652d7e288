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
mod summary;
mod transition;

use std::fs::File;
use std::path::{Path, PathBuf};

pub use backlog::{
    Backlog, BaselineFacts, Candidate, Cooldown, Counters, Handoff, Opened, Provenance,
    SegmentConfig,
};
pub use error::CampaignError;
#[cfg(test)]
pub use transition::CANCELLED;

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
}

impl Campaign {
    /// Opens the campaign in `state_dir` for `provenance` with this invocation's segment
    /// `config` (`continue_` is `--continue`): canonicalizes and locks the dir, validates what is
    /// in it, then creates, resumes or continues it. On a continuation with a changed theta,
    /// `release` decides which cooldowns are lifted. `provenance.state_dir` is replaced by the
    /// canonical dir and `provenance.format` by [`FORMAT`]. A refused dir is left as it was, but
    /// for its `.lock` file, which must exist before the dir can be inspected under the lock.
    #[cfg(test)]
    pub fn open(
        state_dir: &Path,
        provenance: Provenance,
        config: SegmentConfig,
        continue_: bool,
        baseline: &BaselineFacts,
        release: &dyn Fn(&Cooldown) -> bool,
    ) -> Result<(Campaign, Opened), CampaignError> {
        Self::open_resolving(state_dir, provenance, continue_, baseline, release, |_| {
            config
        })
    }

    /// [`Campaign::open`], with the segment configuration made by `resolve` from the stored one
    /// (`None` for a new campaign): for `--continue`, which inherits what it does not override.
    pub fn open_resolving(
        state_dir: &Path,
        mut provenance: Provenance,
        continue_: bool,
        baseline: &BaselineFacts,
        release: &dyn Fn(&Cooldown) -> bool,
        resolve: impl FnOnce(Option<&SegmentConfig>) -> SegmentConfig,
    ) -> Result<(Campaign, Opened), CampaignError> {
        let dir = files::prepare_dir(state_dir)?;
        let (lock, _) = files::lock(&dir)?;
        let mut present = Vec::new();
        let mut missing = Vec::new();
        for name in STATE_FILES {
            if files::exists(&dir.join(name))? {
                present.push(name);
            } else {
                missing.push(name);
            }
        }
        provenance.state_dir = dir.clone();
        provenance.format = FORMAT;
        if present.is_empty() {
            let config = resolve(None);
            return Self::create(dir, lock, provenance, config, baseline);
        }
        if !missing.is_empty() {
            return Err(CampaignError::PartialSet {
                dir,
                present: present.join(", "),
                missing: missing.join(", "),
            });
        }
        let backlog_path = dir.join(BACKLOG_FILE);
        let (stored, backlog) = render::parse_backlog(&files::read(&backlog_path)?, &backlog_path)?;
        check_provenance(&stored, &provenance, &backlog_path, &dir)?;
        let stored_config = backlog
            .config
            .clone()
            .ok_or_else(|| CampaignError::Corrupt {
                path: backlog_path.clone(),
                reason: "no segment configuration".to_owned(),
            })?;
        let config = resolve(Some(&stored_config));
        let mut campaign = Campaign {
            dir,
            provenance: stored,
            backlog,
            segment_config: stored_config,
            lock,
        };
        let opened = campaign.resume(config, continue_, baseline, release)?;
        Ok((campaign, opened))
    }

    fn create(
        dir: PathBuf,
        lock: File,
        provenance: Provenance,
        config: SegmentConfig,
        baseline: &BaselineFacts,
    ) -> Result<(Campaign, Opened), CampaignError> {
        let backlog = Backlog {
            counters: Counters {
                segment: 1,
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
        };
        let entry = render::open_entry("new campaign", &campaign.backlog, baseline, &[]);
        campaign.append_worklog(&entry)?;
        Ok((campaign, Opened::New))
    }

    /// Resumes or continues the stored campaign with this invocation's `config`.
    fn resume(
        &mut self,
        config: SegmentConfig,
        continue_: bool,
        baseline: &BaselineFacts,
        release: &dyn Fn(&Cooldown) -> bool,
    ) -> Result<Opened, CampaignError> {
        let outcome = self.backlog.counters.outcome.clone();
        let decision =
            transition::decide(outcome.as_deref(), continue_, config == self.segment_config);
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

    /// The canonical state dir.
    #[cfg(test)]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The provenance stored when the campaign started.
    #[cfg(test)]
    pub fn provenance(&self) -> &Provenance {
        &self.provenance
    }

    #[cfg(test)]
    pub fn goal_path(&self) -> PathBuf {
        self.dir.join(GOAL_FILE)
    }

    #[cfg(test)]
    pub fn backlog_path(&self) -> PathBuf {
        self.dir.join(BACKLOG_FILE)
    }

    pub fn worklog_path(&self) -> PathBuf {
        self.dir.join(WORKLOG_FILE)
    }
}

/// Refuses a stored provenance that differs from this run's in anything but the state dir (a
/// campaign's dir may be restored to another place).
fn check_provenance(
    stored: &Provenance,
    current: &Provenance,
    path: &Path,
    dir: &Path,
) -> Result<(), CampaignError> {
    let fields = [
        (
            "repository root",
            &stored.repository_root,
            &current.repository_root,
        ),
        (
            "git common dir",
            &stored.git_common_dir,
            &current.git_common_dir,
        ),
        ("target", &stored.target, &current.target),
    ];
    let mismatch = |field, stored: String, current: String| CampaignError::ProvenanceMismatch {
        path: path.to_path_buf(),
        dir: dir.to_path_buf(),
        field,
        stored,
        current,
    };
    for (field, stored, current) in fields {
        if stored != current {
            return Err(mismatch(
                field,
                stored.display().to_string(),
                current.display().to_string(),
            ));
        }
    }
    if stored.preset != current.preset {
        return Err(mismatch(
            "preset",
            stored.preset.clone(),
            current.preset.clone(),
        ));
    }
    Ok(())
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
#[path = "state_tests.rs"]
mod tests;
