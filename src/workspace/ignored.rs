//! Files git ignores that were there when the run began (`.env`, local config): kept in the
//! store up to a budget, and put back when a delegate deletes or changes them. Build folders and
//! caches (by name, at any depth) are left out; files over the budget are named, not kept.

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::watch::StatKey;
use super::{PathState, RepoPath, SnapshotStore, Workspace, WorkspaceError};
use crate::cancel::Cancel;

/// At most this many ignored files are looked at; the rest are named as not protected.
const MAX_FILES: usize = 20_000;

/// Bytes of the tools' cache files held at most (see [`Workspace::hold_caches`]).
const CACHE_BYTES: u64 = 256 << 20;

/// Whether a file git ignores, named `name`, is a tool's cache of its results (`.eslintcache`,
/// `.stylelintcache`, `tsconfig.tsbuildinfo`, `.phpunit.result.cache`, `.php-cs-fixer.cache`):
/// written and read by the same tool, which checks each entry against the file it is about, so
/// putting it back costs a later check time at most, never a result.
pub(super) fn is_cache_file(name: &[u8]) -> bool {
    let name = name.to_ascii_lowercase();
    name.windows(5).any(|window| window == b"cache") || name.ends_with(b".tsbuildinfo")
}

/// How much of what git ignores is kept.
#[derive(Debug, Clone)]
pub struct IgnoredBudget {
    /// Bytes in all, at most.
    pub max_bytes: u64,
    /// Names of folders never kept, at any depth (`target`, `node_modules`).
    pub skip: Vec<String>,
}

/// The ignored files kept, and those that were not.
#[derive(Debug, Default)]
pub(super) struct IgnoredFiles {
    kept: BTreeMap<RepoPath, (StatKey, PathState)>,
    /// Over the budget (with their sizes), or past the count looked at: not kept.
    not_kept: Vec<(RepoPath, u64)>,
    /// Names of folders never kept.
    skip: Vec<String>,
}

impl IgnoredFiles {
    /// Keeps the ignored files at and beneath `ignored` (what git's status lists as ignored),
    /// but `excluded` paths and the folders `budget` skips, in path order, each that still fits
    /// the budget; given up when `cancel` is asked.
    pub(super) fn record(
        ignored: Vec<Vec<u8>>,
        (root, store): (&Path, &SnapshotStore),
        excluded: &dyn Fn(&[u8]) -> bool,
        budget: &IgnoredBudget,
        cancel: &Cancel,
    ) -> Result<Self, WorkspaceError> {
        let mut record = Self {
            skip: budget.skip.clone(),
            ..Self::default()
        };
        let mut total = 0u64;
        // Once a stop is asked, every path is skipped: the walk ends at once.
        let skipped = |path: &[u8]| {
            cancel.is_requested()
                || excluded(path)
                || path
                    .split(|byte| *byte == b'/')
                    .any(|name| budget.skip.iter().any(|skip| skip.as_bytes() == name))
        };
        let mut files = Vec::new();
        for path in ignored {
            if skipped(&path) {
                // A link in place of a skipped folder (`node_modules` shared between checkouts)
                // is one entry, and says where the gate's tools are: it is kept.
                let kept = !cancel.is_requested() && !excluded(&path);
                if let Some(link) = link_at(root, &path).filter(|_| kept) {
                    files.push(link);
                }
                continue;
            }
            collect(root, RepoPath::new(path), &skipped, &mut files);
        }
        for (index, (path, metadata)) in files.into_iter().enumerate() {
            super::going_on(cancel)?;
            let size = if metadata.is_file() {
                metadata.len()
            } else {
                0
            };
            if index >= MAX_FILES || total.saturating_add(size) > budget.max_bytes {
                record.not_kept.push((path, size));
                continue;
            }
            let state = PathState::read_at(root, &path, Some(store))?;
            total += size;
            record.kept.insert(path, (StatKey::of(&metadata), state));
        }
        Ok(record)
    }

