//! The exact rollback: plan from the changes, check that nobody else has written, then act —
//! remove what the changes created (deepest first, with the folders they made), then put back
//! what they changed or deleted (shallowest first). Nothing else is touched.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::{Change, PathState, RepoPath, SnapshotStore, WorkspaceError};

/// Where a folder the loop did not make is put instead of being deleted, and what was put there:
/// (where it was, where it is now).
#[derive(Debug)]
pub struct SetAside<'a> {
    pub dir: &'a Path,
    pub moved: Vec<(PathBuf, PathBuf)>,
}

pub fn roll_back(
    root: &Path,
    store: &SnapshotStore,
    changes: &[Change],
    since: SystemTime,
    aside: &mut SetAside<'_>,
) -> Result<(), WorkspaceError> {
    let mut ordered: Vec<&Change> = changes.iter().collect();
    ordered.sort_by(|a, b| a.path.cmp(&b.path));
    for change in &ordered {
        let current = PathState::read_at(root, &change.path, None)?;
        if current != change.after {
            return Err(WorkspaceError::ConcurrentChange {
                path: change.path.clone(),
                expected: change.after.describe(),
                found: current.describe(),
            });
        }
    }
    let io_error = |path: &RepoPath| {
        let full = path.under(root);
        move |source| WorkspaceError::Io { path: full, source }
    };
    // A path sorts after every folder above it: in reverse, children go before their parents.
    for change in ordered
        .iter()
        .rev()
        .filter(|c| c.before == PathState::Absent)
    {
        let full = change.path.under(root);
        if change.after == PathState::Directory {
            // A repository the delegate made inside the tree (git shows it as one folder).
            clear_folder(&full, since, aside).map_err(io_error(&change.path))?;
        } else {
            remove(&full).map_err(io_error(&change.path))?;
        }
        remove_created_folders(&change.path, root, since);
    }
    for change in ordered.iter().filter(|c| c.before != PathState::Absent) {
        if change.after == PathState::Directory && change.before != PathState::Directory {
            // A folder where a file was is the delegate's, and so is all that is in it now (the
            // changes in it were removed above; what is left is ignored output).
            clear_folder(&change.path.under(root), since, aside).map_err(io_error(&change.path))?;
        }
        change
            .before
            .restore(&change.path, root, store)
            .map_err(io_error(&change.path))?;
    }
    Ok(())
}

/// Clears a folder that is the delegate's: removed when it was made since `since`; otherwise
/// (moved there) set aside in `aside`, which outlives the kept file contents: never deleted.
fn clear_folder(full: &Path, since: SystemTime, aside: &mut SetAside<'_>) -> std::io::Result<()> {
    let Ok(metadata) = std::fs::symlink_metadata(full) else {
        return Ok(());
    };
    if !metadata.is_dir() {
        return remove(full);
    }
    if remove_folder_without_files(full, Some(since)) {
        return Ok(());
    }
    if metadata.created().is_ok_and(|born| born >= since) {
        return std::fs::remove_dir_all(full);
    }
    aside.put(full)
}

/// Clears what is at `full` (a file, a link or a folder): removed when it was made since
/// `since` (its birth time says so), set aside in `aside` otherwise.
pub(super) fn clear_made(
    full: &Path,
    since: SystemTime,
    aside: &mut SetAside<'_>,
) -> std::io::Result<()> {
    let Ok(metadata) = std::fs::symlink_metadata(full) else {
        return Ok(());
    };
    if metadata.is_dir() {
        return clear_folder(full, since, aside);
    }
    if metadata.created().is_ok_and(|born| born >= since) || metadata.file_type().is_symlink() {
        return std::fs::remove_file(full);
    }
    aside.put(full)
}

impl SetAside<'_> {
    /// Moves the folder (or file) `full` into the set-aside folder, under its own name
    /// (numbered when taken): one rename, however much it holds.
    pub fn put(&mut self, full: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(self.dir)?;
        let name = full.file_name().unwrap_or_default();
        let mut target = self.dir.join(name);
        let mut n = 0;
        while std::fs::symlink_metadata(&target).is_ok() {
            n += 1;
            target = self.dir.join(format!("{}.{n}", name.to_string_lossy()));
        }
        tracing::warn!(folder = %full.display(), aside = %target.display(), "set a folder aside");
        std::fs::rename(full, &target)?;
        self.moved.push((full.to_path_buf(), target));
        Ok(())
    }
}

/// Removes a file or a symlink, or a folder when it is empty.
fn remove(full: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(full) {
        Ok(metadata) if metadata.is_dir() => std::fs::remove_dir(full),
        Ok(_) => std::fs::remove_file(full),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(error),
    }
}

/// Removes the folders above `path` that were made at or after `since` (their birth time says
/// so) and hold nothing but such folders. Where the file system keeps no birth time, folders
/// stay: an empty folder left behind is better than one of the user's removed.
pub(super) fn remove_created_folders(path: &RepoPath, root: &Path, since: SystemTime) {
    for folder in path.ancestors() {
        if !remove_folder_without_files(&folder.under(root), Some(since)) {
            break;
        }
    }
}

/// Removes `folder` when none of the folders in it holds a file or a link, and (with `since`)
/// when it and every folder in it were made at or after `since`; says whether it is gone.
fn remove_folder_without_files(folder: &Path, since: Option<SystemTime>) -> bool {
    let Ok(metadata) = std::fs::symlink_metadata(folder) else {
        return false;
    };
    let made_since = since.is_none_or(|since| metadata.created().is_ok_and(|born| born >= since));
    if !metadata.is_dir() || !made_since {
        return false;
    }
    let Ok(entries) = std::fs::read_dir(folder) else {
        return false;
    };
    for entry in entries {
        let Ok(entry) = entry else { return false };
        let is_folder = entry.file_type().is_ok_and(|kind| kind.is_dir());
        if !is_folder || !remove_folder_without_files(&entry.path(), since) {
            return false;
        }
    }
    std::fs::remove_dir(folder).is_ok()
}

/// Removes the folders under `root` (but those in `skip`) that were made after `since` and hold
/// nothing, deepest first; returns them. Where the file system does not record when a folder was
/// made, none is removed.
pub(super) fn remove_new_empty_folders(
    root: &Path,
    skip: &[PathBuf],
    since: SystemTime,
) -> Vec<String> {
    let mut folders = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(folder) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let is_folder = entry.file_type().is_ok_and(|kind| kind.is_dir());
            if is_folder && entry.file_name() != ".git" && !skip.contains(&path) {
                stack.push(path.clone());
                folders.push(path);
            }
        }
    }
    // Deepest first: a folder emptied by removing the ones in it goes too.
    folders.sort_by_key(|path| std::cmp::Reverse(path.components().count()));
    let mut removed = Vec::new();
    for folder in folders {
        let made_since = std::fs::symlink_metadata(&folder)
            .and_then(|metadata| metadata.created())
            .is_ok_and(|made| made >= since);
        if made_since && std::fs::remove_dir(&folder).is_ok() {
            let shown = folder.strip_prefix(root).unwrap_or(&folder);
            removed.push(format!("{}/", shown.display()));
        }
    }
    removed
}
