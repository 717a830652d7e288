//! The command line, declared with clap. Nothing here does any work.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::config::units::{ByteSize, ConfigDuration};

#[derive(Debug, Parser)]
#[command(
    name = "refine-loop",
    version,
    about = "Runs bounded improvement cycles on a repository's quality gate, inside CI.",
    propagate_version = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// How log lines on stderr look.
    #[arg(
        long,
        global = true,
        value_enum,
        default_value = "text",
        env = "REFINE_LOOP_LOG_FORMAT"
    )]
    pub log_format: LogFormat,

    /// Log filter, as in RUST_LOG (e.g. `debug`, `refine_loop=trace`).
    #[arg(long, global = true, default_value = "warn", env = "REFINE_LOOP_LOG")]
    pub log: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the gate once and write cycle-0/gate-summary.json.
    Check(CheckArgs),
    /// Write a commented starter refine-loop.toml for the project found in the target.
    Init(InitArgs),
}

/// Where to work and which config to use.
#[derive(Debug, Args)]
pub struct TargetArgs {
    /// The repository to work on.
    #[arg(long, value_name = "DIR", env = "REFINE_LOOP_TARGET")]
    pub target: Option<PathBuf>,

    /// The config file [default: <target>/refine-loop.toml].
    #[arg(long, value_name = "FILE", env = "REFINE_LOOP_CONFIG")]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    /// Where run files go [default: <target>/.refine-loop].
    #[arg(long, value_name = "DIR", env = "REFINE_LOOP_STATE_DIR")]
    pub state_dir: Option<PathBuf>,

    /// Deadline for checks that set no `timeout` (like "10m").
    #[arg(long, value_name = "DURATION", env = "REFINE_LOOP_GATE_TIMEOUT", value_parser = ConfigDuration::parse)]
    pub gate_timeout: Option<ConfigDuration>,

    /// Time between SIGTERM and SIGKILL when a check is stopped (like "10s").
    #[arg(long, value_name = "DURATION", env = "REFINE_LOOP_KILL_GRACE", value_parser = ConfigDuration::parse)]
    pub kill_grace: Option<ConfigDuration>,

    /// Bytes of each check's output kept in gate-output.txt before the middle is cut (like "64MiB").
    #[arg(long, value_name = "SIZE", env = "REFINE_LOOP_LOG_LIMIT", value_parser = ByteSize::parse)]
    pub log_limit: Option<ByteSize>,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The project to write refine-loop.toml into.
    #[arg(long, value_name = "DIR", env = "REFINE_LOOP_TARGET")]
    pub target: Option<PathBuf>,

    /// Print the starter config to stdout instead of writing the file.
    #[arg(long)]
    pub print: bool,
}

impl Cli {
    /// Parses the process arguments. A `REFINE_LOOP_*` variable set to the empty string counts
    /// as unset, as CI systems pass inputs nobody filled in that way.
    pub fn parse_from_env() -> Result<Self, clap::Error> {
        use clap::{CommandFactory, FromArgMatches};
        let matches = ignore_empty_env(Self::command()).try_get_matches()?;
        Self::from_arg_matches(&matches)
    }
}

fn ignore_empty_env(command: clap::Command) -> clap::Command {
    command
        .mut_args(|arg| {
            let empty = arg
                .get_env()
                .and_then(std::env::var_os)
                .is_some_and(|value| value.is_empty());
            if empty { arg.env(None) } else { arg }
        })
        .mut_subcommands(ignore_empty_env)
}
