//! What changed in the tree: a snapshot of the paths that differ from the index, one path's
//! change, several delegates' changes as one, and what a delegate did.

use std::collections::BTreeMap;

use super::{Incident, PathState, RepoPath};

/// The state of every path that differs from the index (dirty or untracked), at one moment.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub paths: BTreeMap<RepoPath, PathState>,
    /// Where the tree watch's log stood when the paths were listed (`None`: no watch, or the
    /// snapshot was not listed from the tree): what changed since is logged after it.
    pub mark: Option<u64>,
}

impl Snapshot {
    /// The snapshot after `changes` (what the next delegate starts from), without asking git.
    pub fn advanced(&self, changes: &[Change]) -> Self {
        let mut paths = self.paths.clone();
        for change in changes {
            paths.insert(change.path.clone(), change.after.clone());
        }
        // Paths changed since the mark include the changes: they stay candidates.
        Self {
            paths,
            mark: self.mark,
        }
    }
}

/// The changes of several delegates in a row as one: each path from its first state to its
/// last, leaving out paths that came back to where they were.
pub fn compose(steps: &[&[Change]]) -> Vec<Change> {
    let mut merged: BTreeMap<RepoPath, Change> = BTreeMap::new();
    for change in steps.iter().flat_map(|step| step.iter()) {
        merged
            .entry(change.path.clone())
            .and_modify(|existing| existing.after = change.after.clone())
            .or_insert_with(|| change.clone());
    }
    merged
        .into_values()
        .filter(|change| change.before != change.after)
        .collect()
}

/// One path a delegate changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub path: RepoPath,
    pub before: PathState,
    pub after: PathState,
}

/// What a delegate did, as the loop found it.
#[derive(Debug, Default)]
pub struct Effects {
    /// Its changes to paths the loop may keep or roll back.
    pub changes: Vec<Change>,
    /// What it did that it must not: already undone where the loop could.
    pub incidents: Vec<Incident>,
}

impl Effects {
    /// Whether the delegate acted against the repository (its whole change is undone and it is
    /// not run again).
    pub fn hostile(&self) -> bool {
        self.incidents.iter().any(Incident::is_hostile)
    }
}
