//! The exact rollback: plan from the changes, check that nobody else has written, then act —
//! remove what the changes created (deepest first, with the folders they made), then put back
//! what they changed or deleted (shallowest first). Nothing else is touched.

use std::path::Path;
use std::time::SystemTime;

use super::{Change, PathState, RepoPath, SnapshotStore, WorkspaceError};

pub fn roll_back(
    root: &Path,
    store: &SnapshotStore,
    changes: &[Change],
    since: SystemTime,
) -> Result<(), WorkspaceError> {
    let mut ordered: Vec<&Change> = changes.iter().collect();
    ordered.sort_by(|a, b| a.path.cmp(&b.path));
    for change in &ordered {
        let current = PathState::read(&change.path.under(root), None)?;
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
        remove(&change.path.under(root)).map_err(io_error(&change.path))?;
        remove_created_folders(&change.path, root, since);
    }
    for change in ordered.iter().filter(|c| c.before != PathState::Absent) {
        change
            .before
            .restore(&change.path, root, store)
            .map_err(io_error(&change.path))?;
    }
    Ok(())
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

/// Removes the now-empty folders above `path` that were made at or after `since` (their birth
/// time says so). Where the file system keeps no birth time, folders stay: an empty folder left
/// behind is better than one of the user's removed.
fn remove_created_folders(path: &RepoPath, root: &Path, since: SystemTime) {
    for folder in path.ancestors() {
        let full = folder.under(root);
        let made_since = std::fs::symlink_metadata(&full)
            .ok()
            .filter(std::fs::Metadata::is_dir)
            .and_then(|metadata| metadata.created().ok())
            .is_some_and(|born| born >= since);
        // Fails (and stops) on the first folder that is not empty.
        if !made_since || std::fs::remove_dir(&full).is_err() {
            break;
        }
    }
}
