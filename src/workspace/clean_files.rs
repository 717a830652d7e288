//! The tracked files git calls clean, as the loop last saw them: each one's file-system identity
//! and what it held. That is the raw blob (written back from the object store, no filter
//! applied) where nothing converts between the index and the tree; where attributes or config
//! could (line endings, a smudge filter, an `ident`, an encoding) and the bytes on disk are not
//! the blob's, the bytes on disk themselves, kept in the store when the baseline is recorded.
//! A clean file's state before a change is read from here, never re-derived from the index, and
//! a file whose identity changed is looked at whatever git says of it (an edit hidden from
//! `git status` by a rewritten index or by attributes is still found).

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::time::SystemTime;

use super::listing::StatKey;
use super::watch::coarse_now;
use super::{PathState, RepoPath, SnapshotStore, WorkspaceError};
use crate::cancel::Cancel;

/// The attributes under which git may write a file's bytes other than its blob's.
const CONVERTING_ATTRIBUTES: [&str; 6] = [
    "text",
    "eol",
    "crlf",
    "filter",
    "ident",
    "working-tree-encoding",
];

/// Files up to this size are hashed (to see whether they hold their blob) without looking up
/// their attributes first.
const HASH_WITHOUT_LOOKUP: u64 = 256 * 1024;

/// Git's modes of the index entries that are files or symlinks in the tree.
const FILE_MODES: [u32; 3] = [0o100_644, 0o100_755, 0o120_000];

#[derive(Debug, Default)]
pub(super) struct CleanFiles {
    /// Sorted by path: a vector, not a map, for a record of every clean file is the run's
    /// largest structure (100,000 files: 27 MB as a map of full stat keys).
    entries: Entries,
    /// Files with more than one name when recorded.
    pub(super) linked: BTreeSet<Vec<u8>>,
    /// The entries that may be exceptions (read, or a blob with another mode than git's
    /// usual): a journal lists these without going through every entry.
    unusual: BTreeSet<RepoPath>,
}

#[derive(Debug)]
pub(super) struct Entry {
    /// `None` when not known (rebuilt from a journal): git's status says what changed. The key
    /// is hashed: it is only compared.
    stat: Option<u64>,
    /// Written in the same tick as it was looked at: its identity proves nothing.
    racy: bool,
    held: Held,
}

#[derive(Debug)]
enum Held {
    /// The blob's bytes exactly, with the file's mode on disk; written to the store when needed.
    Blob { id: git2::Oid, mode: u32 },
    /// What was read from the tree (a file's bytes are in the store).
    Read(Box<PathState>),
}

impl CleanFiles {
    /// Looks at every file the index tracks that is not in `dirty`: its identity, and whether
    /// its bytes are its blob's (else they are kept in `store`); given up when `cancel` is
    /// asked.
    pub(super) fn record(
        repo: &git2::Repository,
        root: &Path,
        dirty: &BTreeSet<RepoPath>,
        store: &SnapshotStore,
        cancel: &Cancel,
    ) -> Result<Self, WorkspaceError> {
        let converts_everything = autocrlf_converts(repo)?;
        let index = repo.index()?;
        let attributed = converts_everything || has_attributes(repo, &index, dirty);
        let taken = coarse_now();
        let mut entries = Vec::new();
        let mut linked = BTreeSet::new();
        let mut unusual = BTreeSet::new();
        for entry in index.iter() {
            super::going_on(cancel)?;
            let path = RepoPath::new(entry.path.clone());
            let stage = (entry.flags >> 12) & 0b11;
            if stage != 0 || !FILE_MODES.contains(&entry.mode) || dirty.contains(&path) {
                continue;
            }
            let full = path.under(root);
            let Ok(metadata) = std::fs::symlink_metadata(&full) else {
                continue;
            };
            if metadata.is_file() && metadata.nlink() > 1 {
                linked.insert(path.as_bytes().to_vec());
            }
            let held = if metadata.file_type().is_symlink() {
                Held::Read(Box::new(PathState::read(&full, None)?))
            } else if !metadata.is_file() {
                continue;
            } else if attributed
                && (converts_everything
                    // A small file is hashed sooner than its attributes are looked up.
                    || metadata.len() <= HASH_WITHOUT_LOOKUP
                    || converts(repo, &path)?)
                && !holds_blob(&full, entry.id)
            {
                Held::Read(Box::new(PathState::read(&full, Some(store))?))
            } else {
                Held::Blob {
                    id: entry.id,
                    mode: metadata.permissions().mode() & 0o7777,
                }
            };
            let usual = matches!(held, Held::Blob { mode, .. } if mode == usual_mode(entry.mode));
            if !usual {
                unusual.insert(path.clone());
            }
            entries.push((
                path,
                Entry {
                    stat: Some(stat_digest(&StatKey::of(&metadata))),
                    racy: is_racy(&metadata, taken),
                    held,
                },
            ));
        }
        Ok(Self {
            entries: Entries::new(entries),
            linked,
            unusual,
        })
    }

