//! Several parsers over one output: `--parser ruff,pytest` (each reads every line), and the
//! regions `auto` attributes to different tools in one log (each reads its own lines). Each part
//! keeps findings of its own, so that one tool's locations never place another's findings; they
//! are merged at the end, each finding taking its own parser's category.

use std::sync::Arc;

use super::{Findings, LineOutcome, ParseContext, ParseSession, Parser};
use crate::model::Severity;

/// One parser of several (a line parser: readers of whole documents do not share an output),
/// and the lines it reads (1-based, inclusive; `None`: all of them).
#[derive(Debug, Clone)]
pub struct Part {
    pub parser: Arc<dyn Parser>,
    pub lines: Option<(u64, u64)>,
}

/// Parsers that read one output together.
#[derive(Debug)]
pub struct Several {
    name: String,
    description: String,
    parts: Vec<Part>,
}

impl Several {
    /// `parts` together, named by their names joined with commas.
    pub fn new(parts: Vec<Part>) -> Self {
        let names: Vec<&str> = parts.iter().map(|part| part.parser.name()).collect();
        let description = format!("{} together", names.join(" and "));
        Self {
            name: names.join(","),
            description,
            parts,
        }
    }

    pub fn parts(&self) -> &[Part] {
        &self.parts
    }
}

impl Parser for Several {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn session<'a>(&'a self, context: &'a ParseContext) -> Box<dyn ParseSession + 'a> {
        Box::new(SeveralSession {
            parts: self
                .parts
                .iter()
                .map(|part| PartSession {
                    part,
                    session: part.parser.session(context),
                    findings: Findings::default(),
                })
                .collect(),
            line: 0,
        })
    }
}

struct PartSession<'a> {
    part: &'a Part,
    session: Box<dyn ParseSession + 'a>,
    findings: Findings,
}

impl PartSession<'_> {
    fn reads(&self, line: u64) -> bool {
        self.part
            .lines
            .is_none_or(|(first, last)| (first..=last).contains(&line))
    }
}

struct SeveralSession<'a> {
    parts: Vec<PartSession<'a>>,
    line: u64,
}

impl ParseSession for SeveralSession<'_> {
    /// Feeds `line` to every part that reads it; the outcome is the first part's that explained
    /// it, else a skip, else unmatched.
    fn line(&mut self, line: &str, _findings: &mut Findings) -> LineOutcome {
        self.line += 1;
        let mut outcome = LineOutcome::Unmatched;
        for part in self.parts.iter_mut().filter(|p| p.reads(self.line)) {
            let this = part.session.line(line, &mut part.findings);
            if !outcome.is_explained() && (this.is_explained() || outcome == LineOutcome::Unmatched)
            {
                outcome = this;
            }
        }
        outcome
    }

    fn finish(&mut self, findings: &mut Findings) {
        for part in &mut self.parts {
            part.session.finish(&mut part.findings);
            let own = std::mem::take(&mut part.findings);
            absorb(findings, own, part.part.parser.category());
        }
    }
}

/// Moves what `part` found into `into`: its kept diagnostics (those without a category taking
/// `category`), what it only counted, the counts the tool printed and its tests.
pub fn absorb(into: &mut Findings, part: Findings, category: Option<&str>) {
    for (own, counts) in part.omitted_by_category() {
        let category = own.or(category);
        for (severity, count) in [
            (Severity::Error, counts.error),
            (Severity::Warning, counts.warning),
            (Severity::Note, counts.note),
        ] {
            for _ in 0..count {
                into.count(severity, category, false);
            }
        }
    }
    if let Some(expected) = part.expected {
        let merged = into.expected_mut();
        merged.error = sum(merged.error, expected.error);
        merged.warning = sum(merged.warning, expected.warning);
    }
    if let Some(tests) = part.tests {
        let merged = into.tests_mut();
        merged.passed += tests.passed;
        merged.failed += tests.failed;
        merged.skipped += tests.skipped;
    }
    for mut diagnostic in part.into_diagnostics() {
        if diagnostic.category.is_none() {
            diagnostic.category = category.map(str::to_string);
        }
        into.push(diagnostic);
    }
}

fn sum(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    }
}
