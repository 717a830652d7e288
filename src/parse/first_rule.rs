//! Which rule of an ordered list a line matches first, found in one pass over the line.
//!
//! A `regex` parser tries its rules in order and the first that matches takes the line. Trying
//! them one after another, or asking a `RegexSet` for every rule that matches, reads a line many
//! times; one multi-pattern regex with leftmost-first priority reads it once and stops as soon as
//! no rule of higher priority can still match. Every pattern is searched anchored at the line's
//! start: a rule that is not anchored there itself is searched behind a lazy `(?s:.)*?`, so that
//! it matches wherever the rule does. Among the patterns matching from the start, the first in
//! the list wins, which is the rule the parser would have taken.
//!
//! Only which rule matches is asked, not where its match ends, and a line holds no `\n`: a rule's
//! tail that takes the rest of any line (`.*`, `(?P<message>.+)$`) is searched as what it needs of
//! it (nothing, one character), so the search stops where the rule is decided rather than at the
//! end of the line. A rule anchored at the line's end but not at its start (`  \[SC\d{4}\]$`)
//! would keep every search going to the end; it is searched on its own instead, backwards from
//! the end, which takes a few bytes.

use std::sync::OnceLock;

use regex::Regex;

use super::lazy_regex::{LazyRegex, Widened};
use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::nfa::thompson::{self, WhichCaptures};
use regex_automata::util::syntax;
use regex_automata::{Anchored, Input, MatchKind};
use regex_syntax::hir::{Dot, Hir, HirKind, Look, Repetition};

/// An ordered list of rules, searched as one.
#[derive(Debug)]
pub struct FirstRule {
    rules: Vec<LazyRegex>,
    /// The rules as one automaton, their classes read wide: what a [sample](RuleCache::sampled)
    /// searches first. Each automaton is built when first needed; `None` inside when the rules
    /// cannot be one (too big together), and are tried one after another.
    wide: OnceLock<Option<Together>>,
    /// The rules as one automaton, exactly.
    exact: OnceLock<Option<Together>>,
}

/// How many lines a sample searches with a list's wide automaton before its exact one is built.
/// The wide one costs a fraction to build, which is what matters where every parser of the
/// catalogue reads a sample of an output, a few thousand lines, and only once; on a line with a
/// non-ASCII character, a match costs a check.
const EXACT_AFTER: u32 = 4096;

#[derive(Debug, Clone)]
struct Together {
    /// A lazy DFA of the rules anchored at the start of the line (the regex crate's engine for
    /// such searches, without the layers around it, which cost as much on a short line).
    dfa: DFA,
    /// The index in the list of each of its patterns.
    index: Vec<usize>,
    /// The rules anchored at the end only, by index in the list.
    at_end: Vec<usize>,
    /// How much wider than the rules the automaton matches: a rule it finds on a line where it
    /// may be wider is checked.
    widened: Widened,
}

/// What a reader keeps of a [`FirstRule`] between lines: the states of its automata found so
/// far, and how many lines it searched with the wide one. One per list: a cache of one list must
/// not be used with another.
#[derive(Debug)]
pub struct RuleCache {
    wide: Option<Cache>,
    exact: Option<Cache>,
    searched: u32,
}

impl Default for RuleCache {
    /// For reading a whole output: the exact automaton from the first line.
    fn default() -> Self {
        Self {
            wide: None,
            exact: None,
            searched: EXACT_AFTER,
        }
    }
}

impl RuleCache {
    /// For reading a sample of an output: the wide automaton for its first lines.
    pub fn sampled() -> Self {
        Self {
            searched: 0,
            ..Self::default()
        }
    }
}

