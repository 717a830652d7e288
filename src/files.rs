//! Opening a file someone else may have made or replaced (a delegate, or anything it left
//! behind), without being led anywhere: the path is looked at (`lstat`) before it is opened, a
//! symlink at its last part is never followed, and only a regular file is ever opened. A FIFO
//! would block the open (or the read) forever, a device such as `/dev/zero` never ends, and
//! opening a device may act on it: none is opened, whatever the caller wants of it. And the one
//! way a file is written whole: beside it, then renamed over it.

use std::fs::{File, FileType};
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use nix::fcntl::OFlag;

/// What a path holds that is neither a regular file, a folder nor a symlink.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum SpecialKind {
    Fifo,
    Socket,
    CharDevice,
    BlockDevice,
}

impl SpecialKind {
    /// The kind of a file type, when it is a special one.
    pub fn of(kind: &FileType) -> Option<Self> {
        if kind.is_fifo() {
            Some(Self::Fifo)
        } else if kind.is_socket() {
            Some(Self::Socket)
        } else if kind.is_char_device() {
            Some(Self::CharDevice)
        } else if kind.is_block_device() {
            Some(Self::BlockDevice)
        } else {
            None
        }
    }

    /// A short, stable name (`fifo`, `socket`, `char-device`, `block-device`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Fifo => "fifo",
            Self::Socket => "socket",
            Self::CharDevice => "char-device",
            Self::BlockDevice => "block-device",
        }
    }

    /// The kind as a report says it.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Fifo => "a FIFO (named pipe)",
            Self::Socket => "a socket",
            Self::CharDevice => "a character device",
            Self::BlockDevice => "a block device",
        }
    }
}

/// The error for a path that is not a regular file; its kind is `InvalidInput`.
fn not_regular(path: &Path, what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} is {what}, not a regular file: it is not opened",
            path.display()
        ),
    )
}

/// What a path that is not a regular file is, for an error.
fn what_is(kind: &FileType) -> &'static str {
    match SpecialKind::of(kind) {
        Some(special) => special.describe(),
        None if kind.is_symlink() => "a symlink",
        None if kind.is_dir() => "a folder",
        None => "not a regular file",
    }
}

/// Opens `path` for reading when it is a regular file. Its last part is looked at first and
/// never followed when it is a symlink; the open does not block (a FIFO swapped in meanwhile
/// cannot hang it), and the opened file is checked again to be a regular file.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let kind = std::fs::symlink_metadata(path)?.file_type();
    if !kind.is_file() {
        return Err(not_regular(path, what_is(&kind)));
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC).bits())
        .open(path)
        .map_err(|error| {
            if error.raw_os_error() == Some(nix::libc::ELOOP) {
                not_regular(path, "a symlink")
            } else {
                error
            }
        })?;
    let opened = file.metadata()?.file_type();
    if !opened.is_file() {
        return Err(not_regular(path, what_is(&opened)));
    }
    Ok(file)
}

/// Reads a regular file at `path` (as [`open_regular`] opens it), at most `limit` bytes of it:
/// `Ok(None)` when it is missing. A file longer than `limit` is an error, never read whole.
pub fn read_regular(path: &Path, limit: u64) -> io::Result<Option<Vec<u8>>> {
    let file = match open_regular(path) {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error),
    };
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{} is longer than {limit} bytes: it is not read",
                path.display()
            ),
        ));
    }
    Ok(Some(bytes))
}

/// How [`write_atomic`] leaves a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOptions {
    /// Its permission bits.
    pub mode: u32,
    /// Synced to the disk before it replaces the old one.
    pub sync: bool,
}

impl WriteOptions {
    /// A run's artifact: readable by others (a CI upload may run as another user), not synced
    /// (a sync per file costs more than the loop's own work per cycle).
    pub const ARTIFACT: Self = Self {
        mode: 0o644,
        sync: false,
    };
    /// State the next run depends on (a campaign's files, a turn's journal): owner-only, and
    /// on the disk before it counts.
    pub const PRIVATE: Self = Self {
        mode: 0o600,
        sync: true,
    };
}

/// Writes `bytes` to `path` so that readers see the old file or the new one, never a part: a new
/// file beside it (created exclusively, so never through a link, and owner-only until it is
/// whole), then renamed over whatever is at the path (a symlink there is replaced, not
/// followed). Nothing is redacted here: what must be, is redacted by the caller first.
pub fn write_atomic(path: &Path, bytes: &[u8], options: WriteOptions) -> io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let prefix = format!(
        ".{}.",
        path.file_name().unwrap_or_default().to_string_lossy()
    );
    let mut temporary = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .tempfile_in(dir)?;
    temporary.write_all(bytes)?;
    let file = temporary.as_file();
    file.set_permissions(std::fs::Permissions::from_mode(options.mode))?;
    if options.sync {
        file.sync_all()?;
    }
    temporary.persist(path).map_err(|error| error.error)?;
    Ok(())
}

