//! What can be wrong with the configuration; every message names the file, the key and the
//! expectation, on one line.

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("--target {}: not a directory", path.display())]
    TargetNotDirectory { path: PathBuf },

    #[error(
        "{}: no such file; write one with `refine-loop init`, or name one with --config",
        path.display()
    )]
    Missing { path: PathBuf },

    #[error("{}: cannot read: {source}", path.display())]
    Unreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A value in a file is wrong: `file[:line:column]: key: reason`.
    #[error(transparent)]
    Invalid(#[from] crate::parse::InvalidValue),

    /// A parser definition is wrong.
    #[error(transparent)]
    Definition(#[from] crate::parse::DefinitionError),

    /// A value from the environment or a flag is wrong.
    #[error("{source_name}: {reason}")]
    InvalidOverride { source_name: String, reason: String },
}

pub use crate::parse::one_line;

pub(super) fn invalid(path: &Path, key: impl Into<String>, reason: impl AsRef<str>) -> ConfigError {
    crate::parse::InvalidValue::at(path, "", None, key, reason).into()
}

/// One entry of an array of tables (`gate.check[2]`, `delegate[0]`), so that an error about one
/// of its fields names it by its full key.
#[derive(Debug, Clone, Copy)]
pub(super) struct Entry<'a> {
    pub(super) config_file: &'a Path,
    /// The array's key, like `gate.check`.
    pub(super) array: &'static str,
    pub(super) index: usize,
}

impl Entry<'_> {
    /// The full key of one of the entry's fields, like `gate.check[2].run`.
    pub(super) fn key(&self, field: &str) -> String {
        format!("{}[{}].{field}", self.array, self.index)
    }

    /// An error about one of the entry's fields.
    pub(super) fn invalid(&self, field: &str, reason: impl AsRef<str>) -> ConfigError {
        invalid(self.config_file, self.key(field), reason)
    }
}
