//! Listing files without reading them: every file under a folder, and what identifies a file's
//! version (its stat key).

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// What identifies a file's version without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct StatKey {
    device: u64,
    inode: u64,
    size: u64,
    mode: u32,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl StatKey {
    pub(super) fn of(metadata: &std::fs::Metadata) -> Self {
        Self {
            device: metadata.dev(),
            inode: metadata.ino(),
            size: metadata.size(),
            mode: metadata.mode(),
            modified: (metadata.mtime(), metadata.mtime_nsec()),
            changed: (metadata.ctime(), metadata.ctime_nsec()),
        }
    }
}

/// Every file under `root` by its stat key.
pub(super) fn stat_keys(root: &Path) -> BTreeMap<PathBuf, StatKey> {
    files_under(root, &[], usize::MAX)
        .into_iter()
        .map(|(path, metadata)| (path, StatKey::of(&metadata)))
        .collect()
}

/// Every file (not folder) under `root`, skipping the top-level folders named in `skip`, with
/// its metadata; about `limit` at most.
pub(super) fn files_under(
    root: &Path,
    skip: &[&str],
    limit: usize,
) -> Vec<(PathBuf, std::fs::Metadata)> {
    let mut files = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(folder) = stack.pop() {
        if files.len() >= limit {
            break;
        }
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(metadata) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if metadata.is_dir() {
                if folder != root || !skip.iter().any(|name| entry.file_name() == *name) {
                    stack.push(path);
                }
            } else {
                files.push((path, metadata));
            }
        }
    }
    files
}
