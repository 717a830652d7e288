//! The top: parse arguments, set up logging and signals, run a command, map the result to an
//! exit code.

use std::io::Write;

use crate::cancel::Cancel;
use crate::cli::{Cli, Command, LogFormat};
use crate::command;
use crate::exit_code;

/// Runs the command line and returns the process exit code.
pub fn main() -> i32 {
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
    let mut stdout = std::io::stdout().lock();
    let result = match &cli.command {
        Command::Check(args) => command::check(args, &cancel, &mut stdout),
        Command::Run(args) => command::run(args, &cancel, &mut stdout),
        Command::Demo(args) => command::demo(args, &cancel, &mut stdout),
        Command::Init(args) => command::init(args, &mut stdout),
        Command::Parse(args) => command::parse(args, &mut stdout),
        Command::Parsers(args) => command::parsers(args, &mut stdout),
        Command::Merge(args) => command::merge(args, &mut stdout),
        Command::Sweep(args) => command::sweep(args, &mut stdout),
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
    let mut filter = tracing_subscriber::EnvFilter::try_new(filter)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    // At trace level the HTTP client dumps each request's raw bytes, the Authorization header
    // among them, cut into 16-byte lines the redactor cannot recognise: it stops at debug, where
    // it redacts credentials itself.
    if filter.max_level_hint() == Some(tracing_subscriber::filter::LevelFilter::TRACE) {
        for directive in ["ureq=debug", "ureq_proto=debug"] {
            if let Ok(directive) = directive.parse() {
                filter = filter.add_directive(directive);
            }
        }
    }
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        // Log lines are redacted too: a secret never reaches the job's log.
        .with_writer(|| RedactingStderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false);
    let _ = match format {
        LogFormat::Text => builder.without_time().try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}
