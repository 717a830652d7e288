//! The journal of a turn in progress. Before a delegate starts, the state the tree must return to
//! if the turn is not judged to its end is written beside the kept bytes: the tree's dirty paths,
//! the user's own work, the gate's files, and every file of the git folders. The loop puts the
//! tree back from it on any error or panic; `refine-loop recover` does after the loop itself was
//! killed (SIGKILL, the OOM killer), and no run starts while one is on disk. Beside it,
//! `owner.json` says which run keeps bytes in the store folder, so that `recover` finds the
//! folders and journals runs left.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::listing::{files_under, stat_keys};
use super::rollback::remove_new_empty_folders;
use super::watch::{UNWATCHED_GIT_FOLDERS, put_back};
use super::{PathState, RepoPath, Snapshot, SnapshotStore, Watch, Workspace, WorkspaceError};

/// The journal's file, in the run's folder of kept bytes.
pub const JOURNAL_FILE: &str = "journal.json";
/// What a journal's `format` must be for this version to act on it.
pub(super) const FORMAT: u32 = 1;

/// One path and the state it returns to.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entry {
    pub path: RepoPath,
    pub state: PathState,
}

/// A file of the git folders and the state it returns to.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GitEntry {
    #[serde(with = "super::wire_bytes::path")]
    pub path: PathBuf,
    pub state: PathState,
}

/// What the tree returns to if a turn is not judged to its end.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Journal {
    pub format: u32,
    /// The run's mark: every process it started has `REFINE_LOOP_RUN` set to it.
    pub run: String,
    pub pid: u32,
    /// What the run was doing, for the messages of `recover`.
    pub turn: String,
    #[serde(with = "super::wire_bytes::path")]
    pub root: PathBuf,
    #[serde(with = "super::wire_bytes::path")]
    pub state_dir: PathBuf,
    /// When the turn began (seconds and nanoseconds since the epoch, by the file clock).
    pub since: (u64, u32),
    /// The dirty paths as they were (but the gate's files).
    pub tree: Vec<Entry>,
    /// The user's own work as the baseline found it.
    pub protected: Vec<Entry>,
    /// The gate's own files: never the delegate's, left as they are.
    pub artifacts: Vec<RepoPath>,
    /// The git folders watched, and every file in them.
    #[serde(with = "paths")]
    pub git_roots: Vec<PathBuf>,
    pub git_files: Vec<GitEntry>,
    /// The clean tracked files whose state is not their blob's with git's usual mode (a
    /// `File` with no hash: the blob's bytes, with this mode).
    #[serde(default)]
    pub clean: Vec<Entry>,
    /// Where the second copies of the user's work are, if anywhere.
    #[serde(default, with = "optional_path")]
    pub backup: Option<PathBuf>,
    /// The files git ignores that the baseline kept (`.env`), as they were.
    #[serde(default)]
    pub ignored: Vec<Entry>,
}

