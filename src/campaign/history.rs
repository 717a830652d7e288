//! Where a campaign's earlier accepted work went. Each run that accepted changes leaves its
//! cumulative patch in the state dir's `history/`, and the files' sha256
//! before and after in the backlog. On every later run, each such record is judged against
//! HEAD by content, never by commit ids (a fresh clone holds none of the run's commits):
//!
//! - **landed**: HEAD holds its files as it left them, or its hunks as they left them, at any
//!   offset (merged, rebased or squashed, with later edits around it);
//! - **in the work tree**: not in HEAD, but the work tree holds it (the same checkout, later);
//! - **pending**: not in HEAD, and its hunks' before side is there (it still applies);
//! - **stale**: none of these.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::Digest;

use super::hunks::{self, Change, FilePatch, Side};

/// The state dir's folder of earlier runs' patches.
pub const HISTORY_DIR: &str = "history";

/// What a campaign does with pending earlier work (`[campaign] pending`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum PendingMode {
    /// Leave its families alone: a nightly job does not open a second pull request for a fix.
    #[default]
    Skip,
    /// Apply its patch first, verified by the gate like any delegate's change, and build on it.
    Reapply,
}

/// How an earlier run's work stands against HEAD.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Recorded by its run, not judged yet.
    Recorded,
    Pending,
    InWorkTree,
    Landed,
    Stale,
    /// Applied again by a later run and carried in that run's record.
    Reapplied,
    /// A later run in the same checkout built on it: carried in that run's record.
    Superseded,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Recorded => "recorded",
            Self::Pending => "pending",
            Self::InWorkTree => "in the work tree",
            Self::Landed => "landed",
            Self::Stale => "stale",
            Self::Reapplied => "reapplied",
            Self::Superseded => "superseded",
        }
    }

    /// Judged again on each run; landed, stale and reapplied work is settled.
    pub fn open(self) -> bool {
        matches!(self, Self::Recorded | Self::Pending | Self::InWorkTree)
    }
}

/// One earlier run's accepted work.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EarlierWork {
    /// Its patch is `history/NNNN.patch`.
    pub number: u32,
    pub segment: u32,
    pub run_id: String,
    /// HEAD when it ran (informational: a fresh clone may not hold it).
    pub base_commit: String,
    pub commits: usize,
    /// The families (categories, candidate families) it accepted work in.
    pub families: Vec<String>,
    pub files: Vec<WorkFile>,
    pub status: Status,
    /// Why it has its status, from the last judgement.
    pub note: String,
}

/// A path the work changed, with the sha256 of its content before and after (`None`: absent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkFile {
    pub path: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

impl EarlierWork {
    pub fn patch_path(&self, state_dir: &Path) -> PathBuf {
        state_dir
            .join(HISTORY_DIR)
            .join(format!("{:04}.patch", self.number))
    }

    /// One line for the worklog and the report.
    pub fn line(&self) -> String {
        format!(
            "segment {} (run {}, {} commit(s), {} file(s){}): {}: {}",
            self.segment,
            self.run_id,
            self.commits,
            self.files.len(),
            if self.families.is_empty() {
                String::new()
            } else {
                format!("; {}", self.families.join(", "))
            },
            self.status.as_str(),
            self.note
        )
    }
}

/// Judges every open record of `earlier` against `repo`'s HEAD and work tree; returns the
/// records it judged, by index.
pub fn judge_all(
    earlier: &mut [EarlierWork],
    repo: &git2::Repository,
    state_dir: &Path,
) -> Vec<usize> {
    let mut judged = Vec::new();
    for (index, work) in earlier.iter_mut().enumerate() {
        if !work.status.open() {
            continue;
        }
        let (status, note) = judge(work, repo, state_dir);
        work.status = status;
        work.note = note;
        judged.push(index);
    }
    judged
}

