//! Content-addressed storage of file contents (sha256), for rollbacks: a file's bytes are kept
//! once, under their hash, before anything else happens to the file.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::model::hex_digest as hex;

#[derive(Debug, Clone)]
pub struct SnapshotStore {
    dir: PathBuf,
}

impl SnapshotStore {
    pub fn new(dir: &Path) -> io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        Ok(Self {
            dir: dir.to_path_buf(),
        })
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

    /// The store of an earlier run, as it was left.
    pub fn existing(dir: &Path) -> Self {
        Self {
            dir: dir.to_path_buf(),
        }
    }

    /// Copies the file at `path` in (streaming) and returns its hash.
    pub fn put_file(&self, path: &Path) -> io::Result<String> {
        let mut temporary = tempfile::NamedTempFile::new_in(&self.dir)?;
        let hash = copy_hashing(path, &mut temporary)?;
        self.keep(temporary, &hash)?;
        Ok(hash)
    }

    /// Keeps `bytes` and returns their hash.
    #[cfg(test)]
    pub fn put_bytes(&self, bytes: &[u8]) -> io::Result<String> {
        let hash = hex(Sha256::new_with_prefix(bytes));
        if !self.path_of(&hash).exists() {
            let mut temporary = tempfile::NamedTempFile::new_in(&self.dir)?;
            temporary.write_all(bytes)?;
            self.keep(temporary, &hash)?;
        }
        Ok(hash)
    }

    fn keep(&self, temporary: tempfile::NamedTempFile, hash: &str) -> io::Result<()> {
        let target = self.path_of(hash);
        if target.exists() {
            return Ok(());
        }
        temporary.persist(&target).map_err(|e| e.error)?;
        Ok(())
    }

    /// Writes the bytes kept under `hash` to `out`, and fails (before the caller uses them) when
    /// they no longer have that hash: a damaged store never puts wrong bytes back.
    pub fn copy_verified(&self, hash: &str, out: &mut dyn Write) -> io::Result<()> {
        let found = copy_hashing(&self.path_of(hash), out)?;
        if found != hash {
            return Err(io::Error::other(format!(
                "the kept copy {} was changed (its hash is now {found}); it is not used",
                self.path_of(hash).display()
            )));
        }
        Ok(())
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn path_of(&self, hash: &str) -> PathBuf {
        self.dir.join(hash)
    }
}

/// The sha256 of a file, streaming.
pub fn hash_file(path: &Path) -> io::Result<String> {
    copy_hashing(path, &mut io::sink())
}

/// Streams the file at `path` into `out` and returns its sha256.
fn copy_hashing(path: &Path, out: &mut dyn Write) -> io::Result<String> {
    let mut source = File::open(path)?;
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
