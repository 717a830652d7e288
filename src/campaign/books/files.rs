//! The state dir's files, never through a link: the dir made owner-only, the lock, files created
//! exclusively, read, appended, and replaced atomically.

use std::fs::{DirBuilder, File, OpenOptions, TryLockError};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::errno::Errno;
use nix::fcntl::OFlag;

use super::CampaignError;

/// How often `lock` tries before it reports the lock as held: a run that is just exiting lets go
/// within this time.
const LOCK_ATTEMPTS: u32 = 5;
const LOCK_RETRY_DELAY: Duration = Duration::from_millis(100);

/// Owner-only, for the dir and every file in it.
const DIR_MODE: u32 = 0o700;
const FILE_MODE: u32 = 0o600;

/// `open` flags for every state file: fail on a symbolic link, and never block opening a FIFO.
fn no_follow() -> i32 {
    (OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK).bits()
}

fn io_error(path: &Path, action: &'static str) -> impl FnOnce(std::io::Error) -> CampaignError {
    let path = path.to_path_buf();
    move |source| {
        if source.raw_os_error() == Some(Errno::ELOOP as i32) {
            CampaignError::StateFileNotRegular {
                path,
                kind: "a symbolic link",
            }
        } else {
            CampaignError::Io {
                path,
                action,
                source,
            }
        }
    }
}

/// Like [`io_error`], for setting up the state dir before anything runs: a permission denied
/// there says which uid was refused and how to run as the checkout's owner.
fn setup_error(path: &Path, action: &'static str) -> impl FnOnce(std::io::Error) -> CampaignError {
    let path = path.to_path_buf();
    move |source| {
        if source.kind() != ErrorKind::PermissionDenied {
            return io_error(&path, action)(source);
        }
        let owner = path
            .ancestors()
            .find_map(|folder| std::fs::metadata(folder).ok())
            .map(|metadata| std::os::unix::fs::MetadataExt::uid(&metadata));
        CampaignError::NotWritable {
            uid: nix::unistd::geteuid().as_raw(),
            owner,
            path,
            action,
            source,
        }
    }
}

/// The canonical state dir: its parent canonicalized (and created if missing), the dir itself
/// created owner-only if missing, refused if it is a symbolic link or not a folder.
pub(super) fn prepare_dir(state_dir: &Path) -> Result<PathBuf, CampaignError> {
    let absolute =
        std::path::absolute(state_dir).map_err(io_error(state_dir, "resolve the state dir"))?;
    let invalid = || CampaignError::InvalidStateDir {
        path: state_dir.to_path_buf(),
    };
    let name = absolute.file_name().ok_or_else(invalid)?;
    let parent = absolute.parent().ok_or_else(invalid)?;
    DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(parent)
        .map_err(setup_error(parent, "create the parent of the state dir"))?;
    let parent = parent
        .canonicalize()
        .map_err(io_error(parent, "canonicalize the parent of the state dir"))?;
    let dir = parent.join(name);
    // Twice at most: a dir another process creates between the look and the create is looked at
    // again.
    for _ in 0..2 {
        match std::fs::symlink_metadata(&dir) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                return Err(CampaignError::SymlinkedStateDir { path: dir });
            }
            Ok(metadata) if !metadata.is_dir() => {
                return Err(CampaignError::NotADirectory { path: dir });
            }
            Ok(_) => return Ok(dir),
            Err(error) if error.kind() == ErrorKind::NotFound => {
                match DirBuilder::new().mode(DIR_MODE).create(&dir) {
                    Ok(()) => return Ok(dir),
                    Err(error) if error.kind() == ErrorKind::AlreadyExists => continue,
                    Err(error) => return Err(setup_error(&dir, "create the state dir")(error)),
                }
            }
            Err(error) => return Err(io_error(&dir, "inspect the state dir")(error)),
        }
    }
    Err(CampaignError::NotADirectory { path: dir })
}

/// Takes the exclusive lock of `dir` (its `.lock` file), retrying briefly; released when the
/// returned file is dropped.
pub(super) fn lock(dir: &Path) -> Result<(File, PathBuf), CampaignError> {
    let path = dir.join(super::LOCK_FILE);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(FILE_MODE)
        .custom_flags(no_follow())
        .open(&path)
        .map_err(setup_error(&path, "open the lock file"))?;
    require_regular(&file, &path)?;
    for attempt in 1..=LOCK_ATTEMPTS {
        match file.try_lock() {
            Ok(()) => return Ok((file, path)),
            Err(TryLockError::WouldBlock) if attempt < LOCK_ATTEMPTS => {
                std::thread::sleep(LOCK_RETRY_DELAY);
            }
            Err(TryLockError::WouldBlock) => break,
            Err(TryLockError::Error(source)) => {
                return Err(io_error(&path, "lock the lock file")(source));
            }
        }
    }
    Err(CampaignError::LockHeld {
        dir: dir.to_path_buf(),
        lock: path,
    })
}

