//! `auto`: runs every parser over the same output at once and ranks them by how much of it each
//! explains (lines its finding, continuation, context, location or summary rules took; skips
//! count half); then [`choose`] reads the ranking: one parser, regions of the log that different
//! parsers read, or nothing recognised.

use std::io::{self, Read};

use super::regions::{self, Tally};
use super::{
    Catalogue, Findings, LineAssembler, LineOutcome, ParseContext, ParseSession, Parser, Part,
    Several,
};

/// How well one parser explained the output.
#[derive(Debug)]
pub struct Ranked<'a> {
    pub parser: &'a dyn Parser,
    pub explained: u64,
    pub skipped: u64,
    pub findings: u64,
    /// Findings with a code: between equals, the parser that reads more of each line wins.
    pub with_code: u64,
    /// Lines read as findings, their further lines, or the tool's summary: what only the tool
    /// itself prints (a context or location line alone may be any path).
    pub substantive: u64,
    /// The score per block of lines, for [`choose`] to find regions.
    tally: Tally,
}

impl Ranked<'_> {
    fn score(&self) -> u64 {
        self.explained * 2 + self.skipped
    }
}

/// One parser in the running.
struct Entrant<'a> {
    session: Box<dyn ParseSession + 'a>,
    findings: Findings,
    raw: bool,
    /// It reads annotation commands itself.
    annotations: bool,
    explained: u64,
    skipped: u64,
    substantive: u64,
    tally: Tally,
}

impl<'a> Entrant<'a> {
    fn new(parser: &'a dyn Parser, context: &'a ParseContext) -> Self {
        Self {
            session: parser.session(context),
            // Counting only: no diagnostic is kept while ranking.
            findings: Findings::with_limit(0),
            raw: parser.reads_documents(),
            annotations: parser.reads_annotations(),
            explained: 0,
            skipped: 0,
            substantive: 0,
            tally: Tally::default(),
        }
    }
}

/// Feeds the line at 0-based `index` to every line parser.
fn feed_line(entrants: &mut [Entrant<'_>], index: u64, line: &str) {
    // An annotation command is read whichever parser is chosen: it counts for none but the
    // parser of annotations alone.
    let annotation = super::annotations::read(line).is_some();
    for entrant in entrants
        .iter_mut()
        .filter(|e| !e.raw && (!annotation || e.annotations))
    {
        let outcome = entrant.session.line(line, &mut entrant.findings);
        match outcome {
            LineOutcome::Unmatched => {}
            LineOutcome::Skipped(_) => {
                entrant.skipped += 1;
                entrant.tally.add(index, 1);
            }
            _ => {
                entrant.explained += 1;
                entrant.tally.add(index, 2);
            }
        }
        if matches!(
            outcome,
            LineOutcome::Finding(_)
                | LineOutcome::Continued(_)
                | LineOutcome::Summary(_)
                | LineOutcome::Annotation
        ) {
            entrant.substantive += 1;
        }
    }
}

/// Every parser of `catalogue`, best first, and the number of lines read.
pub fn rank<'a>(
    catalogue: &'a Catalogue,
    context: &ParseContext,
    input: &mut dyn Read,
) -> io::Result<(Vec<Ranked<'a>>, u64)> {
    rank_these(catalogue, context, input, &|_| true)
}

/// [`rank`] of the parsers `these` keeps.
fn rank_these<'a>(
    catalogue: &'a Catalogue,
    context: &ParseContext,
    input: &mut dyn Read,
    these: &dyn Fn(&dyn Parser) -> bool,
) -> io::Result<(Vec<Ranked<'a>>, u64)> {
    let parsers: Vec<&dyn Parser> = catalogue
        .iter()
        .map(|(parser, _)| parser)
        .filter(|parser| these(*parser))
        .collect();
    let context = &ParseContext {
        sample: true,
        ..context.clone()
    };
    let mut entrants: Vec<Entrant<'_>> = parsers
        .iter()
        .map(|parser| Entrant::new(*parser, context))
        .collect();
    let mut lines = 0u64;
    let mut assembler = LineAssembler::default();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let read = match input.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        let chunk = &buffer[..read];
        for entrant in entrants.iter_mut().filter(|e| e.raw) {
            entrant.session.bytes(chunk, &mut entrant.findings);
        }
        assembler.push(chunk, &mut |line| {
            feed_line(&mut entrants, lines, line);
            lines += 1;
        });
    }
    assembler.finish(&mut |line| {
        feed_line(&mut entrants, lines, line);
        lines += 1;
    });
    for entrant in &mut entrants {
        entrant.session.finish(&mut entrant.findings);
        // Raw readers say how many lines they read as their own (a document: all of them).
        entrant.explained = entrant
            .explained
            .max(entrant.session.explained_lines(lines));
        if entrant.raw && entrant.explained > 0 {
            entrant.substantive = entrant.explained;
        }
        entrant.tally.settle(lines);
    }
    let mut ranked: Vec<Ranked<'a>> = parsers
        .into_iter()
        .zip(entrants)
        .map(|(parser, entrant)| {
            let sink = &entrant.findings;
            Ranked {
                parser,
                explained: entrant.explained,
                skipped: entrant.skipped,
                findings: sink.counts.error + sink.counts.warning + sink.counts.note,
                with_code: sink.with_code,
                substantive: entrant.substantive,
                tally: entrant.tally,
            }
        })
        .collect();
    best_first(&mut ranked);
    Ok((ranked, lines))
}

