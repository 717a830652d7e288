//! The parser engine: turns what a check printed into findings. Parsers are data (the
//! definitions in `gate-parsers/`, embedded in the binary, plus the user's own folders); each
//! kind implements [`Parser`] and parses line by line, so memory does not grow with the log.

mod catalogue;
mod definition;
mod findings;
mod paths;
mod preprocess;
mod regex_parser;

use std::path::PathBuf;

pub use catalogue::Catalogue;
pub use findings::Findings;
pub use paths::{NormalizedPath, normalize_path, normalize_path_marked};
pub use preprocess::{LineAssembler, MAX_LINE_BYTES, clean_line};
pub use regex_parser::RegexParser;

/// Where the output came from, so that paths can be made relative to the target.
#[derive(Debug, Clone)]
pub struct ParseContext {
    pub target: PathBuf,
    /// The check's working directory relative to the target (`/`-separated, empty for the root).
    pub cwd_relative: String,
}

/// A kind of parser, compiled and ready.
pub trait Parser: std::fmt::Debug + Send + Sync {
    fn name(&self) -> &str;
    /// The category of this tool's findings when the check names none.
    fn category(&self) -> Option<&str>;
    fn description(&self) -> &str;
    /// The command line the parser expects the tool to run with.
    fn command(&self) -> &str;
    /// Starts reading one check's output.
    fn session<'a>(&'a self, context: &'a ParseContext) -> Box<dyn ParseSession + 'a>;
}

/// The state of reading one output, fed one clean line at a time.
pub trait ParseSession {
    fn line(&mut self, line: &str, findings: &mut Findings);
    /// Called once after the last line.
    fn finish(&mut self, findings: &mut Findings);
}

/// Parses a whole output held in memory (fixtures, `refine-loop parse`); the gate streams instead.
pub fn parse_bytes(parser: &dyn Parser, context: &ParseContext, bytes: &[u8]) -> Findings {
    let mut findings = Findings::default();
    let mut session = parser.session(context);
    let mut assembler = LineAssembler::default();
    let mut on_line = |line: &str| session.line(line, &mut findings);
    assembler.push(bytes, &mut on_line);
    assembler.finish(&mut on_line);
    session.finish(&mut findings);
    findings
}