    /// Puts back every kept file whose state changed, with the time it was last modified (a
    /// build tool that goes by times then rebuilds what it had rebuilt: an object put back with
    /// a new time would look fresher than its changed source); returns their paths.
    /// A folder made where a kept file or link was (a `node_modules` of the delegate's own in
    /// place of the shared one it linked to) is set aside in `aside`, never deleted.
    pub(super) fn restore_changed(
        &self,
        root: &Path,
        store: &SnapshotStore,
        aside: &mut super::rollback::SetAside<'_>,
    ) -> Result<Vec<RepoPath>, WorkspaceError> {
        let mut restored = Vec::new();
        for (path, state) in self.changed(root)? {
            let full = path.under(root);
            let folder_in_the_way =
                std::fs::symlink_metadata(&full).is_ok_and(|meta| meta.is_dir());
            if folder_in_the_way && state != PathState::Directory {
                aside.put(&full).map_err(|source| WorkspaceError::Io {
                    path: full.clone(),
                    source,
                })?;
            }
            let stat = self.kept.get(&path).map(|(stat, _)| stat);
            let in_place = stat.is_some_and(|stat| still_linked(&full, stat));
            let written = if in_place {
                put_back_in_place(&full, &state, store)
            } else {
                state.restore(&path, root, store)
            };
            written.map_err(|source| WorkspaceError::Io {
                path: full.clone(),
                source,
            })?;
            let modified = stat.and_then(StatKey::modified);
            if let (PathState::File { .. }, Some(modified)) = (&state, modified) {
                let _ = std::fs::File::open(&full).and_then(|file| file.set_modified(modified));
            }
            restored.push(path);
        }
        Ok(restored)
    }

    /// Gives up the kept files whose state changed: the gate's own output (the baseline's run of
    /// it rewrote them). Returns their paths.
    pub(super) fn yield_changed(&mut self, root: &Path) -> Result<Vec<RepoPath>, WorkspaceError> {
        let changed: Vec<RepoPath> = self
            .changed(root)?
            .into_iter()
            .map(|(path, _)| path)
            .collect();
        for path in &changed {
            self.kept.remove(path);
        }
        Ok(changed)
    }

    /// The kept files whose state is not the kept one, with the kept state.
    fn changed(&self, root: &Path) -> Result<Vec<(RepoPath, PathState)>, WorkspaceError> {
        let mut changed = Vec::new();
        for (path, (stat, state)) in &self.kept {
            let same_identity = std::fs::symlink_metadata(path.under(root))
                .is_ok_and(|metadata| StatKey::of(&metadata) == *stat);
            if same_identity {
                continue;
            }
            if PathState::read_at(root, path, None)? != *state {
                changed.push((path.clone(), state.clone()));
            }
        }
        Ok(changed)
    }

    /// The kept files and what each held.
    pub(super) fn kept(&self) -> impl Iterator<Item = (&RepoPath, &PathState)> {
        self.kept.iter().map(|(path, (_, state))| (path, state))
    }

    /// The kept files a journal names (a killed run's): each read again before it is trusted.
    pub(super) fn from_journal(entries: impl IntoIterator<Item = (RepoPath, PathState)>) -> Self {
        Self {
            kept: entries
                .into_iter()
                .map(|(path, state)| (path, (StatKey::UNKNOWN, state)))
                .collect(),
            ..Self::default()
        }
    }

    /// What a kept file held.
    pub(super) fn state_of(&self, path: &RepoPath) -> Option<PathState> {
        self.kept.get(path).map(|(_, state)| state.clone())
    }

    /// Names of folders whose files are never kept.
    pub(super) fn skip(&self) -> &[String] {
        &self.skip
    }

    /// The ignored files not kept, with their sizes.
    pub(super) fn not_kept(&self) -> &[(RepoPath, u64)] {
        &self.not_kept
    }

    /// The kept files' paths.
    fn paths(&self) -> impl Iterator<Item = &RepoPath> {
        self.kept.keys()
    }
}

impl Workspace {
    /// Keeps the files git ignores now (but the state dir), within `budget`: each one a
    /// delegate deletes or changes is put back.
    /// After [`Self::record_baseline`], the ignored paths its look listed are taken as they
    /// are; a stop asked for meanwhile ends it with [`WorkspaceError::Cancelled`].
    pub fn protect_ignored(
        &mut self,
        budget: &IgnoredBudget,
        cancel: &Cancel,
    ) -> Result<(), WorkspaceError> {
        let ignored = match self.clean.is_some() {
            true => self.ignored_seen.iter().cloned().collect(),
            false => ignored_entries(&self.repo)?,
        };
        let excluded = |path: &[u8]| self.is_excluded(path);
        let place = (self.root.as_path(), &self.store);
        let record = IgnoredFiles::record(ignored, place, &excluded, budget, cancel)?;
        super::going_on(cancel)?;
        self.ignored = record;
        Ok(())
    }

