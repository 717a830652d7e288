//! `auto`: runs every parser over the same output at once and ranks them by how much of it each
//! explains (lines its finding, continuation, context, location or summary rules took; skips
//! count half).

use std::io::{self, Read};

use super::{Catalogue, Findings, LineAssembler, LineOutcome, ParseContext, ParseSession, Parser};

/// How well one parser explained the output.
#[derive(Debug)]
pub struct Ranked<'a> {
    pub parser: &'a dyn Parser,
    pub explained: u64,
    pub skipped: u64,
    pub findings: u64,
    /// Findings with a code: between equals, the parser that reads more of each line wins.
    pub with_code: u64,
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
    explained: u64,
    skipped: u64,
}

fn feed_line(entrants: &mut [Entrant<'_>], line: &str) {
    for entrant in entrants.iter_mut().filter(|e| !e.raw) {
        match entrant.session.line(line, &mut entrant.findings) {
            LineOutcome::Skipped(_) => entrant.skipped += 1,
            outcome if outcome.is_explained() => entrant.explained += 1,
            _ => {}
        }
    }
}

/// Every parser of `catalogue`, best first, and the number of lines read.
pub fn rank<'a>(
    catalogue: &'a Catalogue,
    context: &ParseContext,
    input: &mut dyn Read,
) -> io::Result<(Vec<Ranked<'a>>, u64)> {
    let parsers: Vec<&dyn Parser> = catalogue.iter().map(|(parser, _)| parser).collect();
    let mut entrants: Vec<Entrant<'_>> = parsers
        .iter()
        .map(|parser| Entrant {
            session: parser.session(context),
            // Counting only: no diagnostic is kept while ranking.
            findings: Findings::with_limit(0),
            raw: parser.reads_documents(),
            explained: 0,
            skipped: 0,
        })
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
            lines += 1;
            feed_line(&mut entrants, line);
        });
    }
    assembler.finish(&mut |line| {
        lines += 1;
        feed_line(&mut entrants, line);
    });
    for entrant in &mut entrants {
        entrant.session.finish(&mut entrant.findings);
        // Raw readers say how many lines they read as their own (a document: all of them).
        entrant.explained = entrant
            .explained
            .max(entrant.session.explained_lines(lines));
    }
    let tallies: Vec<(u64, u64)> = entrants.iter().map(|e| (e.explained, e.skipped)).collect();
    let findings: Vec<Findings> = entrants.into_iter().map(|e| e.findings).collect();
    let mut ranked: Vec<Ranked<'a>> = parsers
        .into_iter()
        .zip(tallies)
        .zip(&findings)
        .map(|((parser, (explained, skipped)), sink)| Ranked {
            parser,
            explained,
            skipped,
            findings: sink.counts.error + sink.counts.warning + sink.counts.note,
            with_code: sink.with_code,
        })
        .collect();
    // Best score first; then more findings with a code; then more findings; then name, so that
    // the choice is stable.
    ranked.sort_by(|a, b| {
        b.score()
            .cmp(&a.score())
            .then(b.with_code.cmp(&a.with_code))
            .then(b.findings.cmp(&a.findings))
            .then(a.parser.name().cmp(b.parser.name()))
    });
    Ok((ranked, lines))
}
