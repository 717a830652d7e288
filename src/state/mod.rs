//! The state dir: where a run's files live, and how they are written (atomically: a temp file in
//! the same folder, then a rename).

mod layout;
mod runs;

use std::path::{Path, PathBuf};

pub use layout::*;
pub use runs::{earlier_folders, prune, set_aside};

#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {source}", path.display())]
pub struct StateError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// The folder of cycle `cycle` (0 is the baseline), created if missing.
pub fn cycle_dir(state_dir: &Path, cycle: u32) -> Result<PathBuf, StateError> {
    let dir = state_dir.join(format!("cycle-{cycle}"));
    std::fs::create_dir_all(&dir).map_err(|source| StateError {
        path: dir.clone(),
        source,
    })?;
    Ok(dir)
}

/// Writes one of the run's files: its secrets (the environment's, and credential shapes)
/// redacted, then written whole ([`crate::files::write_atomic`]) as an artifact.
pub fn write_redacted(path: &Path, bytes: &[u8]) -> Result<(), StateError> {
    let bytes = crate::secrets::redacted(bytes);
    crate::files::write_atomic(path, &bytes, crate::files::WriteOptions::ARTIFACT).map_err(
        |source| StateError {
            path: path.to_path_buf(),
            source,
        },
    )
}

/// The most of one of the loop's own files that is read.
pub const OWN_FILE_LIMIT: u64 = 64 * 1024 * 1024;

/// Reads one of the loop's own files in the state dir (or a delegate's file there, such as its
/// verdict), at most `limit` bytes: `Ok(None)` when it is missing. Every read of a file in the
/// state dir goes through here: a symlink is never followed (a delegate could point one at any
/// file), a FIFO or a device is never opened (either could hang the run), and a file longer than
/// `limit` is an error. Writes go through [`write_redacted`], whose rename replaces whatever is at
/// the path (a symlink too) and never writes through it.
pub fn read_own(path: &Path, limit: u64) -> std::io::Result<Option<Vec<u8>>> {
    crate::files::read_regular(path, limit)
}

/// Writes `value` as pretty JSON with a final newline, atomically.
pub fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<(), StateError> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|source| StateError {
        path: path.to_path_buf(),
        source: source.into(),
    })?;
    bytes.push(b'\n');
    write_redacted(path, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_replace_whole_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        write_redacted(&path, b"first, long").unwrap();
        write_redacted(&path, b"second").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
