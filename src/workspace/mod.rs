//! The repository as the loop sees it: the user's own work (protected), the files the gate
//! writes (left alone), which paths a delegate changed (computed from git and the files on disk,
//! not from the delegate's word), what they held before, and an exact rollback.
//! Nothing here runs `git stash`, `reset` or `checkout`: files are read and written one by one.

mod after_delegate;
mod baseline;
mod change;
mod changes;
mod clean_files;
mod error;
mod hard_link;
mod hidden;
mod ignored;
mod incident;
mod journal;
mod listing;
mod looks;
mod path_state;
mod reach;
mod repo_path;
mod rollback;
mod scan;
mod seal;
mod special;
mod stat_key;
mod state_dir;
mod store;
mod tree_watch;
mod watch;
mod wire_bytes;

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::cancel::Cancel;

pub use change::{Change, Effects, Snapshot, compose};
pub use error::{RUN_AS_THE_OWNER, WorkspaceError};
pub use ignored::IgnoredBudget;
pub use incident::Incident;
pub use journal::{JOURNAL_FILE, Journal, OWNER_FILE, Owner, journals_in, store_folders};
pub use path_state::PathState;
pub use repo_path::RepoPath;
pub use scan::Scanner;
pub use seal::{Breach, Seal};
pub use state_dir::refuse_state_dir;
pub use store::SnapshotStore;
pub use watch::Watch;

/// The sha256 of no bytes: an empty file is nobody's work in particular.
const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// Where, in the git folder, the bytes for rollbacks are kept.
pub const STORE_FOLDER: &str = "refine-loop/snapshots";

/// Where, in the git folder, folders a rollback could not delete (the loop did not make them)
/// are put, one folder per run. Never deleted by the loop.
pub const SET_ASIDE_FOLDER: &str = "refine-loop/set-aside";

/// The largest file a delegate's change, or what a gate run on it made, may leave in the tree:
/// a larger one is removed unread (see [`Incident::TooLarge`]).
pub const MAX_CHANGED_FILE: u64 = 512 << 20;

/// A git working tree, with the user's work and the loop's own folder left out of every change.
pub struct Workspace {
    repo: git2::Repository,
    scanner: Scanner,
    root: PathBuf,
    store: SnapshotStore,
    base: git2::Oid,
    /// The loop's own paths inside the tree, relative to the root: the state dir, and the files
    /// its own stdout and stderr go to (`run 2>logs/run.log`).
    excluded: Vec<Vec<u8>>,
    /// Dirty or untracked before the run: the user's own work, as it was.
    protected: BTreeMap<RepoPath, PathState>,
    /// Paths that became dirty while the gate ran: its own output, never a delegate's change.
    artifacts: BTreeSet<RepoPath>,
    /// The dirty paths at the last look.
    dirty: BTreeSet<RepoPath>,
    /// The clean tracked files as last seen (recorded with the first snapshot).
    clean: Option<clean_files::CleanFiles>,
    /// Files git ignored at the baseline, kept within a budget.
    ignored: ignored::IgnoredFiles,
    /// What git ignored at the last look (files, and folders as `name/`).
    ignored_seen: BTreeSet<Vec<u8>>,
    /// What git ignored after the last gate run (see [`Self::clear_new_ignored`]); `None`
    /// before the baseline's.
    ignored_after_gate: Option<BTreeSet<Vec<u8>>>,
    /// The tools' cache files git ignores (`.eslintcache`), as the baseline's run of the gate
    /// left them: held for the whole run (see [`Self::hold_caches`]); `None` before it.
    caches: Option<ignored::IgnoredFiles>,
    /// Files in the git folders as last read, by their file-system identity: unchanged ones are
    /// not read again.
    known_git_files:
        std::cell::RefCell<std::collections::HashMap<PathBuf, (listing::StatKey, PathState)>>,
    /// The files outside the git folders that steer what git lists, as the run found them named
    /// (see [`seal::git_rule_files`]): watched and put back as the git folders' own.
    rule_files: Vec<PathBuf>,
    /// Protected paths by the identity they had when last found as at the baseline.
    sealed_work: std::cell::RefCell<std::collections::HashMap<RepoPath, listing::StatKey>>,
    state_dir: PathBuf,
    /// A delegate has started in this run (a journal was written).
    turns_begun: std::cell::Cell<bool>,
    /// Putting the tree back from a journal: what paths hold now is not kept (the disk may be
    /// full), only compared.
    restoring: bool,
    /// FIFOs, sockets and devices in the tree before the run: the user's, left alone.
    special_at_baseline: BTreeSet<RepoPath>,
    /// Where this run sets folders aside, and those it did: (where each was, where it is).
    set_aside_dir: PathBuf,
    set_aside: std::cell::RefCell<Vec<(PathBuf, PathBuf, AsideWhy)>>,
    /// The kernel's watch on the tree and what the looks found.
    watching: looks::Watching,
    /// The modes of the folders that hold tracked files, at the baseline (git keeps none): put
    /// back after every delegate.
    folder_modes: BTreeMap<RepoPath, u32>,
    /// Who owned those folders, the tracked files and the user's own at the baseline (git keeps
    /// no owner): put back after every delegate and every rollback.
    owners: BTreeMap<RepoPath, (u32, u32)>,
    /// When the run (or the turn a recover puts back) began: a folder made since is its own.
    began: Option<std::time::SystemTime>,
    /// The user's empty folders at the baseline, with their modes (git lists none): made again
    /// when a step removes one.
    empty_folders: BTreeMap<RepoPath, u32>,
    /// The folders delegates made (git lists none), with when the turn that made each began:
    /// a rollback of the changes since then removes those left empty.
    made_folders: std::cell::RefCell<BTreeMap<RepoPath, std::time::SystemTime>>,
}

