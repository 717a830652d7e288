//! What a delegate must not do, watched while it runs: write into `.git`, write through a symlink
//! to a file outside the tree, link out of the tree (by a symlink or a hard link), rewrite the loop's own files in the state
//! dir, or touch the user's own work. Each is an incident; most make the delegate hostile.

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::time::SystemTime;

pub(super) use super::listing::StatKey;
use super::listing::{files_under, stat_keys};
use super::{
    Change, Incident, PathState, RepoPath, Snapshot, SnapshotStore, Workspace, WorkspaceError,
};

/// The watch kept while one delegate runs.
#[derive(Debug)]
pub struct Watch {
    started: SystemTime,
    /// Every file under the git folders (but object stores), with its state (bytes in the store).
    pub(super) git_files: BTreeMap<PathBuf, (StatKey, PathState)>,
    pub(super) git_roots: Vec<PathBuf>,
    dot_git_file: Option<PathBuf>,
    /// The rule files outside the git folders (see [`super::seal::git_rule_files`]).
    rule_files: Vec<PathBuf>,
    /// Symlinks in the tree that point outside it, and what their targets were.
    outside: Vec<(RepoPath, PathBuf, Option<OutsideKey>)>,
    root: PathBuf,
    state_dir: PathBuf,
    state_files: BTreeMap<PathBuf, StatKey>,
    own_files: Vec<PathBuf>,
    /// The loop's kept copies (and its journal), as the delegate found them.
    pub(super) store_files: BTreeMap<PathBuf, StatKey>,
    store_dir: PathBuf,
}

/// Git folders not watched: object stores only grow, by content address; the loop's own folder
/// holds the kept bytes, which are checked by their hash before any use.
pub(super) const UNWATCHED_GIT_FOLDERS: [&str; 3] = ["objects", "lfs", "refine-loop"];

impl Watch {
    pub(super) fn start(
        workspace: &Workspace,
        before: &Snapshot,
        own_files: &[PathBuf],
    ) -> Result<Self, WorkspaceError> {
        let started = coarse_now();
        let repo = &workspace.repo;
        let mut git_roots = vec![repo.path().to_path_buf()];
        if repo.commondir() != repo.path() {
            git_roots.push(repo.commondir().to_path_buf());
        }
        let mut git_files = BTreeMap::new();
        let mut known = workspace.known_git_files.borrow_mut();
        for root in &git_roots {
            for (path, metadata) in files_under(root, &UNWATCHED_GIT_FOLDERS, usize::MAX) {
                let key = StatKey::of(&metadata);
                let state = match known.get(&path) {
                    Some((known_key, state)) if *known_key == key => state.clone(),
                    _ => PathState::read(&path, Some(&workspace.store))?,
                };
                known.insert(path.clone(), (key, state.clone()));
                git_files.insert(path, (key, state));
            }
        }
        drop(known);
        // A linked worktree's `.git` is a file naming its git folder.
        let dot_git = workspace.root.join(".git");
        let mut dot_git_file = None;
        if let Ok(metadata) = std::fs::symlink_metadata(&dot_git)
            && !metadata.is_dir()
        {
            let state = PathState::read(&dot_git, Some(&workspace.store))?;
            git_files.insert(dot_git.clone(), (StatKey::of(&metadata), state));
            dot_git_file = Some(dot_git);
        }
        for path in &workspace.rule_files {
            if let Ok(metadata) = std::fs::symlink_metadata(path) {
                let state = PathState::read(path, Some(&workspace.store))?;
                git_files.insert(path.clone(), (StatKey::of(&metadata), state));
            }
        }
        let outside = outside_links(workspace, before)
            .into_iter()
            .map(|(link, target)| {
                let key = outside_key(&target);
                (link, target, key)
            })
            .collect();
        let state_files = stat_keys(&workspace.state_dir);
        Ok(Self {
            started,
            git_files,
            git_roots,
            dot_git_file,
            rule_files: workspace.rule_files.clone(),
            outside,
            root: workspace.root.clone(),
            state_dir: workspace.state_dir.clone(),
            state_files,
            own_files: own_files.to_vec(),
            store_files: stat_keys(workspace.store.dir()),
            store_dir: workspace.store.dir().to_path_buf(),
        })
    }

    /// When the delegate started, by the clock file times are stamped with.
    pub fn started(&self) -> SystemTime {
        self.started
    }

