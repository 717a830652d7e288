//! The `regex` parser kind: line patterns with named groups; multi-line entries (a start line,
//! continuation lines, an end line); context lines that name the file for the lines after them;
//! location lines that place an earlier finding; skip lines; summary lines with the counts the
//! tool prints about itself.

use std::collections::HashMap;

use regex::{Captures, Regex};
use serde::Deserialize;

use super::draft::{Draft, apply_summary};
use super::{Findings, LineOutcome, ParseContext, ParseSession, Parser, resolve_path};
use crate::model::{Diagnostic, Severity};

/// Locations remembered for `location` patterns; beyond this they are not kept.
const MAX_LOCATIONS: usize = 10_000;
/// A location's code or path longer than this is not remembered.
const MAX_LOCATION_KEY: usize = 1_000;
/// A multi-line entry is closed after this many lines, whatever follows.
const MAX_ENTRY_LINES: usize = 1_000;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PatternKind {
    /// The line is (the start of) a finding.
    #[default]
    Finding,
    /// The line gives the location of the finding with the same `code` (a test's panic site).
    Location,
    /// The line names the file of the findings that follow (ESLint stylish).
    Context,
}

/// A line inside a multi-line entry: its groups fill what the entry lacks; a `message` group
/// appends to the entry's body.
#[derive(Debug)]
pub struct Continuation {
    pub regex: Regex,
    pub code_prefix: String,
}

#[derive(Debug)]
pub struct CompiledPattern {
    pub regex: Regex,
    pub kind: PatternKind,
    pub severity: Option<Severity>,
    pub category: Option<String>,
    pub message: Option<String>,
    pub continuations: Vec<Continuation>,
    pub end: Option<Regex>,
}

impl CompiledPattern {
    fn is_multi_line(&self) -> bool {
        !self.continuations.is_empty() || self.end.is_some()
    }
}

/// A compiled `regex` parser definition.
#[derive(Debug)]
pub struct RegexParser {
    pub name: String,
    pub description: String,
    pub category: Option<String>,
    pub command: String,
    pub patterns: Vec<CompiledPattern>,
    pub skips: Vec<Regex>,
    pub summaries: Vec<Regex>,
    /// Every skip, summary and pattern regex, in that order, as one set.
    pub prefilter: regex::RegexSet,
    /// The tool's own words for severities (lowercase), before the common ones.
    pub severity_aliases: HashMap<String, Severity>,
    /// Codes matching a rule get its category (first rule wins).
    pub code_categories: Vec<(Regex, String)>,
}

impl RegexParser {
    fn severity(&self, word: &str) -> Severity {
        self.severity_aliases
            .get(&word.trim().to_ascii_lowercase())
            .copied()
            .unwrap_or_else(|| Severity::from_label(word))
    }

    fn category_of_code(&self, code: &str) -> Option<&str> {
        self.code_categories
            .iter()
            .find(|(rule, _)| rule.is_match(code))
            .map(|(_, category)| category.as_str())
    }
}

impl Parser for RegexParser {
    fn name(&self) -> &str {
        &self.name
    }

    fn category(&self) -> Option<&str> {
        self.category.as_deref()
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn command(&self) -> &str {
        &self.command
    }

    fn session<'a>(&'a self, context: &'a ParseContext) -> Box<dyn ParseSession + 'a> {
        Box::new(RegexSession {
            parser: self,
            context,
            locations: HashMap::new(),
            current: None,
            open: None,
        })
    }
}

#[derive(Debug)]
struct Location {
    file: String,
    line: Option<u32>,
    column: Option<u32>,
}

#[derive(Debug)]
struct OpenEntry {
    pattern: usize,
    draft: Draft,
    lines: usize,
}

struct RegexSession<'a> {
    parser: &'a RegexParser,
    context: &'a ParseContext,
    locations: HashMap<String, Location>,
    /// The place the last context line named: the file, and the line when it gives one.
    current: Option<Location>,
    open: Option<OpenEntry>,
}