    /// The record holds `path`.
    pub(super) fn has(&self, path: &RepoPath) -> bool {
        self.entries.get(path).is_some()
    }

    /// What a journal keeps of the record: the files whose state is not their blob's with git's
    /// usual mode (kept bytes, a symlink, another mode).
    pub(super) fn exceptions(&self, repo: &git2::Repository) -> Vec<(RepoPath, PathState)> {
        let index = repo.index().ok();
        self.unusual
            .iter()
            .filter_map(|path| Some((path, self.entries.get(path)?)))
            .filter_map(|(path, entry)| match &entry.held {
                Held::Read(state) => Some((path.clone(), (**state).clone())),
                Held::Blob { mode, .. } => {
                    let usual = index
                        .as_ref()
                        .and_then(|index| {
                            index.get_path(
                                Path::new(std::ffi::OsStr::from_bytes(path.as_bytes())),
                                0,
                            )
                        })
                        .is_some_and(|indexed| usual_mode(indexed.mode) == *mode);
                    // Another mode: said as a state with no bytes kept (the blob has them).
                    (!usual).then(|| {
                        (
                            path.clone(),
                            PathState::File {
                                sha256: String::new(),
                                mode: *mode,
                            },
                        )
                    })
                }
            })
            .collect()
    }

    /// The record rebuilt from the index and a journal's `exceptions`, for a run that was
    /// killed: every tracked file held its blob with git's usual mode, but those.
    pub(super) fn from_index(
        repo: &git2::Repository,
        exceptions: &BTreeMap<RepoPath, PathState>,
    ) -> Result<Self, WorkspaceError> {
        let mut entries = Vec::new();
        for entry in repo.index()?.iter() {
            let path = RepoPath::new(entry.path.clone());
            let stage = (entry.flags >> 12) & 0b11;
            if stage != 0 || !FILE_MODES.contains(&entry.mode) {
                continue;
            }
            let held = match exceptions.get(&path) {
                Some(PathState::File { sha256, mode }) if sha256.is_empty() => Held::Blob {
                    id: entry.id,
                    mode: *mode,
                },
                Some(state) => Held::Read(Box::new(state.clone())),
                None => Held::Blob {
                    id: entry.id,
                    mode: usual_mode(entry.mode),
                },
            };
            entries.push((
                path,
                Entry {
                    stat: None,
                    racy: false,
                    held,
                },
            ));
        }
        let unusual = exceptions.keys().cloned().collect();
        Ok(Self {
            entries: Entries::new(entries),
            linked: BTreeSet::new(),
            unusual,
        })
    }

    /// The recorded files whose identity is not what it was (or proves nothing): whatever git
    /// says, each may have been written.
    /// With `among` (the paths the tree watch reported, folders for all beneath them), only
    /// those are looked at: a write to any other has an event.
    pub(super) fn touched(
        &self,
        root: &Path,
        among: Option<&BTreeSet<Vec<u8>>>,
    ) -> BTreeSet<RepoPath> {
        let Some(among) = among else {
            return self.touched_in_parallel(root);
        };
        let mut touched = BTreeSet::new();
        for top in among {
            let beneath = self
                .entries
                .from(&RepoPath::new(top.clone()))
                .take_while(|(path, _)| path.as_bytes().starts_with(top))
                .filter(|(path, _)| super::looks::is_at_or_beneath(path.as_bytes(), top));
            touched.extend(self.touched_in(root, beneath));
        }
        touched
    }

