//! The parser engine: turns what a check printed into findings. Parsers are data (the
//! definitions in `gate-parsers/`, embedded in the binary, plus the user's own folders); each
//! kind implements [`Parser`] and parses line by line, so memory does not grow with the log.

mod annotations;
mod auto;
mod built_in;
mod catalogue;
mod definition;
mod ecmascript;
mod error;
mod findings;
mod first_rule;
mod lazy_regex;
mod matched;
mod matcher_pattern;
mod paths;
mod preprocess;
mod problem_matcher;
mod regex_parser;
mod regions;
mod repeats;
mod rule_help;
mod sample;
mod several;
mod structured;
mod tap;
mod unread;

use std::path::PathBuf;

pub use annotations::Annotated;
pub use auto::{Choice, Ranked, RegionSpan, choose, rank, rank_file};
pub use catalogue::Catalogue;
pub(crate) use catalogue::{definition_files, read as read_definition_file};
pub use error::{DefinitionError, InvalidValue, from_toml, line_and_column, one_line};
pub use findings::{Findings, Found};
pub use paths::{NormalizedPath, normalize_path, normalize_path_marked, resolve_path};
pub use preprocess::{FrameReport, Framing};
pub use preprocess::{LineAssembler, MAX_LINE_BYTES, clean_line, without_escapes};
pub use problem_matcher::{ProblemMatcher, compile_matchers};
pub use regex_parser::RegexParser;
pub use rule_help::RuleHelp;
pub use several::{Part, Several};
pub use unread::Unread;

/// Where the output came from, so that paths can be made relative to the target.
#[derive(Debug, Clone)]
pub struct ParseContext {
    pub target: PathBuf,
    /// The check's working directory relative to the target (`/`-separated, empty for the root).
    pub cwd_relative: String,
    /// Every parser of a catalogue reads the output at once (`auto` ranking them, most often on
    /// a sample): a parser builds what is cheapest to build rather than what is fastest to run.
    pub sample: bool,
}

/// A kind of parser, compiled and ready.
pub trait Parser: std::fmt::Debug + Send + Sync {
    fn name(&self) -> &str;
    fn description(&self) -> &str;
    /// Starts reading one check's output.
    fn session<'a>(&'a self, context: &'a ParseContext) -> Box<dyn ParseSession + 'a>;

    /// The category of this tool's findings when the check names none (none: the check's).
    fn category(&self) -> Option<&str> {
        None
    }

    /// The command line the parser expects the tool to run with, when it knows one.
    fn command(&self) -> &str {
        ""
    }

    /// Where the tool documents its codes, when the parser knows.
    fn rule_help(&self) -> Option<&RuleHelp> {
        None
    }

    /// Whether the session wants the raw output ([`ParseSession::bytes`]) instead of lines: a
    /// reader of whole documents (JSON, XML), which line cleaning and cutting would break.
    fn reads_documents(&self) -> bool {
        false
    }

    /// Whether the parser reads shapes many tools share rather than one tool's (`generic`):
    /// `auto` puts a parser of the tool itself first when both explain as much.
    fn is_fallback(&self) -> bool {
        false
    }

    /// Whether the parser reads CI annotation commands itself ([`annotations`]); every other
    /// line parser gets them read before its own rules (`auto` counts them for no other).
    fn reads_annotations(&self) -> bool {
        false
    }
}

/// What one line was to the parser; `--explain` prints it, `auto` scores with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineOutcome {
    /// No rule matched.
    Unmatched,
    /// A skip rule matched (index in its list).
    Skipped(usize),
    /// A summary rule matched.
    Summary(usize),
    /// A finding (or the start of a multi-line one) by pattern `index`.
    Finding(usize),
    /// A line of the open multi-line entry (started by pattern `index`).
    Continued(usize),
    /// A location for an earlier finding.
    Location(usize),
    /// A context line naming the file for what follows.
    Context(usize),
    /// A heading naming the test a later location line places.
    Heading(usize),
    /// A CI annotation command (`::error file=…::…`), read whichever parser reads the rest.
    Annotation,
}

impl LineOutcome {
    /// Whether a rule that reads the tool's findings (not a skip) took the line.
    pub fn is_explained(self) -> bool {
        !matches!(self, Self::Unmatched | Self::Skipped(_))
    }
}

/// The state of reading one output, fed one clean line at a time.
pub trait ParseSession {
    fn line(&mut self, line: &str, findings: &mut Findings) -> LineOutcome;

    /// Raw output, for parsers that [read documents](Parser::reads_documents).
    fn bytes(&mut self, _chunk: &[u8], _findings: &mut Findings) {}
    /// Called once after the last line.
    fn finish(&mut self, findings: &mut Findings);

    /// After [`finish`](Self::finish), for raw readers: how many of the output's `lines` it read
    /// as its own (all of them for a recognised document); `auto` scores with it.
    fn explained_lines(&self, _lines: u64) -> u64 {
        0
    }
}

/// Parses a whole output held in memory (fixtures, tests).
pub fn parse_bytes(parser: &dyn Parser, context: &ParseContext, bytes: &[u8]) -> Findings {
    let mut input = bytes;
    parse_reader(parser, context, &mut input, &mut |_, _, _| {})
        .unwrap_or_else(|_| Findings::default())
}

/// Parses a stream; `observe` sees each line's number, text and outcome (for `--explain`).
pub fn parse_reader(
    parser: &dyn Parser,
    context: &ParseContext,
    input: &mut dyn std::io::Read,
    observe: &mut dyn FnMut(u64, &str, LineOutcome),
) -> std::io::Result<Findings> {
    parse_reader_framed(parser, context, input, observe).map(|(findings, _)| findings)
}

/// [`parse_reader`], and what the CI framing stage stripped (`--explain` says it). Line
/// numbers count the lines the parser saw.
pub fn parse_reader_framed(
    parser: &dyn Parser,
    context: &ParseContext,
    input: &mut dyn std::io::Read,
    observe: &mut dyn FnMut(u64, &str, LineOutcome),
) -> std::io::Result<(Findings, FrameReport)> {
    let mut findings = Findings::default();
    let mut session = Annotated::open(parser, context);
    let mut assembler = LineAssembler::default();
    let raw = parser.reads_documents();
    let mut number = 0u64;
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let read = match input.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if raw {
            session.bytes(&buffer[..read], &mut findings);
        } else {
            assembler.push(&buffer[..read], &mut |line| {
                number += 1;
                let outcome = session.line(line, &mut findings);
                observe(number, line, outcome);
            });
        }
    }
    assembler.finish(&mut |line| {
        number += 1;
        let outcome = session.line(line, &mut findings);
        observe(number, line, outcome);
    });
    session.finish(&mut findings);
    Ok((findings, assembler.framing().clone()))
}
