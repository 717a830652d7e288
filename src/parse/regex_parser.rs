//! The `regex` parser kind: line patterns with named groups; multi-line entries (a start line,
//! continuation lines, an end line); context lines that name the file for the lines after them;
//! location lines that place an earlier finding (by its code, or under a heading that names
//! it); skip lines; summary lines with the counts the
//! tool prints about itself.

pub(super) mod draft;
pub(crate) mod frames;
pub(super) mod locations;
mod session;

use std::collections::HashMap;
use std::sync::OnceLock;

use super::lazy_regex::LazyRegex;
use serde::Deserialize;

use super::first_rule::{FirstRule, Head, RuleCache};
use super::rule_help::RuleHelp;
use super::{ParseContext, ParseSession, Parser};
use crate::model::Severity;
use draft::Groups;
use session::RegexSession;

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
    /// The line names the test whose report follows (pytest's `___ TestCart.test_total ___`):
    /// the next `location` line without a code places the finding whose code ends with that
    /// name (`tests/test_cart.py::TestCart::test_total`) in the same file.
    Heading,
}

/// A line inside a multi-line entry: its groups fill what the entry lacks; a `message` group
/// appends to the entry's body, or to its message when the continuation `wraps`. A `same_place`
/// continuation takes only a line whose `file` and `line` groups are the entry's.
#[derive(Debug)]
pub struct Continuation {
    pub regex: LazyRegex,
    /// `regex` without its `message` tail, for an entry whose message is not kept.
    pub head: Head,
    pub groups: Groups,
    pub code_prefix: String,
    pub same_place: bool,
    pub wraps: bool,
    /// A line it takes makes the entry no finding.
    pub drops: bool,
}

impl Continuation {
    pub fn new(regex: LazyRegex, code_prefix: String) -> Self {
        Self {
            groups: Groups::of(&regex),
            regex,
            head: Head::default(),
            code_prefix,
            same_place: false,
            wraps: false,
            drops: false,
        }
    }
}

#[derive(Debug)]
pub struct CompiledPattern {
    pub regex: LazyRegex,
    /// `regex` without its `message` tail, for a line whose message is not kept.
    pub head: Head,
    /// The named groups of `regex`.
    pub groups: Groups,
    pub kind: PatternKind,
    pub severity: Option<Severity>,
    pub category: Option<String>,
    pub message: Option<String>,
    /// The code of findings whose line has no `code` group.
    pub code: Option<String>,
    pub continuations: Vec<Continuation>,
    pub end: Option<LazyRegex>,
    /// `end` without its `message` tail.
    pub end_head: Head,
    /// Only frames in the user's code give the finding its place (see [`frames`]).
    pub user_frames: bool,
    /// The end, the continuations and the parser's line rules as one list, for a multi-line
    /// pattern: built when a session first needs it.
    pub entry: OnceLock<EntryRules>,
}

/// Which rule of an open multi-line entry a line matched first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryLine {
    End,
    Continuation(usize),
    /// The line rule at this index of [`RegexParser::rules`] (skips, summaries, patterns): the
    /// line is not the entry's, and the rule reads it once the entry is closed.
    Outside(usize),
}

/// A multi-line pattern's end line and continuation lines, then the parser's line rules, as one
/// ordered list: one pass over a line inside an entry tells which rule takes it, whether it
/// continues the entry or (most lines of a dense log are inside an entry) starts the next.
#[derive(Debug)]
pub struct EntryRules {
    first: FirstRule,
    has_end: bool,
    /// How many of the rules are the entry's own (the end and the continuations).
    own: usize,
    /// The named groups of the end regex.
    pub end_groups: Groups,
}