impl FirstRule {
    /// The rules, in the order they are tried.
    pub fn new<'r>(rules: impl IntoIterator<Item = &'r LazyRegex>) -> Self {
        Self {
            rules: rules.into_iter().cloned().collect(),
            wide: OnceLock::new(),
            exact: OnceLock::new(),
        }
    }

    fn wide(&self) -> Option<&Together> {
        self.wide
            .get_or_init(|| Together::new(&self.rules, Read::Wide))
            .as_ref()
    }

    fn exact(&self) -> Option<&Together> {
        self.exact
            .get_or_init(|| match self.wide.get() {
                // A wide automaton that read nothing wider is the exact one.
                Some(Some(wide)) if wide.widened == Widened::No => Some(wide.clone()),
                _ => Together::new(&self.rules, Read::Exact),
            })
            .as_ref()
    }

    /// The index of the first rule that matches `line`, if any.
    #[inline]
    pub fn first(&self, cache: &mut RuleCache, line: &str) -> Option<usize> {
        let (together, dfa_cache) = if cache.searched >= EXACT_AFTER {
            (self.exact(), &mut cache.exact)
        } else {
            cache.searched += 1;
            (self.wide(), &mut cache.wide)
        };
        let Some(together) = together else {
            return self.one_by_one(line);
        };
        let found = if together.index.is_empty() {
            None
        } else {
            let dfa_cache = dfa_cache.get_or_insert_with(|| together.dfa.create_cache());
            let input = Input::new(line).anchored(Anchored::Yes);
            match together.dfa.try_search_fwd(dfa_cache, &input) {
                Ok(None) => None,
                Ok(Some(hit))
                    if together.widened == Widened::No
                        || (together.widened == Widened::NonAscii && line.is_ascii()) =>
                {
                    Some(together.index[hit.pattern().as_usize()])
                }
                // No rule before the one found matches (the automaton matches what they do),
                // but it may not match itself: the rules from it on (and those anchored at the
                // end) decide.
                Ok(Some(hit)) => {
                    let from = together.index[hit.pattern().as_usize()];
                    return self
                        .rules
                        .iter()
                        .enumerate()
                        .filter(|(rule, _)| *rule >= from || together.at_end.contains(rule))
                        .find(|(_, regex)| regex.is_match(line))
                        .map(|(rule, _)| rule);
                }
                // The automaton stops at a byte it cannot decide on (a Unicode word boundary
                // beside a non-ASCII letter): the rules one by one decide.
                Err(_) => return self.one_by_one(line),
            }
        };
        together
            .at_end
            .iter()
            .take_while(|&&rule| found.is_none_or(|found| rule < found))
            .find(|&&rule| self.rules[rule].is_match(line))
            .copied()
            .or(found)
    }

    fn one_by_one(&self, line: &str) -> Option<usize> {
        self.rules.iter().position(|rule| rule.is_match(line))
    }
}

/// What reading a rule's groups can skip, worked out from the rule when first needed:
/// - its head: the rule without the tail that takes the rest of the line, when that tail is only
///   a `message` group (or no group); it reads the other groups of a line in fewer steps, for a
///   finding whose message is not kept;
/// - whether its `code` group is there, not empty, whenever the rule matches: counting a finding
///   needs only that it has a code, not which (unless a category rule reads the code).
#[derive(Debug, Default)]
pub struct Head(OnceLock<(Option<Regex>, bool)>);

impl Head {
    fn facts(&self, rule: &LazyRegex) -> &(Option<Regex>, bool) {
        self.0
            .get_or_init(|| (head_of(rule), code_always(rule.as_str())))
    }

    /// The head of `rule` (the regex this head was made for), or `rule` itself when it has none;
    /// `rule` is built only then.
    #[inline]
    pub fn of<'r>(&'r self, rule: &'r LazyRegex) -> &'r Regex {
        self.facts(rule).0.as_ref().unwrap_or_else(|| rule.get())
    }

    /// Whether every match of `rule` (the regex this head was made for) has a code: its `code`
    /// group is outside any optional part or alternative, and matches at least one character
    /// and no white space (so that it is never empty once trimmed).
    #[inline]
    pub fn code_always(&self, rule: &LazyRegex) -> bool {
        self.facts(rule).1
    }
}

fn code_always(rule: &str) -> bool {
    let Ok(hir) = syntax::parse(rule) else {
        return false;
    };
    always_there(&hir, "code").is_some_and(|code| {
        code.properties().minimum_len().is_some_and(|len| len > 0) && never_blank(code)
    })
}

/// The group `name` in `hir` when every match of `hir` has it.
fn always_there<'h>(hir: &'h Hir, name: &str) -> Option<&'h Hir> {
    match hir.kind() {
        HirKind::Capture(capture) if capture.name.as_deref() == Some(name) => Some(&capture.sub),
        HirKind::Capture(capture) => always_there(&capture.sub, name),
        HirKind::Concat(items) => items.iter().find_map(|item| always_there(item, name)),
        HirKind::Repetition(repetition) if repetition.min > 0 => {
            always_there(&repetition.sub, name)
        }
        _ => None,
    }
}

/// The characters `str::trim` removes (Unicode's White_Space).
fn blanks() -> impl Iterator<Item = char> {
    ('\t'..='\r')
        .chain(['\u{20}', '\u{85}', '\u{a0}', '\u{1680}'])
        .chain('\u{2000}'..='\u{200a}')
        .chain(['\u{2028}', '\u{2029}', '\u{202f}', '\u{205f}', '\u{3000}'])
}

/// Whether no character `hir` can match is white space.
fn never_blank(hir: &Hir) -> bool {
    use regex_syntax::hir::Class;
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => true,
        HirKind::Literal(literal) => {
            std::str::from_utf8(&literal.0).is_ok_and(|text| !text.chars().any(char::is_whitespace))
        }
        HirKind::Class(Class::Unicode(class)) => {
            let ranges = class.ranges();
            blanks().all(|blank| {
                !ranges
                    .iter()
                    .any(|r| (r.start()..=r.end()).contains(&blank))
            })
        }
        HirKind::Class(Class::Bytes(_)) => false,
        HirKind::Repetition(repetition) => never_blank(&repetition.sub),
        HirKind::Capture(capture) => never_blank(&capture.sub),
        HirKind::Concat(items) | HirKind::Alternation(items) => items.iter().all(never_blank),
    }
}

