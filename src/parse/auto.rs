//! `auto`: runs every parser over the same output at once and ranks them by how much of it each
//! explains (lines its finding, continuation, context, location or summary rules took; skips
//! count half).

use std::io::{self, Read};

use super::{Catalogue, Findings, LineAssembler, LineOutcome, ParseContext, Parser};

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

/// Every parser of `catalogue`, best first, and the number of lines read.
pub fn rank<'a>(
    catalogue: &'a Catalogue,
    context: &ParseContext,
    input: &mut dyn Read,
) -> io::Result<(Vec<Ranked<'a>>, u64)> {
    let parsers: Vec<&dyn Parser> = catalogue.iter().map(|(parser, _)| parser).collect();
    let mut sessions: Vec<_> = parsers
        .iter()
        .map(|parser| parser.session(context))
        .collect();
    // Counting only: no diagnostic is kept while ranking.
    let mut findings: Vec<Findings> = parsers.iter().map(|_| Findings::with_limit(0)).collect();
    let raw: Vec<bool> = parsers.iter().map(|p| p.reads_documents()).collect();
    let mut tallies = vec![(0u64, 0u64); parsers.len()];
    let mut lines = 0u64;
    let mut on_line = |line: &str, sessions: &mut [Box<dyn super::ParseSession + '_>]| {
        lines += 1;
        let each = sessions
            .iter_mut()
            .zip(&mut findings)
            .zip(&mut tallies)
            .zip(&raw);
        for (((session, sink), tally), raw) in each {
            if *raw {
                continue;
            }
            match session.line(line, sink) {
                LineOutcome::Skipped(_) => tally.1 += 1,
                outcome if outcome.is_explained() => tally.0 += 1,
                _ => {}
            }
        }
    };
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
        for (session, _) in sessions.iter_mut().zip(&raw).filter(|(_, raw)| **raw) {
            session.bytes(chunk);
        }
        assembler.push(chunk, &mut |line| on_line(line, &mut sessions));
    }
    assembler.finish(&mut |line| on_line(line, &mut sessions));
    for (session, sink) in sessions.iter_mut().zip(&mut findings) {
        session.finish(sink);
    }
    // A reader that recognised the whole output as its document explains every line of it.
    for (session, tally) in sessions.iter().zip(&mut tallies) {
        if session.recognized_whole() {
            tally.0 = lines;
        }
    }
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