impl std::fmt::Debug for Workspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workspace")
            .field("root", &self.root)
            .field("base", &self.base)
            .field("protected", &self.protected.len())
            .field("artifacts", &self.artifacts)
            .finish_non_exhaustive()
    }
}

impl Workspace {
    /// Opens the repository that holds `target`. It must have a working tree and a commit at
    /// HEAD (the base the loop's changes are recorded against). `state_dir` is left out of every
    /// listing. The bytes of every state the loop may have to put back are kept in the git
    /// folder (`refine-loop/snapshots/<run>`), out of the delegates' way.
    pub fn open(target: &Path, state_dir: &Path) -> Result<Self, WorkspaceError> {
        Self::open_with_store(target, state_dir, None)
    }

    /// The repository whose work tree holds `target`, the work tree's root (canonical) and the
    /// commit at HEAD; a bare repository or one without a commit is refused.
    pub fn open_repository(
        target: &Path,
    ) -> Result<(git2::Repository, PathBuf, git2::Oid), WorkspaceError> {
        let repo = git2::Repository::discover(target)
            .map_err(|source| WorkspaceError::opening(target, source))?;
        let Some(workdir) = repo.workdir() else {
            return Err(WorkspaceError::Bare {
                path: target.to_path_buf(),
            });
        };
        let root = workdir
            .canonicalize()
            .map_err(|source| WorkspaceError::Io {
                path: target.to_path_buf(),
                source,
            })?;
        let base = match repo.head() {
            Ok(head) => head.peel_to_commit()?.id(),
            Err(error) if error.code() == git2::ErrorCode::UnbornBranch => {
                return Err(WorkspaceError::UnbornHead {
                    path: target.to_path_buf(),
                });
            }
            Err(error) => return Err(error.into()),
        };
        Ok((repo, root, base))
    }

