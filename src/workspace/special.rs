//! FIFOs, sockets and devices in the tree. Git's status walk skips them, so one a delegate made
//! at a new path is in no change; this walk finds them, to be reported and removed. They are
//! never opened: a FIFO blocks whoever opens it, a device may never end.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::RepoPath;
use crate::files::SpecialKind;

/// The special files under `root` in folders whose entries changed at or after `since` (by the
/// folders' change times, which no one can set back), by path. Every folder is looked at, the
/// entries of only those; `skip` (the git folder, the state dir) is left out with all it holds.
pub(super) fn special_files(
    root: &Path,
    since: SystemTime,
    skip: &[PathBuf],
) -> Vec<(RepoPath, SpecialKind)> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(folder) = stack.pop() {
        let Ok(metadata) = std::fs::symlink_metadata(&folder) else {
            continue;
        };
        let changed = UNIX_EPOCH
            + Duration::new(
                u64::try_from(metadata.ctime()).unwrap_or(0),
                u32::try_from(metadata.ctime_nsec()).unwrap_or(0),
            );
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                if !skip.contains(&path) {
                    stack.push(path);
                }
            } else if let Some(special) = SpecialKind::of(&kind)
                && changed >= since
                && let Ok(relative) = path.strip_prefix(root)
            {
                found.push((
                    RepoPath::new(relative.as_os_str().as_bytes().to_vec()),
                    special,
                ));
            }
        }
    }
    found.sort();
    found
}

/// The special files among `paths` (relative; the watch logs every entry of a folder it
/// reports made, so a folder's own entries are among them too).
pub(super) fn special_among(
    root: &Path,
    paths: &std::collections::BTreeSet<Vec<u8>>,
) -> Vec<(RepoPath, SpecialKind)> {
    paths
        .iter()
        .filter_map(|path| {
            let metadata =
                std::fs::symlink_metadata(root.join(std::ffi::OsStr::from_bytes(path))).ok()?;
            let special = SpecialKind::of(&metadata.file_type())?;
            Some((RepoPath::new(path.clone()), special))
        })
        .collect()
}