/// The status of `work` against HEAD, and why: its files as it left them (by digest), or its
/// hunks found in HEAD's files at any offset, as `git apply` finds them.
pub fn judge(work: &EarlierWork, repo: &git2::Repository, state_dir: &Path) -> (Status, String) {
    let stale = |why: &str| (Status::Stale, why.to_owned());
    // A restored state is data: a history/ that is a link, or a path that leaves the
    // repository, is not followed.
    let history = std::fs::symlink_metadata(state_dir.join(HISTORY_DIR));
    if !history.is_ok_and(|metadata| metadata.is_dir()) {
        return stale("the state dir's history/ is not a folder");
    }
    if !work.files.iter().all(|file| inside(Path::new(&file.path))) {
        return stale("its record names a path outside the repository");
    }
    let Some(patch) =
        crate::state::read_own(&work.patch_path(state_dir), crate::state::OWN_FILE_LIMIT)
            .ok()
            .flatten()
    else {
        return stale("its patch is missing from the state dir's history/");
    };
    let Some(files) = hunks::parse(&patch).filter(|files| !files.is_empty()) else {
        return stale("its patch in history/ does not parse");
    };
    if !files.iter().all(|file| inside(file.path())) {
        return stale("its patch names a path outside the repository");
    }
    let Ok(head) = repo.head().and_then(|head| head.peel_to_tree()) else {
        return stale("HEAD has no tree to compare with");
    };
    let in_head = |file: &FilePatch| blob_bytes(repo, &head, file.path());
    if holds_after(work, |path| {
        blob_bytes(repo, &head, Path::new(path)).map(|b| digest(&b))
    }) {
        return (
            Status::Landed,
            "HEAD holds its files as it left them".to_owned(),
        );
    }
    if files
        .iter()
        .all(|file| holds(file, work, in_head(file).as_deref(), Side::After))
    {
        return (
            Status::Landed,
            "HEAD holds its changes, with later edits around them".to_owned(),
        );
    }
    if let Some(root) = repo.workdir()
        && holds_after(work, |path| file_digest(&root.join(path)))
    {
        return (
            Status::InWorkTree,
            "not in HEAD; the work tree holds it, uncommitted".to_owned(),
        );
    }
    if files
        .iter()
        .all(|file| holds(file, work, in_head(file).as_deref(), Side::Before))
    {
        return (
            Status::Pending,
            "not in HEAD, and it still applies".to_owned(),
        );
    }
    stale("not in HEAD, and it no longer applies")
}

/// Whether `content` (`None`: absent) holds `side` of `file`: the digest `work` recorded for
/// that side, or every hunk's side found in order (a text file).
fn holds(file: &FilePatch, work: &EarlierWork, content: Option<&[u8]>, side: Side) -> bool {
    let absent_then = match side {
        Side::After => Change::Deleted,
        Side::Before => Change::Added,
    };
    let recorded = |f: &WorkFile| match side {
        Side::After => f.after.clone(),
        Side::Before => f.before.clone(),
    };
    if file.change == absent_then {
        return content.is_none();
    }
    let Some(content) = content else {
        return false;
    };
    let path = file.path_text();
    let wanted = work
        .files
        .iter()
        .find(|f| f.path == path)
        .and_then(recorded);
    wanted.is_some_and(|wanted| digest(content) == wanted)
        || (!file.binary && file.locate(content, side).is_some())
}

/// Whether every file of `work` has its after-content by `digest` (`None`: absent).
fn holds_after(work: &EarlierWork, digest: impl Fn(&str) -> Option<String>) -> bool {
    !work.files.is_empty()
        && work
            .files
            .iter()
            .all(|file| digest(&file.path) == file.after)
}

pub(crate) fn blob_bytes(
    repo: &git2::Repository,
    tree: &git2::Tree<'_>,
    path: &Path,
) -> Option<Vec<u8>> {
    let entry = tree.get_path(path).ok()?;
    let blob = repo.find_blob(entry.id()).ok()?;
    Some(blob.content().to_vec())
}

/// A relative path that stays below the folder it is joined to.
pub(crate) fn inside(path: &Path) -> bool {
    use std::path::Component;
    path.components().next().is_some()
        && path
            .components()
            .all(|part| matches!(part, Component::Normal(_)))
}

pub(crate) fn file_digest(path: &Path) -> Option<String> {
    let metadata = std::fs::symlink_metadata(path).ok()?;
    if metadata.file_type().is_symlink() {
        let target = std::fs::read_link(path).ok()?;
        return Some(digest(target.as_os_str().as_encoded_bytes()));
    }
    crate::files::read_regular(path, crate::state::OWN_FILE_LIMIT)
        .ok()
        .flatten()
        .map(|bytes| digest(&bytes))
}

pub fn digest(bytes: &[u8]) -> String {
    let mut hasher = sha2::Sha256::new();
    hasher.update(bytes);
    crate::encoding::hex_digest(hasher)
}

#[cfg(test)]
#[path = "history_tests.rs"]
mod tests;
