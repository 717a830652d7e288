//! Why a run could not go on.

use crate::delegate::DelegateError;
use crate::gate::GateError;
use crate::state::StateError;
use crate::workspace::WorkspaceError;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    #[error(transparent)]
    Gate(#[from] GateError),
    #[error(transparent)]
    State(#[from] StateError),
    #[error(transparent)]
    Delegate(#[from] DelegateError),
    #[error("the run's record: {0}")]
    Deliver(#[from] crate::deliver::DeliverError),
    #[error(transparent)]
    Campaign(#[from] crate::campaign::books::CampaignError),
    /// `confine = "required"` on a kernel that cannot confine the delegates.
    #[error("{0}")]
    Confine(String),
    /// `--new-since`: the base cannot be resolved (a usage error).
    #[error(transparent)]
    NewSince(#[from] crate::new_since::SinceError),
    #[error("the CI reports: {0}")]
    Reports(#[from] crate::report::CiReportError),
    #[error("an internal error (a panic, a bug of refine-loop): {0}")]
    Panicked(String),
    #[error("{error}; and the tree could not be put back: {restore}")]
    NotRestored {
        error: Box<RunError>,
        restore: WorkspaceError,
    },
    /// A check changed the repository's files at the baseline (put back): a gate must only read.
    #[error(
        "check \"{check}\" changed the repository's files: {}; they are put back. A gate check must only read: run its tool in check mode (`ruff check --no-fix`, `cargo fmt --check`, `prettier --check`, `eslint` without --fix), or have git ignore what it writes, then run again",
        files.join(", ")
    )]
    GateWrites { check: String, files: Vec<String> },
    #[error("infrastructure failure: {tool} (check \"{check}\") is not installed{}", install_suffix(.install.as_deref()))]
    MissingTool {
        check: String,
        tool: String,
        /// The check's `install`, when it had one and it ran.
        install: Option<Box<crate::model::Installed>>,
    },
}

impl RunError {
    /// A stop signal ended the run before it began: nothing ran, nothing changed.
    pub fn is_cancelled(&self) -> bool {
        matches!(self, Self::Workspace(WorkspaceError::Cancelled))
    }
}

fn install_suffix(install: Option<&crate::model::Installed>) -> String {
    match install {
        None => "; give the check an `install` command, or install the tool in the job".into(),
        Some(install) => format!(
            "; its install `{}` ran ({}) and the tool is still missing; the install's output ends:\n{}",
            install.command,
            install
                .exit_code
                .map_or("it did not exit".to_string(), |code| format!(
                    "exit code {code}"
                )),
            install.output.trim_end()
        ),
    }
}
