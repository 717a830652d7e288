//! `refine-loop parse`: the parser engine on its own, for a saved log or a pipe.

#![expect(
    clippy::disallowed_macros,
    reason = "the parser's notes go to stderr, beside the findings on stdout"
)]

use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{CommandError, print};
use crate::cli::{ParseArgs, ParseFormat, ParserSources};
use crate::config::ConfigError;
use crate::exit_code;
use crate::model::{Diagnostic, ExpectedCount, SeverityCounts, TestCounts};
use crate::parse::{
    Catalogue, Choice, Findings, LineOutcome, ParseContext, Parser, RegionSpan, Several, Unread,
    parse_reader_framed, rank_file,
};
use crate::state::format::PARSE as FORMAT_VERSION;

/// Parses the input and prints its findings; returns the exit code.
pub fn parse(args: &ParseArgs, stdout: &mut dyn Write) -> Result<i32, CommandError> {
    let mut catalogue = load_catalogue(&args.sources)?;
    if args.parser.contains(',') {
        catalogue
            .add_combination(&args.parser)
            .map_err(|reason| CommandError::Usage(format!("--parser {}: {reason}", args.parser)))?;
    }
    let catalogue = catalogue;
    let context = parse_context(args.target.as_deref())?;
    let mut input = open_input(args.input.as_deref())?;
    let input_error = input_error(args.input.as_deref());

    let mut picked = if args.parser == "auto" {
        auto_parser(args, &catalogue, &context, &mut input, stdout)?
    } else {
        Picked::named(named_parser(&catalogue, &args.parser)?)
    };
    let mut out = BufWriter::new(stdout);
    let mut unread = Unread::default();
    let mut observe = |number: u64, line: &str, outcome: LineOutcome| {
        unread.observe(line, outcome);
        if args.explain {
            let rule = describe(outcome);
            let _ = writeln!(out, "{number:>7}  {rule:<22} | {line}");
        }
    };
    let (findings, framing) =
        parse_reader_framed(picked.parser(), &context, &mut input, &mut observe)
            .map_err(&input_error)?;
    // A reading that left much unread says so, whichever way the parser was picked (a note of
    // `auto`'s that nothing was recognised says it already).
    if picked.notes.is_empty()
        && let Some(note) = unread.note(picked.parser().name(), &findings)
    {
        eprintln!("note: {note}");
        picked.notes.push(note);
    }
    let parser = picked.parser();
    if framing.touched() {
        tracing::info!(framing = ?framing.framing, "CI framing stripped");
        if args.explain {
            print(&mut out, &format!("{}\n", framing.summary()));
        }
    }
    let diagnostics = diagnostics_of(&findings, parser);
    let text = match args.format {
        ParseFormat::Json => json_text(&picked, &diagnostics, &findings),
        ParseFormat::Jsonl => diagnostics
            .iter()
            .map(|d| format!("{}\n", to_json(d)))
            .collect(),
        ParseFormat::Summary => summary_text(parser, &diagnostics, &findings),
    };
    print(&mut out, &text);
    let _ = out.flush();
    Ok(exit_code::SUCCESS)
}

/// The parser that reads the input, and what `auto` said of its choice.
struct Picked<'c> {
    one: Option<&'c dyn Parser>,
    regions: Option<(Several, Vec<RegionSpan>)>,
    notes: Vec<String>,
}

impl<'c> Picked<'c> {
    fn named(parser: &'c dyn Parser) -> Self {
        Self {
            one: Some(parser),
            regions: None,
            notes: Vec::new(),
        }
    }

    fn parser(&self) -> &dyn Parser {
        match (&self.regions, self.one) {
            (Some((several, _)), _) => several,
            (None, Some(one)) => one,
            (None, None) => unreachable!("a pick has a parser"),
        }
    }
}

/// Where the findings' paths are anchored: `target` (the current folder when not given), made
/// absolute. The target only anchors paths: a saved log may name a folder of another machine.
fn parse_context(target: Option<&Path>) -> Result<ParseContext, CommandError> {
    let target = target.map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let target = target
        .canonicalize()
        .or_else(|_| std::path::absolute(&target))
        .map_err(|_| ConfigError::TargetNotDirectory {
            path: target.clone(),
        })?;
    Ok(ParseContext {
        target,
        cwd_relative: String::new(),
        sample: false,
    })
}

