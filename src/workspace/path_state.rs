//! What one path holds: nothing, a file (its hash and mode), a symlink, or a folder; read from
//! disk, and put back exactly.

use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use super::store::{SnapshotStore, hash_file};
use super::{RepoPath, WorkspaceError};
use crate::files::SpecialKind;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PathState {
    Absent,
    File {
        sha256: String,
        mode: u32,
    },
    /// The link's target, as bytes.
    Symlink {
        #[serde(with = "super::wire_bytes")]
        target: Vec<u8>,
    },
    Directory,
    /// A FIFO, a socket or a device: never opened, never kept, never made again.
    Special {
        kind: SpecialKind,
    },
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
            Err(error) if is_gone(&error) => return Ok(Self::Absent),
            Err(error) => return Err(io_error(error)),
        };
        let kind = metadata.file_type();
        if kind.is_symlink() {
            let target = std::fs::read_link(path).map_err(io_error)?;
            return Ok(Self::Symlink {
                target: target.into_os_string().into_vec(),
            });
        }
        if kind.is_dir() {
            return Ok(Self::Directory);
        }
        if let Some(kind) = SpecialKind::of(&kind) {
            return Ok(Self::Special { kind });
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

    /// Reads what the tree holds at `path` (under `root`): a path beneath a symlink or a file is
    /// not in the tree (it is absent), whatever the link leads to.
    pub fn read_at(
        root: &Path,
        path: &RepoPath,
        store: Option<&SnapshotStore>,
    ) -> Result<Self, WorkspaceError> {
        for folder in path.folders_from_top() {
            match std::fs::symlink_metadata(folder.under(root)) {
                Ok(metadata) if metadata.is_dir() => {}
                Ok(_) => return Ok(Self::Absent),
                Err(error) if is_gone(&error) => return Ok(Self::Absent),
                Err(error) => {
                    return Err(WorkspaceError::Io {
                        path: folder.under(root),
                        source: error,
                    });
                }
            }
        }
        Self::read(&path.under(root), store)
    }

    /// A compact, stable name of this state, for comparing across runs.
    pub fn key(&self) -> String {
        match self {
            Self::Absent => "absent".into(),
            Self::File { sha256, mode } => format!("file:{sha256}:{mode:o}"),
            Self::Symlink { target } => format!("link:{}", crate::encoding::hex(target)),
            Self::Directory => "folder".into(),
            Self::Special { kind } => format!("special:{}", kind.name()),
        }
    }

    /// One line for reports and errors.
    pub fn describe(&self) -> String {
        match self {
            Self::Absent => "absent".into(),
            Self::File { sha256, mode } => format!("file {} mode {mode:o}", &sha256[..12]),
            Self::Symlink { target } => {
                format!("symlink to {}", RepoPath::new(target.clone()))
            }
            Self::Directory => "a folder".into(),
            Self::Special { kind } => kind.describe().into(),
        }
    }

    /// Makes `path` (under `root`) hold this state again. A folder in the way is removed only
    /// when empty; a folder above the path that is a symlink or a file stops the write, so
    /// nothing is ever written outside the tree. A file's bytes are checked against their hash
    /// before they replace anything.
    pub fn restore(&self, path: &RepoPath, root: &Path, store: &SnapshotStore) -> io::Result<()> {
        let full = path.under(root);
        check_folders_above(path, root)?;
        match std::fs::symlink_metadata(&full) {
            Ok(metadata) if metadata.is_dir() => {
                if *self != Self::Directory {
                    std::fs::remove_dir(&full)?;
                }
            }
            Ok(_) => {
                if !matches!(self, Self::File { .. }) {
                    std::fs::remove_file(&full)?;
                }
            }
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => return Err(error),
        }
        match self {
            Self::Absent => Ok(()),
            Self::Special { kind } => Err(io::Error::other(format!(
                "{path} was {} before: the loop does not make one again",
                kind.describe()
            ))),
            Self::Directory => make_folders(&full),
            Self::Symlink { target } => {
                create_folders(&full)?;
                symlink(std::ffi::OsStr::from_bytes(target), &full)?;
                own_like_its_folder(&full);
                Ok(())
            }
            Self::File { sha256, mode } => {
                let parent = create_folders(&full)?;
                // Written beside the path, then renamed over it: never half a file. A symlink in
                // the way is replaced, not followed.
                let mut temporary = tempfile::NamedTempFile::new_in(parent)?;
                store.copy_verified(sha256, temporary.as_file_mut())?;
                temporary
                    .as_file()
                    .set_permissions(std::fs::Permissions::from_mode(*mode))?;
                own_like_its_folder(temporary.path());
                temporary.persist(&full).map_err(|e| e.error)?;
                Ok(())
            }
        }
    }
}

/// Nothing is there: not found, or a folder above it is a file now.
fn is_gone(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

fn create_folders(full: &Path) -> io::Result<&Path> {
    let parent = full.parent().unwrap_or(Path::new("."));
    make_folders(parent)?;
    Ok(parent)
}

/// Makes `folder` and the missing folders above it, each owned like the folder it is in.
fn make_folders(folder: &Path) -> io::Result<()> {
    let missing: Vec<&Path> = folder
        .ancestors()
        .take_while(|above| std::fs::symlink_metadata(above).is_err())
        .collect();
    std::fs::create_dir_all(folder)?;
    for made in missing.into_iter().rev() {
        own_like_its_folder(made);
    }
    Ok(())
}

/// What is put back belongs to whoever owns the folder it is in, as it did before it was
/// changed: run as root on a repository mounted into a container, the loop would otherwise leave
/// root's files in another user's tree. Only root may give a file away; for anyone else the
/// change is refused, and the file stays the writer's, as it always was.
fn own_like_its_folder(path: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Some(folder) = path.parent() else {
        return;
    };
    let (Ok(folder), Ok(written)) = (std::fs::metadata(folder), std::fs::symlink_metadata(path))
    else {
        return;
    };
    if folder.uid() != written.uid()
        && let Err(error) = std::os::unix::fs::lchown(path, Some(folder.uid()), Some(folder.gid()))
    {
        tracing::debug!(%error, path = %path.display(), "what was put back stays the writer's");
    }
}

/// Every folder between `root` and `path` is a real folder or missing (then made as one).
fn check_folders_above(path: &RepoPath, root: &Path) -> io::Result<()> {
    for folder in path.folders_from_top() {
        match std::fs::symlink_metadata(folder.under(root)) {
            Ok(metadata) if metadata.is_dir() => {}
            Ok(_) => {
                return Err(io::Error::other(format!(
                    "{folder} is not a folder (a symlink or a file): nothing is written beneath it"
                )));
            }
            // Missing: so is everything below it, and all are made as folders.
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(error) => return Err(error),
        }
    }
    Ok(())
}
