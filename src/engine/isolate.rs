//! `--isolate worktree`: the whole run in a linked worktree made from HEAD on a private branch,
//! so the user's tree is not written at all (but the state dir, and the folders they chose to
//! share by symlink, such as `target` or `node_modules`). When the run ends the worktree and its
//! branch go; the record (the private ref, the patches) is the result.

use std::path::{Path, PathBuf};

use super::RunError;
use crate::config::Settings;
use crate::workspace::WorkspaceError;

/// A linked worktree for one run, removed when dropped.
#[derive(Debug)]
pub struct Isolation {
    repository: PathBuf,
    name: String,
    branch: String,
    /// Holds the worktree; removed last.
    folder: Option<tempfile::TempDir>,
}

impl Isolation {
    /// Makes the worktree; returns it with the settings for a run in it (the target and the
    /// checks' folders inside the worktree).
    pub fn enter(settings: Settings) -> Result<(Self, Settings), RunError> {
        let repo = git2::Repository::discover(&settings.target)
            .map_err(|source| WorkspaceError::opening(&settings.target, source))?;
        let root = repo
            .workdir()
            .ok_or_else(|| WorkspaceError::Bare {
                path: settings.target.clone(),
            })?
            .canonicalize()
            .map_err(|source| WorkspaceError::Io {
                path: settings.target.clone(),
                source,
            })?;
        let head = match repo.head() {
            Ok(head) => head.peel_to_commit().map_err(WorkspaceError::from)?,
            Err(error) if error.code() == git2::ErrorCode::UnbornBranch => {
                return Err(WorkspaceError::UnbornHead {
                    path: settings.target.clone(),
                }
                .into());
            }
            Err(error) => return Err(WorkspaceError::from(error).into()),
        };
        let id = crate::clock::new_run_id();
        let name = format!("refine-loop-{id}");
        let branch_name = format!("refine-loop/{id}");
        let folder = tempfile::Builder::new()
            .prefix("refine-loop-worktree-")
            .tempdir()
            .map_err(|source| WorkspaceError::Io {
                path: std::env::temp_dir(),
                source,
            })?;
        let tree = folder.path().join("tree");
        let branch = repo
            .branch(&branch_name, &head, false)
            .map_err(WorkspaceError::from)?;
        let mut options = git2::WorktreeAddOptions::new();
        options.reference(Some(branch.get()));
        let isolation = Self {
            repository: repo.path().to_path_buf(),
            name: name.clone(),
            branch: branch_name,
            folder: Some(folder),
        };
        repo.worktree(&name, &tree, Some(&options))
            .map_err(WorkspaceError::from)?;
        for shared in &settings.run.share {
            let source = root.join(shared);
            let link = tree.join(shared);
            if source.is_dir() && !link.exists() {
                if let Some(parent) = link.parent() {
                    std::fs::create_dir_all(parent).map_err(|source| WorkspaceError::Io {
                        path: parent.to_path_buf(),
                        source,
                    })?;
                }
                std::os::unix::fs::symlink(&source, &link).map_err(|error| WorkspaceError::Io {
                    path: link.clone(),
                    source: error,
                })?;
            }
        }
        let relative = settings.target.strip_prefix(&root).unwrap_or(Path::new(""));
        let target = tree.join(relative);
        let mut moved = settings;
        for check in &mut moved.gate.checks {
            check.cwd = target.join(&check.cwd_relative);
        }
        moved.target = target;
        Ok((isolation, moved))
    }
}

impl Drop for Isolation {
    fn drop(&mut self) {
        // The files first, then git's record of the worktree, then its branch.
        drop(self.folder.take());
        let removed = git2::Repository::open(&self.repository).and_then(|repo| {
            if let Ok(worktree) = repo.find_worktree(&self.name) {
                worktree.prune(Some(
                    git2::WorktreePruneOptions::new()
                        .valid(true)
                        .working_tree(true),
                ))?;
            }
            repo.find_branch(&self.branch, git2::BranchType::Local)?
                .delete()
        });
        if let Err(error) = removed {
            tracing::warn!(%error, worktree = %self.name, "could not remove the run's worktree");
        }
    }
}
