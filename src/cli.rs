//! The command line, declared with clap. Nothing here does any work.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::config::units::{ByteSize, ConfigDuration};

/// The heading of the flags every command takes (logging), apart from the command's own.
const GLOBAL: &str = "Global options";

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
        help_heading = GLOBAL,
        value_enum,
        default_value = "text",
        env = "REFINE_LOOP_LOG_FORMAT"
    )]
    pub log_format: LogFormat,

    /// Log filter, as in RUST_LOG (e.g. `debug`, `refine_loop=trace`); else RUST_LOG; else
    /// `warn`, or what -v and -q say.
    #[arg(long, global = true, help_heading = GLOBAL, env = "REFINE_LOOP_LOG")]
    pub log: Option<String>,

    /// More log lines: -v info, -vv debug, -vvv trace.
    #[arg(short, long, global = true, help_heading = GLOBAL, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// Errors only in the log.
    #[arg(
        short,
        long,
        global = true,
        help_heading = GLOBAL,
        conflicts_with = "verbose"
    )]
    pub quiet: bool,
}

impl Cli {
    /// The log filter: `--log` (or `REFINE_LOOP_LOG`), else `RUST_LOG`, else from -v / -q.
    pub fn log_filter(&self) -> String {
        if let Some(filter) = self.log.as_ref().filter(|f| !f.is_empty()) {
            return filter.clone();
        }
        if let Some(filter) = std::env::var("RUST_LOG").ok().filter(|f| !f.is_empty()) {
            return filter;
        }
        match (self.quiet, self.verbose) {
            (true, _) => "error",
            (false, 0) => "warn",
            (false, 1) => "info",
            (false, 2) => "debug",
            (false, _) => "trace",
        }
        .to_string()
    }
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
    /// Run bounded improvement cycles: gate, delegates, verify, keep or roll back, stop.
    Run(RunArgs),
    /// Harden a small flawed Rust crate with the real cargo clippy --fix and cargo fmt.
    Demo(DemoArgs),
    /// Write a commented starter refine-loop.toml for the project found in the target.
    Init(InitArgs),
    /// Put the tree back as it was before the turn a killed run left in progress.
    Recover(RecoverArgs),
    /// Parse a tool's output (a file, or stdin) and print its findings.
    Parse(ParseArgs),
    /// List the parsers: built in, and from --parser-dir folders.
    Parsers(ParsersArgs),
    /// Merge the state dirs of matrix jobs (one scope each) into one summary, trend, history
    /// and report.
    Merge(MergeArgs),
    /// Read the repository's open pull requests, recent merges and open issues on GitHub
    /// (read-only), judge them (checks, reviews, risky dependency bumps) and write sweep.json.
    Sweep(SweepArgs),
}

#[derive(Debug, Args)]
pub struct SweepArgs {
    /// The repository whose `origin` remote names the GitHub repository [default: .].
    #[arg(long, value_name = "DIR", env = "REFINE_LOOP_TARGET")]
    pub target: Option<PathBuf>,

    /// Where sweep.json goes [default: <target>/.refine-loop].
    #[arg(long, value_name = "DIR", env = "REFINE_LOOP_STATE_DIR")]
    pub state_dir: Option<PathBuf>,

    /// The GitHub repository [default: GITHUB_REPOSITORY, else the origin remote].
    #[arg(long, value_name = "OWNER/NAME")]
    pub repo: Option<String>,

    /// How many merged pull requests to read, those updated last (0 to 100).
    #[arg(long, value_name = "N", default_value_t = 5,
          value_parser = clap::value_parser!(u16).range(0..=100))]
    pub merged: u16,

    /// Deadline for the whole sweep, retries included (like "2m").
    #[arg(long, value_name = "DURATION", default_value = "2m",
          value_parser = ConfigDuration::parse)]
    pub timeout: ConfigDuration,

    // Read from the environment by the sweep's options, not by clap, so that the campaign's
    // sweep honours it too.
    /// Refuse to run: the sweep needs the network [env: REFINE_LOOP_OFFLINE=].
    #[arg(long)]
    pub offline: bool,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shards' state dirs.
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,

    /// Where the merged files go.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ParseFormat {
    /// One line per finding, then the counts.
    Summary,
    /// One JSON document.
    Json,
    /// One JSON object per finding, a line each.
    Jsonl,
}

