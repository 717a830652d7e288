//! A check must only read. The files a check changes (a linter whose project config says
//! `fix = true`, a formatter run without `--check`) are found when it ends, put back at once, and
//! named: a tracked file that matched the index goes back to the index's bytes; one that already
//! differed (the user's work, a delegate's change), and an untracked file that was there before
//! the check (the user's own, not ignored), goes back to the bytes it had before the check. What
//! a check makes anew (a cache, a report) is its output.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Bytes of files that differ from the index kept before each check to put them back; past it,
/// a change to them is still named.
const KEEP_LIMIT: u64 = 64 * 1024 * 1024;
/// Untracked files guarded at most (a tree with more that git does not ignore is not a
/// project's own work).
const MAX_UNTRACKED: usize = 10_000;

/// Lists the tracked files whose content differs from the index faster than a scan: the run's
/// workspace, from the paths its tree watch saw change.
pub trait TrackedList {
    /// The tracked files (relative, `/`-separated) that differ from the index now (modified,
    /// deleted, changed in type); `None` when it cannot tell (a scan is made instead).
    fn tracked_differing(&self) -> Option<Vec<Vec<u8>>>;

    /// The user's own paths (relative, `/`-separated): what differed from the index before the
    /// run, untracked files included, but what the gate made since. `None`: the untracked files
    /// there were when the gate began (see [`GateStart`]).
    fn users_own(&self) -> Option<Vec<Vec<u8>>> {
        None
    }

    /// Files git ignores that no check may change for the next (a tool's cache file, as the
    /// baseline's run left it): put back after each check, silently. None by default.
    fn held(&self) -> Vec<Vec<u8>> {
        Vec::new()
    }
}

/// The user's own files as one gate run sees them: the run's account when there is one, else
/// the untracked files there were before its first check (what an earlier check of the same
/// gate made, a `target/`, is the gate's output).
pub struct GateStart<'a> {
    list: Option<&'a dyn TrackedList>,
    users: Vec<Vec<u8>>,
}

impl<'a> GateStart<'a> {
    pub fn new(target: &Path, list: Option<&'a dyn TrackedList>) -> Self {
        let users = list.and_then(TrackedList::users_own).unwrap_or_else(|| {
            git2::Repository::discover(target)
                .ok()
                .and_then(|repo| untracked(&repo).ok())
                .unwrap_or_default()
        });
        Self { list, users }
    }
}

impl TrackedList for GateStart<'_> {
    fn tracked_differing(&self) -> Option<Vec<Vec<u8>>> {
        self.list.and_then(TrackedList::tracked_differing)
    }

    fn users_own(&self) -> Option<Vec<Vec<u8>>> {
        Some(self.users.clone())
    }

    fn held(&self) -> Vec<Vec<u8>> {
        self.list.map(TrackedList::held).unwrap_or_default()
    }
}

impl std::fmt::Debug for GateStart<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GateStart")
            .field("users", &self.users.len())
            .finish_non_exhaustive()
    }
}

/// The tracked files as a check found them.
pub struct TrackedGuard {
    repo: git2::Repository,
    root: PathBuf,
    /// Tracked files whose content differed from the index before the check: their digest, and
    /// their bytes when kept (`None`: gone, or past the limit).
    dirty: BTreeMap<Vec<u8>, Before>,
    /// The files held for the next check (see [`TrackedList::held`]), as they were before it.
    held: BTreeMap<Vec<u8>, Before>,
    /// The index before the check: its entries, and its file's bytes to put back when a check
    /// staged something (`git add` in a gate script); `None` when it could not be read.
    index: Option<(Entries, Vec<u8>, u32)>,
}

/// An index's entries: path to blob, mode and flags (`--assume-unchanged`, `--skip-worktree`),
/// by stage (a refreshed stat cache is no change).
type Entries = BTreeMap<(Vec<u8>, u16), (git2::Oid, u32, u16, u16)>;

/// The entries of the repository's index as its file holds them now.
fn entries(repo: &git2::Repository) -> Option<Entries> {
    let mut index = repo.index().ok()?;
    index.read(true).ok()?;
    Some(
        index
            .iter()
            .map(|entry| {
                let stage = (entry.flags >> 12) & 0x3;
                let flags = (entry.flags, entry.flags_extended);
                (
                    (entry.path, stage),
                    (entry.id, entry.mode, flags.0, flags.1),
                )
            })
            .collect(),
    )
}

impl std::fmt::Debug for TrackedGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrackedGuard")
            .field("root", &self.root)
            .field("dirty", &self.dirty.len())
            .finish_non_exhaustive()
    }
}

