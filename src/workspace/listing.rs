//! Listing files without reading them: every file under a folder, by its stat key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub(super) use super::stat_key::StatKey;

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