/// Where parser definitions come from, beyond the built-in ones.
#[derive(Debug, Args)]
pub struct ParserSources {
    /// A folder of parser definitions (*.toml, problem-matcher *.json); repeatable.
    #[arg(long = "parser-dir", value_name = "DIR")]
    pub parser_dirs: Vec<PathBuf>,

    /// One definition file, replacing a parser of the same name (for writing parsers); repeatable.
    #[arg(long = "definition", value_name = "FILE")]
    pub definitions: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ParseArgs {
    /// The parser to use, several together (`ruff,pytest`), or `auto` to pick the one that
    /// explains the output best (or regions of it that different parsers explain).
    #[arg(
        long,
        short = 'p',
        default_value = "auto",
        value_name = "NAME[,NAME]|auto"
    )]
    pub parser: String,

    #[arg(long, value_enum, default_value = "summary")]
    pub format: ParseFormat,

    /// Show, line by line, which rule matched or skipped each line.
    #[arg(long)]
    pub explain: bool,

    /// Paths are made relative to this folder [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub target: Option<PathBuf>,

    #[command(flatten)]
    pub sources: ParserSources,

    /// The output to read; `-` or nothing for stdin.
    #[arg(value_name = "FILE")]
    pub input: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ParsersArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub sources: ParserSources,
}

/// Where to work and which config to use.
#[derive(Debug, Clone, Args)]
pub struct TargetArgs {
    /// The repository to work on [default: the nearest folder with a refine-loop.toml from the
    /// current one up to the repository's root, else the current one].
    #[arg(long, value_name = "DIR", env = "REFINE_LOOP_TARGET")]
    pub target: Option<PathBuf>,

    /// The config file [default: <target>/refine-loop.toml].
    #[arg(long, value_name = "FILE", env = "REFINE_LOOP_CONFIG")]
    pub config: Option<PathBuf>,
}

/// What `check` and `run` share: where, which config, and the gate's limits.
#[derive(Debug, Clone, Args)]
pub struct GateArgs {
    #[command(flatten)]
    pub target: TargetArgs,

    /// Where run files go [default: <target>/.refine-loop].
    #[arg(long, value_name = "DIR", env = "REFINE_LOOP_STATE_DIR")]
    pub state_dir: Option<PathBuf>,

    // These three are read from the environment by the config layer, not by clap, so that a bad
    // value there gets a one-line error naming the variable.
    /// Deadline for checks that set no `timeout` (like "10m") [env: REFINE_LOOP_GATE_TIMEOUT=].
    #[arg(long, value_name = "DURATION", value_parser = ConfigDuration::parse)]
    pub gate_timeout: Option<ConfigDuration>,

    /// Time between SIGTERM and SIGKILL when a check is stopped (like "10s") [env: REFINE_LOOP_KILL_GRACE=].
    #[arg(long, value_name = "DURATION", value_parser = ConfigDuration::parse)]
    pub kill_grace: Option<ConfigDuration>,

    /// Output of one check kept in gate-output.txt (like "64MiB") [env: REFINE_LOOP_LOG_LIMIT=].
    #[arg(long, value_name = "SIZE", value_parser = ByteSize::parse)]
    pub log_limit: Option<ByteSize>,

    /// The CI system to report to: auto (from GITHUB_ACTIONS, GITLAB_CI, JENKINS_URL), github,
    /// gitlab, jenkins or none [env: REFINE_LOOP_CI=].
    #[arg(long, value_name = "SYSTEM", value_parser = parse_ci)]
    pub ci: Option<crate::ci::CiChoice>,

    /// Run only the K-th of N slices of the gate's checks (check i belongs to slice i mod N + 1),
    /// for one leg of a CI matrix; `merge` puts the legs together [env: REFINE_LOOP_SHARD=].
    #[arg(long, value_name = "K/N", value_parser = crate::config::Shard::parse)]
    pub shard: Option<crate::config::Shard>,

    /// Read the config, and the parser and integrity folders and prompt templates it names,
    /// from this commit instead of the work tree (on a pull request, its base: the pull request
    /// then cannot change how it is judged).
    #[arg(long, value_name = "REF", env = "REFINE_LOOP_CONFIG_FROM_REF")]
    pub config_from_ref: Option<String>,

