//! The record of a run that a person can apply or throw away: one commit per accepted iteration on
//! a private ref, exported as a `git am` series, a cumulative patch and a manifest; nothing pushed.
//!
//! Commits are built in memory from the previous iteration's tree and the changed paths: the
//! user's branch, HEAD, the index file and the working tree are never read or moved.

mod email;
mod ledger;
mod manifest;
mod patch;
mod provenance;
mod secrets;
mod tree;

use std::path::{Path, PathBuf};

use crate::state::StateError;
use crate::workspace::{PathState, SnapshotStore};

pub use ledger::Ledger;
pub use manifest::{EntryKind, Manifest};
pub use patch::PatchFile;
pub use provenance::{Provenance, run_locator};
pub use secrets::SecretScan;

/// The namespace of the private refs, one per run.
pub const REF_PREFIX: &str = "refs/refine-loop/";

/// The identity of the commits, when no other signature is given.
const AUTHOR_NAME: &str = "refine-loop";
const AUTHOR_EMAIL: &str = "refine-loop@localhost";

#[derive(Debug, thiserror::Error)]
pub enum DeliverError {
    #[error("git: cannot {action}: {source}")]
    Git {
        action: String,
        #[source]
        source: git2::Error,
    },
    #[error(
        "run id {run_id:?} cannot name a ref (`{REF_PREFIX}<run-id>`): use letters, digits, `-`, `_` or `.`"
    )]
    InvalidRunId { run_id: String },
    #[error("the ref {name} already exists: a run id names one run, pick another")]
    RefExists { name: String },
    #[error("{path:?}: {problem}")]
    InvalidPath { path: String, problem: &'static str },
    #[error("cannot copy {} from the snapshot store into the repository: {source}", path.display())]
    Store {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the snapshot store's {} does not hold the bytes it is named after (their sha256 is {found})",
        path.display()
    )]
    StoreCorrupt { path: PathBuf, found: String },
    #[error("iteration of cycle {cycle} changes nothing in the tree: no commit made")]
    NothingToRecord { cycle: u32 },
    #[error("commit {commit}: its message is not UTF-8")]
    MessageNotUtf8 { commit: git2::Oid },
    #[error(
        "{}: not written: the secret scan reported {} finding(s): {}",
        path.display(),
        findings.len(),
        findings.join("; ")
    )]
    SecretRefused {
        path: PathBuf,
        findings: Vec<String>,
    },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Write(#[from] StateError),
}

/// Attaches what was being done to a git error.
fn git(action: impl Into<String>) -> impl FnOnce(git2::Error) -> DeliverError {
    let action = action.into();
    move |source| DeliverError::Git { action, source }
}

/// One accepted cycle, as the loop hands it over.
#[derive(Debug, Clone)]
pub struct Iteration {
    pub cycle: u32,
    /// One line, e.g. `failed 12→7 (lint 5→0)`; line breaks become spaces in the subject.
    pub summary: String,
    /// The commit body sections.
    pub ledger: Ledger,
    /// The trailers that end the message, after the ledger.
    pub provenance: Provenance,
    /// What this cycle changed, relative to the previous iteration's tree.
    pub changes: Vec<PathChange>,
}

/// One path an iteration changed: repo-relative, `/`-separated, not necessarily UTF-8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathChange {
    pub path: Vec<u8>,
    pub before: PathState,
    pub after: PathState,
}

/// A commit the recorder made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedIteration {
    pub cycle: u32,
    pub commit: git2::Oid,
    pub subject: String,
}

/// Records accepted iterations as commits on `refs/refine-loop/<run-id>` and exports them.
pub struct Recorder<'repo> {
    repo: &'repo git2::Repository,
    base: git2::Oid,
    run_id: String,
    reference: String,
    signature: Option<git2::Signature<'static>>,
    iterations: Vec<RecordedIteration>,
}

impl std::fmt::Debug for Recorder<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Recorder")
            .field("repository", &self.repo.path())
            .field("base", &self.base)
            .field("reference", &self.reference)
            .field("iterations", &self.iterations)
            .finish()
    }
}