/// The regular files the loop's own stdout and stderr go to: its output, never the user's work,
/// wherever they are (a run's `2>logs/run.log` inside the tree is written all along; putting it
/// back would lose every later line). Through a pipe, the files the processes down the pipeline
/// write (`| tee logs/run.log`, `| grep -v x | tee -a log`). Found once, at the first call
/// (before any delegate runs), and kept.
pub fn own_output() -> Vec<PathBuf> {
    static OWN: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    OWN.get_or_init(find_own_output).clone()
}

fn find_own_output() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut pipes = Vec::new();
    for fd in ["/proc/self/fd/1", "/proc/self/fd/2"] {
        let Ok(target) = std::fs::read_link(fd) else {
            continue;
        };
        if std::fs::metadata(fd).is_ok_and(|meta| meta.is_file()) {
            files.push(target);
        } else if is_pipe(&target) {
            pipes.push(target);
        }
    }
    files.extend(written_down_the_pipeline(pipes));
    files.sort();
    files.dedup();
    files
}

/// How many pipes down a pipeline [`own_output`] follows.
const PIPELINE_HOPS: usize = 4;

/// The regular files held open write-only (as `tee` and `>` open them; not a file an editor
/// or a driver holds open to read and write) by the processes that read `pipes` (the kernel's
/// names, `pipe:[inode]`), and by those that read the pipes they write, a few hops on. The
/// loop's own ancestors (the shell, a harness that started it and reads its output) are not
/// down its pipeline.
fn written_down_the_pipeline(mut pipes: Vec<PathBuf>) -> Vec<PathBuf> {
    let me = std::process::id().to_string();
    let ancestors = ancestors();
    let mut followed = std::collections::BTreeSet::new();
    let mut files = Vec::new();
    for _ in 0..PIPELINE_HOPS {
        let wanted: std::collections::BTreeSet<PathBuf> = pipes
            .drain(..)
            .filter(|pipe| followed.insert(pipe.clone()))
            .collect();
        if wanted.is_empty() {
            break;
        }
        let Ok(processes) = std::fs::read_dir("/proc") else {
            break;
        };
        for process in processes.flatten() {
            let name = process.file_name();
            let Some(pid) = name
                .to_str()
                .filter(|pid| pid.bytes().all(|b| b.is_ascii_digit()))
            else {
                continue;
            };
            if pid == me || ancestors.contains(pid) {
                continue;
            }
            let open = open_files(&process.path());
            let reads_one = open
                .iter()
                .any(|(target, writes, _)| !writes && wanted.contains(target));
            if !reads_one {
                continue;
            }
            for (target, writes, regular) in open {
                if writes && regular {
                    files.push(target);
                } else if writes && is_pipe(&target) {
                    pipes.push(target);
                }
            }
        }
    }
    files
}

/// What the process at `/proc/<pid>` holds open: each target, whether it was opened for
/// writing, and whether it is a regular file. Empty when it cannot be read (another user's).
fn open_files(process: &Path) -> Vec<(PathBuf, bool, bool)> {
    let Ok(fds) = std::fs::read_dir(process.join("fd")) else {
        return Vec::new();
    };
    fds.flatten()
        .filter_map(|fd| {
            let target = std::fs::read_link(fd.path()).ok()?;
            let info = std::fs::read_to_string(process.join("fdinfo").join(fd.file_name())).ok()?;
            let flags = info
                .lines()
                .find_map(|line| line.strip_prefix("flags:"))
                .and_then(|flags| u32::from_str_radix(flags.trim(), 8).ok())?;
            let writes = flags & 0o3 == 0o1;
            let regular =
                !is_pipe(&target) && std::fs::metadata(fd.path()).is_ok_and(|meta| meta.is_file());
            Some((target, writes, regular))
        })
        .collect()
}

/// The pids above this process, up to the first.
fn ancestors() -> std::collections::BTreeSet<String> {
    let mut found = std::collections::BTreeSet::new();
    let mut pid = std::process::id().to_string();
    while let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
        let Some(parent) = status
            .lines()
            .find_map(|line| line.strip_prefix("PPid:"))
            .map(|parent| parent.trim().to_string())
            .filter(|parent| parent != "0" && !found.contains(parent))
        else {
            break;
        };
        found.insert(parent.clone());
        pid = parent;
    }
    found
}

fn is_pipe(target: &Path) -> bool {
    target
        .to_str()
        .is_some_and(|name| name.starts_with("pipe:["))
}

#[cfg(test)]
#[path = "files_tests.rs"]
mod tests;