    /// Pull-request mode: only findings new since REF (its merge-base with HEAD) count and, in
    /// a run, are worked, by delegates that change only the files changed since; `auto` reads
    /// the base of a GitHub, GitLab or Jenkins pull request (a full run outside one)
    /// [env: REFINE_LOOP_NEW_SINCE=].
    #[arg(
        long,
        value_name = "REF",
        env = "REFINE_LOOP_NEW_SINCE",
        hide_env = true
    )]
    pub new_since: Option<String>,
}

fn parse_ci(text: &str) -> Result<crate::ci::CiChoice, String> {
    text.parse()
        .map_err(|error: crate::ci::CiError| error.to_string())
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub gate: GateArgs,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub gate: GateArgs,

    /// Cycles at most (1 to 10; default 5) [env: REFINE_LOOP_MAX_CYCLES=].
    #[arg(long, value_name = "N")]
    pub max_cycles: Option<u32>,

    /// No new cycle starts when it would not fit (like "45m") [env: REFINE_LOOP_TIME_BUDGET=].
    #[arg(long, value_name = "DURATION", value_parser = ConfigDuration::parse)]
    pub time_budget: Option<ConfigDuration>,

    /// When the gate runs again [env: REFINE_LOOP_VERIFY=].
    #[arg(long, value_enum)]
    pub verify: Option<crate::config::Verify>,

    /// The loop to run: `refactoring` (the default), or the campaigns `refine` and `improve`.
    #[arg(long, value_enum, value_name = "PRESET")]
    pub preset: Option<crate::model::Preset>,

    /// For a campaign: leading `--continue` (or `--continue=auto`), `--target=PATH`,
    /// `--state-dir=PATH`, `theta=N`, `focus=LENS,...`, then the intent (all the rest, even text
    /// that looks like an option).
    #[arg(
        value_name = "REQUEST",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub request: Vec<std::ffi::OsString>,

    /// Where to work: `worktree` runs the whole loop in a linked worktree made from HEAD, so
    /// the user's tree is not written; the patches are the result.
    #[arg(long, value_enum, value_name = "MODE")]
    pub isolate: Option<crate::config::Isolate>,

    /// Paths and globs, relative to the target, that delegates may change and whose findings
    /// are worked (replaces `[loop] scope`); a change elsewhere is undone.
    /// Repeatable: `--scope src --scope 'tests/**/*.py'`.
    #[arg(long, value_name = "PATH", action = clap::ArgAction::Append)]
    pub scope: Option<Vec<String>>,

    /// The order categories are worked in, like `types,tests,lint` (replaces `[loop] priority`).
    #[arg(long, value_name = "CATEGORY,...", value_delimiter = ',')]
    pub priority: Option<Vec<String>>,

    /// Exit 0 on NEEDS-FIX and BUDGET (for jobs that only want the record), but not on an
    /// ERROR (a missing tool: the gate did not run) or CANCELLED; `--exit-zero=all` exits 0 on
    /// every outcome. Never on a usage or configuration error (2). The variable takes
    /// `findings` (or true/1/yes/on), `all`, or false/0/no/off.
    #[arg(
        long,
        env = "REFINE_LOOP_EXIT_ZERO",
        value_name = "WHICH",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "findings",
        value_parser = crate::exit_code::ExitZero::parse
    )]
    pub exit_zero: Option<crate::exit_code::ExitZero>,

    /// No network: a config with an http delegate or `sweep = true` is refused (the variable
    /// takes true/false, 1/0, yes/no, on/off).
    #[arg(
        long,
        env = "REFINE_LOOP_OFFLINE",
        action = clap::ArgAction::SetTrue,
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub offline: bool,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Where to write the demo crate (new or empty) [default: a new temporary folder, kept].
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RecoverArgs {
    /// The repository to put back [default: .].
    #[arg(long, value_name = "DIR", env = "REFINE_LOOP_TARGET")]
    pub target: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The project to write refine-loop.toml into.
    #[arg(long, value_name = "DIR", env = "REFINE_LOOP_TARGET")]
    pub target: Option<PathBuf>,

    /// Print the starter config to stdout and write nothing (not even .git/info/exclude).
    #[arg(long)]
    pub dry_run: bool,

    /// The same as --dry-run.
    #[arg(long, hide = true)]
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

#[cfg(test)]
#[path = "cli_help_tests.rs"]
mod help_tests;