    /// [`Workspace::open`], with the kept bytes in `store` (an earlier run's) when given.
    fn open_with_store(
        target: &Path,
        state_dir: &Path,
        store: Option<SnapshotStore>,
    ) -> Result<Self, WorkspaceError> {
        let (repo, root, base) = Self::open_repository(target)?;
        let state_dir = std::path::absolute(state_dir).unwrap_or_else(|_| state_dir.to_path_buf());
        let in_tree = |path: &Path| {
            (path.strip_prefix(&root).ok())
                .map(|relative| relative.as_os_str().as_bytes().to_vec())
                .filter(|relative| !relative.is_empty())
        };
        let mut excluded: Vec<Vec<u8>> = in_tree(
            &state_dir
                .canonicalize()
                .unwrap_or_else(|_| state_dir.clone()),
        )
        .into_iter()
        .collect();
        excluded.extend(
            crate::files::own_output()
                .iter()
                .filter_map(|path| in_tree(path)),
        );
        let scanner = Scanner::new(&repo, &root)?;
        let store = match store {
            Some(store) => store,
            None => {
                let store = SnapshotStore::for_run(&repo)?;
                let backup = SnapshotStore::backup_folder(store.dir());
                let store = match store.clone().with_backup(backup.clone()) {
                    Ok(store) => store,
                    Err(error) => {
                        tracing::warn!(%error, dir = %backup.display(), "no second copy of the user's work");
                        store
                    }
                };
                journal::write_owner(&store, &root, &state_dir)?;
                store
            }
        };
        let set_aside_dir = repo
            .commondir()
            .join(SET_ASIDE_FOLDER)
            .join(store.dir().file_name().unwrap_or_default());
        let rule_files = seal::git_rule_files(&repo);
        Ok(Self {
            repo,
            scanner,
            root,
            store,
            base,
            excluded,
            protected: BTreeMap::new(),
            artifacts: BTreeSet::new(),
            dirty: BTreeSet::new(),
            clean: None,
            ignored: ignored::IgnoredFiles::default(),
            ignored_seen: BTreeSet::new(),
            ignored_after_gate: None,
            caches: None,
            known_git_files: std::cell::RefCell::default(),
            rule_files,
            sealed_work: std::cell::RefCell::default(),
            state_dir,
            turns_begun: std::cell::Cell::new(false),
            restoring: false,
            special_at_baseline: BTreeSet::new(),
            set_aside_dir,
            set_aside: std::cell::RefCell::default(),
            watching: looks::Watching::default(),
            folder_modes: BTreeMap::new(),
            owners: BTreeMap::new(),
            began: None,
            made_folders: std::cell::RefCell::default(),
            empty_folders: BTreeMap::new(),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn repository(&self) -> &git2::Repository {
        &self.repo
    }

    pub fn store(&self) -> &SnapshotStore {
        &self.store
    }

    /// The commit HEAD named when the run began.
    pub fn base_commit(&self) -> git2::Oid {
        self.base
    }

    /// The user's own work: what was dirty or untracked before the run, as it was.
    pub fn protected(&self) -> &BTreeMap<RepoPath, PathState> {
        &self.protected
    }

    /// After a gate run: paths that became dirty while it ran are its own files from now on.
    /// Returns the state the next delegate starts from.
    pub fn after_gate(&mut self) -> Result<Snapshot, WorkspaceError> {
        let before = std::mem::take(&mut self.dirty);
        let now = self.dirty_paths()?;
        self.artifacts.extend(
            now.difference(&before)
                .filter(|p| !self.protected.contains_key(*p))
                .cloned(),
        );
        self.dirty = now;
        self.look_at_clean_files(&Cancel::default())?;
        // What the gate made is its own; what a delegate makes next is cleared before the gate.
        self.ignored_after_gate = self.ignored_now().ok();
        if self.caches.is_none() {
            self.hold_caches()?;
        }
        self.snapshot_of(self.dirty.clone())
    }

    /// Paths that differ from the index (modified, deleted, untracked; not ignored, not in a
    /// submodule), less the state dir.
    pub fn dirty_paths(&self) -> Result<BTreeSet<RepoPath>, WorkspaceError> {
        Ok(self
            .look()?
            .dirty
            .into_iter()
            .filter(|path| !self.is_excluded(path))
            // A repository inside the tree comes as one folder, `path/`.
            .map(|mut path| {
                if path.last() == Some(&b'/') {
                    path.pop();
                }
                RepoPath::new(path)
            })
            .collect())
    }

    fn is_excluded(&self, path: &[u8]) -> bool {
        self.excluded.iter().any(|excluded| {
            path.strip_prefix(excluded.as_slice())
                .is_some_and(|rest| rest.is_empty() || rest[0] == b'/')
        })
    }

    /// Records the state of every dirty path (but the gate's own files); their bytes go to the
    /// store.
    pub fn snapshot(&mut self) -> Result<Snapshot, WorkspaceError> {
        self.snapshot_until(&Cancel::default())
    }

    /// [`Self::snapshot`], given up when `cancel` is asked (the first, which looks at every
    /// tracked file, is long in a big tree).
    fn snapshot_until(&mut self, cancel: &Cancel) -> Result<Snapshot, WorkspaceError> {
        self.dirty = self.dirty_paths()?;
        going_on(cancel)?;
        self.look_at_clean_files(cancel)?;
        going_on(cancel)?;
        self.snapshot_of(self.dirty.clone())
    }

    /// Records the clean tracked files the first time; later, looks again at those whose
    /// identity changed.
    fn look_at_clean_files(&mut self, cancel: &Cancel) -> Result<(), WorkspaceError> {
        if self.clean.is_some() {
            let among = self.changed_after(&self.watching.clean_mark);
            if let Some(clean) = &mut self.clean {
                return clean.refresh(&self.root, &self.dirty, &self.store, among.as_ref());
            }
        }
        self.watching
            .clean_mark
            .set(self.watching.looked.borrow().mark);
        let clean = clean_files::CleanFiles::record(
            &self.repo,
            &self.root,
            &self.dirty,
            &self.store,
            cancel,
        )?;
        self.watching.linked_at_baseline = clean.linked.clone();
        self.clean = Some(clean);
        self.look_at_ignored()
    }

    fn snapshot_of(&self, paths: BTreeSet<RepoPath>) -> Result<Snapshot, WorkspaceError> {
        let mut states = BTreeMap::new();
        for path in paths {
            if self.artifacts.contains(&path) {
                continue;
            }
            let state = PathState::read_at(&self.root, &path, Some(&self.store))?;
            states.insert(path, state);
        }
        Ok(Snapshot {
            paths: states,
            mark: self.watching.looked.borrow().mark,
        })
    }

    /// What to watch while a delegate runs: `.git`, files outside the tree that symlinks in it
    /// point to, and the state dir (but `own_files`, the delegate's to write).
    pub fn watch(&self, before: &Snapshot, own_files: &[PathBuf]) -> Result<Watch, WorkspaceError> {
        Watch::start(self, before, own_files)
    }

    /// [`Self::roll_back`] of whole attempts, whose turns began at `since` or later: the folders
    /// they made (see [`Self::note_made_folders`]) that are left empty go too.
    pub fn roll_back_attempts(
        &self,
        changes: &[Change],
        since: std::time::SystemTime,
    ) -> Result<(), WorkspaceError> {
        self.roll_back(changes, since)?;
        self.remove_made_folders(since);
        Ok(())
    }

    /// Puts every changed path back as it was before, and removes folders the changes created
    /// (made after `since`) that are now empty. Before writing anything, checks that every path
    /// still holds what the change left there: a difference means someone else is writing, and
    /// nothing is touched.
    pub fn roll_back(
        &self,
        changes: &[Change],
        since: std::time::SystemTime,
    ) -> Result<(), WorkspaceError> {
        let mut aside = rollback::SetAside {
            dir: &self.set_aside_dir,
            moved: Vec::new(),
        };
        let rolled_back = rollback::roll_back(&self.root, &self.store, changes, since, &mut aside);
        self.record_set_aside(aside);
        // A folder the rollback made anew takes its baseline mode, and what it put back its
        // baseline owner; the user's empty folders are made again.
        self.restore_empty_folders();
        self.restore_folder_modes();
        self.restore_owners();
        rolled_back
    }

    /// Notes the folders the delegate whose turn began at `started` made: those the watch saw
    /// change in its turn that are folders born since (not what git ignores).
    fn note_made_folders(&self, started: std::time::SystemTime) {
        let Some(paths) = &self.watching.changed_in_turn else {
            return;
        };
        let mut made = self.made_folders.borrow_mut();
        for path in paths {
            let full = self.root.join(std::ffi::OsStr::from_bytes(path));
            let born = std::fs::symlink_metadata(&full).ok().filter(|m| m.is_dir());
            // The user's own empty folder, made again by the loop, is not the delegate's.
            let users = self
                .empty_folders
                .contains_key(&RepoPath::new(path.clone()));
            if born.is_some_and(|m| m.created().is_ok_and(|at| at >= started))
                && !users
                && !self.is_ignored(&full)
            {
                made.entry(RepoPath::new(path.clone())).or_insert(started);
            }
        }
    }

    /// Removes the folders noted as made by turns that began at or after `since` and left
    /// empty by the rollback (deepest first; one with anything in it stays).
    fn remove_made_folders(&self, since: std::time::SystemTime) {
        let mut made = self.made_folders.borrow_mut();
        let ours: Vec<RepoPath> = (made.iter())
            .filter(|(_, began)| **began >= since)
            .map(|(path, _)| path.clone())
            .collect();
        for path in ours.iter().rev() {
            let full = path.under(&self.root);
            let born = std::fs::symlink_metadata(&full).ok().filter(|m| m.is_dir());
            if born.is_some_and(|m| m.created().is_ok_and(|at| at >= since)) {
                // Fails, and leaves it, when it is not empty.
                let _ = std::fs::remove_dir(&full);
            }
            made.remove(path);
        }
    }

    /// Remembers the folders `aside` holds: the loop did not make them.
    fn record_set_aside(&self, aside: rollback::SetAside<'_>) {
        self.set_aside.borrow_mut().extend(
            aside
                .moved
                .into_iter()
                .map(|(was, is)| (was, is, AsideWhy::NotMade)),
        );
    }

    /// The folders set aside so far (a rollback deletes none the loop did not make): one line
    /// each, saying where it was, why, and where it is now.
    pub fn set_aside(&self) -> Vec<String> {
        self.set_aside
            .borrow()
            .iter()
            .map(|(was, is, why)| {
                let why = match why {
                    AsideWhy::NotMade => "a folder the loop did not make",
                    AsideWhy::BeyondReach => {
                        "a folder made during the run beyond git's reach, nested too deep or \
                         with too long a path"
                    }
                };
                let span = |path: &Path| crate::markdown::code_span(&path.display().to_string());
                format!(
                    "{} ({why}) is set aside at {}",
                    span(was.strip_prefix(&self.root).unwrap_or(was)),
                    span(is)
                )
            })
            .collect()
    }
}

/// Why a folder was set aside rather than deleted or left.
#[derive(Debug, Clone, Copy)]
enum AsideWhy {
    /// A rollback found it where the delegate's change was, but the loop did not make it.
    NotMade,
    /// It was beyond the git library's reach (see `reach`).
    BeyondReach,
}

/// An error when a stop was asked for: the long looks at the start of a run check it as they
/// go, so that a signal ends the run within moments.
fn going_on(cancel: &Cancel) -> Result<(), WorkspaceError> {
    match cancel.is_requested() {
        true => Err(WorkspaceError::Cancelled),
        false => Ok(()),
    }
}

#[cfg(test)]
#[path = "workspace_tests.rs"]
mod tests;

#[cfg(test)]
mod rollback_property;
