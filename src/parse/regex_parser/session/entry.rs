//! The multi-line entries of a `regex` session: the line that opens one, the lines that continue
//! it (its end and continuation rules), and its close.

use crate::parse::lazy_regex::LazyRegex;

use super::RegexSession;
use crate::parse::Findings;
use crate::parse::first_rule::Head;
use crate::parse::matched::{Matched, find};
use crate::parse::regex_parser::draft::{Groups, OpenEntry, Reads};
use crate::parse::regex_parser::frames::{Place, gives_place};
use crate::parse::regex_parser::{CompiledPattern, EntryLine, EntryRules};

/// A multi-line entry is closed after this many lines, whatever follows.
const MAX_ENTRY_LINES: usize = 1_000;

/// One rule of an entry (its end or a continuation), as reading a line with it needs.
struct EntryRule<'p> {
    regex: &'p LazyRegex,
    head: &'p Head,
    groups: &'p Groups,
    code_prefix: &'p str,
    wraps: bool,
    same_place: bool,
    drops: bool,
}

impl<'p> EntryRule<'p> {
    /// The rule `rule` of `pattern`'s entry; `None` for a line rule of the parser.
    fn of(pattern: &'p CompiledPattern, rules: &'p EntryRules, rule: EntryLine) -> Option<Self> {
        match rule {
            EntryLine::End => Some(Self {
                regex: pattern.end.as_ref()?,
                head: &pattern.end_head,
                groups: &rules.end_groups,
                code_prefix: "",
                wraps: false,
                same_place: false,
                drops: false,
            }),
            EntryLine::Continuation(rule) => {
                let c = &pattern.continuations[rule];
                Some(Self {
                    regex: &c.regex,
                    head: &c.head,
                    groups: &c.groups,
                    code_prefix: &c.code_prefix,
                    wraps: c.wraps,
                    same_place: c.same_place,
                    drops: c.drops,
                })
            }
            EntryLine::Outside(_) => None,
        }
    }
}

