//! The baseline: the user's own work recorded before anything runs (dirty, staged, untracked),
//! with a second copy outside the repository, and what an earlier run of a campaign left that is
//! its own.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::ffi::OsStrExt;

use super::{Incident, PathState, RepoPath, Snapshot, Workspace, WorkspaceError};
use crate::cancel::Cancel;

/// Folders looked into at most for the user's empty ones.
const EMPTY_LOOK: usize = 200_000;

impl Workspace {
    /// Gives up the protection of the paths whose baseline state `owned` names (by
    /// [`PathState::key`]): an earlier run of the same campaign left them so, they are its own.
    /// Returns the paths released.
    pub fn release_owned(&mut self, owned: &BTreeMap<String, String>) -> Vec<RepoPath> {
        let released: Vec<RepoPath> = self
            .protected
            .iter()
            .filter(|(path, state)| owned.get(&path.to_string()) == Some(&state.key()))
            .map(|(path, _)| path.clone())
            .collect();
        for path in &released {
            self.protected.remove(path);
        }
        released
    }

    /// Records the user's work before anything runs; it is protected for the whole run. A stop
    /// asked for meanwhile ends it with [`WorkspaceError::Cancelled`].
    pub fn record_baseline(&mut self, cancel: &Cancel) -> Result<Snapshot, WorkspaceError> {
        // Watched from before the first listing: no change after it goes unseen. A folder made
        // from now on is the run's.
        self.began = Some(super::watch::coarse_now());
        self.start_tree_watch();
        super::going_on(cancel)?;
        let snapshot = self.snapshot_until(cancel)?;
        if let Some((path, _)) = snapshot
            .paths
            .iter()
            .find(|(_, state)| **state == PathState::Directory)
        {
            return Err(WorkspaceError::NestedRepository { path: path.clone() });
        }
        self.refuse_hard_links(snapshot.paths.keys())?;
        super::going_on(cancel)?;
        self.protected.clone_from(&snapshot.paths);
        self.folder_modes = self.folder_modes(snapshot.paths.keys());
        self.empty_folders = self.empty_folders();
        self.owners = self.owners(snapshot.paths.keys());
        self.special_at_baseline = self
            .special_files(std::time::UNIX_EPOCH)
            .into_iter()
            .map(|(path, _)| path)
            .collect();
        // Staged work (the index differs from HEAD) is the user's too, though it is not dirty;
        // so is the work inside submodules, which git lists as one changed path.
        super::going_on(cancel)?;
        let mut more = self.staged_paths()?;
        more.extend(self.work_in_submodules()?);
        more.extend(self.hidden_edits()?);
        super::going_on(cancel)?;
        for path in more {
            if !self.protected.contains_key(&path) {
                let state = PathState::read_at(&self.root, &path, Some(&self.store))?;
                self.protected.insert(path, state);
            }
        }
        // A second copy outside the repository, for when the store's is gone or damaged.
        for state in self.protected.values() {
            super::going_on(cancel)?;
            if let PathState::File { sha256, .. } = state {
                self.store
                    .back_up(sha256)
                    .map_err(|source| WorkspaceError::Io {
                        path: self
                            .store
                            .backup()
                            .unwrap_or(self.store.dir())
                            .to_path_buf(),
                        source,
                    })?;
            }
        }
        Ok(snapshot)
    }

    /// The user's work inside the submodules (and theirs, at any depth): their files that differ
    /// from their index or HEAD, or that are untracked and not ignored, as paths of this tree.
    fn work_in_submodules(&self) -> Result<BTreeSet<RepoPath>, WorkspaceError> {
        let opened = |repo: &git2::Repository, prefix: &[u8]| -> Vec<(git2::Repository, Vec<u8>)> {
            let Ok(submodules) = repo.submodules() else {
                return Vec::new();
            };
            submodules
                .iter()
                .filter_map(|submodule| {
                    let mut path = prefix.to_vec();
                    path.extend_from_slice(submodule.path().as_os_str().as_bytes());
                    path.push(b'/');
                    Some((submodule.open().ok()?, path))
                })
                .collect()
        };
        let mut found = BTreeSet::new();
        let mut stack = opened(&self.repo, b"");
        while let Some((repo, prefix)) = stack.pop() {
            let mut options = git2::StatusOptions::new();
            options
                .show(git2::StatusShow::IndexAndWorkdir)
                .include_untracked(true)
                .recurse_untracked_dirs(true)
                .include_ignored(false)
                .exclude_submodules(true)
                .renames_head_to_index(false);
            for entry in repo.statuses(Some(&mut options))?.iter() {
                let mut path = prefix.clone();
                path.extend_from_slice(entry.path_bytes());
                found.insert(RepoPath::new(path));
            }
            stack.extend(opened(&repo, &prefix));
        }
        Ok(found)
    }

