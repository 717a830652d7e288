use super::*;
use crate::parse::lazy_regex::LazyRegex;

impl FirstRule {
    fn first_of(&self, line: &str) -> Option<usize> {
        self.first(&mut RuleCache::default(), line)
    }

    /// As a sample is searched, with the wide automaton.
    fn first_of_sampled(&self, line: &str) -> Option<usize> {
        self.first(&mut RuleCache::sampled(), line)
    }
}

fn rules(patterns: &[&str]) -> FirstRule {
    let compiled: Vec<LazyRegex> = patterns
        .iter()
        .map(|p| LazyRegex::new(p).unwrap())
        .collect();
    let together = FirstRule::new(&compiled);
    assert!(together.wide().is_some(), "{patterns:?}");
    assert!(together.exact().is_some(), "{patterns:?}");
    together
}

/// The same rules, tried one after another (what a list too big for one automaton does).
fn apart(patterns: &[&str]) -> FirstRule {
    FirstRule {
        rules: patterns
            .iter()
            .map(|p| LazyRegex::new(p).unwrap())
            .collect(),
        wide: OnceLock::from(None),
        exact: OnceLock::from(None),
    }
}

/// Each line of `table` goes to its rule: searched as one, apart, and one at a time.
fn assert_first(patterns: &[&str], table: &[(&str, Option<usize>)]) {
    let first = rules(patterns);
    let apart = apart(patterns);
    for &(line, expected) in table {
        assert_eq!(first.first_of(line), expected, "{line:?}");
        assert_eq!(first.first_of_sampled(line), expected, "sampled: {line:?}");
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
        let lazy = LazyRegex::new(pattern).unwrap();
        let rule = Regex::new(pattern).unwrap();
        let head = Head::default();
        let regex = head.of(&lazy);
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

/// The automaton reads a class's non-ASCII part as "any non-ASCII character" (cheap to build):
/// on a line with such characters its answer is checked, and a rule it takes wrongly gives way to
/// the next one that truly matches, or to none.
#[test]
fn a_class_read_wider_than_it_is_never_takes_a_line_it_does_not_match() {
    let patterns = [
        r"^(?P<file>\w+):(?P<line>\d+)",
        r"^\d+ passed",
        r"^(?P<file>[^\s:]+):",
        r"^[a-z\p{Greek}]+!",
        r"\bok\b",
        r"(?i)^ß+$",
    ];
    let table = [
        ("été:12", Some(0)),
        ("été:١٢", Some(0)),
        ("été:¹²", Some(2)),
        ("a→b:12", Some(2)),
        ("١٢ passed", Some(1)),
        ("¹² passed", None),
        ("αβγ!", Some(3)),
        ("abc!", Some(3)),
        ("абв!", None),
        ("éok", None),
        ("é ok", Some(4)),
        ("book", None),
        ("it is ok.", Some(4)),
        ("ẞß", Some(5)),
        ("SS", None),
        ("plain ascii line", None),
        ("src:3", Some(0)),
    ];
    assert_first(&patterns, &table);
}

/// A sample long enough goes on with the exact automaton, and its answers stay the same.
#[test]
fn a_long_sample_changes_automaton_without_changing_an_answer() {
    let first = rules(&[r"^(?P<file>\w+):(?P<line>\d+)", r"^\d+ passed", "^x"]);
    let mut cache = RuleCache::sampled();
    for turn in 0..EXACT_AFTER + 8 {
        for (line, expected) in [("été:١٢", Some(0)), ("¹² passed", None), ("x", Some(2))] {
            assert_eq!(first.first(&mut cache, line), expected, "{turn}: {line:?}");
        }
    }
    assert!(cache.wide.is_some() && cache.exact.is_some());
}