impl RegexSession<'_> {
    /// Starts a multi-line entry with the line `pattern`, the one at `index`, matched with
    /// `captures`. Nothing is stored in `findings` while the entry is open, so whether they will
    /// take it is known now when its severity is (a continuation may give it otherwise).
    pub(super) fn open_entry(
        &mut self,
        index: usize,
        pattern: &CompiledPattern,
        line: &str,
        captures: Matched<'_>,
        findings: &Findings,
    ) {
        let word = (captures.group(pattern.groups.severity))
            .map(str::trim)
            .filter(|word| !word.is_empty());
        let stored = word.is_none() || findings.accepts(self.severity_of(pattern, word));
        let reads = if self.repeats.is_some() {
            // Whether it is a repeat, and so whether it counts, its place and message tell; one
            // that may be stored is read whole once it proves new.
            if stored {
                self.replay.start(line);
            }
            Reads::Identity
        } else if stored {
            Reads::All
        } else if pattern.continuations.iter().any(|c| c.same_place) {
            Reads::CountingAndPlace
        } else {
            Reads::Counting
        };
        let place = match reads {
            Reads::Counting => Place::None,
            _ => gives_place(pattern, captures.group(pattern.groups.file), self.context),
        };
        let mut draft = self.new_draft();
        draft.fill_placed(captures, &pattern.groups, "", place, reads);
        self.open = Some(OpenEntry {
            pattern: index,
            draft,
            lines: 1,
            reads,
        });
    }

    /// Feeds `line` to the open multi-line entry, whose rule `first` matched it first, and
    /// returns the entry's pattern; `None` when no rule of the entry takes the line (a
    /// `same_place` continuation may refuse it): the entry is then emitted. Only the taking
    /// rule's groups are read, and only when they add to the finding.
    pub(super) fn continue_entry(
        &mut self,
        line: &str,
        first: EntryLine,
        findings: &mut Findings,
    ) -> Option<usize> {
        let index = self.open.as_ref()?.pattern;
        let pattern = &self.parser.patterns[index];
        let rules = self.parser.entry_rules(index)?;
        let open = self.open.as_mut()?;
        open.lines += 1;
        // The first rule matched; a later one is tried only when the first refused the line.
        let later = (0..rules.own()).map(|rule| rules.rule(rule));
        let candidates =
            std::iter::once(first).chain(later.skip_while(move |&rule| rule != first).skip(1));
        for (position, rule) in candidates.enumerate() {
            let Some(entry_rule) = EntryRule::of(pattern, rules, rule) else {
                break;
            };
            if position > 0 && !entry_rule.regex.is_match(line) {
                continue;
            }
            if self.replay.active && !self.replay.fits(line) {
                self.read_whole();
            }
            if !self.take(line, pattern, &entry_rule) {
                continue;
            }
            if entry_rule.drops {
                // Not a finding after all: nothing of it was stored.
                if let Some(open) = self.open.take() {
                    self.spare = open.draft.recycle();
                }
                self.replay.active = false;
                return Some(index);
            }
            if self.replay.active {
                self.replay.keep(line, rule);
            }
            let open = self.open.as_ref()?;
            if rule == EntryLine::End || open.lines >= MAX_ENTRY_LINES {
                self.close_entry(findings);
            }
            return Some(index);
        }
        self.close_entry(findings);
        None
    }

    /// Whether the open entry of `pattern` takes `line`, which `rule` matched; reads from it what
    /// adds to the finding.
    fn take(&mut self, line: &str, pattern: &CompiledPattern, rule: &EntryRule<'_>) -> bool {
        let no_category_rule = self.parser.code_categories.is_empty();
        let Some(open) = self.open.as_mut() else {
            return false;
        };
        // Counting needs to know that an entry has a code, not which, unless a category rule
        // reads it or the code tells the entry from a repeat: a rule whose code is there
        // whenever it matches tells without reading the line (the code is left empty; the entry
        // is only counted).
        if matches!(open.reads, Reads::Counting | Reads::CountingAndPlace)
            && rule.groups.code.is_some()
            && open.draft.code.is_none()
            && no_category_rule
            && rule.head.code_always(rule.regex)
        {
            open.draft.code = Some(String::new());
        }
        // An entry that will not be stored needs no message, unless it tells it from another.
        let regex = match open.reads {
            Reads::All => rule.regex.get(),
            Reads::Identity if open.draft.message.is_none() || rule.wraps => rule.regex.get(),
            _ => rule.head.of(rule.regex),
        };
        // Only what adds to the finding is read, unless the rule must see the place first.
        if !rule.same_place && !open.draft.wants(rule.groups, open.reads, rule.wraps) {
            return true;
        }
        let Some(found) = find(self.memory.as_mut(), regex, line) else {
            return false;
        };
        let captures = found.matched();
        if rule.same_place && !open.draft.at_place_of(captures, rule.groups) {
            return false;
        }
        let place = match open.reads {
            Reads::Counting => Place::None,
            _ => gives_place(pattern, captures.group(rule.groups.file), self.context),
        };
        open.read(captures, rule.groups, rule.code_prefix, rule.wraps, place);
        true
    }

    pub(super) fn close_entry(&mut self, findings: &mut Findings) {
        if self.replay.active {
            // Read for its identity only: a repeat is left out; a new finding is read whole.
            let Some(open) = self.open.take() else {
                self.replay.active = false;
                return;
            };
            let pattern = &self.parser.patterns[open.pattern];
            if self.is_repeat(pattern, &open.draft) {
                self.replay.active = false;
                self.spare = open.draft.recycle();
                return;
            }
            self.open = Some(open);
            self.read_whole();
            if let Some(open) = self.open.take() {
                self.store(pattern, open.draft, findings);
            }
            return;
        }
        if let Some(open) = self.open.take() {
            let pattern = &self.parser.patterns[open.pattern];
            self.emit(pattern, open.draft, findings);
        }
    }

    /// Reads the open entry, so far read only for its identity, again from its kept lines, whole;
    /// it is read whole from here on.
    fn read_whole(&mut self) {
        let Some(open) = self.open.take() else {
            return;
        };
        let (index, lines) = (open.pattern, open.lines);
        self.spare = open.draft.recycle();
        let parser = self.parser;
        let pattern = &parser.patterns[index];
        let replay = std::mem::take(&mut self.replay);
        let mut draft = self.new_draft();
        if let Some(found) = find(self.memory.as_mut(), &pattern.regex, replay.opening()) {
            let captures = found.matched();
            let place = gives_place(pattern, captures.group(pattern.groups.file), self.context);
            draft.fill_placed(captures, &pattern.groups, "", place, Reads::All);
        }
        self.open = Some(OpenEntry {
            pattern: index,
            draft,
            lines,
            reads: Reads::All,
        });
        if let Some(rules) = parser.entry_rules(index) {
            for (rule, line) in replay.lines() {
                if let Some(entry_rule) = EntryRule::of(pattern, rules, rule) {
                    self.take(line, pattern, &entry_rule);
                }
            }
        }
        self.replay = replay;
        self.replay.active = false;
    }
}