#[derive(Debug)]
enum Before {
    /// Deleted in the working tree.
    Absent,
    /// A symlink, a folder, or a file that could not be read: not compared.
    Other,
    /// A file: its digest, its bytes when kept (`None` past the limit) and its mode.
    File {
        digest: [u8; 32],
        bytes: Option<Vec<u8>>,
        mode: u32,
    },
    /// A file past what is kept: not read (a check would cost its size), only its identity.
    Large(Identity),
}

impl Before {
    /// How the file at `full` is now; its bytes are kept while `kept` (bytes kept so far)
    /// stays within [`KEEP_LIMIT`].
    fn of(full: &Path, kept: &mut u64) -> Self {
        match std::fs::symlink_metadata(full) {
            Ok(meta) if meta.is_file() && kept.saturating_add(meta.len()) > KEEP_LIMIT => {
                Self::Large(identity(&meta))
            }
            Ok(meta) if meta.is_file() => {
                use std::os::unix::fs::PermissionsExt;
                let Ok(bytes) = std::fs::read(full) else {
                    return Self::Other;
                };
                // A file that does not fit is named if changed; smaller ones after it are kept.
                let fits = *kept + bytes.len() as u64 <= KEEP_LIMIT;
                *kept += if fits { bytes.len() as u64 } else { 0 };
                Self::File {
                    digest: digest(&bytes),
                    bytes: fits.then_some(bytes),
                    mode: meta.permissions().mode(),
                }
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Self::Absent,
            _ => Self::Other,
        }
    }
}

/// A file's identity and version, by its metadata: device, inode, size, modified and changed.
type Identity = (u64, u64, u64, i64, i64, i64, i64);

fn identity(meta: &std::fs::Metadata) -> Identity {
    use std::os::unix::fs::MetadataExt;
    let times = (
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec(),
    );
    (
        meta.dev(),
        meta.ino(),
        meta.size(),
        times.0,
        times.1,
        times.2,
        times.3,
    )
}

/// What a check did to the tracked files.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Wrote {
    /// The files it changed, created or deleted (relative to the repository), put back.
    pub put_back: Vec<String>,
    /// Those it changed that could not be put back, and why.
    pub not_put_back: Vec<String>,
    /// It staged something (`git add`): the index was put back, with the edits it staged.
    pub staged: bool,
}

impl Wrote {
    pub fn is_empty(&self) -> bool {
        self.put_back.is_empty() && self.not_put_back.is_empty()
    }

    /// A check that changed the repository's files gave no result to trust: what it changed, and
    /// how to make it read-only.
    pub fn reason(&self) -> String {
        let wrote = self;
        let list = |names: &[String]| {
            let shown: Vec<&str> = names.iter().take(10).map(String::as_str).collect();
            let more = names.len().saturating_sub(shown.len());
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            format!("{}{more}", shown.join(", "))
        };
        let mut reason = String::from("it changed the repository's files");
        if !wrote.put_back.is_empty() {
            reason.push_str(&format!(", put back: {}", list(&wrote.put_back)));
        }
        if !wrote.not_put_back.is_empty() {
            reason.push_str(&format!("; NOT put back: {}", list(&wrote.not_put_back)));
        }
        reason.push_str(
            ". A gate check must only read: run its tool in check mode \
             (`ruff check --no-fix`, `cargo fmt --check`, `prettier --check`, `eslint` without --fix), \
             or have git ignore what it writes",
        );
        reason
    }
}