/// The error for a failure to read the input at `path` (stdin when none).
fn input_error(path: Option<&Path>) -> impl Fn(io::Error) -> CommandError + '_ {
    move |source| CommandError::Input {
        name: input_name(path),
        source,
    }
}

/// `--parser auto`: the parser that explains the most lines of the input (read once, then
/// rewound), regions of it that different parsers explain far better, or the default parser with
/// a note when none recognises it. With `--format summary` or `--explain`, the choice and the
/// runner-up are printed first; the note goes to stderr whatever the format.
fn auto_parser<'c>(
    args: &ParseArgs,
    catalogue: &'c Catalogue,
    context: &ParseContext,
    input: &mut File,
    stdout: &mut dyn Write,
) -> Result<Picked<'c>, CommandError> {
    let input_error = input_error(args.input.as_deref());
    let (choice, ranked, lines, sampled) =
        rank_file(catalogue, context, input).map_err(&input_error)?;
    let says = args.format == ParseFormat::Summary || args.explain;
    let of_lines = if sampled {
        format!("{lines} lines sampled")
    } else {
        format!("{lines} lines")
    };
    let picked = match choice {
        Choice::One(best) => {
            let explained = ranked
                .iter()
                .find(|r| r.parser.name() == best.name())
                .map_or(0, |r| r.explained);
            tracing::info!(
                parser = best.name(),
                explained,
                lines,
                "auto chose a parser"
            );
            if says {
                let runner_up = ranked
                    .iter()
                    .find(|r| r.parser.name() != best.name())
                    .map(|r| format!("; next best: {} ({} lines)", r.parser.name(), r.explained))
                    .unwrap_or_default();
                print(
                    stdout,
                    &format!(
                        "auto: chose parser \"{}\" (it explains {explained} of {of_lines}{runner_up})\n",
                        best.name()
                    ),
                );
            }
            Picked::named(best)
        }
        Choice::Regions(several, spans) => {
            let described = describe_regions(&spans);
            tracing::info!(regions = %described, "auto read the log in regions");
            if says {
                print(
                    stdout,
                    &format!("auto: the log reads in regions: {described}\n"),
                );
            }
            Picked {
                one: None,
                regions: Some((several, spans)),
                notes: Vec::new(),
            }
        }
        Choice::NotRecognised(note) => {
            let fallback = fallback(catalogue)?;
            let note = format!(
                "auto: {note}; reading it by exit code (parser {})",
                fallback.name()
            );
            eprintln!("{note}");
            Picked {
                notes: vec![note],
                ..Picked::named(fallback)
            }
        }
    };
    Ok(picked)
}

