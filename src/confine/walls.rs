//! Where a confined delegate may write, as a list of grants. Landlock only allows, and what it
//! allows on a folder holds for everything beneath it. When the delegate's mount namespace binds
//! the sealed paths read-only (see [`super::namespace`]), the work tree is granted whole, its top
//! included. Without one, a folder that holds a sealed path (the work tree holds `.git`) is never
//! granted itself: each of its entries is, but the sealed one, a folder beneath, an existing file
//! in place (write and truncate, no create, remove or rename).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What a delegate may write and what it never may.
#[derive(Debug, Clone, Default)]
pub struct Walls {
    /// The work tree itself.
    pub tree: PathBuf,
    /// Folders to write beneath: the work tree, the temp folders, the caches.
    pub writable: Vec<PathBuf>,
    /// Never written, and no folder holding one is granted whole: the git dirs, the state dir,
    /// the loop's store. A writable folder inside one of them is dropped.
    pub sealed: Vec<PathBuf>,
    /// Never granted whole, but writable folders inside them stay (the user's tree in worktree
    /// mode, with the folders it shares).
    pub fenced: Vec<PathBuf>,
    /// The gate's tools (dependency folders, virtualenvs, folders on `PATH`): read-only like
    /// [`Self::fenced`] ones, writable folders inside them aside (`node_modules/.cache`). With a
    /// mount namespace they are read-only binds and the tree that holds them is granted whole.
    pub tools: Vec<PathBuf>,
    /// Single files to write in place (the delegate's verdict and report; `/dev/null`).
    pub files: Vec<PathBuf>,
    /// Writable folders (the caches outside the tree) whose writes each delegate keeps to
    /// itself, where its mount namespace can: it reads them as they are, and what it writes
    /// there is gone when it ends (see [`super::namespace::MountPlan::private`]).
    pub private: Vec<PathBuf>,
    /// The tree's build folders, tool caches and dependency folders (`target`, `.ruff_cache`,
    /// `node_modules`): each delegate, and each check of a gate run after the baseline, writes
    /// them in a layer of its own like [`Self::private`], so that the results a tool replays
    /// from them (cargo's warnings for a crate it takes as unchanged) and the programs in them
    /// are those the baseline's run left, and a gate that installs still can.
    pub results: Vec<PathBuf>,
    /// Every other folder git ignores in the tree (`build/cargo`, a `target-dir` elsewhere):
    /// written by each delegate in a layer of its own. Not by the gate's runs: a check may
    /// remove such a folder whole (`rm -rf dist`), which no folder with a layer on it allows.
    pub ignored: Vec<PathBuf>,
}

/// One rule for the kernel.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Grant {
    /// Everything beneath this folder.
    Beneath(PathBuf),
    /// This existing file, written in place.
    File(PathBuf),
}

/// The grants for `walls`; `bound` says the sealed paths are read-only binds, so a folder that
/// holds one is granted whole. Paths are resolved first (a link never widens a grant); what does
/// not exist is left out; a link met while splitting a folder is not followed, nor granted.
pub fn plan(walls: &Walls, bound: bool) -> Vec<Grant> {
    let resolve = |paths: &[PathBuf]| -> Vec<PathBuf> {
        paths
            .iter()
            .filter_map(|path| path.canonicalize().ok())
            .collect()
    };
    let sealed = resolve(&walls.sealed);
    let mut blocked = if bound { Vec::new() } else { sealed.clone() };
    blocked.extend(resolve(&walls.fenced));
    if !bound {
        blocked.extend(resolve(&walls.tools));
    }
    let mut grants = BTreeSet::new();
    for root in resolve(&walls.writable) {
        if sealed.iter().any(|seal| root.starts_with(seal)) {
            tracing::debug!(folder = %root.display(), "not writable: inside a sealed folder");
            continue;
        }
        grant(&root, &blocked, &mut grants);
    }
    for file in resolve(&walls.files) {
        if std::fs::metadata(&file).is_ok_and(|meta| !meta.is_dir()) {
            grants.insert(Grant::File(file));
        }
    }
    grants.into_iter().collect()
}

/// Grants `folder` whole, or, when it holds a blocked path, each of its entries but those.
fn grant(folder: &Path, blocked: &[PathBuf], grants: &mut BTreeSet<Grant>) {
    if blocked.iter().any(|b| b == folder) {
        return;
    }
    if !blocked.iter().any(|b| b.starts_with(folder)) {
        grants.insert(Grant::Beneath(folder.to_path_buf()));
        return;
    }
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            grant(&path, blocked, grants);
        } else if kind.is_file() && !blocked.contains(&path) {
            grants.insert(Grant::File(path));
        }
    }
}

#[cfg(test)]
#[path = "walls_tests.rs"]
mod tests;