impl TrackedGuard {
    /// The tracked files under `target`'s repository before a check; `None` outside a git
    /// repository, in a bare one, or when git cannot list them (nothing is guarded then).
    /// `list`, when given, lists them (see [`TrackedList`]).
    pub fn before(target: &Path, state_dir: &Path, list: Option<&dyn TrackedList>) -> Option<Self> {
        let repo = git2::Repository::discover(target).ok()?;
        let root = repo.workdir()?.to_path_buf();
        let mut kept = 0u64;
        let mut dirty = BTreeMap::new();
        let mut paths = differing(&repo, list).ok()?;
        // The loop's own files (its state dir, its redirected output) are not the user's.
        let canonical_root = root.canonicalize().unwrap_or_else(|_| root.clone());
        let own: Vec<Vec<u8>> = std::iter::once(state_dir.to_path_buf())
            .chain(crate::files::own_output())
            .filter_map(|path| {
                let path = path.canonicalize().unwrap_or(path);
                let relative = path.strip_prefix(&canonical_root).ok()?;
                Some(relative.as_os_str().as_bytes().to_vec())
            })
            .filter(|relative| !relative.is_empty())
            .collect();
        let is_own = |path: &[u8]| {
            own.iter().any(|own| {
                path.strip_prefix(own.as_slice())
                    .is_some_and(|rest| rest.is_empty() || rest[0] == b'/')
            })
        };
        let users = list.and_then(TrackedList::users_own).unwrap_or_default();
        paths.extend(users.into_iter().filter(|path| !is_own(path)));
        paths.sort();
        paths.dedup();
        for path in paths {
            let before = Before::of(&root.join(OsStr::from_bytes(&path)), &mut kept);
            dirty.insert(path, before);
        }
        let held = list.map(TrackedList::held).unwrap_or_default();
        let held = (held.into_iter())
            .filter(|path| !dirty.contains_key(path))
            .map(|path| {
                let before = Before::of(&root.join(OsStr::from_bytes(&path)), &mut kept);
                (path, before)
            })
            .collect();
        let index_file = repo.path().join("index");
        let index = entries(&repo).and_then(|entries| {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&index_file).ok()?.permissions().mode();
            Some((entries, std::fs::read(&index_file).ok()?, mode & 0o7777))
        });
        Some(Self {
            repo,
            root,
            dirty,
            held,
            index,
        })
    }

    /// Finds what the check changed since [`TrackedGuard::before`] and puts it back.
    pub fn after(self, list: Option<&dyn TrackedList>) -> Wrote {
        let mut wrote = Wrote::default();
        // What the check staged goes first: with the index as it was, the work-tree edits it
        // staged differ from it again, and are put back below with the rest.
        if let Some((before, bytes, mode)) = &self.index
            && entries(&self.repo).is_some_and(|now| now != *before)
        {
            let index = self.repo.path().join("index");
            let options = crate::files::WriteOptions {
                mode: *mode,
                sync: true,
            };
            wrote.staged = true;
            let written = crate::files::write_atomic(&index, bytes, options);
            // The repository's index in memory is the staged one: read the file put back.
            if let Ok(mut index) = self.repo.index() {
                let _ = index.read(true);
            }
            match written {
                Ok(()) => wrote
                    .put_back
                    .push("the index (what it staged)".to_string()),
                Err(error) => wrote.not_put_back.push(format!("the index ({error})")),
            }
        }
        let Ok(now) = differing(&self.repo, list) else {
            return wrote;
        };
        let mut from_index = Vec::new();
        for path in now.iter().filter(|p| !self.dirty.contains_key(*p)) {
            from_index.push(path.clone());
        }
        for (path, before) in &self.dirty {
            let name = String::from_utf8_lossy(path).into_owned();
            if let Err(why) = put_back(&self.root.join(OsStr::from_bytes(path)), before) {
                match why {
                    None => wrote.put_back.push(name),
                    Some(why) => wrote.not_put_back.push(format!("{name} ({why})")),
                }
            }
        }
        // A held file is no one's work: put back without a word (a cache the tool rewrote).
        for (path, before) in &self.held {
            if let Err(Some(why)) = put_back(&self.root.join(OsStr::from_bytes(path)), before) {
                let path = String::from_utf8_lossy(path);
                tracing::warn!(%path, %why, "a held cache file could not be put back");
            }
        }
        if !from_index.is_empty() {
            let names: Vec<String> = from_index
                .iter()
                .map(|p| String::from_utf8_lossy(p).into_owned())
                .collect();
            match self.checkout(&from_index) {
                Ok(()) => wrote.put_back.extend(names),
                Err(error) => wrote.not_put_back.extend(
                    names
                        .into_iter()
                        .map(|name| format!("{name} ({})", error.message())),
                ),
            }
        }
        wrote.put_back.sort();
        wrote.not_put_back.sort();
        wrote
    }

    /// Writes `paths` from the index, leaving the index file as it is.
    fn checkout(&self, paths: &[Vec<u8>]) -> Result<(), git2::Error> {
        let mut builder = git2::build::CheckoutBuilder::new();
        builder
            .force()
            .update_index(false)
            .disable_pathspec_match(true)
            .remove_untracked(false);
        for path in paths {
            builder.path(path.as_slice());
        }
        self.repo.checkout_index(None, Some(&mut builder))
    }
}