impl ParseSession for RegexSession<'_> {
    fn line(&mut self, line: &str, findings: &mut Findings) -> LineOutcome {
        if let Some(pattern) = self.continue_entry(line, findings) {
            return LineOutcome::Continued(pattern);
        }
        let hits = self.parser.prefilter.matches(line);
        if !hits.matched_any() {
            return LineOutcome::Unmatched;
        }
        let (skips, summaries) = (self.parser.skips.len(), self.parser.summaries.len());
        if let Some(index) = (0..skips).find(|&index| hits.matched(index)) {
            return LineOutcome::Skipped(index);
        }
        for (index, summary) in self.parser.summaries.iter().enumerate() {
            if !hits.matched(skips + index) {
                continue;
            }
            if let Some(captures) = summary.captures(line) {
                apply_summary(&captures, findings);
                return LineOutcome::Summary(index);
            }
        }
        for (index, pattern) in self.parser.patterns.iter().enumerate() {
            if !hits.matched(skips + summaries + index) {
                continue;
            }
            let Some(captures) = pattern.regex.captures(line) else {
                continue;
            };
            let outcome = match pattern.kind {
                PatternKind::Location => LineOutcome::Location(index),
                PatternKind::Context => LineOutcome::Context(index),
                PatternKind::Finding => LineOutcome::Finding(index),
            };
            match pattern.kind {
                PatternKind::Finding if pattern.is_multi_line() => {
                    let mut draft = Draft::default();
                    draft.fill(&captures, "");
                    self.open = Some(OpenEntry {
                        pattern: index,
                        draft,
                        lines: 1,
                    });
                }
                PatternKind::Finding
                    if !findings.accepts(
                        self.severity_of(pattern, captures.name("severity").map(|m| m.as_str())),
                    ) =>
                {
                    // Counted only: no diagnostic is built for what will not be kept.
                    let word = captures.name("severity").map(|m| m.as_str());
                    let category = captures
                        .name("category")
                        .map(|m| m.as_str())
                        .or(pattern.category.as_deref())
                        .or_else(|| {
                            captures
                                .name("code")
                                .and_then(|code| self.parser.category_of_code(code.as_str()))
                        });
                    let has_code = captures.name("code").is_some();
                    findings.count(self.severity_of(pattern, word), category, has_code);
                }
                PatternKind::Finding => {
                    let mut draft = Draft::default();
                    draft.fill(&captures, "");
                    self.emit(pattern, draft, findings);
                }
                PatternKind::Location => self.remember_location(&captures),
                PatternKind::Context => {
                    let number =
                        |name: &str| captures.name(name).and_then(|m| m.as_str().parse().ok());
                    self.current = captures.name("file").map(|file| Location {
                        file: file.as_str().to_string(),
                        line: number("line"),
                        column: number("column"),
                    });
                }
            }
            return outcome;
        }
        LineOutcome::Unmatched
    }

    fn finish(&mut self, findings: &mut Findings) {
        self.close_entry(findings);
        if self.locations.is_empty() {
            return;
        }
        for diagnostic in findings.diagnostics_mut() {
            let Some(code) = &diagnostic.code else {
                continue;
            };
            if diagnostic.file.is_some() {
                continue;
            }
            if let Some(location) = self.locations.get(code) {
                diagnostic.file = Some(location.file.clone());
                diagnostic.line = location.line;
                diagnostic.column = location.column;
                diagnostic.fingerprint = Diagnostic::compute_fingerprint(
                    &self.parser.name,
                    diagnostic.code.as_deref(),
                    diagnostic.file.as_deref(),
                    &diagnostic.message,
                );
            }
        }
    }
}