impl EntryRules {
    /// The rules of a multi-line pattern with `end` and `continuations` in a parser whose line
    /// rules are `outside`.
    fn new<'r>(
        end: Option<&'r LazyRegex>,
        continuations: &'r [Continuation],
        outside: impl Iterator<Item = &'r LazyRegex>,
    ) -> Self {
        let own: Vec<&LazyRegex> = end
            .into_iter()
            .chain(continuations.iter().map(|c| &c.regex))
            .collect();
        Self {
            first: FirstRule::new(own.iter().copied().chain(outside)),
            has_end: end.is_some(),
            own: own.len(),
            end_groups: end.map(Groups::of).unwrap_or_default(),
        }
    }

    /// The first rule that matches `line`: the end, then the continuations in their order, then
    /// the parser's line rules.
    #[inline]
    pub fn first(&self, cache: &mut RuleCache, line: &str) -> Option<EntryLine> {
        self.first.first(cache, line).map(|index| self.rule(index))
    }

    /// The rule at `index` in the list.
    pub fn rule(&self, index: usize) -> EntryLine {
        match (self.has_end, index) {
            (_, index) if index >= self.own => EntryLine::Outside(index - self.own),
            (true, 0) => EntryLine::End,
            (true, index) => EntryLine::Continuation(index - 1),
            (false, index) => EntryLine::Continuation(index),
        }
    }

    /// How many rules are the entry's own.
    pub fn own(&self) -> usize {
        self.own
    }
}

impl CompiledPattern {
    /// Whether the pattern starts an entry of several lines (it has continuations or an end).
    #[inline]
    pub fn is_multi_line(&self) -> bool {
        self.end.is_some() || !self.continuations.is_empty()
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
    pub skips: Vec<LazyRegex>,
    pub summaries: Vec<LazyRegex>,
    /// Every skip, summary and pattern regex, in that order, searched as one: built when a
    /// session first needs it (a catalogue holds many parsers; a run reads with a few).
    pub rules: OnceLock<FirstRule>,
    /// The tool's own words for severities (lowercase), before the common ones.
    pub severity_aliases: HashMap<String, Severity>,
    /// Codes matching a rule get its category (first rule wins).
    pub code_categories: Vec<(LazyRegex, String)>,
    /// Where the tool documents its codes.
    pub rule_help: RuleHelp,
    /// Reads shapes many tools share: `auto` ranks it below a parser of the tool itself.
    pub fallback: bool,
    /// A finding printed again is counted once (see [`super::repeats`]).
    pub deduplicate: bool,
}

impl RegexParser {
    /// The line rules: every skip, summary and pattern, in that order.
    fn outside(&self) -> impl Iterator<Item = &LazyRegex> {
        (self.skips.iter())
            .chain(&self.summaries)
            .chain(self.patterns.iter().map(|p| &p.regex))
    }

    /// The line rules searched as one.
    #[inline]
    pub fn rules(&self) -> &FirstRule {
        self.rules.get_or_init(|| FirstRule::new(self.outside()))
    }

    /// The rules of an open entry of the pattern at `index`; `None` for a single-line pattern.
    #[inline]
    pub fn entry_rules(&self, index: usize) -> Option<&EntryRules> {
        let pattern = &self.patterns[index];
        pattern.is_multi_line().then(|| {
            pattern.entry.get_or_init(|| {
                EntryRules::new(pattern.end.as_ref(), &pattern.continuations, self.outside())
            })
        })
    }

    /// The severity a word of the tool stands for: its own words first, then the common ones.
    #[inline]
    pub fn severity(&self, word: &str) -> Severity {
        let word = word.trim();
        // Tools print their words in lowercase: no copy then (this runs for every finding).
        let lower = if word.bytes().any(|b| b.is_ascii_uppercase()) {
            std::borrow::Cow::Owned(word.to_ascii_lowercase())
        } else {
            std::borrow::Cow::Borrowed(word)
        };
        self.severity_aliases
            .get(lower.as_ref())
            .copied()
            .unwrap_or_else(|| Severity::from_label(word))
    }

    /// The category of the first rule `code` matches.
    #[inline]
    pub fn category_of_code(&self, code: &str) -> Option<&str> {
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

    fn rule_help(&self) -> Option<&RuleHelp> {
        (!self.rule_help.is_empty()).then_some(&self.rule_help)
    }

    fn session<'a>(&'a self, context: &'a ParseContext) -> Box<dyn ParseSession + 'a> {
        Box::new(RegexSession::new(self, context))
    }

    fn is_fallback(&self) -> bool {
        self.fallback
    }
}

#[cfg(test)]
#[path = "regex_parser_tests.rs"]
mod tests;