/// `rule` without its tail, if it has one that only a `message` group (if any) is in. The head's
/// groups keep their numbers: the tail's group is the rule's last.
fn head_of(rule: &LazyRegex) -> Option<Regex> {
    let hir = syntax::parse(rule.as_str()).ok()?;
    let head = without_rest_of_line(hir.clone());
    if head == hir {
        return None;
    }
    let head = super::lazy_regex::build(&head.to_string()).ok()?;
    let full: Vec<Option<&str>> = rule.capture_names().collect();
    let kept: Vec<Option<&str>> = head.capture_names().collect();
    let same_groups = full.get(..kept.len()) == Some(&kept[..])
        && full[kept.len()..]
            .iter()
            .all(|name| *name == Some("message"));
    same_groups.then_some(head)
}

/// How a [`Together`] reads the rules' classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Read {
    Wide,
    Exact,
}

impl Together {
    fn new(rules: &[LazyRegex], read: Read) -> Option<Self> {
        let mut patterns = Vec::new();
        let mut index = Vec::new();
        let mut at_end = Vec::new();
        let mut widened = Widened::No;
        for (position, rule) in rules.iter().enumerate() {
            let (hir, wider) = match read {
                Read::Wide => (rule.wide().0.clone(), rule.wide().1),
                Read::Exact => (syntax::parse(rule.as_str()).ok()?, Widened::No),
            };
            let looks = hir.properties();
            if !looks.look_set_prefix().contains(Look::Start)
                && looks.look_set_suffix().contains(Look::End)
            {
                at_end.push(position);
            } else {
                widened = widened.max(wider);
                patterns.push(anchored(hir));
                index.push(position);
            }
        }
        let nfa = thompson::Compiler::new()
            .configure(thompson::Config::new().which_captures(WhichCaptures::None))
            .build_many_from_hir(&patterns)
            .ok()?;
        let dfa = DFA::builder()
            .configure(
                DFA::config()
                    .match_kind(MatchKind::LeftmostFirst)
                    .unicode_word_boundary(true),
            )
            .build_from_nfa(nfa)
            .ok()?;
        Some(Self {
            dfa,
            index,
            at_end,
            widened,
        })
    }
}

/// A rule (parsed with the regex crate's syntax: Unicode, UTF-8) as a pattern that matches from
/// the start of a line exactly when the rule matches it anywhere.
fn anchored(hir: Hir) -> Hir {
    let hir = without_rest_of_line(hir);
    if hir.properties().look_set_prefix().contains(Look::Start) {
        return hir;
    }
    let anything = Hir::repetition(Repetition {
        min: 0,
        max: None,
        greedy: false,
        sub: Box::new(Hir::dot(Dot::AnyChar)),
    });
    Hir::concat(vec![anything, hir])
}

/// `hir` for a line (no `\n` in it) without the tail that takes the rest of the line: a final
/// `.*` or `.+` (greedy or lazy, in a group or not, before a final `$` or not) becomes what it
/// needs of the line, nothing or one character. What `hir` matches from a line's start is
/// unchanged; only where its match ends is.
fn without_rest_of_line(hir: Hir) -> Hir {
    if !matches!(hir.kind(), HirKind::Concat(_)) {
        return hir;
    }
    let HirKind::Concat(mut items) = hir.into_kind() else {
        unreachable!("a concatenation was matched just above")
    };
    if matches!(items.last().map(Hir::kind), Some(HirKind::Look(Look::End))) {
        if let Some(at_least) = items
            .get(items.len().wrapping_sub(2))
            .and_then(rest_of_line)
        {
            items.truncate(items.len() - 2);
            items.extend((at_least == 1).then(|| Hir::dot(Dot::AnyCharExceptLF)));
        }
    } else if let Some(at_least) = items.last().and_then(rest_of_line) {
        items.pop();
        items.extend((at_least == 1).then(|| Hir::dot(Dot::AnyCharExceptLF)));
    }
    Hir::concat(items)
}

/// For `.*` or `.+` (in capture groups or not): how many characters it needs, 0 or 1.
fn rest_of_line(hir: &Hir) -> Option<u32> {
    match hir.kind() {
        HirKind::Capture(capture) => rest_of_line(&capture.sub),
        HirKind::Repetition(repetition)
            if repetition.max.is_none()
                && repetition.min <= 1
                && (*repetition.sub == Hir::dot(Dot::AnyCharExceptLF)
                    || *repetition.sub == Hir::dot(Dot::AnyChar)) =>
        {
            Some(repetition.min)
        }
        _ => None,
    }
}

#[cfg(test)]
#[path = "first_rule_tests.rs"]
mod tests;