impl RegexSession<'_> {
    /// Feeds `line` to the open multi-line entry and returns the entry's pattern; `None` when the
    /// line is not part of one (the entry, if any, is then emitted and the line parsed on its own).
    fn continue_entry(&mut self, line: &str, findings: &mut Findings) -> Option<usize> {
        let open = self.open.as_mut()?;
        let index = open.pattern;
        let pattern = &self.parser.patterns[index];
        open.lines += 1;
        if let Some(end) = &pattern.end
            && let Some(captures) = end.captures(line)
        {
            open.draft.fill(&captures, "");
            self.close_entry(findings);
            return Some(index);
        }
        let continued = pattern.continuations.iter().find_map(|continuation| {
            continuation
                .regex
                .captures(line)
                .map(|captures| (captures, continuation.code_prefix.as_str()))
        });
        match continued {
            Some((captures, prefix)) => {
                open.draft.fill(&captures, prefix);
                if open.lines >= MAX_ENTRY_LINES {
                    self.close_entry(findings);
                }
                Some(index)
            }
            None => {
                self.close_entry(findings);
                None
            }
        }
    }

    fn close_entry(&mut self, findings: &mut Findings) {
        if let Some(open) = self.open.take() {
            let pattern = &self.parser.patterns[open.pattern];
            self.emit(pattern, open.draft, findings);
        }
    }

    fn severity_of(&self, pattern: &CompiledPattern, word: Option<&str>) -> Severity {
        word.map(|word| self.parser.severity(word))
            .or(pattern.severity)
            .unwrap_or(Severity::Error)
    }

    fn emit(&self, pattern: &CompiledPattern, draft: Draft, findings: &mut Findings) {
        let severity = self.severity_of(pattern, draft.severity.as_deref());
        let category = draft
            .category
            .or_else(|| pattern.category.clone())
            .or_else(|| {
                draft
                    .code
                    .as_deref()
                    .and_then(|code| self.parser.category_of_code(code))
                    .map(str::to_string)
            });
        if !findings.accepts(severity) {
            findings.count(severity, category.as_deref(), draft.code.is_some());
            return;
        }
        // A finding without a file of its own takes the place the last context line named.
        let (file, line, column) = match (draft.file, &self.current) {
            (Some(file), _) => (Some(file), draft.line, draft.column),
            (None, Some(place)) => (
                Some(place.file.clone()),
                draft.line.or(place.line),
                draft.column.or(place.column),
            ),
            (None, None) => (None, draft.line, draft.column),
        };
        let (file, outside_target) = match file {
            Some(raw) => {
                let normalized =
                    resolve_path(&raw, &self.context.target, &self.context.cwd_relative);
                (Some(normalized.path), normalized.outside_target)
            }
            None => (None, false),
        };
        let message = draft
            .message
            .or_else(|| pattern.message.clone())
            .unwrap_or_default();
        let fingerprint = Diagnostic::compute_fingerprint(
            &self.parser.name,
            draft.code.as_deref(),
            file.as_deref(),
            &message,
        );
        findings.push(Diagnostic {
            file,
            line,
            column,
            end_line: draft.end_line,
            end_column: draft.end_column,
            severity,
            code: draft.code,
            message,
            category,
            fingerprint,
            outside_target,
            body: (!draft.body.is_empty()).then_some(draft.body),
        });
    }

    fn remember_location(&mut self, captures: &Captures<'_>) {
        let (Some(code), Some(file)) = (captures.name("code"), captures.name("file")) else {
            return;
        };
        if code.as_str().len() > MAX_LOCATION_KEY
            || file.as_str().len() > MAX_LOCATION_KEY
            || (self.locations.len() >= MAX_LOCATIONS
                && !self.locations.contains_key(code.as_str()))
        {
            return;
        }
        let number = |name: &str| captures.name(name).and_then(|m| m.as_str().parse().ok());
        let location = Location {
            file: resolve_path(
                file.as_str(),
                &self.context.target,
                &self.context.cwd_relative,
            )
            .path,
            line: number("line"),
            column: number("column"),
        };
        self.locations
            .entry(code.as_str().to_string())
            .or_insert(location);
    }
}

#[cfg(test)]
#[path = "regex_parser_tests.rs"]
mod tests;
