//! The `regex` parser kind: line patterns with named groups, skip patterns, and summary patterns
//! that read the counts a tool prints about itself.

use std::collections::HashMap;

use regex::{Captures, Regex};
use serde::Deserialize;

use super::{Findings, ParseContext, ParseSession, Parser, normalize_path};
use crate::model::{Diagnostic, Severity};

/// Locations remembered for `location` patterns; beyond this they are not kept.
const MAX_LOCATIONS: usize = 10_000;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PatternKind {
    /// The line is a finding.
    #[default]
    Finding,
    /// The line gives the location of the finding with the same `code` (a test's panic site).
    Location,
}

#[derive(Debug)]
pub struct CompiledPattern {
    pub regex: Regex,
    pub kind: PatternKind,
    pub severity: Option<Severity>,
    pub category: Option<String>,
    pub message: Option<String>,
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
        })
    }
}

#[derive(Debug)]
struct Location {
    file: String,
    line: Option<u32>,
    column: Option<u32>,
}

struct RegexSession<'a> {
    parser: &'a RegexParser,
    context: &'a ParseContext,
    locations: HashMap<String, Location>,
}

impl ParseSession for RegexSession<'_> {
    fn line(&mut self, line: &str, findings: &mut Findings) {
        if self.parser.skips.iter().any(|skip| skip.is_match(line)) {
            return;
        }
        for summary in &self.parser.summaries {
            if let Some(captures) = summary.captures(line) {
                apply_summary(&captures, findings);
                return;
            }
        }
        for pattern in &self.parser.patterns {
            if let Some(captures) = pattern.regex.captures(line) {
                match pattern.kind {
                    PatternKind::Finding if findings.is_full() => {
                        findings.count(severity_of(pattern, &captures));
                    }
                    PatternKind::Finding => findings.push(self.finding(pattern, &captures)),
                    PatternKind::Location => self.remember_location(&captures),
                }
                return;
            }
        }
    }

    fn finish(&mut self, findings: &mut Findings) {
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
    fn finding(&self, pattern: &CompiledPattern, captures: &Captures<'_>) -> Diagnostic {
        let text = |name: &str| {
            captures
                .name(name)
                .map(|m| m.as_str().trim())
                .filter(|s| !s.is_empty())
        };
        let number = |name: &str| text(name).and_then(|s| s.parse::<u32>().ok());
        let file = text("file")
            .map(|raw| normalize_path(raw, &self.context.target, &self.context.cwd_relative));
        let code = text("code").map(str::to_string);
        let message = text("message")
            .or(pattern.message.as_deref())
            .unwrap_or_default()
            .to_string();
        let fingerprint = Diagnostic::compute_fingerprint(
            &self.parser.name,
            code.as_deref(),
            file.as_deref(),
            &message,
        );
        Diagnostic {
            file,
            line: number("line"),
            column: number("column"),
            end_line: number("end_line"),
            end_column: number("end_column"),
            severity: severity_of(pattern, captures),
            code,
            message,
            category: text("category")
                .map(str::to_string)
                .or_else(|| pattern.category.clone()),
            fingerprint,
        }
    }

    fn remember_location(&mut self, captures: &Captures<'_>) {
        let (Some(code), Some(file)) = (captures.name("code"), captures.name("file")) else {
            return;
        };
        if self.locations.len() >= MAX_LOCATIONS && !self.locations.contains_key(code.as_str()) {
            return;
        }
        let number = |name: &str| captures.name(name).and_then(|m| m.as_str().parse().ok());
        let location = Location {
            file: normalize_path(
                file.as_str(),
                &self.context.target,
                &self.context.cwd_relative,
            ),
            line: number("line"),
            column: number("column"),
        };
        self.locations
            .entry(code.as_str().to_string())
            .or_insert(location);
    }
}

/// The severity group's word, else the pattern's own severity, else error.
fn severity_of(pattern: &CompiledPattern, captures: &Captures<'_>) -> Severity {
    captures
        .name("severity")
        .map(|m| Severity::from_label(m.as_str()))
        .or(pattern.severity)
        .unwrap_or(Severity::Error)
}

/// Adds the counts of one summary line. `warnings` less `duplicates` (cargo's "(2 duplicates)");
/// failed tests count as expected errors.
fn apply_summary(captures: &Captures<'_>, findings: &mut Findings) {
    let count = |name: &str| {
        captures
            .name(name)
            .and_then(|m| m.as_str().parse::<u64>().ok())
    };
    if let Some(errors) = count("errors") {
        let expected = findings.expected_mut();
        expected.error = Some(expected.error.unwrap_or(0) + errors);
    }
    if let Some(warnings) = count("warnings") {
        let new = warnings.saturating_sub(count("duplicates").unwrap_or(0));
        let expected = findings.expected_mut();
        expected.warning = Some(expected.warning.unwrap_or(0) + new);
    }
    let (passed, failed, skipped) = (count("passed"), count("failed"), count("skipped"));
    if passed.is_some() || failed.is_some() || skipped.is_some() {
        let tests = findings.tests_mut();
        tests.passed += passed.unwrap_or(0);
        tests.failed += failed.unwrap_or(0);
        tests.skipped += skipped.unwrap_or(0);
        if let Some(failed) = failed {
            let expected = findings.expected_mut();
            expected.error = Some(expected.error.unwrap_or(0) + failed);
        }
    }
}