/// Whether the state file at `path` exists; a symbolic link or anything but a regular file is
/// an error.
pub(super) fn exists(path: &Path) -> Result<bool, CampaignError> {
    match std::fs::symlink_metadata(path) {
        Ok(metadata) if metadata.file_type().is_symlink() => {
            Err(CampaignError::StateFileNotRegular {
                path: path.to_path_buf(),
                kind: "a symbolic link",
            })
        }
        Ok(metadata) if !metadata.is_file() => Err(CampaignError::StateFileNotRegular {
            path: path.to_path_buf(),
            kind: "not a regular file",
        }),
        Ok(_) => Ok(true),
        Err(error) if error.kind() == ErrorKind::NotFound => Ok(false),
        Err(error) => Err(io_error(path, "inspect")(error)),
    }
}

fn require_regular(file: &File, path: &Path) -> Result<(), CampaignError> {
    let metadata = file.metadata().map_err(io_error(path, "inspect"))?;
    if metadata.is_file() {
        Ok(())
    } else {
        Err(CampaignError::StateFileNotRegular {
            path: path.to_path_buf(),
            kind: "not a regular file",
        })
    }
}

/// Creates `path` with `text`; fails if anything is already there, link or not.
pub(super) fn create_new(path: &Path, text: &str) -> Result<(), CampaignError> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(FILE_MODE)
        .custom_flags(no_follow())
        .open(path)
        .map_err(io_error(path, "create"))?;
    let written = file
        .write_all(text.as_bytes())
        .and_then(|()| file.sync_all());
    if let Err(error) = written {
        // Ours alone (created just now), so removing it leaves the dir as it was.
        let _ = std::fs::remove_file(path);
        return Err(io_error(path, "write")(error));
    }
    Ok(())
}

pub(super) fn read(path: &Path) -> Result<String, CampaignError> {
    let mut file = OpenOptions::new()
        .read(true)
        .custom_flags(no_follow())
        .open(path)
        .map_err(io_error(path, "open"))?;
    require_regular(&file, path)?;
    let mut text = String::new();
    file.read_to_string(&mut text)
        .map_err(io_error(path, "read"))?;
    Ok(text)
}

/// Appends `text` to the existing regular file `path`; never creates, truncates or follows a link.
pub(super) fn append(path: &Path, text: &str) -> Result<(), CampaignError> {
    let mut file = OpenOptions::new()
        .append(true)
        .custom_flags(no_follow())
        .open(path)
        .map_err(io_error(path, "open for appending"))?;
    require_regular(&file, path)?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(io_error(path, "append to"))
}

/// Replaces the regular file `path` with `text` atomically, owner-only and synced.
pub(super) fn replace(path: &Path, text: &str) -> Result<(), CampaignError> {
    exists(path)?;
    crate::files::write_atomic(path, text.as_bytes(), crate::files::WriteOptions::PRIVATE)
        .map_err(io_error(path, "replace"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_dir_the_uid_cannot_create_names_the_uid_the_owner_and_docker_run_user() {
        let folder = tempfile::tempdir().unwrap();
        let dir = folder.path().join(".refine-loop");
        let denied = std::io::Error::from(ErrorKind::PermissionDenied);
        let error = setup_error(&dir, "create the state dir")(denied);
        let message = error.to_string();
        let uid = nix::unistd::geteuid().as_raw();
        assert!(
            message.starts_with(&format!("cannot create the state dir {}: ", dir.display()))
                && message.contains(&format!("uid {uid} cannot write there"))
                && message.contains(&format!("(the folder belongs to uid {uid})"))
                && message.contains("docker run --user \"$(id -u):$(id -g)\"")
                && message.contains("--state-dir"),
            "{message}"
        );
        assert_eq!(error.exit_code(), crate::exit_code::USAGE);
        // Anything else stays an I/O error (ERROR).
        let full = std::io::Error::from(ErrorKind::StorageFull);
        let error = setup_error(&dir, "create the state dir")(full);
        assert!(matches!(error, CampaignError::Io { .. }), "{error}");
    }
}
