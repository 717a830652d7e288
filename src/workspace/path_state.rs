//! What one path holds: nothing, a file (its hash and mode), a symlink, or a folder.

use std::io;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use super::WorkspaceError;
use super::store::{SnapshotStore, hash_file};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathState {
    Absent,
    File { sha256: String, mode: u32 },
    Symlink { target: String },
    Directory,
}

impl PathState {
    /// Reads what `path` holds now; with a store, a file's bytes are kept there too.
    pub fn read(path: &Path, store: Option<&SnapshotStore>) -> Result<Self, WorkspaceError> {
        let io_error = |source| WorkspaceError::Io {
            path: path.to_path_buf(),
            source,
        };
        let metadata = match std::fs::symlink_metadata(path) {
            Ok(metadata) => metadata,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Self::Absent),
            Err(error) => return Err(io_error(error)),
        };
        let kind = metadata.file_type();
        if kind.is_symlink() {
            let target = std::fs::read_link(path).map_err(io_error)?;
            return Ok(Self::Symlink {
                target: target.to_string_lossy().into_owned(),
            });
        }
        if kind.is_dir() {
            return Ok(Self::Directory);
        }
        let sha256 = match store {
            Some(store) => store.put_file(path),
            None => hash_file(path),
        }
        .map_err(io_error)?;
        Ok(Self::File {
            sha256,
            mode: metadata.permissions().mode() & 0o7777,
        })
    }

    /// The state the index records (a clean file), its bytes kept in `store`.
    pub fn from_index(mode: u32, content: &[u8], store: &SnapshotStore) -> io::Result<Self> {
        match mode {
            0o120000 => Ok(Self::Symlink {
                target: String::from_utf8_lossy(content).into_owned(),
            }),
            _ => Ok(Self::File {
                sha256: store.put_bytes(content)?,
                mode: if mode & 0o111 != 0 { 0o755 } else { 0o644 },
            }),
        }
    }

    /// One line for reports and errors.
    pub fn describe(&self) -> String {
        match self {
            Self::Absent => "absent".into(),
            Self::File { sha256, mode } => format!("file {} mode {mode:o}", &sha256[..12]),
            Self::Symlink { target } => format!("symlink to {target}"),
            Self::Directory => "a folder".into(),
        }
    }

    /// Makes `path` hold this state again. A folder in the way is removed only when empty.
    pub fn restore(&self, path: &Path, store: &SnapshotStore) -> io::Result<()> {
        match std::fs::symlink_metadata(path) {
            Ok(metadata) if metadata.is_dir() => {
                if *self != Self::Directory {
                    std::fs::remove_dir(path)?;
                }
            }
            Ok(_) => {
                if !matches!(self, Self::File { .. }) {
                    std::fs::remove_file(path)?;
                }
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => return Err(error),
        }
        match self {
            Self::Absent => Ok(()),
            Self::Directory => std::fs::create_dir_all(path),
            Self::Symlink { target } => symlink(target, path),
            Self::File { sha256, mode } => {
                let parent = path.parent().unwrap_or(Path::new("."));
                std::fs::create_dir_all(parent)?;
                // Written beside the path, then renamed over it: never half a file. A symlink in
                // the way is replaced, not followed.
                let mut temporary = tempfile::NamedTempFile::new_in(parent)?;
                io::copy(
                    &mut std::fs::File::open(store.path_of(sha256))?,
                    &mut temporary,
                )?;
                temporary
                    .as_file()
                    .set_permissions(std::fs::Permissions::from_mode(*mode))?;
                temporary.persist(path).map_err(|e| e.error)?;
                Ok(())
            }
        }
    }
}
