//! One run of a `regex` parser over a check's output: each line goes through the skip, summary
//! and pattern rules in turn, while an open multi-line entry, the last context line, the last
//! heading and the locations seen so far carry over from line to line.

use super::draft::{Draft, OpenEntry, Reads, apply_summary};
use super::frames::{Place, gives_place};
use super::locations::{Key, Location, Locations, MAX_KEY};
use super::{CompiledPattern, EntryLine, EntryRules, PatternKind, RegexParser};
use crate::model::Severity;
use crate::parse::first_rule::RuleCache;
use crate::parse::matched::{LineMemory, Matched, find};
use crate::parse::repeats::{Identity, Repeats};
use crate::parse::{Findings, Found, LineOutcome, ParseContext, ParseSession, resolve_path};

mod entry;
mod replay;

/// What a `regex` parser keeps between the lines of one check's output.
pub struct RegexSession<'a> {
    parser: &'a RegexParser,
    context: &'a ParseContext,
    locations: Locations,
    /// The name the last heading gave, until a location line takes it.
    heading: Option<String>,
    /// The place the last context line named: the file, and the line when it gives one.
    current: Option<Location>,
    open: Option<OpenEntry>,
    /// What the searches of the parser's rule lists keep from line to line: the line rules', then
    /// each pattern's entry rules'.
    caches: Vec<RuleCache>,
    /// The findings seen, for a parser that counts a repeated finding once.
    repeats: Option<Repeats>,
    /// The lines of the open entry, while it is read only for its identity.
    replay: replay::Replay,
    /// What the rules matched in the lines read so far, for a parser that counts a repeated
    /// finding once (its lines repeat).
    memory: Option<LineMemory>,
    /// Strings of the drafts not kept, for the next drafts.
    spare: Vec<String>,
}

impl ParseSession for RegexSession<'_> {
    fn line(&mut self, line: &str, findings: &mut Findings) -> LineOutcome {
        // One search over the line names the rule that takes it: inside an entry, among the
        // entry's rules and then the parser's; outside one, among the parser's.
        let rules_of = self.open.as_ref().map_or(0, |open| open.pattern + 1);
        let outside = match self.open_rules() {
            Some(rules) => match rules.first(&mut self.caches[rules_of], line) {
                Some(EntryLine::Outside(rule)) => {
                    self.close_entry(findings);
                    Some(rule)
                }
                Some(rule) => {
                    if let Some(pattern) = self.continue_entry(line, rule, findings) {
                        return LineOutcome::Continued(pattern);
                    }
                    // A `same_place` continuation refused the line, and no later rule of the
                    // entry took it: it is read on its own.
                    self.parser.rules().first(&mut self.caches[0], line)
                }
                None => {
                    self.close_entry(findings);
                    None
                }
            },
            None => self.parser.rules().first(&mut self.caches[0], line),
        };
        match outside {
            Some(rule) => self.read_rule(line, rule, findings),
            None => LineOutcome::Unmatched,
        }
    }

    fn finish(&mut self, findings: &mut Findings) {
        self.close_entry(findings);
        if let Some(repeats) = &self.repeats {
            repeats.discount(findings.expected.as_mut());
        }
        if self.locations.is_empty() {
            return;
        }
        for diagnostic in findings.diagnostics_mut() {
            self.locations.place(diagnostic, &self.parser.name);
        }
    }
}

impl<'a> RegexSession<'a> {
    /// A session of `parser` over one check's output, run in `context`.
    pub fn new(parser: &'a RegexParser, context: &'a ParseContext) -> Self {
        Self {
            parser,
            context,
            locations: Locations::default(),
            heading: None,
            current: None,
            open: None,
            caches: (0..=parser.patterns.len())
                .map(|_| {
                    if context.sample {
                        RuleCache::sampled()
                    } else {
                        RuleCache::default()
                    }
                })
                .collect(),
            repeats: parser.deduplicate.then(Repeats::default),
            replay: replay::Replay::default(),
            memory: parser.deduplicate.then(LineMemory::default),
            spare: Vec::new(),
        }
    }
}

