//! The tree of an iteration, built in memory from the previous tree and the changed paths; the
//! repository's index file and working tree are never read or written.

use std::collections::{BTreeSet, HashSet};
use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use sha2::{Digest, Sha256};

use super::{DeliverError, PathChange, git};
use crate::encoding::hex_digest;
use crate::workspace::{PathState, SnapshotStore};

/// What happens to one path of the tree.
enum Edit<'change> {
    /// Nothing is left at the path: a file, or a folder with everything in it.
    Remove(&'change [u8]),
    /// A folder now: the file that was there goes, what the folder holds comes in its own changes.
    RemoveFile(&'change [u8]),
    Put {
        path: &'change [u8],
        mode: u32,
        content: Content<'change>,
    },
}

enum Content<'change> {
    /// Bytes in the snapshot store, under their sha256.
    Stored(&'change str),
    /// A symlink's target.
    Target(&'change [u8]),
}

/// Writes the tree of `parent` with `changes` applied and returns its id. Removals go first, so
/// that a file can take the place of a folder and the other way round. Only the trees on the
/// changed paths are rewritten: the cost follows the change, not the repository.
pub(super) fn build(
    repo: &git2::Repository,
    parent: &git2::Tree<'_>,
    changes: &[PathChange],
    store: &SnapshotStore,
) -> Result<git2::Oid, DeliverError> {
    let edits = plan(changes)?;
    let kind_in_parent = |path: &[u8]| parent.get_path(as_path(path)).ok().map(|e| e.kind());
    // What goes before anything is put: removed paths, a file that became a folder, and
    // whatever the parent holds where a new entry (or a folder above it) goes, which the
    // changes need not list (a staged deletion, the gate's files).
    let mut removed: BTreeSet<&[u8]> = BTreeSet::new();
    for edit in &edits {
        match edit {
            Edit::Remove(path) => {
                removed.insert(path);
            }
            Edit::RemoveFile(path) => {
                if kind_in_parent(path) == Some(Some(git2::ObjectType::Blob)) {
                    removed.insert(path);
                }
            }
            Edit::Put { path, .. } => {
                if kind_in_parent(path) == Some(Some(git2::ObjectType::Tree)) {
                    removed.insert(path);
                }
                for (at, _) in path.iter().enumerate().filter(|(_, byte)| **byte == b'/') {
                    let above = &path[..at];
                    if kind_in_parent(above)
                        .is_some_and(|kind| kind != Some(git2::ObjectType::Tree))
                    {
                        removed.insert(above);
                    }
                }
            }
        }
    }
    let mut removals = git2::build::TreeUpdateBuilder::new();
    for path in &removed {
        // What lies beneath another removal goes with it; what the tree lacks needs nothing.
        let beneath_another = path
            .iter()
            .enumerate()
            .any(|(at, byte)| *byte == b'/' && removed.contains(&path[..at]));
        if !beneath_another && kind_in_parent(path).is_some() {
            removals.remove(path.to_vec());
        }
    }
    let without = removals
        .create_updated(repo, parent)
        .map_err(git("remove the changed paths from the tree"))?;
    let without = repo
        .find_tree(without)
        .map_err(git(format!("read tree {without}")))?;
    let mut puts = git2::build::TreeUpdateBuilder::new();
    for edit in &edits {
        let Edit::Put {
            path,
            mode,
            content,
        } = edit
        else {
            continue;
        };
        let id = match content {
            Content::Stored(sha256) => stored_blob(repo, store, sha256)?,
            Content::Target(target) => repo
                .blob(target)
                .map_err(git(format!("write the link {}", as_path(path).display())))?,
        };
        let mode = match mode {
            0o100755 => git2::FileMode::BlobExecutable,
            0o120000 => git2::FileMode::Link,
            _ => git2::FileMode::Blob,
        };
        puts.upsert(path.to_vec(), id, mode);
    }
    puts.create_updated(repo, &without)
        .map_err(git("write the iteration's tree"))
}

/// The edits `changes` make, every path checked first: inside the repository, and once (the
/// edits are not applied in the order given).
fn plan(changes: &[PathChange]) -> Result<Vec<Edit<'_>>, DeliverError> {
    let mut edits = Vec::with_capacity(changes.len());
    let mut seen = HashSet::with_capacity(changes.len());
    for change in changes {
        let path = change.path.as_slice();
        check_path(path)?;
        if !seen.insert(path) {
            return Err(DeliverError::InvalidPath {
                path: String::from_utf8_lossy(path).into_owned(),
                problem: "changed twice in one iteration",
            });
        }
        edits.push(match &change.after {
            PathState::Absent => Edit::Remove(path),
            PathState::Directory => Edit::RemoveFile(path),
            PathState::Special { .. } => {
                return Err(DeliverError::InvalidPath {
                    path: String::from_utf8_lossy(path).into_owned(),
                    problem: "a FIFO, a socket or a device: never recorded",
                });
            }
            PathState::File { sha256, mode } => Edit::Put {
                path,
                mode: if mode & 0o111 != 0 {
                    0o100755
                } else {
                    0o100644
                },
                content: Content::Stored(sha256),
            },
            PathState::Symlink { target } => Edit::Put {
                path,
                mode: 0o120000,
                content: Content::Target(target),
            },
        });
    }
    Ok(edits)
}

/// A path the tree can hold: relative, no empty, `.`, `..` or `.git` part, no NUL.
fn check_path(path: &[u8]) -> Result<(), DeliverError> {
    let valid = !path.is_empty()
        && !path.contains(&0)
        && path.split(|byte| *byte == b'/').all(|part| {
            !part.is_empty() && part != b"." && part != b".." && !part.eq_ignore_ascii_case(b".git")
        });
    if valid {
        Ok(())
    } else {
        Err(DeliverError::InvalidPath {
            path: String::from_utf8_lossy(path).into_owned(),
            problem: "not a path inside the repository",
        })
    }
}

fn as_path(path: &[u8]) -> &Path {
    Path::new(OsStr::from_bytes(path))
}

/// Streams the bytes stored under `sha256` into a blob, checking they still hash to it. No
/// attributes or filters apply: the tree gets the bytes exactly.
fn stored_blob(
    repo: &git2::Repository,
    store: &SnapshotStore,
    sha256: &str,
) -> Result<git2::Oid, DeliverError> {
    let path = store.path_of(sha256);
    let store_error = |source| DeliverError::Store {
        path: path.clone(),
        source,
    };
    let mut source = std::fs::File::open(&path).map_err(store_error)?;
    let mut writer = repo
        .blob_writer(None)
        .map_err(git("start writing a blob"))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let read = source.read(&mut buffer).map_err(store_error)?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
        writer.write_all(&buffer[..read]).map_err(store_error)?;
    }
    let found = hex_digest(hasher);
    if found != sha256 {
        return Err(DeliverError::StoreCorrupt { path, found });
    }
    writer
        .commit()
        .map_err(git(format!("write the blob of {}", path.display())))
}
