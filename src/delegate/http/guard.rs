//! Where a model's diff may write: a plain relative path inside the repository, outside `.git`,
//! the state dir and submodules, not ignored (the loop does not watch ignored files), through no
//! symlink and onto no hard-linked file, and not the user's own work.

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use git2::Repository;

use crate::workspace::{PathState, RepoPath};

/// What a diff must keep off.
pub struct Bounds<'a> {
    pub repository: &'a Repository,
    pub root: &'a Path,
    /// The user's work before the run.
    pub protected: &'a BTreeMap<RepoPath, PathState>,
    /// The state dir, relative to the root, when it is inside it.
    pub state_dir: Option<RepoPath>,
    /// Submodules (gitlinks of the index).
    pub submodules: Vec<RepoPath>,
}

impl<'a> Bounds<'a> {
    pub fn new(
        repository: &'a Repository,
        root: &'a Path,
        protected: &'a BTreeMap<RepoPath, PathState>,
        state_dir: &Path,
    ) -> Self {
        let real = |path: &Path| path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        let state_dir = real(state_dir)
            .strip_prefix(real(root))
            .ok()
            .map(|relative| RepoPath::new(relative.as_os_str().as_bytes().to_vec()));
        let submodules = repository
            .index()
            .map(|index| {
                index
                    .iter()
                    .filter(|entry| entry.mode == 0o160000)
                    .map(|entry| RepoPath::new(entry.path))
                    .collect()
            })
            .unwrap_or_default();
        Self {
            repository,
            root,
            protected,
            state_dir,
            submodules,
        }
    }

    /// Why the diff may not write `path`, if it may not.
    pub fn refuse(&self, path: &[u8]) -> Option<String> {
        let shown = String::from_utf8_lossy(path);
        if path.is_empty() || path.starts_with(b"/") || path.contains(&0) {
            return Some(format!(
                "the diff names a path outside the repository: {shown:?}"
            ));
        }
        let parts: Vec<&[u8]> = path.split(|&byte| byte == b'/').collect();
        if parts
            .iter()
            .any(|part| part.is_empty() || *part == b"." || *part == b"..")
        {
            return Some(format!(
                "the diff names a path outside the repository: {shown:?}"
            ));
        }
        if parts.iter().any(|part| part.eq_ignore_ascii_case(b".git")) {
            return Some(format!("the diff writes into .git: {shown:?}"));
        }
        let repo_path = RepoPath::new(path.to_vec());
        let within = |folder: &RepoPath| repo_path.is_within(folder.as_bytes());
        if self.state_dir.as_ref().is_some_and(within) {
            return Some(format!("the diff writes into the state dir: {shown}"));
        }
        if self.submodules.iter().any(within) {
            return Some(format!("the diff writes into a submodule: {shown}"));
        }
        if self.protected.contains_key(&repo_path)
            || repo_path
                .ancestors()
                .any(|folder| self.protected.contains_key(&folder))
        {
            return Some(format!(
                "the diff changes the user's own work (dirty before the run): {shown}"
            ));
        }
        if self
            .repository
            .is_path_ignored(Path::new(std::ffi::OsStr::from_bytes(path)))
            .unwrap_or(true)
        {
            return Some(format!(
                "the diff writes an ignored file, which the loop cannot watch: {shown}"
            ));
        }
        let mut on_disk = self.root.to_path_buf();
        for (index, part) in parts.iter().enumerate() {
            on_disk.push(std::ffi::OsStr::from_bytes(part));
            let last = index + 1 == parts.len();
            match std::fs::symlink_metadata(&on_disk) {
                Ok(metadata) if metadata.file_type().is_symlink() => {
                    return Some(format!(
                        "the diff goes through a symbolic link: {}",
                        self.shown(&on_disk)
                    ));
                }
                Ok(metadata) if !last && !metadata.is_dir() => {
                    return Some(format!(
                        "the diff needs a folder where a file is: {}",
                        self.shown(&on_disk)
                    ));
                }
                Ok(metadata) if last && metadata.is_file() && metadata.nlink() > 1 => {
                    return Some(format!(
                        "the diff changes a hard-linked file (its other names are outside the loop's watch): {shown}"
                    ));
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        None
    }

    fn shown(&self, path: &Path) -> String {
        path.strip_prefix(self.root)
            .unwrap_or(path)
            .display()
            .to_string()
    }
}
