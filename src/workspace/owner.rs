//! Who keeps bytes in a folder of the store (the run's mark, pid and state dir), the folders
//! and journals runs left, and the plain file reads and writes of both.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::journal::{FORMAT, JOURNAL_FILE};
use super::{SnapshotStore, Workspace, WorkspaceError};

/// Who keeps bytes in a folder of the store: its run's mark, pid and state dir.
pub const OWNER_FILE: &str = "owner.json";

/// The run that keeps bytes in a folder of the store.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Owner {
    pub format: u32,
    pub run: String,
    pub pid: u32,
    #[serde(with = "super::wire_bytes::path")]
    pub root: PathBuf,
    #[serde(with = "super::wire_bytes::path")]
    pub state_dir: PathBuf,
}

impl Owner {
    /// Reads the owner of the store folder `dir`.
    pub fn read(dir: &Path) -> Result<Self, WorkspaceError> {
        let path = dir.join(OWNER_FILE);
        let io_error = |source| WorkspaceError::Io {
            path: path.clone(),
            source,
        };
        let bytes = read_regular(&path, 64 * 1024).map_err(io_error)?;
        serde_json::from_slice(&bytes)
            .map_err(|error| io_error(std::io::Error::other(format!("not an owner file: {error}"))))
    }
}

/// Says, in a new store folder, which run keeps bytes there.
pub(super) fn write_owner(
    store: &SnapshotStore,
    root: &Path,
    state_dir: &Path,
) -> Result<(), WorkspaceError> {
    let owner = Owner {
        format: FORMAT,
        run: crate::process::run_mark().to_string(),
        pid: std::process::id(),
        root: root.to_path_buf(),
        state_dir: state_dir.to_path_buf(),
    };
    let path = store.dir().join(OWNER_FILE);
    let bytes = serde_json::to_vec(&owner).map_err(|error| WorkspaceError::Io {
        path: path.clone(),
        source: error.into(),
    })?;
    write_new(&path, &bytes).map_err(|source| WorkspaceError::Io { path, source })
}

/// The folders of the store in the repository at `git_common_dir`: one per run that has not
/// ended cleanly yet (or is still going).
pub fn store_folders(git_common_dir: &Path) -> Vec<PathBuf> {
    let folder = git_common_dir.join(super::STORE_FOLDER);
    let Ok(entries) = std::fs::read_dir(&folder) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
        .map(|entry| entry.path())
        .collect();
    found.sort();
    found
}

/// The journals of turns left in progress in the repository at `git_common_dir`.
pub fn journals_in(git_common_dir: &Path) -> Vec<PathBuf> {
    store_folders(git_common_dir)
        .into_iter()
        .map(|folder| folder.join(JOURNAL_FILE))
        .filter(|path| std::fs::symlink_metadata(path).is_ok())
        .collect()
}

/// Writes `bytes` to `path` through a new file renamed over it.
pub(super) fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(bytes)?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Reads a regular file of at most `limit` bytes, never through a symlink and never opening a
/// FIFO or a device; a missing file is an error here.
pub(super) fn read_regular(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    crate::files::read_regular(path, limit)?
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "not found"))
}

impl Workspace {
    /// Removes the kept bytes: the run is over and nothing is left to put back. The folders
    /// above go too when no other run keeps anything there.
    pub fn discard_store(&self) {
        let dir = self.store.dir();
        if let Err(error) = std::fs::remove_dir_all(dir) {
            tracing::warn!(%error, dir = %dir.display(), "could not remove the kept file contents");
        }
        if let Some(backup) = self.store.backup()
            && let Err(error) = std::fs::remove_dir_all(backup)
            && error.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(%error, dir = %backup.display(), "could not remove the second copies");
        }
        for folder in dir.ancestors().skip(1).take(2) {
            if std::fs::remove_dir(folder).is_err() {
                break;
            }
        }
    }

    /// The run is over: the kept bytes go when it ended cleanly or before any delegate ran, and
    /// stay (said in the log) when not.
    pub fn end_run(&self, clean: bool) {
        if clean || !self.turns_begun.get() {
            self.discard_store();
        } else {
            tracing::warn!(
                dir = %self.store.dir().display(),
                "the run did not end cleanly: the kept file contents stay"
            );
        }
    }
}