    /// Refuses a tree whose tracked files, or the user's untracked ones (`dirty`), have more than
    /// one name: a delegate that writes one in place reaches the others, and a rollback could
    /// put back only the tree's name.
    fn refuse_hard_links<'a>(
        &self,
        dirty: impl Iterator<Item = &'a RepoPath>,
    ) -> Result<(), WorkspaceError> {
        use std::os::unix::fs::MetadataExt;
        let index = self.repo.index()?;
        let tracked = index.iter().map(|entry| RepoPath::new(entry.path));
        for path in tracked.chain(dirty.cloned()) {
            // The record of the clean files has looked at them already.
            let looked_at = self
                .clean
                .as_ref()
                .is_some_and(|clean| clean.has(&path) && !clean.linked.contains(path.as_bytes()));
            if looked_at || self.is_excluded(path.as_bytes()) {
                continue;
            }
            if let Ok(meta) = std::fs::symlink_metadata(path.under(&self.root))
                && meta.is_file()
                && meta.nlink() > 1
            {
                return Err(WorkspaceError::HardLinkedFile {
                    path,
                    links: meta.nlink(),
                });
            }
        }
        Ok(())
    }

    /// The modes of the tree's top and of the folders that hold tracked files or `dirty` ones
    /// (the user's untracked work): git keeps none, so a delegate may change them without a
    /// trace in the diff.
    fn folder_modes<'a>(
        &self,
        dirty: impl Iterator<Item = &'a RepoPath>,
    ) -> BTreeMap<RepoPath, u32> {
        use std::os::unix::fs::PermissionsExt;
        let mut folders = BTreeSet::from([Vec::new()]);
        let index = self.repo.index().ok();
        let tracked = index
            .iter()
            .flat_map(|index| index.iter().map(|entry| entry.path));
        for file in tracked.chain(dirty.map(|path| path.as_bytes().to_vec())) {
            let mut path = file.as_slice();
            while let Some(slash) = path.iter().rposition(|&b| b == b'/') {
                path = &path[..slash];
                if !folders.insert(path.to_vec()) {
                    break;
                }
            }
        }
        folders
            .into_iter()
            .filter(|folder| !self.is_excluded(folder))
            .filter_map(|folder| {
                let path = RepoPath::new(folder);
                let meta = std::fs::symlink_metadata(path.under(&self.root)).ok()?;
                meta.is_dir()
                    .then(|| (path, meta.permissions().mode() & 0o7777))
            })
            .collect()
    }

    /// Who owns the folders of [`Self::folder_modes`], the tracked files and `dirty` ones: git
    /// keeps no owner, so a `chown` is in no diff.
    fn owners<'a>(
        &self,
        dirty: impl Iterator<Item = &'a RepoPath>,
    ) -> BTreeMap<RepoPath, (u32, u32)> {
        use std::os::unix::fs::MetadataExt;
        let index = self.repo.index().ok();
        let tracked = index
            .iter()
            .flat_map(|index| index.iter().map(|entry| RepoPath::new(entry.path)));
        self.folder_modes
            .keys()
            .cloned()
            .chain(tracked)
            .chain(dirty.cloned())
            .filter(|path| !self.is_excluded(path.as_bytes()))
            .filter_map(|path| {
                let meta = std::fs::symlink_metadata(path.under(&self.root)).ok()?;
                Some((path, (meta.uid(), meta.gid())))
            })
            .collect()
    }

    /// Gives every path of [`Self::owners`] whose owner changed since the baseline back to its
    /// owner. A file made anew by the writer (`sed -i` run by root, in a tree mounted into a
    /// container) is given back quietly; any other owner is a `chown`, and an incident.
    pub(super) fn restore_owners(&self) -> Vec<Incident> {
        use std::os::unix::fs::MetadataExt;
        let writer = (
            nix::unistd::geteuid().as_raw(),
            nix::unistd::getegid().as_raw(),
        );
        let mut incidents = Vec::new();
        for (path, &was) in &self.owners {
            let full = path.under(&self.root);
            let Ok(meta) = std::fs::symlink_metadata(&full) else {
                continue;
            };
            let now = (meta.uid(), meta.gid());
            if now == was {
                continue;
            }
            if let Err(error) = std::os::unix::fs::lchown(&full, Some(was.0), Some(was.1)) {
                tracing::warn!(%error, %path, "the owner could not be put back");
                continue;
            }
            if now != writer {
                incidents.push(Incident::Owner {
                    path: path.clone(),
                    was,
                    now,
                });
            }
        }
        incidents
    }

    /// Puts back the mode of every folder that holds tracked files where it changed since the
    /// baseline; an incident for each.
    /// The user's empty folders (git lists none) with their modes: every folder in the tree
    /// with nothing in it, but in the git dirs, the state dir and what git ignores, looked for
    /// among at most [`EMPTY_LOOK`] folders.
    fn empty_folders(&self) -> BTreeMap<RepoPath, u32> {
        use std::os::unix::fs::PermissionsExt;
        let ignored: BTreeSet<&[u8]> = (self.ignored_seen.iter())
            .filter_map(|path| path.strip_suffix(b"/"))
            .collect();
        let mut empty = BTreeMap::new();
        let mut pending = vec![Vec::<u8>::new()];
        let mut looked = 0;
        while let Some(folder) = pending.pop() {
            looked += 1;
            if looked > EMPTY_LOOK {
                break;
            }
            let full = self.root.join(std::ffi::OsStr::from_bytes(&folder));
            let Ok(entries) = std::fs::read_dir(&full) else {
                continue;
            };
            let mut any = false;
            for entry in entries.flatten() {
                any = true;
                if !entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                    continue;
                }
                let name = entry.file_name();
                let path = if folder.is_empty() {
                    name.as_bytes().to_vec()
                } else {
                    [folder.as_slice(), b"/", name.as_bytes()].concat()
                };
                if name.as_bytes() == b".git"
                    || self.is_excluded(&path)
                    || ignored.contains(path.as_slice())
                {
                    continue;
                }
                pending.push(path);
            }
            if !any && !folder.is_empty() {
                let mode =
                    std::fs::symlink_metadata(&full).map_or(0o755, |m| m.permissions().mode());
                empty.insert(RepoPath::new(folder), mode & 0o7777);
            }
        }
        empty
    }

    /// Makes again each of the user's empty folders a step removed, with its mode; returns the
    /// incidents that name them.
    pub(super) fn restore_empty_folders(&self) -> Vec<Incident> {
        use std::os::unix::fs::PermissionsExt;
        let mut incidents = Vec::new();
        for (path, &mode) in &self.empty_folders {
            let full = path.under(&self.root);
            if std::fs::symlink_metadata(&full).is_ok() {
                continue;
            }
            // A folder above that is a file or a link now: not the loop's to replace.
            let made = std::fs::create_dir_all(&full).and_then(|()| {
                std::fs::set_permissions(&full, std::fs::Permissions::from_mode(mode))
            });
            if made.is_ok() {
                incidents.push(Incident::TouchedProtected { path: path.clone() });
            }
        }
        incidents
    }

    pub(super) fn restore_folder_modes(&self) -> Vec<Incident> {
        use std::os::unix::fs::PermissionsExt;
        let mut incidents = Vec::new();
        for (path, &was) in &self.folder_modes {
            let full = path.under(&self.root);
            let Ok(meta) = std::fs::symlink_metadata(&full) else {
                continue;
            };
            let now = meta.permissions().mode() & 0o7777;
            if meta.is_dir()
                && now != was
                && std::fs::set_permissions(&full, std::fs::Permissions::from_mode(was)).is_ok()
            {
                incidents.push(Incident::FolderMode {
                    path: path.clone(),
                    was,
                    now,
                });
            }
        }
        incidents
    }

    /// Tracked files git is told not to look at (`update-index --assume-unchanged`, or
    /// `--skip-worktree`: local config kept out of `git status`) whose bytes or mode on disk
    /// are not their index entry's: an edit of the user's that git shows as clean. One absent
    /// on disk (a sparse checkout leaves most so) is no edit.
    fn hidden_edits(&self) -> Result<BTreeSet<RepoPath>, WorkspaceError> {
        /// The index entry's `assume-valid` flag, and its extended `skip-worktree` one.
        const ASSUME_VALID: u16 = 0x8000;
        const SKIP_WORKTREE: u16 = 1 << 14;
        let mut index = self.repo.index()?;
        index.read(true)?;
        let mut hidden = BTreeSet::new();
        for entry in index.iter() {
            if entry.flags & ASSUME_VALID == 0 && entry.flags_extended & SKIP_WORKTREE == 0 {
                continue;
            }
            let path = RepoPath::new(entry.path.clone());
            if self.is_excluded(path.as_bytes()) {
                continue;
            }
            let full = path.under(&self.root);
            let Ok(metadata) = std::fs::symlink_metadata(&full) else {
                continue;
            };
            let same = metadata.is_file()
                && git2::Oid::hash_file(git2::ObjectType::Blob, &full)
                    .is_ok_and(|id| id == entry.id)
                && (std::os::unix::fs::MetadataExt::mode(&metadata) & 0o111 != 0)
                    == (entry.mode & 0o111 != 0);
            if !same {
                hidden.insert(path);
            }
        }
        Ok(hidden)
    }

    /// Paths whose index entry differs from HEAD.
    fn staged_paths(&self) -> Result<BTreeSet<RepoPath>, WorkspaceError> {
        let mut options = git2::StatusOptions::new();
        options
            .show(git2::StatusShow::Index)
            .include_untracked(false)
            .exclude_submodules(true)
            .renames_head_to_index(false);
        let statuses = self.repo.statuses(Some(&mut options))?;
        Ok(statuses
            .iter()
            .map(|entry| RepoPath::new(entry.path_bytes().to_vec()))
            .filter(|path| !self.is_excluded(path.as_bytes()))
            .collect())
    }
}
