//! `manifest.json`: the run's base and final commits, every changed path's sha256 before and
//! after, the outcome and the iterations.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{DeliverError, Recorder, git};
use crate::encoding::hex_digest;
use crate::state::format::MANIFEST as FORMAT_VERSION;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub format_version: u32,
    pub run_id: String,
    pub base_commit: String,
    /// The private ref's tip; null when no iteration was recorded.
    pub final_commit: Option<String>,
    /// `refs/refine-loop/<run-id>`.
    #[serde(rename = "ref")]
    pub reference: String,
    pub outcome: String,
    pub stop_reason: String,
    /// Every path that differs between the base commit and the final one, by path bytes.
    pub files: Vec<ManifestFile>,
    pub iterations: Vec<ManifestIteration>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestFile {
    /// The path, lossily decoded when it is not UTF-8.
    pub path: String,
    /// The exact path bytes in hex, only when the path is not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_bytes_hex: Option<String>,
    /// Null when the path did not exist.
    pub before: Option<FileVersion>,
    /// Null when the path no longer exists.
    pub after: Option<FileVersion>,
}

/// What a path held: a file's sha256 and git mode, a symlink's (sha256 of the target), or a
/// submodule's commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileVersion {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// `100644`, `100755`, `120000` (symlink) or `160000` (submodule).
    pub mode: String,
    #[serde(default, skip_serializing_if = "EntryKind::is_file")]
    pub kind: EntryKind,
    /// A submodule's commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    #[default]
    File,
    Symlink,
    Submodule,
}

impl EntryKind {
    fn is_file(&self) -> bool {
        *self == Self::File
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestIteration {
    pub cycle: u32,
    pub commit: String,
    pub subject: String,
}

pub(super) fn build(
    recorder: &Recorder<'_>,
    outcome: &str,
    stop_reason: &str,
) -> Result<Manifest, DeliverError> {
    let files = match recorder.tip() {
        Some(tip) => changed_files(recorder.repo, recorder.base, tip)?,
        None => Vec::new(),
    };
    Ok(Manifest {
        format_version: FORMAT_VERSION,
        run_id: recorder.run_id.clone(),
        base_commit: recorder.base.to_string(),
        final_commit: recorder.tip().map(|tip| tip.to_string()),
        reference: recorder.reference.clone(),
        outcome: outcome.to_string(),
        stop_reason: stop_reason.to_string(),
        files,
        iterations: recorder
            .iterations
            .iter()
            .map(|iteration| ManifestIteration {
                cycle: iteration.cycle,
                commit: iteration.commit.to_string(),
                subject: iteration.subject.clone(),
            })
            .collect(),
    })
}

/// One entry per path that differs between the two commits' trees (no rename detection: a rename
/// is its two paths; a file that became a symlink is one entry).
pub(super) fn changed_files(
    repo: &git2::Repository,
    base: git2::Oid,
    tip: git2::Oid,
) -> Result<Vec<ManifestFile>, DeliverError> {
    let tree_of = |id: git2::Oid| {
        repo.find_commit(id)
            .and_then(|commit| commit.tree())
            .map_err(git(format!("read the tree of {id}")))
    };
    let diff = super::patch::diff_trees(repo, &tree_of(base)?, &tree_of(tip)?, false)?;
    let mut paths: BTreeMap<Vec<u8>, (Option<FileVersion>, Option<FileVersion>)> = BTreeMap::new();
    for delta in diff.deltas() {
        for (file, after) in [(delta.old_file(), false), (delta.new_file(), true)] {
            if !file.exists() {
                continue;
            }
            let Some(path) = file.path_bytes() else {
                continue;
            };
            let version = version(repo, file.mode(), file.id())?;
            let entry = paths.entry(path.to_vec()).or_default();
            if after {
                entry.1 = version;
            } else {
                entry.0 = version;
            }
        }
    }
    Ok(paths
        .into_iter()
        .map(|(path, (before, after))| ManifestFile {
            path: String::from_utf8_lossy(&path).into_owned(),
            path_bytes_hex: std::str::from_utf8(&path)
                .is_err()
                .then(|| crate::encoding::hex(&path)),
            before,
            after,
        })
        .collect())
}

/// What a tree entry holds; `None` for what a tree of files cannot hold (a folder).
fn version(
    repo: &git2::Repository,
    mode: git2::FileMode,
    id: git2::Oid,
) -> Result<Option<FileVersion>, DeliverError> {
    let kind = match mode {
        git2::FileMode::Blob
        | git2::FileMode::BlobGroupWritable
        | git2::FileMode::BlobExecutable => EntryKind::File,
        git2::FileMode::Link => EntryKind::Symlink,
        git2::FileMode::Commit => {
            return Ok(Some(FileVersion {
                sha256: None,
                mode: "160000".to_string(),
                kind: EntryKind::Submodule,
                commit: Some(id.to_string()),
            }));
        }
        git2::FileMode::Tree | git2::FileMode::Unreadable => return Ok(None),
    };
    let blob = repo.find_blob(id).map_err(git(format!("read blob {id}")))?;
    let mode = match mode {
        git2::FileMode::BlobExecutable => "100755",
        git2::FileMode::Link => "120000",
        _ => "100644",
    };
    Ok(Some(FileVersion {
        sha256: Some(hex_digest(Sha256::new_with_prefix(blob.content()))),
        mode: mode.to_string(),
        kind,
        commit: None,
    }))
}