/// A path in JSON as [`super::wire_bytes::path`] writes it (text, or its bytes when not UTF-8).
#[derive(Serialize, Deserialize)]
struct WirePath(#[serde(with = "super::wire_bytes::path")] PathBuf);

mod optional_path {
    use std::path::PathBuf;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::WirePath;

    pub fn serialize<S: Serializer>(path: &Option<PathBuf>, s: S) -> Result<S::Ok, S::Error> {
        path.clone().map(WirePath).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<PathBuf>, D::Error> {
        Ok(Option::<WirePath>::deserialize(d)?.map(|WirePath(path)| path))
    }
}

mod paths {
    use std::path::PathBuf;

    use serde::{Deserialize, Deserializer, Serializer};

    use super::WirePath;

    pub fn serialize<S: Serializer>(paths: &[PathBuf], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(paths.iter().cloned().map(WirePath))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<PathBuf>, D::Error> {
        let paths = Vec::<WirePath>::deserialize(d)?;
        Ok(paths.into_iter().map(|WirePath(path)| path).collect())
    }
}

impl Journal {
    pub fn since(&self) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::new(self.since.0, self.since.1)
    }

    /// The state every path the journal names returns to: the user's work as the baseline
    /// found it, the rest as the turn found it.
    fn target(&self) -> Snapshot {
        let mut paths: BTreeMap<RepoPath, PathState> = self
            .tree
            .iter()
            .map(|entry| (entry.path.clone(), entry.state.clone()))
            .collect();
        for entry in &self.protected {
            paths.insert(entry.path.clone(), entry.state.clone());
        }
        Snapshot { paths, mark: None }
    }

    /// Reads the journal at `path`.
    pub fn read(path: &Path) -> Result<Self, WorkspaceError> {
        let journal: Self = read_json(path, MAX_JOURNAL, "a journal")?;
        if journal.format != FORMAT {
            return Err(WorkspaceError::Io {
                path: path.to_path_buf(),
                source: std::io::Error::other(format!(
                    "a journal of format {} (this version reads {FORMAT})",
                    journal.format
                )),
            });
        }
        Ok(journal)
    }
}

/// The largest journal read (it lists the dirty paths and the git folders' files).
const MAX_JOURNAL: u64 = 256 * 1024 * 1024;

impl Workspace {
    /// Writes the journal of a turn about to begin from `before`, the git folders as `watch`
    /// found them.
    pub fn begin_turn(
        &self,
        watch: &mut Watch,
        before: &Snapshot,
        turn: String,
    ) -> Result<Journal, WorkspaceError> {
        let since = watch
            .started()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        let entries = |map: &BTreeMap<RepoPath, PathState>| -> Vec<Entry> {
            map.iter()
                .map(|(path, state)| Entry {
                    path: path.clone(),
                    state: state.clone(),
                })
                .collect()
        };
        let journal = Journal {
            format: FORMAT,
            run: crate::process::run_mark().to_string(),
            pid: std::process::id(),
            turn,
            root: self.root.clone(),
            state_dir: self.state_dir.clone(),
            since: (since.as_secs(), since.subsec_nanos()),
            tree: entries(&before.paths),
            protected: entries(&self.protected),
            artifacts: self.artifacts.iter().cloned().collect(),
            git_roots: watch.git_roots.clone(),
            git_files: watch
                .git_files
                .iter()
                .map(|(path, (_, state))| GitEntry {
                    path: path.clone(),
                    state: state.clone(),
                })
                .collect(),
            backup: self.store.backup().map(Path::to_path_buf),
            ignored: self
                .ignored
                .kept()
                .map(|(path, state)| Entry {
                    path: path.clone(),
                    state: state.clone(),
                })
                .collect(),
            clean: self
                .clean
                .as_ref()
                .map(|clean| clean.exceptions(&self.repo))
                .unwrap_or_default()
                .into_iter()
                .map(|(path, state)| Entry { path, state })
                .collect(),
        };
        self.rewrite_journal(&journal)?;
        // The journal is the loop's own too: the delegate must leave it as it is.
        watch.store_files.extend(stat_keys(self.store.dir()));
        self.turns_begun.set(true);
        Ok(journal)
    }

    /// Writes `journal` (again, when a delegate removed or changed it).
    pub fn rewrite_journal(&self, journal: &Journal) -> Result<(), WorkspaceError> {
        write_json(&self.journal_path(), journal)
    }

    /// The turn was judged to its end: its journal goes.
    pub fn end_turn(&self) -> Result<(), WorkspaceError> {
        let path = self.journal_path();
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(WorkspaceError::Io { path, source }),
        }
    }

    fn journal_path(&self) -> PathBuf {
        self.store.dir().join(JOURNAL_FILE)
    }

    /// Puts the tree back as `journal` says: the git folders' files first (the index decides
    /// what is clean), then every path that differs from its state then, the user's work as the
    /// baseline found it. Checks the result and removes the journal; returns the paths put back.
    pub fn restore(&mut self, journal: &Journal) -> Result<Vec<String>, WorkspaceError> {
        self.restoring = true;
        let restored = self.restore_from(journal);
        self.restoring = false;
        restored
    }

    fn restore_from(&mut self, journal: &Journal) -> Result<Vec<String>, WorkspaceError> {
        self.began = Some(journal.since());
        let mut restored = self.restore_git_files(journal)?;
        // A run that was killed: its record of the clean files comes from the index (put back
        // just now) and the journal.
        if self.clean.is_none() {
            let exceptions = journal
                .clean
                .iter()
                .map(|entry| (entry.path.clone(), entry.state.clone()))
                .collect();
            self.clean = Some(super::clean_files::CleanFiles::from_index(
                &self.repo,
                &exceptions,
            )?);
        }
        // Ignored files (`.env`) as the baseline kept them: a killed run's from its journal.
        if self.ignored.kept().next().is_none() {
            self.ignored = super::ignored::IgnoredFiles::from_journal(
                journal
                    .ignored
                    .iter()
                    .map(|entry| (entry.path.clone(), entry.state.clone())),
            );
        }
        restored.extend(self.restore_ignored()?.iter().map(ToString::to_string));
        self.artifacts.extend(journal.artifacts.iter().cloned());
        for entry in &journal.protected {
            self.protected
                .insert(entry.path.clone(), entry.state.clone());
        }
        let target = journal.target();
        // What the turn made goes first: it may be what filled the disk.
        restored.extend(self.remove_made(&target, journal.since())?);
        let changes = self.changes_since(&target)?;
        restored.extend(changes.iter().map(|change| change.path.to_string()));
        self.roll_back(&changes, journal.since())?;
        // Git does not see a folder without files: one the turn made and left empty goes too.
        let skip = [self.repo.path().to_path_buf(), self.state_dir.clone()];
        restored.extend(remove_new_empty_folders(&self.root, &skip, journal.since()));
        let left = self.changes_since(&target)?;
        if let Some(change) = left.first() {
            return Err(WorkspaceError::NotRestored {
                path: change.path.clone(),
                expected: change.before.describe(),
                found: change.after.describe(),
            });
        }
        self.end_turn()?;
        Ok(restored)
    }

    /// Removes the untracked paths that `target` does not hold (but the gate's files): the turn
    /// made them. Returns them.
    fn remove_made(
        &self,
        target: &Snapshot,
        since: SystemTime,
    ) -> Result<Vec<String>, WorkspaceError> {
        let index = self.repo.index()?;
        let mut made = Vec::new();
        for path in self.dirty_paths()? {
            let tracked = index
                .get_path(Path::new(std::ffi::OsStr::from_bytes(path.as_bytes())), 0)
                .is_some();
            if tracked || target.paths.contains_key(&path) || self.artifacts.contains(&path) {
                continue;
            }
            let after = PathState::read_at(&self.root, &path, None)?;
            made.push(super::Change {
                path,
                before: PathState::Absent,
                after,
            });
        }
        self.roll_back(&made, since)?;
        Ok(made.iter().map(|change| change.path.to_string()).collect())
    }

    fn restore_git_files(&self, journal: &Journal) -> Result<Vec<String>, WorkspaceError> {
        let kept: BTreeMap<&Path, &PathState> = journal
            .git_files
            .iter()
            .map(|entry| (entry.path.as_path(), &entry.state))
            .collect();
        let mut roots = journal.git_roots.clone();
        roots.push(journal.root.clone());
        let mut restored = Vec::new();
        let mut now: BTreeSet<PathBuf> = BTreeSet::new();
        for root in &journal.git_roots {
            now.extend(
                files_under(root, &UNWATCHED_GIT_FOLDERS, usize::MAX)
                    .into_iter()
                    .map(|(path, _)| path),
            );
        }
        for (path, state) in &kept {
            let current = PathState::read(path, None)?;
            if current != **state {
                put_back(path, state, &roots, &self.store)?;
                restored.push(path.display().to_string());
            }
        }
        for path in now.iter().filter(|path| !kept.contains_key(path.as_path())) {
            put_back(path, &PathState::Absent, &roots, &self.store)?;
            restored.push(path.display().to_string());
        }
        Ok(restored)
    }

    /// Opens the repository of a journal left by a run that ended mid-turn, with that run's kept
    /// bytes, to put the tree back.
    pub fn reopen(journal_path: &Path) -> Result<(Self, Journal), WorkspaceError> {
        let journal = Journal::read(journal_path)?;
        let store_dir = journal_path.parent().unwrap_or(Path::new("."));
        let mut store = SnapshotStore::existing(store_dir);
        if let Some(backup) = &journal.backup {
            store = store.with_backup(backup.clone()).unwrap_or_else(|error| {
                tracing::warn!(%error, "the second copies cannot be used");
                SnapshotStore::existing(store_dir)
            });
        }
        let mut workspace = Self::open_with_store(&journal.root, &journal.state_dir, Some(store))?;
        if let Some(why) = foreign(&journal, store_dir, workspace.rule_files()) {
            return Err(WorkspaceError::Io {
                path: journal_path.to_path_buf(),
                source: std::io::Error::other(format!(
                    "not a journal of this repository's runs ({why}): nothing is put back; \
                     remove it once you have read it"
                )),
            });
        }
        workspace.artifacts = journal.artifacts.iter().cloned().collect();
        Ok((workspace, journal))
    }
}

/// Why the journal in the store folder `store_dir` (`<common git dir>/refine-loop/snapshots/<run>`)
/// was not written by a run of that repository, if it was not: its tree is not a work tree of
/// the repository, or a git folder or file it names lies outside the repository's git dirs and
/// that tree and is none of git's rule files outside them (`rules`: the global config, an
/// excludes file). `recover` writes every path a journal names; one forged in the store must not
/// have it write elsewhere.
fn foreign(journal: &Journal, store_dir: &Path, rules: &[PathBuf]) -> Option<String> {
    let resolve = |path: &Path| path.canonicalize().ok();
    let common = store_dir.ancestors().nth(3).and_then(resolve)?;
    let root = resolve(&journal.root)?;
    let repository = git2::Repository::open(&root).ok();
    let same = repository
        .as_ref()
        .and_then(|repository| resolve(repository.commondir()))
        .is_some_and(|theirs| theirs == common);
    if !same {
        return Some(format!(
            "its tree {} is not a work tree of it",
            root.display()
        ));
    }
    let inside = |path: &Path| {
        let path = resolve(path).or_else(|| {
            let parent = resolve(path.parent()?)?;
            Some(parent.join(path.file_name()?))
        });
        path.is_some_and(|path| {
            path.starts_with(&common)
                || path.starts_with(&root)
                || rules
                    .iter()
                    .any(|rule| resolve(rule).is_some_and(|rule| rule == path))
        })
    };
    let outside = (journal.git_roots.iter())
        .chain(journal.git_files.iter().map(|entry| &entry.path))
        .find(|path| !inside(path));
    outside.map(|path| format!("it names {}", path.display()))
}

// Who keeps bytes in a folder of the store (the run's mark, pid and state dir), the folders
// and journals runs left, and the plain file reads and writes of both.

/// Who keeps bytes in a folder of the store: its run's mark, pid and state dir.
pub const OWNER_FILE: &str = "owner.json";

/// The run that keeps bytes in a folder of the store.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Owner {
    pub format: u32,
    pub run: String,
    pub pid: u32,
    #[serde(with = "super::wire_bytes::path")]
    pub root: PathBuf,
    #[serde(with = "super::wire_bytes::path")]
    pub state_dir: PathBuf,
}