impl<'repo> Recorder<'repo> {
    /// A recorder for a new run on top of the commit `base`. The ref must not exist yet.
    pub fn new(
        repo: &'repo git2::Repository,
        base: git2::Oid,
        run_id: &str,
    ) -> Result<Self, DeliverError> {
        let reference = format!("{REF_PREFIX}{run_id}");
        if run_id.is_empty() || run_id.contains('/') || !git2::Reference::is_valid_name(&reference)
        {
            return Err(DeliverError::InvalidRunId {
                run_id: run_id.to_string(),
            });
        }
        repo.find_commit(base)
            .map_err(git(format!("find the base commit {base}")))?;
        match repo.find_reference(&reference) {
            Ok(_) => return Err(DeliverError::RefExists { name: reference }),
            Err(error) if error.code() == git2::ErrorCode::NotFound => {}
            Err(error) => return Err(git(format!("look up {reference}"))(error)),
        }
        Ok(Self {
            repo,
            base,
            run_id: run_id.to_string(),
            reference,
            signature: None,
            iterations: Vec::new(),
        })
    }

    /// The run's id, as in its ref.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// `refs/refine-loop/<run-id>`.
    pub fn reference(&self) -> &str {
        &self.reference
    }

    /// The last recorded commit, if any.
    pub fn tip(&self) -> Option<git2::Oid> {
        self.iterations.last().map(|iteration| iteration.commit)
    }

    pub fn iterations(&self) -> &[RecordedIteration] {
        &self.iterations
    }

    /// Makes one commit for `iteration` on the private ref: the previous iteration's tree (the
    /// base's, first) with `changes` applied, file bytes taken from `store`.
    pub fn record(
        &mut self,
        iteration: &Iteration,
        store: &SnapshotStore,
    ) -> Result<git2::Oid, DeliverError> {
        let parent_id = self.tip().unwrap_or(self.base);
        let parent = self
            .repo
            .find_commit(parent_id)
            .map_err(git(format!("find commit {parent_id}")))?;
        let parent_tree = parent
            .tree()
            .map_err(git(format!("read the tree of {parent_id}")))?;
        let tree_id = tree::build(self.repo, &parent_tree, &iteration.changes, store)?;
        if tree_id == parent_tree.id() {
            return Err(DeliverError::NothingToRecord {
                cycle: iteration.cycle,
            });
        }
        let tree = self
            .repo
            .find_tree(tree_id)
            .map_err(git(format!("find tree {tree_id}")))?;
        let subject = subject(iteration.cycle, &iteration.summary);
        // The trailers come last, after a blank line: nothing in the ledger can join them.
        let message = format!(
            "{subject}\n\n{}\n{}",
            iteration.ledger.to_body(),
            iteration.provenance.trailers()
        );
        let signature = match &self.signature {
            Some(signature) => signature.clone(),
            None => git2::Signature::now(AUTHOR_NAME, AUTHOR_EMAIL)
                .map_err(git("make the commit signature"))?,
        };
        let commit = self
            .repo
            .commit(None, &signature, &signature, &message, &tree, &[&parent])
            .map_err(git("create the iteration commit"))?;
        self.move_reference(commit, iteration.cycle)?;
        self.iterations.push(RecordedIteration {
            cycle: iteration.cycle,
            commit,
            subject,
        });
        Ok(commit)
    }

    /// Points the private ref at `commit`: created on the first iteration, afterwards moved only
    /// from the tip this recorder left (someone else moving it is an error, not overwritten).
    fn move_reference(&self, commit: git2::Oid, cycle: u32) -> Result<(), DeliverError> {
        let log = format!("refine-loop: iteration {cycle}");
        let result = match self.tip() {
            None => self.repo.reference(&self.reference, commit, false, &log),
            Some(tip) => self
                .repo
                .reference_matching(&self.reference, commit, true, tip, &log),
        };
        result.map_err(git(format!("point {} at {commit}", self.reference)))?;
        Ok(())
    }