    /// [`Self::touched_in`] of every entry, in a lane per core: a file's metadata is most of it.
    fn touched_in_parallel(&self, root: &Path) -> BTreeSet<RepoPath> {
        /// Fewer entries than this are looked at in one lane.
        const LANE: usize = 4096;
        let all: Vec<(&RepoPath, &Entry)> = self.entries.iter().collect();
        let lanes = std::thread::available_parallelism().map_or(1, usize::from);
        if lanes < 2 || all.len() < 2 * LANE {
            return self.touched_in(root, all.into_iter());
        }
        let size = all.len().div_ceil(lanes).max(LANE);
        std::thread::scope(|scope| {
            let lanes: Vec<_> = all
                .chunks(size)
                .map(|part| scope.spawn(move || self.touched_in(root, part.iter().copied())))
                .collect();
            // A lane that failed proves nothing: all it held is looked at again.
            lanes
                .into_iter()
                .zip(all.chunks(size))
                .flat_map(|(lane, part)| {
                    lane.join()
                        .unwrap_or_else(|_| part.iter().map(|(path, _)| (*path).clone()).collect())
                })
                .collect()
        })
    }

    fn touched_in<'a>(
        &self,
        root: &Path,
        entries: impl Iterator<Item = (&'a RepoPath, &'a Entry)>,
    ) -> BTreeSet<RepoPath> {
        entries
            .filter(|(path, entry)| {
                entry.stat.is_some()
                    && (entry.racy
                        || std::fs::symlink_metadata(path.under(root)).map_or(true, |metadata| {
                            Some(stat_digest(&StatKey::of(&metadata))) != entry.stat
                        }))
            })
            .map(|(path, _)| path.clone())
            .collect()
    }

    /// What `path` held when it was last seen clean, `None` when it is not a recorded file. A
    /// blob's bytes go to the store now.
    pub(super) fn state_of(
        &mut self,
        path: &RepoPath,
        repo: &git2::Repository,
        store: &SnapshotStore,
    ) -> Result<Option<PathState>, WorkspaceError> {
        let Some(entry) = self.entries.get_mut(path) else {
            return Ok(None);
        };
        if let Held::Blob { id, mode } = entry.held {
            let blob = repo.find_blob(id)?;
            let sha256 = store
                .put_bytes(blob.content())
                .map_err(|source| WorkspaceError::Io {
                    path: store.dir().to_path_buf(),
                    source,
                })?;
            entry.held = Held::Read(Box::new(PathState::File { sha256, mode }));
            self.unusual.insert(path.clone());
        }
        Ok(match &entry.held {
            Held::Read(state) => Some((**state).clone()),
            Held::Blob { .. } => None,
        })
    }

    /// Looks again at the recorded files that are not in `dirty` and whose identity changed
    /// (a rollback rewrote them, the gate touched them): what they hold now is what the next
    /// change starts from.
    pub(super) fn refresh(
        &mut self,
        root: &Path,
        dirty: &BTreeSet<RepoPath>,
        store: &SnapshotStore,
        among: Option<&BTreeSet<Vec<u8>>>,
    ) -> Result<(), WorkspaceError> {
        let taken = coarse_now();
        for path in self.touched(root, among) {
            if dirty.contains(&path) {
                continue;
            }
            let full = path.under(root);
            let Ok(metadata) = std::fs::symlink_metadata(&full) else {
                continue;
            };
            let state = PathState::read_at(root, &path, Some(store))?;
            // The state is read after the identity: a write in between makes the next look
            // read it again, never keeps it unseen.
            if let Some(entry) = self.entries.get_mut(&path) {
                entry.stat = Some(stat_digest(&StatKey::of(&metadata)));
                entry.racy = is_racy(&metadata, taken);
                entry.held = Held::Read(Box::new(state));
                self.unusual.insert(path.clone());
            }
        }
        Ok(())
    }
}

/// The mode git gives a file of index mode `indexed` in a new checkout.
fn usual_mode(indexed: u32) -> u32 {
    if indexed == 0o100_755 { 0o755 } else { 0o644 }
}

/// Whether a file changed at or after `taken` (the tick its identity was read in): a write
/// later in the same tick would leave every time the same.
fn is_racy(metadata: &std::fs::Metadata, taken: SystemTime) -> bool {
    let changed = SystemTime::UNIX_EPOCH
        .checked_add(std::time::Duration::new(
            u64::try_from(metadata.ctime()).unwrap_or(0),
            u32::try_from(metadata.ctime_nsec()).unwrap_or(0),
        ))
        .unwrap_or(SystemTime::UNIX_EPOCH);
    changed >= taken
}