/// Tracked paths whose working-tree content differs from the index (changed, deleted, or
/// changed in type).
fn differing(
    repo: &git2::Repository,
    list: Option<&dyn TrackedList>,
) -> Result<Vec<Vec<u8>>, git2::Error> {
    if let Some(listed) = list.and_then(TrackedList::tracked_differing) {
        return Ok(listed);
    }
    let mut options = git2::StatusOptions::new();
    options
        .show(git2::StatusShow::Workdir)
        .include_untracked(false)
        .include_ignored(false)
        .exclude_submodules(true);
    let statuses = repo.statuses(Some(&mut options))?;
    Ok(statuses
        .iter()
        .filter(|entry| {
            entry.status().intersects(
                git2::Status::WT_MODIFIED
                    | git2::Status::WT_DELETED
                    | git2::Status::WT_TYPECHANGE
                    | git2::Status::WT_RENAMED,
            )
        })
        .map(|entry| entry.path_bytes().to_vec())
        .collect())
}

/// The untracked files git does not ignore (the user's own, not yet added), at most
/// [`MAX_UNTRACKED`].
fn untracked(repo: &git2::Repository) -> Result<Vec<Vec<u8>>, git2::Error> {
    let mut options = git2::StatusOptions::new();
    options
        .show(git2::StatusShow::Workdir)
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .exclude_submodules(true);
    let statuses = repo.statuses(Some(&mut options))?;
    let found: Vec<Vec<u8>> = statuses
        .iter()
        .filter(|entry| entry.status().contains(git2::Status::WT_NEW))
        .map(|entry| entry.path_bytes().to_vec())
        .collect();
    if found.len() > MAX_UNTRACKED {
        tracing::warn!(
            files = found.len(),
            "too many untracked files to guard each against the gate's checks: none is"
        );
        return Ok(Vec::new());
    }
    Ok(found)
}

fn digest(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// Puts `path` back as it was `before`: `Ok` when it had not changed, `Err(None)` when it had
/// and is put back, `Err(Some(why))` when it could not be.
fn put_back(path: &Path, before: &Before) -> Result<(), Option<String>> {
    let now = std::fs::symlink_metadata(path);
    match before {
        Before::Other => Ok(()),
        Before::Large(was) => match now {
            Ok(meta) if identity(&meta) == *was => Ok(()),
            _ => Err(Some("too large to keep a copy of".into())),
        },
        Before::Absent => match now {
            Err(_) => Ok(()),
            Ok(meta) if meta.is_dir() => {
                Err(std::fs::remove_dir_all(path).err().map(|e| e.to_string()))
            }
            Ok(_) => Err(std::fs::remove_file(path).err().map(|e| e.to_string())),
        },
        Before::File {
            digest: was,
            bytes,
            mode,
        } => {
            let same = now.is_ok_and(|meta| meta.is_file())
                && std::fs::read(path).is_ok_and(|b| digest(&b) == *was);
            if same {
                return Ok(());
            }
            let Some(bytes) = bytes else {
                return Err(Some("too large to keep a copy of".into()));
            };
            Err(write_file(path, bytes, *mode).err().map(|e| e.to_string()))
        }
    }
}

/// Writes `bytes` back to `path` (replacing whatever is there) with its earlier mode.
fn write_file(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && !meta.is_file()
    {
        if meta.is_dir() {
            std::fs::remove_dir_all(path)?;
        } else {
            std::fs::remove_file(path)?;
        }
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    // A new file renamed over the old: a stop half-way never leaves the only copy truncated.
    crate::files::write_atomic(
        path,
        bytes,
        crate::files::WriteOptions { mode, sync: false },
    )
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;
    use crate::test_git::git;

    /// A user's untracked file past what is kept is not read before a check; a change to it is
    /// still found (by its identity) and named, as one that could not be put back.
    #[test]
    fn a_large_untracked_file_is_named_when_changed_never_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        std::fs::write(root.join("a.txt"), "a\n").unwrap();
        git(root, &["add", "-A"]);
        git(root, &["commit", "-qm", "base"]);
        let big = root.join("data.bin");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(KEEP_LIMIT + 1)
            .unwrap();
        let state = root.join(".refine-loop");
        // Untouched: nothing to say.
        let start = GateStart::new(root, None);
        let guard = TrackedGuard::before(root, &state, Some(&start)).unwrap();
        assert_eq!(guard.after(Some(&start)), Wrote::default());
        // Grown by the check: named, not put back (no copy was kept).
        let guard = TrackedGuard::before(root, &state, Some(&start)).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&big)
            .unwrap()
            .write_all(b"more")
            .unwrap();
        let wrote = guard.after(Some(&start));
        assert_eq!(
            wrote.not_put_back,
            ["data.bin (too large to keep a copy of)"]
        );
    }
}
