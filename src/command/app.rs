//! The top: parse arguments, set up logging and signals, run a command, map the result to an
//! exit code.

#![expect(
    clippy::disallowed_methods,
    reason = "the top of the program: it hands stdout to the commands, and logs and errors go to stderr"
)]

use std::io::Write;

use crate::cancel::Cancel;
use crate::cli::{Cli, Command, LogFormat};
use crate::exit_code;

/// Runs the command line and returns the process exit code.
pub fn main() -> i32 {
    // Before anything else, while the process has one thread: the launcher of a confined
    // delegate.
    let mut arguments = std::env::args_os();
    if arguments.nth(1).as_deref() == Some(crate::confine::launcher::SUBCOMMAND.as_ref()) {
        return match crate::confine::launcher::main(arguments) {
            Ok(status) => crate::confine::launcher::exit_code(status),
            Err(error) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "refine-loop: the confined delegate was not started: {error}"
                );
                crate::confine::launcher::FAILED
            }
        };
    }
    let cli = match Cli::parse_from_env() {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return if error.use_stderr() {
                exit_code::USAGE
            } else {
                exit_code::SUCCESS
            };
        }
    };
    init_logging(cli.log_format, &cli.log_filter());
    let cancel = Cancel::listen_for_signals().unwrap_or_else(|error| {
        tracing::warn!(%error, "cannot listen for SIGINT and SIGTERM");
        std::sync::Arc::new(Cancel::default())
    });
    // The commands that run checks and delegates reap whatever those leave behind.
    if matches!(
        cli.command,
        Command::Check(_) | Command::Run(_) | Command::Demo(_)
    ) && let Err(error) = crate::process::contain_descendants()
    {
        tracing::warn!(%error, "cannot become the reaper of the processes the loop starts: processes that leave their group are not stopped");
    }
    let mut stdout = std::io::stdout().lock();
    let result = match &cli.command {
        Command::Check(args) => super::check(args, &cancel, &mut stdout),
        Command::Run(args) => super::run(args, &cancel, &mut stdout),
        Command::Demo(args) => super::demo(args, &cancel, &mut stdout),
        Command::Init(args) => super::init(args, &mut stdout),
        Command::Recover(args) => super::recover(args, &mut stdout),
        Command::Parse(args) => super::parse(args, &mut stdout),
        Command::Parsers(args) => super::parsers(args, &mut stdout),
        Command::Merge(args) => super::merge(args, &mut stdout),
        Command::Sweep(args) => super::sweep(args, &cancel, &mut stdout),
    };
    let _ = stdout.flush();
    match result {
        Ok(code) => code,
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "error: {error}");
            error.exit_code()
        }
    }
}

/// Standard error, with every write redacted (tracing writes each event in one call).
struct RedactingStderr;

impl Write for RedactingStderr {
    fn write(&mut self, buffer: &[u8]) -> std::io::Result<usize> {
        std::io::stderr().write_all(&crate::secrets::redacted(buffer))?;
        Ok(buffer.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

fn init_logging(format: LogFormat, filter: &str) {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let filter = tracing_subscriber::EnvFilter::try_new(filter)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    // At trace level the HTTP client dumps each request's raw bytes, the Authorization header
    // among them, cut into 16-byte lines the redactor cannot recognise: its trace events are
    // dropped whatever the filter asks for (at debug it hides credentials itself).
    let no_raw_requests = tracing_subscriber::filter::filter_fn(|meta| {
        !(*meta.level() == tracing::Level::TRACE && meta.target().starts_with("ureq"))
    });
    let layer = tracing_subscriber::fmt::layer()
        // Log lines are redacted too: a secret never reaches the job's log.
        .with_writer(|| RedactingStderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false);
    let layer = match format {
        LogFormat::Text => layer.without_time().boxed(),
        LogFormat::Json => layer.json().boxed(),
    };
    let _ = tracing_subscriber::registry()
        .with(layer.with_filter(filter).with_filter(no_raw_requests))
        .try_init();
}