    /// Puts back every file in the git folders that the delegate changed, made or deleted.
    pub(super) fn restore_git_dir(
        &self,
        store: &SnapshotStore,
    ) -> Result<Vec<Incident>, WorkspaceError> {
        let mut now: BTreeMap<PathBuf, StatKey> = BTreeMap::new();
        for root in &self.git_roots {
            for (path, metadata) in files_under(root, &UNWATCHED_GIT_FOLDERS, usize::MAX) {
                now.insert(path, StatKey::of(&metadata));
            }
        }
        if let Some(dot_git) = &self.dot_git_file
            && let Ok(metadata) = std::fs::symlink_metadata(dot_git)
        {
            now.insert(dot_git.clone(), StatKey::of(&metadata));
        }
        for path in &self.rule_files {
            if let Ok(metadata) = std::fs::symlink_metadata(path) {
                now.insert(path.clone(), StatKey::of(&metadata));
            }
        }
        let mut incidents = Vec::new();
        for (path, (key, state)) in &self.git_files {
            if now.get(path) == Some(key) {
                continue;
            }
            let current = PathState::read(path, None)?;
            if current != *state {
                // An index rewritten by a refresh (`git status`) goes back too, silently: its
                // file times could otherwise vouch for an edit git would then not show.
                let refreshed = same_index_entries(path, state, store);
                put_back(path, state, &self.put_back_roots(), store)?;
                if !refreshed {
                    incidents.push(Incident::GitDirWritten {
                        path: self.shown(path),
                        created: false,
                    });
                }
            }
        }
        for path in now.keys().filter(|p| !self.git_files.contains_key(*p)) {
            put_back(path, &PathState::Absent, &self.put_back_roots(), store)?;
            incidents.push(Incident::GitDirWritten {
                path: self.shown(path),
                created: true,
            });
        }
        Ok(incidents)
    }

    /// The folders files of the git folders are put back under.
    fn put_back_roots(&self) -> Vec<PathBuf> {
        let mut roots = self.git_roots.clone();
        roots.push(self.root.clone());
        roots
    }

    /// `path` relative to the work tree when it is inside it.
    fn shown(&self, path: &Path) -> PathBuf {
        path.strip_prefix(&self.root)
            .map_or_else(|_| path.to_path_buf(), Path::to_path_buf)
    }

    /// Files outside the tree, reached through its symlinks, that changed.
    pub(super) fn outside_writes(&self) -> Vec<Incident> {
        self.outside
            .iter()
            .filter(|(_, target, key)| outside_key(target) != *key)
            .map(|(link, target, _)| Incident::WroteOutside {
                link: link.clone(),
                target: target.clone(),
            })
            .collect()
    }

    /// The kept copies the delegate removed or changed (a copy it added is not used).
    pub(super) fn store_writes(&self) -> Vec<Incident> {
        let now = stat_keys(&self.store_dir);
        self.store_files
            .iter()
            .filter(|(path, key)| now.get(*path) != Some(*key))
            .map(|(path, _)| Incident::StoreDamaged { path: path.clone() })
            .take(1)
            .collect()
    }

    /// The loop's files in the state dir that the delegate changed, and files it added there.
    pub(super) fn state_dir_writes(&self) -> Vec<Incident> {
        let now = stat_keys(&self.state_dir);
        let own = |path: &Path| self.own_files.iter().any(|own| own == path);
        let mut incidents: Vec<Incident> = self
            .state_files
            .iter()
            .filter(|(path, key)| !own(path) && now.get(*path) != Some(*key))
            .map(|(path, _)| Incident::StateDirWritten { path: path.clone() })
            .collect();
        incidents.extend(
            now.keys()
                .filter(|path| !own(path) && !self.state_files.contains_key(*path))
                .map(|path| Incident::StateDirAdded { path: path.clone() }),
        );
        incidents
    }
}

/// Whether `path` is an index file whose entries are what they were but for their file times
/// and ids (`git status` rewrites the index to refresh them: not hostile, though undone).
pub(super) fn same_index_entries(path: &Path, before: &PathState, store: &SnapshotStore) -> bool {
    let PathState::File { sha256, .. } = before else {
        return false;
    };
    if path.file_name().is_none_or(|name| name != "index") {
        return false;
    }
    // Everything but the file times and ids a refresh rewrites: the flags too, for a
    // skip-worktree or assume-unchanged bit hides an edit from git.
    type Entries = Vec<(Vec<u8>, git2::Oid, u32, u16, u16)>;
    let entries = |file: &Path| -> Option<Entries> {
        let index = git2::Index::open(file).ok()?;
        Some(
            index
                .iter()
                .map(|e| (e.path, e.id, e.mode, e.flags, e.flags_extended))
                .collect(),
        )
    };
    match (entries(&store.path_of(sha256)), entries(path)) {
        (Some(was), Some(is)) => was == is,
        _ => false,
    }
}