impl Owner {
    /// Reads the owner of the store folder `dir`.
    pub fn read(dir: &Path) -> Result<Self, WorkspaceError> {
        read_json(&dir.join(OWNER_FILE), 64 * 1024, "an owner file")
    }
}

/// Says, in a new store folder, which run keeps bytes there.
pub(super) fn write_owner(
    store: &SnapshotStore,
    root: &Path,
    state_dir: &Path,
) -> Result<(), WorkspaceError> {
    let owner = Owner {
        format: FORMAT,
        run: crate::process::run_mark().to_string(),
        pid: std::process::id(),
        root: root.to_path_buf(),
        state_dir: state_dir.to_path_buf(),
    };
    write_json(&store.dir().join(OWNER_FILE), &owner)
}

/// The folders of the store in the repository at `git_common_dir`: one per run that has not
/// ended cleanly yet (or is still going).
pub fn store_folders(git_common_dir: &Path) -> Vec<PathBuf> {
    let folder = git_common_dir.join(super::STORE_FOLDER);
    let Ok(entries) = std::fs::read_dir(&folder) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
        .map(|entry| entry.path())
        .collect();
    found.sort();
    found
}

/// The journals of turns left in progress in the repository at `git_common_dir`.
pub fn journals_in(git_common_dir: &Path) -> Vec<PathBuf> {
    store_folders(git_common_dir)
        .into_iter()
        .map(|folder| folder.join(JOURNAL_FILE))
        .filter(|path| std::fs::symlink_metadata(path).is_ok())
        .collect()
}