/// Whether `core.autocrlf` is anything but off: then any file's bytes may be its blob's with
/// other line endings.
fn autocrlf_converts(repo: &git2::Repository) -> Result<bool, WorkspaceError> {
    let config = repo.config()?;
    Ok(match config.get_string("core.autocrlf") {
        Ok(value) => !matches!(
            value.to_ascii_lowercase().as_str(),
            "false" | "no" | "off" | "0" | ""
        ),
        Err(error) if error.code() == git2::ErrorCode::NotFound => false,
        Err(error) => return Err(error.into()),
    })
}

/// Whether any file of attributes may apply: a `.gitattributes` in the index or the tree's
/// dirty paths, the repository's `info/attributes`, `core.attributesFile`, or a user's or the
/// system's attributes file. Without one, no attribute converts anything.
fn has_attributes(
    repo: &git2::Repository,
    index: &git2::Index,
    dirty: &BTreeSet<RepoPath>,
) -> bool {
    let named = |path: &[u8]| path == b".gitattributes" || path.ends_with(b"/.gitattributes");
    let configured = repo.config().map_or(true, |config| {
        config.get_path("core.attributesFile").is_ok()
    });
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let user_files = [
        std::env::var_os("XDG_CONFIG_HOME")
            .map(|dir| std::path::PathBuf::from(dir).join("git/attributes")),
        home.map(|home| home.join(".config/git/attributes")),
    ];
    configured
        || index.iter().any(|entry| named(&entry.path))
        || dirty.iter().any(|path| named(path.as_bytes()))
        || repo.path().join("info/attributes").exists()
        || user_files.iter().flatten().any(|file| file.exists())
        || ["/etc/gitattributes", "/usr/local/etc/gitattributes"]
            .iter()
            .any(|file| Path::new(file).exists())
}

/// Whether any attribute that converts between the index and the tree is set, unset or given a
/// value for `path` (as the attributes read now, at the baseline, say).
fn converts(repo: &git2::Repository, path: &RepoPath) -> Result<bool, WorkspaceError> {
    let relative = Path::new(std::ffi::OsStr::from_bytes(path.as_bytes()));
    for name in CONVERTING_ATTRIBUTES {
        if repo
            .get_attr_bytes(relative, name, git2::AttrCheckFlags::FILE_THEN_INDEX)?
            .is_some()
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether the bytes at `full` are exactly the blob `id` (hashed raw, no filter applied).
fn holds_blob(full: &Path, id: git2::Oid) -> bool {
    git2::Oid::hash_file(git2::ObjectType::Blob, full).is_ok_and(|hashed| hashed == id)
}

// The clean-file record's storage: every tracked file the baseline found clean, sorted by
// path in one vector (the run's largest structure, so no map), with stat keys hashed.

/// The recorded files, sorted by path.
#[derive(Debug, Default)]
pub(super) struct Entries(Vec<(RepoPath, Entry)>);

impl Entries {
    pub(super) fn new(mut entries: Vec<(RepoPath, Entry)>) -> Self {
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        entries.dedup_by(|a, b| a.0 == b.0);
        entries.shrink_to_fit();
        Self(entries)
    }

    fn position(&self, path: &RepoPath) -> Option<usize> {
        self.0.binary_search_by(|(at, _)| at.cmp(path)).ok()
    }

    pub(super) fn get(&self, path: &RepoPath) -> Option<&Entry> {
        self.position(path).map(|at| &self.0[at].1)
    }

    pub(super) fn get_mut(&mut self, path: &RepoPath) -> Option<&mut Entry> {
        self.position(path).map(|at| &mut self.0[at].1)
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = (&RepoPath, &Entry)> {
        self.0.iter().map(|(path, entry)| (path, entry))
    }

    /// The entries from `path` on.
    pub(super) fn from<'a>(
        &'a self,
        path: &RepoPath,
    ) -> impl Iterator<Item = (&'a RepoPath, &'a Entry)> + use<'a> {
        let at = self.0.partition_point(|(at, _)| at < path);
        self.0[at..].iter().map(|(path, entry)| (path, entry))
    }
}

/// A stat key as the record keeps it.
pub(super) fn stat_digest(key: &StatKey) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::default().hash_one(key)
}
