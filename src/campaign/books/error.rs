//! What can go wrong with a campaign's state dir, and the exit code of each.

use std::path::PathBuf;

use super::FORMAT;

/// What can go wrong with a state dir. Each message names the path and, where there is one, the
/// repair.
#[derive(Debug, thiserror::Error)]
pub enum CampaignError {
    #[error("the state dir {} names no folder (it ends in `..` or is the root)", path.display())]
    InvalidStateDir { path: PathBuf },
    #[error(
        "the state dir {} is a symbolic link; refusing it: pass the real folder instead",
        path.display()
    )]
    SymlinkedStateDir { path: PathBuf },
    #[error("the state dir {} exists but is not a folder", path.display())]
    NotADirectory { path: PathBuf },
    #[error(
        "the state file {} is {kind}, not a regular file; refusing it: restore the file from the \
         artifact that holds it, or move the state dir aside to start a new campaign",
        path.display()
    )]
    StateFileNotRegular { path: PathBuf, kind: &'static str },
    #[error(
        "another refine-loop run holds {} (lock file {}); wait for it to finish, or use another \
         --state-dir",
        dir.display(),
        lock.display()
    )]
    LockHeld { dir: PathBuf, lock: PathBuf },
    #[error(
        "{} holds part of a campaign ({present} present; {missing} missing); nothing was changed: \
         restore the missing files from the artifact that holds them, or move the state dir aside \
         to start a new campaign",
        dir.display()
    )]
    PartialSet {
        dir: PathBuf,
        present: String,
        missing: String,
    },
    #[error(
        "{} is corrupt: {reason}; restore it from the artifact that holds it, or move the state \
         dir aside to start a new campaign",
        path.display()
    )]
    Corrupt { path: PathBuf, reason: String },
    #[error(
        "{} has state format {found}, this refine-loop reads format {FORMAT}; use the refine-loop \
         that wrote it, or move the state dir aside to start a new campaign",
        path.display()
    )]
    UnsupportedFormat { path: PathBuf, found: u64 },
    #[error(
        "{} belongs to another campaign: its {field} is {stored}, this run's is {current}; run \
         where it belongs, or move {} aside to start a new campaign",
        path.display(),
        dir.display()
    )]
    ProvenanceMismatch {
        path: PathBuf,
        dir: PathBuf,
        field: &'static str,
        stored: String,
        current: String,
    },
    #[error(
        "the configuration of segment {segment} in {} changed ({changes}) and holds for the whole \
         segment: run with the stored configuration, or pass --continue to start a new segment",
        dir.display()
    )]
    ConfigChanged {
        dir: PathBuf,
        segment: u32,
        changes: String,
    },
    #[error(
        "cannot {action} {}: {source}; uid {uid} cannot write there{}: {}, or give --state-dir a folder this user can write",
        path.display(),
        owner.map(|owner| format!(" (the folder belongs to uid {owner})")).unwrap_or_default(),
        crate::workspace::RUN_AS_THE_OWNER
    )]
    NotWritable {
        path: PathBuf,
        action: &'static str,
        uid: u32,
        /// The owner of the nearest folder on the way that exists.
        owner: Option<u32>,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        path: PathBuf,
        action: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write the state into {}: {source}", path.display())]
    Serialize {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
}

impl CampaignError {
    /// Usage (2) for what the invocation got wrong and can fix by itself: a state dir that is a
    /// link or no folder, a state file that is a link or no regular file, a configuration changed
    /// without `--continue`, a state dir the run's uid cannot create or lock (run as the owner). ERROR (4) for state that cannot be used as it is (a partial set, a
    /// corrupt or unknown block, another campaign's provenance, which the refine-loop seed
    /// makes `ERROR`), a lock held by another run, and failed file operations.
    pub fn exit_code(&self) -> i32 {
        use crate::exit_code::{ERROR, USAGE};
        match self {
            Self::InvalidStateDir { .. }
            | Self::SymlinkedStateDir { .. }
            | Self::NotADirectory { .. }
            | Self::StateFileNotRegular { .. }
            | Self::ConfigChanged { .. }
            | Self::NotWritable { .. } => USAGE,
            Self::LockHeld { .. }
            | Self::PartialSet { .. }
            | Self::Corrupt { .. }
            | Self::UnsupportedFormat { .. }
            | Self::ProvenanceMismatch { .. }
            | Self::Io { .. }
            | Self::Serialize { .. } => ERROR,
        }
    }
}