/// Writes `value` as JSON to `path` through a new file renamed over it, owner-only and synced.
fn write_json(path: &Path, value: &impl Serialize) -> Result<(), WorkspaceError> {
    let io_error = |source| WorkspaceError::Io {
        path: path.to_path_buf(),
        source,
    };
    let bytes = serde_json::to_vec(value).map_err(|error| io_error(error.into()))?;
    crate::files::write_atomic(path, &bytes, crate::files::WriteOptions::PRIVATE).map_err(io_error)
}

/// Reads the JSON of `what` at `path`: a regular file of at most `limit` bytes, never read
/// through a symlink and never a FIFO or a device; a missing file is an error here.
fn read_json<T: serde::de::DeserializeOwned>(
    path: &Path,
    limit: u64,
    what: &str,
) -> Result<T, WorkspaceError> {
    let io_error = |source| WorkspaceError::Io {
        path: path.to_path_buf(),
        source,
    };
    let bytes = crate::files::read_regular(path, limit)
        .map_err(io_error)?
        .ok_or_else(|| {
            io_error(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "not found",
            ))
        })?;
    serde_json::from_slice(&bytes)
        .map_err(|error| io_error(std::io::Error::other(format!("not {what}: {error}"))))
}

impl Workspace {
    /// Removes the kept bytes: the run is over and nothing is left to put back. The folders
    /// above go too when no other run keeps anything there.
    pub fn discard_store(&self) {
        let dir = self.store.dir();
        if let Err(error) = std::fs::remove_dir_all(dir) {
            tracing::warn!(%error, dir = %dir.display(), "could not remove the kept file contents");
        }
        if let Some(backup) = self.store.backup()
            && let Err(error) = std::fs::remove_dir_all(backup)
            && error.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(%error, dir = %backup.display(), "could not remove the second copies");
        }
        for folder in dir.ancestors().skip(1).take(2) {
            if std::fs::remove_dir(folder).is_err() {
                break;
            }
        }
    }

    /// The run is over: the kept bytes go when it ended cleanly or before any delegate ran, and
    /// stay (said in the log) when not.
    pub fn end_run(&self, clean: bool) {
        if clean || !self.turns_begun.get() {
            self.discard_store();
        } else {
            tracing::warn!(
                dir = %self.store.dir().display(),
                "the run did not end cleanly: the kept file contents stay"
            );
        }
    }
}
