//! Folders beyond the git library's reach: nested deeper than it walks (its listing of the whole
//! tree fails) or with a path longer than the system takes (it passes them by without a word, so
//! what is in them would go unseen). None is in the tree at the baseline: the run refuses to
//! start beside one. One made later (by a delegate, or by what it planted that the gate runs) is
//! set aside whole before the look; what it held of the user's work is then seen as gone, and
//! put back from its kept copy.

use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use super::{RepoPath, Workspace, WorkspaceError};

/// The most folders the git library walks beneath the root (its limit is 100 with the root).
pub const GIT_DEPTH: usize = 99;

/// The longest folder path (from `/`) kept within reach: a name of 255 bytes beneath it must
/// still fit in the 4,096 bytes of a path.
pub const LONGEST_FOLDER: usize = 4096 - 256 - 1;

/// Whether the folder `relative` (to a root whose path is `root_length` bytes long) is beyond
/// the git library's reach.
pub(super) fn is_beyond_reach(root_length: usize, relative: &[u8]) -> bool {
    let depth = 1 + relative.iter().filter(|&&byte| byte == b'/').count();
    depth > GIT_DEPTH || root_length + 1 + relative.len() > LONGEST_FOLDER
}

impl Workspace {
    /// The outermost folders beyond the git library's reach, but those in what git ignores (it
    /// does not walk them), in git folders, nested repositories and the state dir.
    pub(super) fn beyond_reach(&self) -> Vec<Vec<u8>> {
        let root_length = self.root.as_os_str().len();
        let mut found = Vec::new();
        let mut stack: Vec<Vec<u8>> = vec![Vec::new()];
        while let Some(folder) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(self.full_path(&folder)) else {
                continue;
            };
            for entry in entries.flatten() {
                if !entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                    continue;
                }
                let name = entry.file_name();
                let path = match folder.is_empty() {
                    true => name.as_bytes().to_vec(),
                    false => [folder.as_slice(), b"/", name.as_bytes()].concat(),
                };
                if name == ".git" || self.is_excluded(&path) || self.out_of_gits_walk(&path) {
                    continue;
                }
                if is_beyond_reach(root_length, &path) {
                    found.push(path);
                } else {
                    stack.push(path);
                }
            }
        }
        found.sort();
        found
    }

    /// Whether git's listing leaves the folder `path` out: a repository of its own, or ignored.
    fn out_of_gits_walk(&self, path: &[u8]) -> bool {
        let full = self.full_path(path);
        if full.join(".git").exists() {
            return true;
        }
        let folder = [path, b"/"].concat();
        self.repo
            .is_path_ignored(std::path::Path::new(std::ffi::OsStr::from_bytes(&folder)))
            .unwrap_or(false)
    }

    /// Sets aside every folder beyond the git library's reach made during the run (its birth
    /// time says so). One that was there before (what git ignored at the baseline, until a
    /// rule changed) is the user's: the look stops with [`WorkspaceError::TooDeep`] instead.
    pub(super) fn set_aside_beyond_reach(&self) -> Result<(), WorkspaceError> {
        let folders = self.beyond_reach();
        if folders.is_empty() {
            return Ok(());
        }
        let made_in_run = |folder: &[u8]| {
            self.began.is_none_or(|began| {
                std::fs::symlink_metadata(self.full_path(folder))
                    .and_then(|metadata| metadata.created())
                    .is_ok_and(|born| born >= began)
            })
        };
        if let Some(folder) = folders.iter().find(|folder| !made_in_run(folder)) {
            return Err(self.too_deep(folder));
        }
        let mut aside = super::rollback::SetAside {
            dir: &self.set_aside_dir,
            moved: Vec::new(),
        };
        for folder in folders {
            let full = self.full_path(&folder);
            tracing::warn!(folder = %full.display(), "a folder beyond git's reach is set aside");
            aside.put(&full).map_err(|source| WorkspaceError::Io {
                path: full.clone(),
                source,
            })?;
            // The chain above it, when the run made it and it holds nothing else, goes too.
            if let Some(began) = self.began {
                super::rollback::remove_created_folders(&RepoPath::new(folder), &self.root, began);
            }
        }
        self.set_aside.borrow_mut().extend(
            aside
                .moved
                .into_iter()
                .map(|(was, is)| (was, is, super::AsideWhy::BeyondReach)),
        );
        Ok(())
    }

    /// The error for a folder beyond the git library's reach that is the user's.
    pub(super) fn too_deep(&self, folder: &[u8]) -> WorkspaceError {
        WorkspaceError::TooDeep {
            root: self.root.clone(),
            folder: String::from_utf8_lossy(&folder[..folder.len().min(300)]).into_owned(),
            depth: GIT_DEPTH,
            length: LONGEST_FOLDER,
        }
    }

    fn full_path(&self, path: &[u8]) -> PathBuf {
        match path.is_empty() {
            true => self.root.clone(),
            false => self.root.join(std::ffi::OsStr::from_bytes(path)),
        }
    }
}