impl<'a> RegexSession<'a> {
    /// The rules of the open multi-line entry, if any.
    fn open_rules(&self) -> Option<&'a EntryRules> {
        self.parser.entry_rules(self.open.as_ref()?.pattern)
    }

    /// Reads `line` with the parser's line rule at `rule` (skips, summaries, patterns), the
    /// first that matches it.
    fn read_rule(&mut self, line: &str, rule: usize, findings: &mut Findings) -> LineOutcome {
        let (skips, summaries) = (self.parser.skips.len(), self.parser.summaries.len());
        if rule < skips {
            return LineOutcome::Skipped(rule);
        }
        if rule < skips + summaries {
            let index = rule - skips;
            let regex = &self.parser.summaries[index];
            return match regex.captures(line) {
                Some(captures) => {
                    apply_summary(regex, &captures, findings);
                    LineOutcome::Summary(index)
                }
                None => LineOutcome::Unmatched,
            };
        }
        let index = rule - skips - summaries;
        let pattern = &self.parser.patterns[index];
        // Only a finding that may be stored needs its message, or one that may be a repeat.
        let regex = if pattern.kind == PatternKind::Finding
            && (findings.accepts(Severity::Error) || self.repeats.is_some())
        {
            pattern.regex.get()
        } else {
            pattern.head.of(&pattern.regex)
        };
        match find(self.memory.as_mut(), regex, line) {
            Some(found) => self.apply_pattern(index, pattern, line, found.matched(), findings),
            None => LineOutcome::Unmatched,
        }
    }

    /// Acts on a line that `pattern`, the pattern at `index`, matched with `captures`: opens a
    /// multi-line entry, counts or emits a finding, remembers a location or sets the context.
    fn apply_pattern(
        &mut self,
        index: usize,
        pattern: &CompiledPattern,
        line: &str,
        captures: Matched<'_>,
        findings: &mut Findings,
    ) -> LineOutcome {
        let outcome = match pattern.kind {
            PatternKind::Location => LineOutcome::Location(index),
            PatternKind::Context => LineOutcome::Context(index),
            PatternKind::Heading => LineOutcome::Heading(index),
            PatternKind::Finding => LineOutcome::Finding(index),
        };
        match pattern.kind {
            PatternKind::Finding if pattern.is_multi_line() => {
                self.open_entry(index, pattern, line, captures, findings);
            }
            PatternKind::Finding
                if self.repeats.is_none()
                    && !findings.accepts(
                        self.severity_of(pattern, captures.group(pattern.groups.severity)),
                    ) =>
            {
                self.count_only(pattern, captures, findings);
            }
            PatternKind::Finding => {
                let mut draft = self.new_draft();
                let file = captures.group(pattern.groups.file);
                let place = gives_place(pattern, file, self.context);
                draft.fill_placed(captures, &pattern.groups, "", place, Reads::All);
                self.emit(pattern, draft, findings);
            }
            PatternKind::Location => self.remember_location(pattern, captures),
            PatternKind::Context => self.set_context(pattern, captures),
            PatternKind::Heading => {
                self.heading = captures
                    .group(pattern.groups.code)
                    .map(|code| code.trim().to_string())
                    .filter(|code| code.len() <= MAX_KEY);
            }
        }
        outcome
    }

    /// Counts the finding `pattern` matched with `captures` that `findings` will not keep: no
    /// diagnostic is built for what will not be kept.
    fn count_only(
        &self,
        pattern: &CompiledPattern,
        captures: Matched<'_>,
        findings: &mut Findings,
    ) {
        let group = |index: Option<usize>| captures.group(index);
        let groups = &pattern.groups;
        let word = group(groups.severity);
        let category = group(groups.category)
            .or(pattern.category.as_deref())
            .or_else(|| group(groups.code).and_then(|code| self.parser.category_of_code(code)));
        let has_code = group(groups.code).is_some() || pattern.code.is_some();
        findings.count(self.severity_of(pattern, word), category, has_code);
    }

    /// Remembers the place a context line names (its file, and its line and column when it gives
    /// them) for the findings after it that name no file.
    fn set_context(&mut self, pattern: &CompiledPattern, captures: Matched<'_>) {
        let groups = &pattern.groups;
        let number = |group: Option<usize>| captures.group(group).and_then(|n| n.parse().ok());
        self.current = captures.group(groups.file).map(|file| Location {
            file: file.to_string(),
            line: number(groups.line),
            column: number(groups.column),
        });
    }

    fn severity_of(&self, pattern: &CompiledPattern, word: Option<&str>) -> Severity {
        word.map(|word| self.parser.severity(word))
            .or(pattern.severity)
            .unwrap_or(Severity::Error)
    }

    fn emit(&mut self, pattern: &CompiledPattern, draft: Draft, findings: &mut Findings) {
        if self.is_repeat(pattern, &draft) {
            self.spare = draft.recycle();
        } else {
            self.store(pattern, draft, findings);
        }
    }

    /// A draft to fill, with the strings of the drafts not kept.
    fn new_draft(&mut self) -> Draft {
        Draft::with_spare(std::mem::take(&mut self.spare))
    }

    /// Stores the finding of `draft` in `findings`, or counts it when they are full.
    fn store(&mut self, pattern: &CompiledPattern, mut draft: Draft, findings: &mut Findings) {
        self.spare = std::mem::take(&mut draft.spare);
        if draft.code.is_none() {
            draft.code.clone_from(&pattern.code);
        }
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
            // Full: counted without building it (dense logs reach this for every line).
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
        let found = Found {
            file,
            line,
            column,
            end_line: draft.end_line,
            end_column: draft.end_column,
            severity: Some(severity),
            code: draft.code,
            message: draft
                .message
                .or_else(|| pattern.message.clone())
                .unwrap_or_default(),
            category,
            body: (!draft.body.is_empty()).then_some(draft.body),
        };
        findings.add(&self.parser.name, self.context, found);
    }

    /// Whether the finding of `draft` is one already read, for a parser that counts a repeated
    /// finding once.
    fn is_repeat(&mut self, pattern: &CompiledPattern, draft: &Draft) -> bool {
        let severity = self.severity_of(pattern, draft.severity.as_deref());
        let Some(repeats) = self.repeats.as_mut() else {
            return false;
        };
        let message = draft.message.as_deref().or(pattern.message.as_deref());
        !repeats.first_time(&Identity {
            file: draft.file.as_deref(),
            line: draft.line,
            column: draft.column,
            severity,
            code: draft.code.as_deref().or(pattern.code.as_deref()),
            message: message.unwrap_or_default(),
        })
    }

    /// Remembers the place a location line gives: for the code it names and for the test the
    /// last heading named (only the first location after a heading counts: the test's own frame,
    /// before the frames it called; with `user_frames`, the first in the user's code).
    fn remember_location(&mut self, pattern: &CompiledPattern, captures: Matched<'_>) {
        let groups = &pattern.groups;
        let Some(file) = captures.group(groups.file) else {
            return;
        };
        // A frame outside the user's code leaves the heading for the next frame.
        if gives_place(pattern, Some(file), self.context) == Place::None {
            return;
        }
        // A location that prints its finding's message is placed by it, and leaves a heading
        // before it for the frame that is its own.
        let message = captures
            .group(groups.message)
            .map(|message| Key::Message(message.to_string()));
        let heading = match message {
            Some(_) => None,
            None => self.heading.take().map(Key::Heading),
        };
        let code = (captures.group(groups.code)).map(|code| Key::Code(code.to_string()));
        if file.len() > MAX_KEY || (heading.is_none() && code.is_none() && message.is_none()) {
            return;
        }
        let number = |group: Option<usize>| captures.group(group).and_then(|n| n.parse().ok());
        let location = Location {
            file: resolve_path(file, &self.context.target, &self.context.cwd_relative).path,
            line: number(groups.line),
            column: number(groups.column),
        };
        // Both keys when a line names its code under a heading (a panic on a test's thread).
        for key in [heading, code, message].into_iter().flatten() {
            self.locations.remember(key, location.clone());
        }
    }
}