    /// Settles the files git ignores that a gate run changed of those kept. The baseline's run
    /// (`gates_own`) makes them its output: no longer kept. A later run may be running what a
    /// change planted: they are put back. Returns their paths.
    pub fn ignored_after_gate(&mut self, gates_own: bool) -> Result<Vec<RepoPath>, WorkspaceError> {
        if gates_own {
            return self.ignored.yield_changed(&self.root);
        }
        self.restore_ignored()
    }

    /// Puts back every kept ignored file that changed (see [`IgnoredFiles::restore_changed`]);
    /// returns their paths.
    pub(super) fn restore_ignored(&self) -> Result<Vec<RepoPath>, WorkspaceError> {
        let mut aside = super::rollback::SetAside {
            dir: &self.set_aside_dir,
            moved: Vec::new(),
        };
        let restored = self
            .ignored
            .restore_changed(&self.root, &self.store, &mut aside);
        self.record_set_aside(aside);
        restored
    }

    /// Holds the tools' cache files git ignores outside the folders it ignores (those are
    /// written in layers), as the baseline's run of the gate left them: a tool replays the
    /// results it finds there for the files it takes as unchanged, so a delegate, or a check
    /// running code a delegate planted, that rewrites one could lower the count with nothing
    /// fixed. What a delegate writes into them is put back after its turn
    /// ([`Self::restore_caches`]), and what a check of a later gate run writes, before the next
    /// check ([`Self::held_caches`]).
    pub(super) fn hold_caches(&mut self) -> Result<(), WorkspaceError> {
        let loose = self.ignored_after_gate.iter().flatten().filter(|path| {
            !path.ends_with(b"/")
                && is_cache_file(path.rsplit(|byte| *byte == b'/').next().unwrap_or(path))
        });
        let budget = IgnoredBudget {
            max_bytes: CACHE_BYTES,
            skip: Vec::new(),
        };
        let excluded = |path: &[u8]| self.is_excluded(path);
        let place = (self.root.as_path(), &self.store);
        let caches = IgnoredFiles::record(
            loose.cloned().collect(),
            place,
            &excluded,
            &budget,
            &Cancel::default(),
        )?;
        self.caches = Some(caches);
        Ok(())
    }

    /// Puts back every held cache file a delegate changed (see [`Self::hold_caches`]); returns
    /// their paths.
    pub(super) fn restore_caches(&self) -> Result<Vec<RepoPath>, WorkspaceError> {
        let Some(caches) = &self.caches else {
            return Ok(Vec::new());
        };
        let mut aside = super::rollback::SetAside {
            dir: &self.set_aside_dir,
            moved: Vec::new(),
        };
        let restored = caches.restore_changed(&self.root, &self.store, &mut aside);
        self.record_set_aside(aside);
        restored
    }

    /// The held cache files (relative, `/`-separated), for the gate to put back after each
    /// check.
    pub fn held_caches(&self) -> Vec<Vec<u8>> {
        (self.caches.iter())
            .flat_map(IgnoredFiles::paths)
            .map(|path| path.as_bytes().to_vec())
            .collect()
    }

    /// The ignored files not protected (over the budget), each with its size.
    pub fn ignored_not_protected(&self) -> Vec<String> {
        self.ignored
            .not_kept()
            .iter()
            .map(|(path, size)| {
                let path = crate::markdown::code_span(&path.to_string());
                format!("{path} ({size} bytes)")
            })
            .collect()
    }
}

/// Whether the file at `full` is still the kept one (`stat`'s), with another name besides the
/// tree's (a hard link from a dotfiles folder).
fn still_linked(full: &Path, stat: &StatKey) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(full).is_ok_and(|metadata| {
        metadata.is_file() && metadata.nlink() > 1 && stat.same_file(&metadata)
    })
}

