//! The multi-line entries of a `regex` session: the line that opens one, the lines that continue
//! it (its end and continuation rules), and its close.

use regex::{Captures, Regex};

use super::RegexSession;
use crate::parse::Findings;
use crate::parse::draft::{Draft, Groups, OpenEntry, Reads};
use crate::parse::first_rule::Head;
use crate::parse::frames::{Place, gives_place};
use crate::parse::regex_parser::{CompiledPattern, EntryLine, EntryRules};

/// A multi-line entry is closed after this many lines, whatever follows.
const MAX_ENTRY_LINES: usize = 1_000;

/// One rule of an entry (its end or a continuation), as reading a line with it needs.
struct EntryRule<'p> {
    regex: &'p Regex,
    head: &'p Head,
    groups: &'p Groups,
    code_prefix: &'p str,
    wraps: bool,
    same_place: bool,
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
        captures: &Captures<'_>,
        findings: &Findings,
    ) {
        let word = (pattern.groups.severity)
            .and_then(|group| captures.get(group))
            .map(|m| m.as_str().trim())
            .filter(|word| !word.is_empty());
        let reads = if word.is_none() || findings.accepts(self.severity_of(pattern, word)) {
            Reads::All
        } else if self.repeats.is_some() {
            // Whether it is a repeat, and so whether it counts, its place and message tell.
            Reads::Identity
        } else if pattern.continuations.iter().any(|c| c.same_place) {
            Reads::CountingAndPlace
        } else {
            Reads::Counting
        };
        let place = match reads {
            Reads::Counting => Place::None,
            _ => gives_place(pattern, captures, self.context),
        };
        let mut draft = Draft::default();
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
            if !self.take(line, pattern, &entry_rule) {
                continue;
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
            Reads::All => rule.regex,
            Reads::Identity if open.draft.message.is_none() || rule.wraps => rule.regex,
            _ => rule.head.of(rule.regex),
        };
        // Only what adds to the finding is read, unless the rule must see the place first.
        if !rule.same_place && !open.draft.wants(rule.groups, open.reads, rule.wraps) {
            return true;
        }
        let Some(captures) = regex.captures(line) else {
            return false;
        };
        if rule.same_place && !open.draft.at_place_of(&captures, rule.groups) {
            return false;
        }
        let place = match open.reads {
            Reads::Counting => Place::None,
            _ => gives_place(pattern, &captures, self.context),
        };
        open.read(&captures, rule.groups, rule.code_prefix, rule.wraps, place);
        true
    }

    pub(super) fn close_entry(&mut self, findings: &mut Findings) {
        if let Some(open) = self.open.take() {
            let pattern = &self.parser.patterns[open.pattern];
            self.emit(pattern, open.draft, findings);
        }
    }
}
