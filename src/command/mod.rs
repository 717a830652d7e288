//! The top of the program and its subcommands: arguments parsed, logging and signals set up, and
//! each command turning its arguments into work and an exit code. Only this layer (and the
//! reporters it calls) writes to the process's stdout and stderr.

mod app;
mod check;
mod console;
mod demo;
mod init;
mod merge;
mod parse;
mod parsers;
mod publish;
mod recover;
mod run;
mod sweep;

pub use app::main;
pub use check::check;
pub use demo::demo;
pub use init::init;
/// What `init` writes, for the schema's test of every shipped config.
#[cfg(test)]
pub(crate) use init::starter_config;
pub use merge::merge;
pub use parse::parse;
pub use parsers::parsers;
pub use recover::recover;
pub use run::run;
pub use sweep::sweep;

use std::io::Write;

use crate::config::ConfigError;
use crate::exit_code;
use crate::gate::GateError;
use crate::state::StateError;

/// Why a command could not do its job; each maps to one exit code.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Gate(#[from] GateError),
    #[error(transparent)]
    State(#[from] StateError),
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Run(crate::engine::RunError),
    #[error(transparent)]
    Campaign(crate::campaign::books::CampaignError),
    #[error(transparent)]
    Sweep(#[from] crate::sweep::SweepError),
    #[error("the CI reports: {0}")]
    Reports(crate::report::CiReportError),
    #[error(
        "a run was interrupted in the middle of a turn (its journal: {}); the tree may hold a change nobody judged: run `refine-loop recover` to put it back first",
        journal.display()
    )]
    Interrupted { journal: std::path::PathBuf },
    #[error("recover: {0}")]
    Recover(String),
    #[error("{name}: cannot read: {source}")]
    Input {
        name: String,
        #[source]
        source: std::io::Error,
    },
}

impl From<crate::engine::RunError> for CommandError {
    fn from(error: crate::engine::RunError) -> Self {
        match error {
            crate::engine::RunError::State(error) => Self::State(error),
            crate::engine::RunError::Gate(error) => Self::Gate(error),
            crate::engine::RunError::Campaign(error) => Self::Campaign(error),
            crate::engine::RunError::Workspace(error) if error.is_unusable_repository() => {
                Self::Usage(error.to_string())
            }
            other => Self::Run(other),
        }
    }
}

impl CommandError {
    pub fn exit_code(&self) -> i32 {
        match self {
            Self::Run(error) if error.is_cancelled() => exit_code::CANCELLED,
            Self::Run(crate::engine::RunError::NewSince(_)) => exit_code::USAGE,
            Self::Config(_) | Self::Usage(_) | Self::Input { .. } => exit_code::USAGE,
            Self::Gate(_) | Self::State(_) | Self::Run(_) => exit_code::ERROR,
            Self::Interrupted { .. } | Self::Recover(_) => exit_code::ERROR,
            Self::Campaign(error) => error.exit_code(),
            Self::Reports(_) => exit_code::ERROR,
            Self::Sweep(error) => error.exit_code(),
        }
    }
}

/// Prints `text` on `out`; a reader that went away (a closed pipe) is not an error, any other
/// failure is a warning.
fn print(out: &mut dyn Write, text: &str) {
    if let Err(error) = out.write_all(text.as_bytes())
        && error.kind() != std::io::ErrorKind::BrokenPipe
    {
        tracing::warn!(%error, "could not print");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RunError;
    use crate::workspace::WorkspaceError;

    #[test]
    fn a_run_stopped_before_it_began_exits_as_cancelled_and_other_errors_as_errors() {
        // (the run's error, the exit code)
        let table = [
            (
                RunError::Workspace(WorkspaceError::Cancelled),
                exit_code::CANCELLED,
            ),
            (RunError::Confine("no namespace".into()), exit_code::ERROR),
            (
                RunError::Workspace(WorkspaceError::Bare { path: "/r".into() }),
                exit_code::USAGE,
            ),
        ];
        for (error, code) in table {
            let text = error.to_string();
            assert_eq!(CommandError::from(error).exit_code(), code, "{text}");
        }
    }
}