/// Writes a kept file's bytes and mode back into the same file, not a new one under its name:
/// its other names (outside the tree) get them back too.
fn put_back_in_place(full: &Path, state: &PathState, store: &SnapshotStore) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let PathState::File { sha256, mode } = state else {
        return Err(std::io::Error::other("not a file"));
    };
    let bytes = store.read_verified(sha256)?;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(full)?;
    file.set_len(0)?;
    file.write_all(&bytes)?;
    file.set_permissions(std::fs::Permissions::from_mode(*mode))
}

/// What git ignores, as its status lists it: files, and folders (`name/`) not entered.
pub(super) fn ignored_entries(repo: &git2::Repository) -> Result<Vec<Vec<u8>>, WorkspaceError> {
    let mut options = git2::StatusOptions::new();
    options
        .show(git2::StatusShow::Workdir)
        // Untracked folders are entered: a file in one may be ignored by a rule beside it.
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(true)
        .recurse_ignored_dirs(false)
        .exclude_submodules(true);
    let statuses = repo.statuses(Some(&mut options))?;
    Ok(statuses
        .iter()
        .filter(|entry| entry.status().is_ignored())
        .map(|entry| entry.path_bytes().to_vec())
        .collect())
}

/// The link at `path` (as git's status lists it: a folder ends in `/`), with its metadata.
fn link_at(root: &Path, path: &[u8]) -> Option<(RepoPath, std::fs::Metadata)> {
    if path.ends_with(b"/") {
        return None;
    }
    let path = RepoPath::new(path.to_vec());
    let metadata = std::fs::symlink_metadata(path.under(root)).ok()?;
    metadata
        .file_type()
        .is_symlink()
        .then_some((path, metadata))
}

/// The files and symlinks at and beneath `path` (a folder when it ends in `/`), but skipped
/// ones, up to [`MAX_FILES`] and one more. Folders nested deeper than
/// [`super::reach::GIT_DEPTH`] are not entered: each look at a path costs its depth, and a
/// chain of 50,000 would take hours.
pub(super) fn collect(
    root: &Path,
    path: RepoPath,
    skipped: &dyn Fn(&[u8]) -> bool,
    files: &mut Vec<(RepoPath, std::fs::Metadata)>,
) {
    let mut stack = vec![path];
    while let Some(path) = stack.pop() {
        if files.len() > MAX_FILES {
            return;
        }
        let trimmed = path
            .as_bytes()
            .strip_suffix(b"/")
            .unwrap_or(path.as_bytes());
        let path = RepoPath::new(trimmed.to_vec());
        let full = path.under(root);
        let Ok(metadata) = std::fs::symlink_metadata(&full) else {
            continue;
        };
        if metadata.is_dir() {
            let depth = path.as_bytes().iter().filter(|&&byte| byte == b'/').count();
            if depth >= super::reach::GIT_DEPTH {
                continue;
            }
            let Ok(entries) = std::fs::read_dir(&full) else {
                continue;
            };
            let mut children: Vec<Vec<u8>> = entries
                .flatten()
                .map(|entry| [path.as_bytes(), b"/", entry.file_name().as_bytes()].concat())
                .filter(|child| !skipped(child))
                .collect();
            children.sort_unstable_by(|a, b| b.cmp(a));
            stack.extend(children.into_iter().map(RepoPath::new));
        } else if metadata.is_file() || metadata.file_type().is_symlink() {
            files.push((path, metadata));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_of_folders_is_entered_down_to_the_depth_the_watch_allows() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        // (depth of the folder holding the file, collected)
        let table = [
            (1, true),
            (50, true),
            (99, true),
            (100, false),
            (400, false),
        ];
        let chain = |depth: usize| -> std::path::PathBuf {
            let mut path = root.join("ignored");
            for _ in 1..depth {
                path.push("d");
            }
            path
        };
        std::fs::create_dir_all(chain(400)).unwrap();
        for (depth, _) in table {
            std::fs::write(chain(depth).join(format!("at-{depth}")), "x").unwrap();
        }
        let mut files = Vec::new();
        collect(
            root,
            RepoPath::new(b"ignored/".to_vec()),
            &|_| false,
            &mut files,
        );
        for (depth, collected) in table {
            let name = format!("at-{depth}");
            let found = files
                .iter()
                .any(|(path, _)| path.as_bytes().ends_with(name.as_bytes()));
            assert_eq!(found, collected, "{name}");
        }
    }
}