/// Puts `state` back at an absolute `path`, under the deepest of `roots` that holds it: no
/// folder between that root and the path may be a symlink (nothing is written through one).
pub(super) fn put_back(
    path: &Path,
    state: &PathState,
    roots: &[PathBuf],
    store: &SnapshotStore,
) -> Result<(), WorkspaceError> {
    let io_error = |source| WorkspaceError::Io {
        path: path.to_path_buf(),
        source,
    };
    let root = roots
        .iter()
        .filter(|root| path.starts_with(root))
        .max_by_key(|root| root.as_os_str().len())
        .map_or_else(|| path.parent().unwrap_or(Path::new("/")), PathBuf::as_path);
    let relative = path.strip_prefix(root).unwrap_or(path);
    let relative = RepoPath::new(relative.as_os_str().as_bytes().to_vec());
    state.restore(&relative, root, store).map_err(io_error)
}

/// A change that links out of the tree or into the git folder.
pub(super) fn escape_of(change: &Change, root: &Path, git_dir: &Path) -> Option<Incident> {
    let PathState::Symlink { target } = &change.after else {
        return None;
    };
    let full = change.path.under(root);
    let resolved = resolve_link(&full, target);
    let canonical_git = git_dir
        .canonicalize()
        .unwrap_or_else(|_| git_dir.to_path_buf());
    (!resolved.starts_with(root) || resolved.starts_with(&canonical_git)).then(|| {
        Incident::SymlinkOut {
            path: change.path.clone(),
            target: RepoPath::new(target.clone()).to_string(),
        }
    })
}

/// Where the symlink at `link` (with `target`) leads: followed through the file system where it
/// exists, worked out by its components where it does not.
fn resolve_link(link: &Path, target: &[u8]) -> PathBuf {
    let target = Path::new(std::ffi::OsStr::from_bytes(target));
    let joined = link.parent().unwrap_or(Path::new("/")).join(target);
    if let Ok(canonical) = joined.canonicalize() {
        return canonical;
    }
    let mut resolved = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::ParentDir => {
                resolved.pop();
            }
            Component::CurDir => {}
            other => resolved.push(other),
        }
    }
    resolved
}

/// Symlinks in the tree (tracked, or dirty now) that lead outside it, with where they lead.
fn outside_links(workspace: &Workspace, before: &Snapshot) -> Vec<(RepoPath, PathBuf)> {
    let mut links: Vec<RepoPath> = before
        .paths
        .iter()
        .filter(|(_, state)| matches!(state, PathState::Symlink { .. }))
        .map(|(path, _)| path.clone())
        .collect();
    if let Ok(index) = workspace.repo.index() {
        links.extend(
            index
                .iter()
                .filter(|entry| entry.mode == 0o120000)
                .map(|entry| RepoPath::new(entry.path)),
        );
    }
    links.sort();
    links.dedup();
    links
        .into_iter()
        .filter_map(|link| {
            let full = link.under(&workspace.root);
            let target = std::fs::read_link(&full).ok()?;
            let resolved = resolve_link(&full, target.as_os_str().as_bytes());
            (!resolved.starts_with(&workspace.root)).then_some((link, resolved))
        })
        .collect()
}

/// Files outside the tree that a watched symlink reaches, at most this many per link.
const OUTSIDE_FILES: usize = 10_000;

/// Every file's identity at and beneath a symlink's target outside the tree.
type OutsideKey = Vec<(PathBuf, StatKey)>;

/// What a symlink's target outside the tree is now: the file, or the folder and (up to
/// [`OUTSIDE_FILES`]) the files beneath it.
fn outside_key(target: &Path) -> Option<OutsideKey> {
    let metadata = std::fs::metadata(target).ok()?;
    let mut keys = vec![(target.to_path_buf(), StatKey::of(&metadata))];
    if metadata.is_dir() {
        keys.extend(
            files_under(target, &[], OUTSIDE_FILES)
                .into_iter()
                .map(|(path, metadata)| (path, StatKey::of(&metadata))),
        );
    }
    Some(keys)
}

/// The time the kernel stamps files with (its coarse clock): anything made after this moment has
/// a time at or after it.
pub(super) fn coarse_now() -> SystemTime {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_REALTIME_COARSE)
        .ok()
        .and_then(|now| {
            let seconds = u64::try_from(now.tv_sec()).ok()?;
            let nanos = u32::try_from(now.tv_nsec()).ok()?;
            SystemTime::UNIX_EPOCH.checked_add(std::time::Duration::new(seconds, nanos))
        })
        .unwrap_or_else(|| SystemTime::now() - std::time::Duration::from_millis(50))
}
