//! A path inside the repository as git names it: relative to the root, `/`-separated, and any
//! bytes (a file name need not be UTF-8).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct RepoPath(#[serde(with = "super::wire_bytes")] Vec<u8>);

impl RepoPath {
    pub fn new(bytes: impl Into<Vec<u8>>) -> Self {
        Self(bytes.into())
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The path on disk under `root`.
    pub fn under(&self, root: &Path) -> PathBuf {
        root.join(OsStr::from_bytes(&self.0))
    }

    /// Whether this path is `folder` or lies beneath it.
    pub fn is_within(&self, folder: &[u8]) -> bool {
        self.0
            .strip_prefix(folder)
            .is_some_and(|rest| rest.is_empty() || rest[0] == b'/')
    }

    /// The folders above this path, nearest first.
    pub fn ancestors(&self) -> impl Iterator<Item = RepoPath> + '_ {
        self.0
            .iter()
            .enumerate()
            .rev()
            .filter(|(_, byte)| **byte == b'/')
            .map(|(at, _)| RepoPath(self.0[..at].to_vec()))
    }
}

impl RepoPath {
    /// The folders above this path, outermost first (the order to check them in: a folder's
    /// state says nothing until the ones above it are known to be folders).
    pub fn folders_from_top(&self) -> Vec<RepoPath> {
        let mut folders: Vec<RepoPath> = self.ancestors().collect();
        folders.reverse();
        folders
    }
}

impl From<&str> for RepoPath {
    fn from(text: &str) -> Self {
        Self(text.as_bytes().to_vec())
    }
}

impl PartialEq<&str> for RepoPath {
    fn eq(&self, other: &&str) -> bool {
        self.0 == other.as_bytes()
    }
}

/// Shown as text; bytes that are not UTF-8 appear as `\xNN`.
impl std::fmt::Display for RepoPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for chunk in self.0.utf8_chunks() {
            f.write_str(chunk.valid())?;
            for byte in chunk.invalid() {
                write!(f, "\\x{byte:02x}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_with_escapes_nested_and_listed_upwards() {
        let path = RepoPath::new(b"caf\xe9/a b/x.rs".to_vec());
        assert_eq!(path.to_string(), "caf\\xe9/a b/x.rs");
        assert!(path.is_within(b"caf\xe9"));
        assert!(path.is_within(b"caf\xe9/a b/x.rs"));
        assert!(!path.is_within(b"caf"));
        let ancestors: Vec<String> = path.ancestors().map(|a| a.to_string()).collect();
        assert_eq!(ancestors, ["caf\\xe9/a b", "caf\\xe9"]);
    }
}