/// Best score first; on a tie, a parser of the tool itself before a fallback (`generic`); then
/// more findings with a code; then more findings; then name, so that the choice is stable.
fn best_first(ranked: &mut [Ranked<'_>]) {
    ranked.sort_by(|a, b| {
        b.score()
            .cmp(&a.score())
            .then(a.parser.is_fallback().cmp(&b.parser.is_fallback()))
            .then(b.with_code.cmp(&a.with_code))
            .then(b.findings.cmp(&a.findings))
            .then(a.parser.name().cmp(b.parser.name()))
    });
}

/// `auto` on a file: ranks a long one on a [sample](super::sample) and chooses. When the sample
/// reads as several tools' regions, whose lines must be the file's, the parsers of those regions
/// (and the sample's best) are ranked again over the whole file, which costs those few parsers'
/// time, not the catalogue's. The file is left rewound; the count is of the lines ranked, and
/// whether they were a sample.
pub fn rank_file<'a>(
    catalogue: &'a Catalogue,
    context: &ParseContext,
    input: &mut std::fs::File,
) -> io::Result<(Choice<'a>, Vec<Ranked<'a>>, u64, bool)> {
    use std::io::Seek;
    let length = input.metadata()?.len();
    let mut candidates: Option<Vec<String>> = None;
    if let super::sample::Sample::Part(sample) = super::sample::take(input, length)? {
        let (ranked, lines) = rank(catalogue, context, &mut sample.as_slice())?;
        let choice = choose(catalogue, &ranked, lines);
        let Choice::Regions(several, _) = &choice else {
            return Ok((choice, ranked, lines, true));
        };
        let mut names: Vec<String> = several
            .parts()
            .iter()
            .map(|part| part.parser.name().to_string())
            .collect();
        names.extend(ranked.first().map(|best| best.parser.name().to_string()));
        candidates = Some(names);
    }
    let these = |parser: &dyn Parser| {
        candidates
            .as_ref()
            .is_none_or(|names| names.iter().any(|name| name == parser.name()))
    };
    let (ranked, lines) = rank_these(catalogue, context, input, &these)?;
    input.rewind()?;
    let choice = choose(catalogue, &ranked, lines);
    Ok((choice, ranked, lines, false))
}

/// A stretch of the log and the parser `auto` gave it (1-based lines, inclusive).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RegionSpan {
    pub parser: String,
    pub first_line: u64,
    pub last_line: u64,
}

/// What `auto` makes of an output.
#[derive(Debug)]
pub enum Choice<'a> {
    /// One parser reads it.
    One(&'a dyn Parser),
    /// Different parsers read different stretches of it (each reads a block of lines beyond its
    /// own on either side, so that a boundary between blocks loses nothing).
    Regions(Several, Vec<RegionSpan>),
    /// No parser recognises it: the one-line note says which came nearest.
    NotRecognised(String),
}

/// Reads a ranking of the output's `lines` lines (from [`rank`]); `catalogue` is the one ranked.
pub fn choose<'a>(catalogue: &'a Catalogue, ranked: &[Ranked<'a>], lines: u64) -> Choice<'a> {
    // The best that reads at least one finding or summary: context or location lines alone
    // (a path on a line of its own) are no sign of a tool.
    let Some(best) = ranked.iter().find(|r| r.substantive > 0) else {
        return Choice::NotRecognised(not_recognised(ranked, lines));
    };
    if best.parser.reads_documents() {
        return Choice::One(best.parser);
    }
    let candidates: Vec<&Ranked<'a>> = ranked
        .iter()
        .filter(|r| !r.parser.reads_documents() && r.explained > 0)
        .collect();
    let tallies: Vec<&Tally> = candidates.iter().map(|r| &r.tally).collect();
    let single = candidates
        .iter()
        .position(|r| r.parser.name() == best.parser.name())
        .unwrap_or_default();
    let Some(found) = regions::attribute(&tallies, single, lines) else {
        return Choice::One(best.parser);
    };
    let mut parts = Vec::new();
    let mut spans = Vec::new();
    for region in found {
        let entry = candidates[region.parser];
        let Some(parser) = catalogue.shared(entry.parser.name()) else {
            return Choice::One(best.parser);
        };
        let margin = entry.tally.block_lines();
        parts.push(Part {
            parser,
            lines: Some((
                region.first_line.saturating_sub(margin).max(1),
                region.last_line + margin,
            )),
        });
        spans.push(RegionSpan {
            parser: entry.parser.name().to_string(),
            first_line: region.first_line,
            last_line: region.last_line,
        });
    }
    Choice::Regions(Several::new(parts), spans)
}

/// The one line saying that nothing recognised the output, naming the nearest candidates.
fn not_recognised(ranked: &[Ranked<'_>], lines: u64) -> String {
    let nearest: Vec<String> = ranked
        .iter()
        .filter(|r| r.explained > 0)
        .take(3)
        .map(|r| {
            format!(
                "{} explained {} of {lines} lines",
                r.parser.name(),
                r.explained
            )
        })
        .collect();
    if nearest.is_empty() {
        format!("no parser recognises this output: none explained any of its {lines} lines")
    } else {
        format!(
            "no parser recognises this output: none read a finding or a summary in it \
             (nearest: {})",
            nearest.join(", ")
        )
    }
}
