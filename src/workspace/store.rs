//! Content-addressed storage of file contents (sha256), for rollbacks: a file's bytes are kept
//! once, under their hash, before anything else happens to the file.

use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::encoding::hex_digest as hex;

#[derive(Debug, Clone)]
pub struct SnapshotStore {
    dir: PathBuf,
    /// A second copy of the user's own work, outside the repository: used when the copy in the
    /// store is gone or damaged.
    backup: Option<PathBuf>,
}

impl SnapshotStore {
    pub fn new(dir: &Path) -> io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        Ok(Self {
            dir: dir.to_path_buf(),
            backup: None,
        })
    }

    /// The same store, with its second copies in `backup` (made owner-only when new).
    pub fn with_backup(mut self, backup: PathBuf) -> io::Result<Self> {
        use std::os::unix::fs::DirBuilderExt;
        match std::fs::DirBuilder::new().mode(0o700).create(&backup) {
            Ok(()) => {}
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
            Err(error) => return Err(error),
        }
        self.backup = Some(backup);
        Ok(self)
    }

    /// Where the second copies are, if anywhere.
    pub fn backup(&self) -> Option<&Path> {
        self.backup.as_deref()
    }

    /// Keeps a second copy of the bytes under `hash` outside the repository.
    pub fn back_up(&self, hash: &str) -> io::Result<()> {
        let Some(backup) = &self.backup else {
            return Ok(());
        };
        if backup.join(hash).exists() {
            return Ok(());
        }
        let mut temporary = tempfile::NamedTempFile::new_in(backup)?;
        self.copy_verified(hash, temporary.as_file_mut())?;
        temporary.persist(backup.join(hash)).map_err(|e| e.error)?;
        Ok(())
    }

    /// A new store for this run, in the common git folder (a linked worktree's own folder may be
    /// pruned with it): one folder per run.
    pub fn for_run(repo: &git2::Repository) -> Result<Self, super::WorkspaceError> {
        use super::WorkspaceError;
        let snapshots = repo.commondir().join(super::STORE_FOLDER).join(format!(
            "{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        Self::new(&snapshots).map_err(|source| {
            // Another uid's repository, opened through safe.directory: readable, not writable.
            if matches!(
                source.kind(),
                io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem
            ) {
                WorkspaceError::GitFolderNotWritable {
                    path: snapshots,
                    source,
                }
            } else {
                WorkspaceError::Io {
                    path: snapshots,
                    source,
                }
            }
        })
    }

    /// The folder for the second copies of a store in `dir`: under `$RUNNER_TEMP` (a CI job's
    /// own temporary folder) or the system's, outside the repository.
    pub fn backup_folder(dir: &Path) -> PathBuf {
        let base = std::env::var_os("RUNNER_TEMP")
            .filter(|value| !value.is_empty())
            .map_or_else(std::env::temp_dir, PathBuf::from);
        let name = dir.file_name().unwrap_or_default().to_string_lossy();
        base.join(format!("refine-loop-kept-{name}"))
    }

    /// The store of an earlier run, as it was left.
    pub fn existing(dir: &Path) -> Self {
        Self {
            dir: dir.to_path_buf(),
            backup: None,
        }
    }

    /// Copies the file at `path` in (streaming) and returns its hash.
    pub fn put_file(&self, path: &Path) -> io::Result<String> {
        let mut temporary = self.temporary()?;
        let hash = copy_hashing(path, &mut temporary)?;
        self.keep(temporary, &hash)?;
        Ok(hash)
    }

    /// Keeps `bytes` and returns their hash.
    pub fn put_bytes(&self, bytes: &[u8]) -> io::Result<String> {
        let hash = hex(Sha256::new_with_prefix(bytes));
        if !self.path_of(&hash).exists() {
            let mut temporary = self.temporary()?;
            temporary.write_all(bytes)?;
            self.keep(temporary, &hash)?;
        }
        Ok(hash)
    }

    /// A new file in the store; the store's folder is made again if someone removed it.
    fn temporary(&self) -> io::Result<tempfile::NamedTempFile> {
        match tempfile::NamedTempFile::new_in(&self.dir) {
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                std::fs::create_dir_all(&self.dir)?;
                tempfile::NamedTempFile::new_in(&self.dir)
            }
            made => made,
        }
    }

    fn keep(&self, temporary: tempfile::NamedTempFile, hash: &str) -> io::Result<()> {
        // Renamed over a copy already there: one someone damaged is made good again.
        temporary.persist(self.path_of(hash)).map_err(|e| e.error)?;
        Ok(())
    }

    /// Writes the bytes kept under `hash` to `out` (from its start), and fails (before the caller
    /// uses them) when they no longer have that hash: a damaged store never puts wrong bytes
    /// back. When the store's copy is gone or damaged, the second copy is used, if there is one.
    pub fn copy_verified(&self, hash: &str, out: &mut File) -> io::Result<()> {
        let kept = verified_copy(&self.path_of(hash), hash, out);
        match (&kept, &self.backup) {
            (Err(error), Some(backup)) => {
                tracing::warn!(%error, "the kept copy is unusable: the second copy is used");
                out.set_len(0)?;
                out.rewind()?;
                verified_copy(&backup.join(hash), hash, out)
            }
            _ => kept,
        }
    }

    /// The bytes kept under `hash`, checked against it; the second copy when the first is gone
    /// or damaged.
    pub fn read_verified(&self, hash: &str) -> io::Result<Vec<u8>> {
        let read = |path: &Path| -> io::Result<Vec<u8>> {
            let bytes = std::fs::read(path)?;
            if hex(Sha256::new_with_prefix(&bytes)) != hash {
                return Err(io::Error::other(format!(
                    "the kept copy {} was changed; it is not used",
                    path.display()
                )));
            }
            Ok(bytes)
        };
        match (read(&self.path_of(hash)), &self.backup) {
            (Err(_), Some(backup)) => read(&backup.join(hash)),
            (kept, _) => kept,
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn path_of(&self, hash: &str) -> PathBuf {
        self.dir.join(hash)
    }
}

/// Copies the file at `path` into `out` and checks that its bytes have the hash `hash`.
fn verified_copy(path: &Path, hash: &str, out: &mut File) -> io::Result<()> {
    let found = copy_hashing(path, out)?;
    if found != hash {
        return Err(io::Error::other(format!(
            "the kept copy {} was changed (its hash is now {found}); it is not used",
            path.display()
        )));
    }
    Ok(())
}

/// The sha256 of a file, streaming.
pub fn hash_file(path: &Path) -> io::Result<String> {
    copy_hashing(path, &mut io::sink())
}

/// Streams the file at `path` into `out` and returns its sha256: 64 KiB at a time, whatever its
/// size. Only a regular file is opened (see [`crate::files::open_regular`]).
fn copy_hashing(path: &Path, out: &mut dyn Write) -> io::Result<String> {
    let mut source: File = crate::files::open_regular(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let read = source.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
        out.write_all(&buffer[..read])?;
    }
    Ok(hex(hasher))
}
