//! The repository as the loop sees it: which paths a delegate changed (computed from git and the
//! files on disk, not from the delegate's word), what they held before, and an exact rollback.
//! Nothing here runs `git stash`, `reset` or `checkout`: files are read and written one by one.

mod path_state;
mod scan;
mod store;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub use path_state::PathState;
pub use scan::Scanner;
pub use store::SnapshotStore;

#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error("{}: not inside a git repository: {source}", path.display())]
    NotARepository {
        path: PathBuf,
        #[source]
        source: git2::Error,
    },
    #[error("git: {0}")]
    Git(#[from] git2::Error),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{path}: changed by someone else while the loop was working (expected {expected}, found {found}); both versions are kept"
    )]
    ConcurrentChange {
        path: String,
        expected: String,
        found: String,
    },
}

/// A git working tree, with the folder the loop writes its own files to left out.
pub struct Workspace {
    repo: git2::Repository,
    scanner: Scanner,
    root: PathBuf,
    /// The state dir relative to the root (`/`-separated), when it is inside the tree.
    excluded: Option<String>,
}

/// The state of every path that differs from the index (dirty or untracked), at one moment.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub paths: BTreeMap<String, PathState>,
}

impl Snapshot {
    /// The snapshot after `changes` (what the next delegate starts from), without asking git.
    pub fn advanced(&self, changes: &[Change]) -> Self {
        let mut paths = self.paths.clone();
        for change in changes {
            paths.insert(change.path.clone(), change.after.clone());
        }
        Self { paths }
    }
}

/// The changes of several delegates in a row as one: each path from its first state to its
/// last, leaving out paths that came back to where they were.
pub fn compose(steps: &[&[Change]]) -> Vec<Change> {
    let mut merged: BTreeMap<String, Change> = BTreeMap::new();
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
    pub path: String,
    pub before: PathState,
    pub after: PathState,
}

impl std::fmt::Debug for Workspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workspace")
            .field("root", &self.root)
            .field("excluded", &self.excluded)
            .finish()
    }
}

impl Workspace {
    /// Opens the repository that holds `target`; `state_dir` is left out of every listing.
    pub fn open(target: &Path, state_dir: &Path) -> Result<Self, WorkspaceError> {
        let repo = git2::Repository::discover(target).map_err(|source| {
            WorkspaceError::NotARepository {
                path: target.to_path_buf(),
                source,
            }
        })?;
        let root = repo
            .workdir()
            .ok_or_else(|| git2::Error::from_str("the repository has no working tree"))?
            .canonicalize()
            .map_err(|source| WorkspaceError::Io {
                path: target.to_path_buf(),
                source,
            })?;
        let excluded = std::path::absolute(state_dir)
            .ok()
            .and_then(|dir| dir.strip_prefix(&root).ok().map(Path::to_path_buf))
            .map(|relative| relative.to_string_lossy().replace('\\', "/"))
            .filter(|relative| !relative.is_empty());
        let scanner = Scanner::new(&repo, &root)?;
        Ok(Self {
            repo,
            scanner,
            root,
            excluded,
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Paths that differ from the index (modified, deleted, untracked; not ignored), relative to
    /// the root with `/`.
    pub fn dirty_paths(&self) -> Result<BTreeSet<String>, WorkspaceError> {
        Ok(self
            .scanner
            .dirty_paths(&self.repo)?
            .into_iter()
            .map(|path| String::from_utf8_lossy(&path).into_owned())
            .filter(|path| !self.is_excluded(path))
            .collect())
    }

    fn is_excluded(&self, path: &str) -> bool {
        self.excluded.as_deref().is_some_and(|dir| {
            path == dir
                || path
                    .strip_prefix(dir)
                    .is_some_and(|rest| rest.starts_with('/'))
        })
    }

    /// Records the state of every dirty path; their bytes go to `store`.
    pub fn snapshot(&self, store: &SnapshotStore) -> Result<Snapshot, WorkspaceError> {
        let mut paths = BTreeMap::new();
        for path in self.dirty_paths()? {
            let state = PathState::read(&self.root.join(&path), Some(store))?;
            paths.insert(path, state);
        }
        Ok(Snapshot { paths })
    }

    /// What changed since `before`: paths dirty then or now whose state differs. A path that was
    /// clean then is compared with the index.
    pub fn changes_since(
        &self,
        before: &Snapshot,
        store: &SnapshotStore,
    ) -> Result<Vec<Change>, WorkspaceError> {
        let now = self.dirty_paths()?;
        let candidates: BTreeSet<&String> = before.paths.keys().chain(now.iter()).collect();
        // Read once: a clean path's earlier state is the index's.
        let index = self.repo.index()?;
        let mut changes = Vec::new();
        for path in candidates {
            let was = match before.paths.get(path) {
                Some(state) => state.clone(),
                None => self.indexed_state(&index, path, store)?,
            };
            // Kept in the store too: a later change may have to be rolled back to this state.
            let is = PathState::read(&self.root.join(path), Some(store))?;
            if was != is {
                changes.push(Change {
                    path: path.clone(),
                    before: was,
                    after: is,
                });
            }
        }
        Ok(changes)
    }

    /// The state the index records for `path` (what a clean file holds), or absent.
    fn indexed_state(
        &self,
        index: &git2::Index,
        path: &str,
        store: &SnapshotStore,
    ) -> Result<PathState, WorkspaceError> {
        let Some(entry) = index.get_path(Path::new(path), 0) else {
            return Ok(PathState::Absent);
        };
        let blob = self.repo.find_blob(entry.id)?;
        PathState::from_index(entry.mode, blob.content(), store).map_err(|source| {
            WorkspaceError::Io {
                path: self.root.join(path),
                source,
            }
        })
    }

    /// Puts every changed path back as it was before, and removes folders the changes created
    /// that are now empty. Before writing a path, checks that it still holds what the change
    /// left there: a difference means someone else is writing, and nothing more is touched.
    pub fn roll_back(
        &self,
        changes: &[Change],
        store: &SnapshotStore,
    ) -> Result<(), WorkspaceError> {
        for change in changes {
            let full = self.root.join(&change.path);
            let current = PathState::read(&full, None)?;
            if current != change.after {
                return Err(WorkspaceError::ConcurrentChange {
                    path: change.path.clone(),
                    expected: change.after.describe(),
                    found: current.describe(),
                });
            }
        }
        for change in changes {
            let full = self.root.join(&change.path);
            change
                .before
                .restore(&full, store)
                .map_err(|source| WorkspaceError::Io {
                    path: full.clone(),
                    source,
                })?;
            if matches!(change.before, PathState::Absent) {
                self.remove_empty_parents(&full);
            }
        }
        Ok(())
    }

    fn remove_empty_parents(&self, path: &Path) {
        let mut dir = path.parent();
        while let Some(current) = dir {
            if current == self.root || !current.starts_with(&self.root) {
                break;
            }
            // Fails (and stops) on the first folder that is not empty.
            if std::fs::remove_dir(current).is_err() {
                break;
            }
            dir = current.parent();
        }
    }
}

#[cfg(test)]
#[path = "workspace_tests.rs"]
mod tests;
