//! A model's diff, applied to the work tree whole or not at all: only when it parses, every path
//! is one it may write (see `guard`), and libgit2 finds that all of it applies; if writing still
//! fails part way, what it wrote is put back.

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use git2::{ApplyLocation, ApplyOptions, Delta, Diff, FileMode, Repository};

use super::guard::Bounds;
use super::plain::with_git_headers;
use crate::workspace::{PathState, RepoPath};

/// Applies `text` (a unified diff with paths relative to the repository root) to the work tree
/// of the repository at `root`. Returns the paths it wrote, or why it wrote nothing.
pub fn apply_diff(
    root: &Path,
    text: &str,
    protected: &BTreeMap<RepoPath, PathState>,
    state_dir: &Path,
) -> Result<Vec<String>, String> {
    let diff = Diff::from_buffer(with_git_headers(text)?.as_bytes())
        .map_err(|error| format!("the diff does not parse: {}", error.message()))?;
    if diff.deltas().len() == 0 {
        return Err("the diff changes no file".to_string());
    }
    let repository = Repository::open(root)
        .map_err(|error| format!("cannot open the repository: {}", error.message()))?;
    let bounds = Bounds::new(&repository, root, protected, state_dir);
    let mut paths: Vec<Vec<u8>> = Vec::new();
    for delta in diff.deltas() {
        if matches!(delta.new_file().mode(), FileMode::Link | FileMode::Commit)
            || matches!(delta.old_file().mode(), FileMode::Link | FileMode::Commit)
        {
            return Err(format!(
                "the diff changes a symbolic link or a submodule ({})",
                display(delta.new_file().path_bytes().unwrap_or_default())
            ));
        }
        let sides = match delta.status() {
            Delta::Added => vec![delta.new_file().path_bytes()],
            Delta::Deleted => vec![delta.old_file().path_bytes()],
            Delta::Modified | Delta::Renamed => {
                vec![delta.old_file().path_bytes(), delta.new_file().path_bytes()]
            }
            other => {
                return Err(format!(
                    "the diff holds a {other:?} entry, which is not applied"
                ));
            }
        };
        for path in sides {
            let path = path.ok_or("the diff has a file without a path")?;
            if let Some(reason) = bounds.refuse(path) {
                return Err(reason);
            }
            if !paths.iter().any(|seen| seen == path) {
                paths.push(path.to_vec());
            }
        }
        if delta.status() == Delta::Added
            && let Some(path) = delta.new_file().path_bytes()
            && std::fs::symlink_metadata(root.join(std::ffi::OsStr::from_bytes(path))).is_ok()
        {
            return Err(format!("the diff creates {}, which exists", display(path)));
        }
    }
    let mut check = ApplyOptions::new();
    check.check(true);
    repository
        .apply(&diff, ApplyLocation::WorkDir, Some(&mut check))
        .map_err(|error| format!("the diff does not apply cleanly: {}", error.message()))?;
    let before = Before::take(root, &paths)?;
    if let Err(error) = repository.apply(&diff, ApplyLocation::WorkDir, None) {
        let put_back = before.put_back();
        return Err(format!(
            "the diff could not be applied ({}); {}",
            error.message(),
            match put_back {
                Ok(()) => "what it wrote was put back".to_string(),
                Err(reason) => format!("putting back what it wrote failed: {reason}"),
            }
        ));
    }
    Ok(paths.iter().map(|path| display(path)).collect())
}

/// A file's bytes and permission bits.
type Kept = (Vec<u8>, u32);

/// The paths a diff names as they were before it was applied, to put back if applying fails
/// part way: each file's bytes and mode, or that it was absent (with the folders above it that
/// were absent too).
pub(super) struct Before {
    /// Each path, with its bytes and mode when it was a file.
    files: Vec<(PathBuf, Option<Kept>)>,
    absent_folders: Vec<PathBuf>,
}

/// The most of one file a model's diff may change that is kept to put back.
const BEFORE_LIMIT: u64 = 64 * 1024 * 1024;

impl Before {
    pub(super) fn take(root: &Path, paths: &[Vec<u8>]) -> Result<Self, String> {
        let mut files = Vec::new();
        let mut absent_folders = Vec::new();
        for path in paths {
            let full = root.join(std::ffi::OsStr::from_bytes(path));
            let kept = match std::fs::symlink_metadata(&full) {
                Ok(metadata) => {
                    // A regular file only: never a FIFO (it would block), a device, or what a
                    // symlink leads to.
                    let bytes = crate::files::read_regular(&full, BEFORE_LIMIT)
                        .map_err(|error| format!("cannot read {}: {error}", display(path)))?
                        .ok_or_else(|| format!("{} is gone", display(path)))?;
                    Some((bytes, metadata.permissions().mode()))
                }
                Err(_) => {
                    let mut folder = full.parent();
                    while let Some(dir) = folder.filter(|dir| dir.starts_with(root) && *dir != root)
                    {
                        if dir.exists() {
                            break;
                        }
                        absent_folders.push(dir.to_path_buf());
                        folder = dir.parent();
                    }
                    None
                }
            };
            files.push((full, kept));
        }
        Ok(Self {
            files,
            absent_folders,
        })
    }

    pub(super) fn put_back(&self) -> Result<(), String> {
        for (path, kept) in &self.files {
            let done = match kept {
                Some((bytes, mode)) => std::fs::write(path, bytes).and_then(|()| {
                    std::fs::set_permissions(path, std::fs::Permissions::from_mode(*mode))
                }),
                None => match std::fs::remove_file(path) {
                    Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(error),
                    _ => Ok(()),
                },
            };
            done.map_err(|error| format!("{}: {error}", path.display()))?;
        }
        let mut folders = self.absent_folders.clone();
        folders.sort_by_key(|folder| std::cmp::Reverse(folder.components().count()));
        for folder in folders {
            let _ = std::fs::remove_dir(folder);
        }
        Ok(())
    }
}

fn display(path: &[u8]) -> String {
    String::from_utf8_lossy(path).into_owned()
}
