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
        let (isolation, target) = Self::at(&settings, None, "refine-loop")?;
        let mut moved = settings;
        for check in &mut moved.gate.checks {
            check.cwd = target.join(&check.cwd_relative);
        }
        moved.target = target;
        Ok((isolation, moved))
    }

    /// Makes a worktree of `commit` (HEAD when `None`) on a private branch named after
    /// `purpose`; returns it with the target's place in it.
    pub fn at(
        settings: &Settings,
        commit: Option<git2::Oid>,
        purpose: &str,
    ) -> Result<(Self, PathBuf), RunError> {
        let (repo, root, head) = crate::workspace::Workspace::open_repository(&settings.target)?;
        let head = repo
            .find_commit(commit.unwrap_or(head))
            .map_err(WorkspaceError::from)?;
        let id = crate::clock::new_run_id();
        let name = format!("{purpose}-{id}");
        let branch_name = format!("{purpose}/{id}");
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
        Ok((isolation, tree.join(relative)))
    }
}

impl Drop for Isolation {
    /// Removes only what `enter` made: the folder of the tree (never following a link in it),
    /// git's record of the worktree in `.git/worktrees/<name>` (found by its name, never by the
    /// `gitdir` it holds, which anything in the worktree could have rewritten to point at any
    /// folder), and the branch.
    fn drop(&mut self) {
        drop(self.folder.take());
        let removed = git2::Repository::open(&self.repository).and_then(|repo| {
            let record = repo.commondir().join("worktrees").join(&self.name);
            remove_record(&record).map_err(|error| {
                git2::Error::from_str(&format!("{}: {error}", record.display()))
            })?;
            repo.find_branch(&self.branch, git2::BranchType::Local)?
                .delete()
        });
        if let Err(error) = removed {
            tracing::warn!(%error, worktree = %self.name, "could not remove the run's worktree");
        }
    }
}

/// Removes git's record of a worktree: a folder, removed with what is in it, no link followed;
/// anything else there (a link put in its place) is removed itself.
fn remove_record(record: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(record) {
        Ok(metadata) if metadata.is_dir() => std::fs::remove_dir_all(record),
        Ok(_) => std::fs::remove_file(record),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(error),
    }
}