    /// Writes `NNNN-<slug>.patch` files into `dir` (`patches/`, created if missing), one
    /// `git am` patch per iteration, and returns their paths. Patch files of an earlier export
    /// that this one does not rewrite are removed. When the scan finds anything in any patch,
    /// nothing is written or removed.
    pub fn write_series(
        &self,
        dir: &Path,
        scan: &dyn SecretScan,
    ) -> Result<Vec<PathBuf>, DeliverError> {
        let plan = self.series()?;
        for file in &plan {
            secrets::refuse(self.repo, &dir.join(&file.name), file, scan)?;
        }
        std::fs::create_dir_all(dir).map_err(|source| DeliverError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        email::remove_stale_series(dir, &plan)?;
        let mut written = Vec::with_capacity(plan.len());
        for file in &plan {
            let path = dir.join(&file.name);
            crate::state::write_redacted(&path, &file.contents)?;
            written.push(path);
        }
        Ok(written)
    }

    /// The series as data, one patch per iteration, nothing written (`--dry-run`).
    pub fn series(&self) -> Result<Vec<PatchFile>, DeliverError> {
        let count = self.iterations.len();
        self.iterations
            .iter()
            .enumerate()
            .map(|(index, iteration)| email::email(self.repo, iteration, index + 1, count))
            .collect()
    }

    /// Writes the diff from the base commit's tree to the last iteration's (`git apply` on a
    /// checkout of the base). With no iterations, or when they cancel out, the file is empty.
    /// When the scan finds anything, nothing is written.
    pub fn write_cumulative_patch(
        &self,
        path: &Path,
        scan: &dyn SecretScan,
    ) -> Result<(), DeliverError> {
        let file = self.cumulative_patch()?;
        secrets::refuse(self.repo, path, &file, scan)?;
        crate::state::write_redacted(path, &file.contents)?;
        Ok(())
    }

    /// The cumulative patch as data, nothing written.
    pub fn cumulative_patch(&self) -> Result<PatchFile, DeliverError> {
        patch::cumulative(self.repo, self.base, self.tip())
    }

    /// The diff from commit `from` (the base, or a commit the base descends from) to the last
    /// iteration.
    /// accepted work is in, whatever else changed around it.
    pub fn patch_since(&self, from: git2::Oid) -> Result<PatchFile, DeliverError> {
        patch::cumulative(self.repo, from, self.tip())
    }

    /// Every path that differs between commit `from` and the last iteration.
    pub fn files_since(
        &self,
        from: git2::Oid,
    ) -> Result<Vec<manifest::ManifestFile>, DeliverError> {
        match self.tip() {
            Some(tip) => manifest::changed_files(self.repo, from, tip),
            None => Ok(Vec::new()),
        }
    }

    /// The commit the first iteration was made on.
    pub fn base(&self) -> git2::Oid {
        self.base
    }

    /// Writes `manifest.json`. It holds hashes and paths, no file contents, so it is not scanned.
    pub fn write_manifest(
        &self,
        path: &Path,
        outcome: &str,
        stop_reason: &str,
    ) -> Result<(), DeliverError> {
        let manifest = self.manifest(outcome, stop_reason)?;
        crate::state::write_json(path, &manifest)?;
        Ok(())
    }

    /// The manifest as data, nothing written.
    pub fn manifest(&self, outcome: &str, stop_reason: &str) -> Result<Manifest, DeliverError> {
        manifest::build(self, outcome, stop_reason)
    }
}

/// What became of the record, for the final report.
#[derive(Debug, Clone, Default)]
pub struct DeliveryNote {
    pub reference: Option<String>,
    pub commits: usize,
    /// Why the patches were not written (a secret in them), when they were not.
    pub refused: Option<String>,
}

/// `refine-loop: iteration N — <summary>` (N is the cycle), on one line: runs of whitespace in
/// the summary become one space; with no summary, `refine-loop: iteration N`.
pub fn subject(cycle: u32, summary: &str) -> String {
    let summary = summary.split_whitespace().collect::<Vec<_>>().join(" ");
    if summary.is_empty() {
        return format!("refine-loop: iteration {cycle}");
    }
    format!("refine-loop: iteration {cycle} \u{2014} {summary}")
}

#[cfg(test)]
#[path = "deliver_tests.rs"]
mod tests;
