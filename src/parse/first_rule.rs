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
use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::nfa::thompson::{self, WhichCaptures};
use regex_automata::util::syntax;
use regex_automata::{Anchored, Input, MatchKind};
use regex_syntax::hir::{Dot, Hir, HirKind, Look, Repetition};

/// An ordered list of rules, searched as one.
#[derive(Debug)]
pub struct FirstRule {
    rules: Vec<Regex>,
    /// The rules as one automaton; `None` when they cannot be (too big together), and are tried
    /// one after another.
    together: Option<Together>,
}

#[derive(Debug)]
struct Together {
    /// A lazy DFA of the rules anchored at the start of the line (the regex crate's engine for
    /// such searches, without the layers around it, which cost as much on a short line).
    dfa: DFA,
    /// The index in the list of each of its patterns.
    index: Vec<usize>,
    /// The rules anchored at the end only, by index in the list.
    at_end: Vec<usize>,
}

/// What a reader keeps of a [`FirstRule`] between lines: the states of its automaton found so
/// far. One per list: a cache of one list must not be used with another.
#[derive(Debug, Default)]
pub struct RuleCache(Option<Cache>);

impl FirstRule {
    /// The rules, in the order they are tried.
    pub fn new<'r>(rules: impl IntoIterator<Item = &'r Regex>) -> Self {
        let rules: Vec<Regex> = rules.into_iter().cloned().collect();
        let together = Together::new(&rules);
        Self { rules, together }
    }

    /// The index of the first rule that matches `line`, if any.
    #[inline]
    pub fn first(&self, cache: &mut RuleCache, line: &str) -> Option<usize> {
        let Some(together) = &self.together else {
            return self.one_by_one(line);
        };
        let found = if together.index.is_empty() {
            None
        } else {
            let cache = cache.0.get_or_insert_with(|| together.dfa.create_cache());
            let input = Input::new(line).anchored(Anchored::Yes);
            match together.dfa.try_search_fwd(cache, &input) {
                Ok(hit) => hit.map(|hit| together.index[hit.pattern().as_usize()]),
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
    fn facts(&self, rule: &Regex) -> &(Option<Regex>, bool) {
        self.0
            .get_or_init(|| (head_of(rule), code_always(rule.as_str())))
    }

    /// The head of `rule` (the regex this head was made for), or `rule` itself when it has none.
    #[inline]
    pub fn of<'r>(&'r self, rule: &'r Regex) -> &'r Regex {
        self.facts(rule).0.as_ref().unwrap_or(rule)
    }

    /// Whether every match of `rule` (the regex this head was made for) has a code: its `code`
    /// group is outside any optional part or alternative, and matches at least one character
    /// and no white space (so that it is never empty once trimmed).
    #[inline]
    pub fn code_always(&self, rule: &Regex) -> bool {
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
fn head_of(rule: &Regex) -> Option<Regex> {
    let hir = syntax::parse(rule.as_str()).ok()?;
    let head = without_rest_of_line(hir.clone());
    if head == hir {
        return None;
    }
    let head = Regex::new(&head.to_string()).ok()?;
    let full: Vec<Option<&str>> = rule.capture_names().collect();
    let kept: Vec<Option<&str>> = head.capture_names().collect();
    let same_groups = full.get(..kept.len()) == Some(&kept[..])
        && full[kept.len()..]
            .iter()
            .all(|name| *name == Some("message"));
    same_groups.then_some(head)
}

impl Together {
    fn new(rules: &[Regex]) -> Option<Self> {
        let mut patterns = Vec::new();
        let mut index = Vec::new();
        let mut at_end = Vec::new();
        for (position, rule) in rules.iter().enumerate() {
            let hir = syntax::parse(rule.as_str()).ok()?;
            let looks = hir.properties();
            if !looks.look_set_prefix().contains(Look::Start)
                && looks.look_set_suffix().contains(Look::End)
            {
                at_end.push(position);
            } else {
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
        Some(Self { dfa, index, at_end })
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
mod tests {
    use super::*;

    impl FirstRule {
        fn first_of(&self, line: &str) -> Option<usize> {
            self.first(&mut RuleCache::default(), line)
        }
    }

    fn rules(patterns: &[&str]) -> FirstRule {
        let compiled: Vec<Regex> = patterns.iter().map(|p| Regex::new(p).unwrap()).collect();
        let together = FirstRule::new(&compiled);
        assert!(together.together.is_some(), "{patterns:?}");
        together
    }

    /// The same rules, tried one after another (what a list too big for one automaton does).
    fn apart(patterns: &[&str]) -> FirstRule {
        FirstRule {
            rules: patterns.iter().map(|p| Regex::new(p).unwrap()).collect(),
            together: None,
        }
    }

    /// Each line of `table` goes to its rule: searched as one, apart, and one at a time.
    fn assert_first(patterns: &[&str], table: &[(&str, Option<usize>)]) {
        let first = rules(patterns);
        let apart = apart(patterns);
        for &(line, expected) in table {
            assert_eq!(first.first_of(line), expected, "{line:?}");
            assert_eq!(apart.first_of(line), expected, "{line:?}");
            assert_eq!(one_by_one(patterns, line), expected, "{line:?}");
        }
    }

    /// The rule a one-at-a-time search takes: the first in the list that matches anywhere.
    fn one_by_one(patterns: &[&str], line: &str) -> Option<usize> {
        patterns
            .iter()
            .position(|p| Regex::new(p).unwrap().is_match(line))
    }

    #[test]
    fn the_first_rule_that_matches_wins_wherever_it_matches() {
        let patterns = [
            "^$",
            r"^\s*--> (?P<file>.+?):(?P<line>\d+)$",
            r" \[SC\d{4}\]$",
            "^warning: (?P<message>.+)$",
            "^warn",
            r"(?m)^x$",
            "error|^note",
            r"\bé\b",
            "(?x) q  # a comment",
            "",
        ];
        let table = [
            ("", Some(0)),
            ("  --> src/a b.rs:3", Some(1)),
            ("src/a.sh:1:1: note: x [SC2086]", Some(2)),
            ("warning: unused", Some(3)),
            ("warning unused", Some(4)),
            ("x", Some(5)),
            ("an error here", Some(6)),
            ("note: see", Some(6)),
            ("prix é ok", Some(7)),
            ("a q", Some(8)),
            ("anything", Some(9)),
        ];
        assert_first(&patterns, &table);
    }

    #[test]
    fn a_later_rule_that_matches_earlier_in_the_line_does_not_win() {
        let patterns = ["b$", "^a"];
        assert_eq!(rules(&patterns).first_of("ab"), Some(0));
        let patterns = ["^ab", "^a"];
        assert_eq!(rules(&patterns).first_of("ab"), Some(0));
        assert_eq!(rules(&patterns).first_of("ac"), Some(1));
    }

    #[test]
    fn a_tail_that_takes_the_rest_of_the_line_still_decides_the_same() {
        let patterns = [
            r"^\s*= help: visit \S*#(?P<code>[a-z_]+)$",
            r"^\s*= (?P<message>.+)$",
            "^note: .*",
            "^help: (?:.+?)",
            r"^(?P<file>[^:]+):(?P<line>\d+)$",
            "^x(?s:.)+$",
            ".+",
        ];
        let table = [
            ("  = help: visit https://a.io/#needless_return", Some(0)),
            ("  = help: visit https://a.io/#needless_return!", Some(1)),
            ("  = note: `#[warn(x)]` on by default", Some(1)),
            ("  = ", Some(6)),
            ("note: ", Some(2)),
            ("help: ", Some(6)),
            ("help: z", Some(3)),
            ("src/a.rs:12", Some(4)),
            ("src/a.rs:12x", Some(6)),
            ("x", Some(6)),
            ("xy", Some(5)),
            ("", None),
        ];
        assert_first(&patterns, &table);
    }

    #[test]
    fn a_head_reads_the_same_groups_but_the_message() {
        let table = [
            (
                r"^(?P<file>[^:]+):(?P<line>\d+): (?P<severity>error|warning)(?:\[(?P<code>\w+)\])?: (?P<message>.+)$",
                "src/a b.rs:12: warning[W1]: x: y",
                true,
            ),
            (r"^(?P<file>.+):(?P<message>.+)$", "a:b:c", true),
            (r"^(?P<file>.+?):(?P<message>.+)$", "a:b:c", true),
            (r"^(?P<severity>error|warning): .*", "error: x", true),
            (r"^(?P<file>.+):(?P<code>.+)$", "a:b", false),
            (r"^(?P<file>[^:]+):(?P<line>\d+)$", "a:1", false),
        ];
        for (pattern, line, has_head) in table {
            let rule = Regex::new(pattern).unwrap();
            let head = Head::default();
            let regex = head.of(&rule);
            assert_eq!(regex.as_str() != rule.as_str(), has_head, "{pattern}");
            let (full, part) = (rule.captures(line).unwrap(), regex.captures(line).unwrap());
            for (index, name) in rule.capture_names().enumerate().skip(1) {
                if name != Some("message") {
                    assert_eq!(
                        full.get(index).map(|m| m.range()),
                        part.get(index).map(|m| m.range()),
                        "{pattern}: {name:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_code_is_always_there_only_outside_optional_parts_and_never_blank() {
        let table = [
            (r"#(?P<code>[a-z0-9_]+)$", true),
            (r"^x (?P<code>E\d{4}): (?P<message>.+)$", true),
            (r"(?:\[(?P<code>E\d{4})\])?: ", false),
            (r"a|(?P<code>b)", false),
            (r"(?P<code>[a-z]*)", false),
            (r"(?P<code>\S+)", true),
            (r"(?P<code>[^\]]+)", false),
            (r"(?P<code>x y)", false),
            (r"(?:(?P<code>\w+):)+", true),
            (r"(?P<message>.+)", false),
        ];
        for (pattern, always) in table {
            assert_eq!(code_always(pattern), always, "{pattern}");
        }
    }

    #[test]
    fn the_blanks_are_every_white_space_character() {
        let every: Vec<char> = ('\0'..=char::MAX).filter(|c| c.is_whitespace()).collect();
        assert_eq!(blanks().collect::<Vec<_>>(), every);
    }

    #[test]
    fn lines_with_non_ascii_characters_go_to_the_same_rules() {
        let patterns = [
            r"^a.b$",
            r"^x ❯ (?P<file>\S+)",
            r"^\s*\d+\s*\|",
            "^a",
            r"^[^\s:]+:",
        ];
        let table = [
            ("aéb", Some(0)),
            ("axb", Some(0)),
            ("ax", Some(3)),
            ("aé", Some(3)),
            ("x ❯ été.js", Some(1)),
            ("x > a.js", None),
            ("\u{a0}12 | é", Some(2)),
            ("١٢ |", Some(2)),
            ("prix_été: 3", Some(4)),
            ("prix été: 3", None),
        ];
        assert_first(&patterns, &table);
    }

    #[test]
    fn no_rules_match_nothing() {
        let none: [&str; 0] = [];
        assert_eq!(rules(&none).first_of("x"), None);
        assert_eq!(rules(&["^a"]).first_of("b"), None);
    }
}