/// `lines 1-40 ruff, lines 41-120 pytest`.
fn describe_regions(spans: &[RegionSpan]) -> String {
    spans
        .iter()
        .map(|span| {
            format!(
                "lines {}-{} {}",
                span.first_line, span.last_line, span.parser
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The parser of the catalogue named `name`; a usage error listing the names when there is none.
fn named_parser<'c>(catalogue: &'c Catalogue, name: &str) -> Result<&'c dyn Parser, CommandError> {
    catalogue.get(name).ok_or_else(|| {
        CommandError::Usage(format!(
            "--parser {}: unknown parser; expected auto or one of: {}",
            name,
            catalogue.names().collect::<Vec<_>>().join(", ")
        ))
    })
}

/// The diagnostics found, those without a category taking the parser's.
fn diagnostics_of(findings: &Findings, parser: &dyn Parser) -> Vec<Diagnostic> {
    findings
        .diagnostics()
        .iter()
        .cloned()
        .map(|mut d| {
            d.category = d.category.or_else(|| parser.category().map(str::to_string));
            d
        })
        .collect()
}

/// `parse --format json`: the report as one JSON document.
fn json_text(picked: &Picked<'_>, diagnostics: &[Diagnostic], findings: &Findings) -> String {
    let report = ParseReport {
        format_version: FORMAT_VERSION,
        parser: picked.parser().name(),
        regions: picked.regions.as_ref().map(|(_, spans)| spans.as_slice()),
        diagnostics,
        counts: findings.counts,
        expected_count: findings.expected,
        tests: findings.tests,
        notes: &picked.notes,
    };
    format!("{}\n", to_json(&report))
}

/// `parse --format summary`: a line per diagnostic, then one with the parser's counts, the counts
/// the tool reported and the tests it ran.
fn summary_text(parser: &dyn Parser, diagnostics: &[Diagnostic], findings: &Findings) -> String {
    let mut text = String::new();
    for diagnostic in diagnostics {
        text.push_str(&format!(
            "{:<7}  {}\n",
            diagnostic.severity.as_str(),
            diagnostic.detail()
        ));
    }
    let counts = findings.counts;
    text.push_str(&format!(
        "parser {}: {} errors, {} warnings, {} notes",
        parser.name(),
        counts.error,
        counts.warning,
        counts.note
    ));
    if findings.omitted > 0 {
        text.push_str(&format!(" ({} not listed)", findings.omitted));
    }
    if let Some(expected) = findings.expected {
        let said: Vec<String> = [("errors", expected.error), ("warnings", expected.warning)]
            .into_iter()
            .filter_map(|(name, count)| count.map(|n| format!("{n} {name}")))
            .collect();
        text.push_str(&format!("; the tool reported {}", said.join(", ")));
    }
    if let Some(tests) = findings.tests {
        text.push_str(&format!(
            "; tests: {} passed, {} failed, {} skipped",
            tests.passed, tests.failed, tests.skipped
        ));
    }
    text.push('\n');
    text
}

/// `parse --format json`: keys in this order.
#[derive(Debug, Serialize)]
struct ParseReport<'a> {
    format_version: u32,
    parser: &'a str,
    /// The stretches of the log each parser read, when `auto` read it in regions.
    #[serde(skip_serializing_if = "Option::is_none")]
    regions: Option<&'a [RegionSpan]>,
    diagnostics: &'a [Diagnostic],
    counts: SeverityCounts,
    expected_count: Option<ExpectedCount>,
    tests: Option<TestCounts>,
    notes: &'a [String],
}

fn to_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|error| format!("{{\"error\": \"{error}\"}}"))
}

pub(super) fn load_catalogue(sources: &ParserSources) -> Result<Catalogue, CommandError> {
    let mut catalogue = Catalogue::load(&sources.parser_dirs).map_err(ConfigError::from)?;
    for definition in &sources.definitions {
        catalogue
            .add_file(definition, true)
            .map_err(ConfigError::from)?;
    }
    Ok(catalogue)
}

fn fallback(catalogue: &Catalogue) -> Result<&dyn Parser, CommandError> {
    catalogue
        .get(crate::config::defaults::PARSER)
        .ok_or_else(|| CommandError::Usage("no parser explains this output".into()))
}

/// The input as a seekable file: the named file, or stdin (or a pipe or a FIFO, as in
/// `parse <(cmd)`) spooled to a temporary file, so that `auto` can read it twice and memory
/// stays flat.
fn open_input(path: Option<&Path>) -> Result<File, CommandError> {
    let error = input_error(path);
    let mut input: Box<dyn Read> = match path.filter(|path| *path != Path::new("-")) {
        Some(path) => {
            let file = File::open(path).map_err(&error)?;
            if file.metadata().map_err(&error)?.is_file() {
                return Ok(file);
            }
            Box::new(file)
        }
        None => Box::new(io::stdin().lock()),
    };
    let mut spool = tempfile::tempfile().map_err(&error)?;
    io::copy(&mut input, &mut spool).map_err(&error)?;
    spool.rewind().map_err(error)?;
    Ok(spool)
}

fn input_name(path: Option<&Path>) -> String {
    path.filter(|p| *p != Path::new("-"))
        .map_or_else(|| "stdin".to_string(), |p| p.display().to_string())
}

fn describe(outcome: LineOutcome) -> String {
    match outcome {
        LineOutcome::Unmatched => "-".to_string(),
        LineOutcome::Skipped(index) => format!("skip[{index}]"),
        LineOutcome::Summary(index) => format!("summary[{index}]"),
        LineOutcome::Finding(index) => format!("pattern[{index}] finding"),
        LineOutcome::Continued(index) => format!("pattern[{index}] continued"),
        LineOutcome::Location(index) => format!("pattern[{index}] location"),
        LineOutcome::Context(index) => format!("pattern[{index}] context"),
        LineOutcome::Heading(index) => format!("pattern[{index}] heading"),
        LineOutcome::Annotation => "annotation".to_string(),
    }
}
