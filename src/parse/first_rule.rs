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

use regex::Regex;
use regex_automata::nfa::thompson::WhichCaptures;
use regex_automata::util::syntax;
use regex_automata::{Anchored, Input, MatchKind, meta};
use regex_syntax::hir::{Dot, Hir, HirKind, Look, Repetition};

/// An ordered list of rules, searched as one.
#[derive(Debug)]
pub enum FirstRule {
    Together {
        /// The rules searched as one, anchored at the start of the line.
        regex: meta::Regex,
        /// The index in the list of each of its patterns.
        index: Vec<usize>,
        /// The rules anchored at the end only, by index in the list.
        at_end: Vec<(usize, Regex)>,
    },
    /// The rules one after another: what they cannot be searched as one (too big together).
    OneByOne(Vec<Regex>),
}

impl FirstRule {
    /// The rules, in the order they are tried.
    pub fn new<'r>(rules: impl IntoIterator<Item = &'r Regex>) -> Self {
        let rules: Vec<Regex> = rules.into_iter().cloned().collect();
        Self::together(&rules).unwrap_or(Self::OneByOne(rules))
    }

    fn together(rules: &[Regex]) -> Option<Self> {
        let mut patterns = Vec::new();
        let mut index = Vec::new();
        let mut at_end = Vec::new();
        for (position, rule) in rules.iter().enumerate() {
            let hir = syntax::parse(rule.as_str()).ok()?;
            let looks = hir.properties();
            if !looks.look_set_prefix().contains(Look::Start)
                && looks.look_set_suffix().contains(Look::End)
            {
                at_end.push((position, rule.clone()));
            } else {
                patterns.push(anchored(hir));
                index.push(position);
            }
        }
        let regex = meta::Regex::builder()
            .configure(
                meta::Config::new()
                    .match_kind(MatchKind::LeftmostFirst)
                    .which_captures(WhichCaptures::Implicit),
            )
            .build_many_from_hir(&patterns)
            .ok()?;
        Some(Self::Together {
            regex,
            index,
            at_end,
        })
    }

    /// The index of the first rule that matches `line`, if any.
    #[inline]
    pub fn first(&self, line: &str) -> Option<usize> {
        match self {
            Self::Together {
                regex,
                index,
                at_end,
            } => {
                let input = Input::new(line).anchored(Anchored::Yes);
                let found = if index.is_empty() {
                    None
                } else {
                    regex
                        .search_half(&input)
                        .map(|hit| index[hit.pattern().as_usize()])
                };
                at_end
                    .iter()
                    .take_while(|(rule, _)| found.is_none_or(|found| *rule < found))
                    .find(|(_, regex)| regex.is_match(line))
                    .map(|(rule, _)| *rule)
                    .or(found)
            }
            Self::OneByOne(rules) => rules.iter().position(|rule| rule.is_match(line)),
        }
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

    fn rules(patterns: &[&str]) -> FirstRule {
        let compiled: Vec<Regex> = patterns.iter().map(|p| Regex::new(p).unwrap()).collect();
        FirstRule::new(&compiled)
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
        let first = rules(&patterns);
        for (line, expected) in table {
            assert_eq!(first.first(line), expected, "{line:?}");
            assert_eq!(one_by_one(&patterns, line), expected, "{line:?}");
        }
    }

    #[test]
    fn a_later_rule_that_matches_earlier_in_the_line_does_not_win() {
        let patterns = ["b$", "^a"];
        assert_eq!(rules(&patterns).first("ab"), Some(0));
        let patterns = ["^ab", "^a"];
        assert_eq!(rules(&patterns).first("ab"), Some(0));
        assert_eq!(rules(&patterns).first("ac"), Some(1));
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
        let first = rules(&patterns);
        for (line, expected) in table {
            assert_eq!(first.first(line), expected, "{line:?}");
            assert_eq!(one_by_one(&patterns, line), expected, "{line:?}");
        }
    }

    #[test]
    fn no_rules_match_nothing() {
        let none: [&str; 0] = [];
        assert_eq!(rules(&none).first("x"), None);
        assert_eq!(rules(&["^a"]).first("b"), None);
    }
}
