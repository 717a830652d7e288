//! What can go wrong with the repository or the tree, each with the path and the reason.

use std::path::PathBuf;

use super::RepoPath;

/// The way out when the run's uid is not the checkout's owner: every message that meets it ends
/// with this.
pub const RUN_AS_THE_OWNER: &str = "run as the user who owns the checkout (a container: docker run --user \"$(id -u):$(id -g)\" ...; Jenkins' docker.inside does this)";

#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error(
        "{}: not inside a git repository; run `git init` and commit once, or use `refine-loop check`, which needs no git (git: {})",
        path.display(),
        source.message()
    )]
    NotARepository {
        path: PathBuf,
        #[source]
        source: git2::Error,
    },
    #[error(
        "{}: the repository belongs to another user and git's safe.directory does not name it ({source}); {}, or name it: git config --global --add safe.directory <folder>",
        path.display(),
        RUN_AS_THE_OWNER
    )]
    NotOwned {
        path: PathBuf,
        #[source]
        source: git2::Error,
    },
    #[error(
        "{}: cannot keep the copies rollbacks need in the git folder ({source}); {}",
        path.display(),
        RUN_AS_THE_OWNER
    )]
    GitFolderNotWritable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: a bare repository has no working tree to improve", path.display())]
    Bare { path: PathBuf },
    #[error(
        "{}: HEAD has no commit yet; commit once so the loop has a base to record its changes against",
        path.display()
    )]
    UnbornHead { path: PathBuf },
    #[error(
        "{path}: a git repository inside the work tree that is not a submodule; the loop cannot keep a copy of it, so it does not work beside it: commit it as a submodule, move it out, or run with --isolate worktree"
    )]
    NestedRepository { path: RepoPath },
    #[error(
        "{path}: a hard link ({links} names for one file, some perhaps outside the tree, as dotfile setups make); a rollback puts back the tree's name only, so a delegate's bytes would stay in the others: run on a checkout without hard links (a fresh clone), or with --isolate worktree"
    )]
    HardLinkedFile { path: RepoPath, links: u64 },
    #[error(
        "{}: a folder in the work tree, `{folder}`, is nested deeper than {depth} folders or has a path longer than {length} bytes, beyond what git's library walks: move it out of the tree or have git ignore it",
        root.display()
    )]
    TooDeep {
        root: PathBuf,
        folder: String,
        /// The most folders git's library walks, and the longest folder path kept within reach.
        depth: usize,
        length: usize,
    },
    #[error(
        "stopped by a signal while the user's work was being recorded, before anything ran: nothing in the tree was changed"
    )]
    Cancelled,
    #[error("git: {0}")]
    Git(#[from] git2::Error),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{path}: changed by someone else while the loop was working (expected {expected}, found {found}); both versions are kept"
    )]
    ConcurrentChange {
        path: RepoPath,
        expected: String,
        found: String,
    },
    #[error(
        "{path}: could not be put back as it was before the turn (expected {expected}, found {found}); the kept copies and the journal stay for `refine-loop recover`"
    )]
    NotRestored {
        path: RepoPath,
        expected: String,
        found: String,
    },
}

impl WorkspaceError {
    /// Why the repository holding `path` could not be opened: libgit2's refusal of a repository
    /// another user owns is told apart from there being none.
    pub fn opening(path: &std::path::Path, source: git2::Error) -> Self {
        let path = path.to_path_buf();
        if source.code() == git2::ErrorCode::Owner {
            Self::NotOwned { path, source }
        } else {
            Self::NotARepository { path, source }
        }
    }

    /// The repository cannot be worked on at all (a usage error, not a failed run).
    pub fn is_unusable_repository(&self) -> bool {
        matches!(
            self,
            Self::NotARepository { .. }
                | Self::NotOwned { .. }
                | Self::GitFolderNotWritable { .. }
                | Self::Bare { .. }
                | Self::UnbornHead { .. }
                | Self::NestedRepository { .. }
                | Self::HardLinkedFile { .. }
                | Self::TooDeep { .. }
        )
    }
}
