//! Table tests for the `regex` parser kind's line rules.

use std::path::PathBuf;

use super::super::{ParseContext, definition, parse_bytes};
use crate::model::{Diagnostic, Severity};

fn parse(definition_text: &str, input: &str) -> crate::parse::Findings {
    let parser = definition::compile("test.toml", definition_text).unwrap();
    let context = ParseContext {
        target: PathBuf::from("/repo"),
        cwd_relative: String::new(),
        sample: false,
    };
    parse_bytes(&parser, &context, input.as_bytes())
}

fn brief(d: &Diagnostic) -> String {
    format!(
        "{}:{}:{} {} {} {} [{}]",
        d.file.as_deref().unwrap_or("-"),
        d.line.map_or("-".into(), |n| n.to_string()),
        d.column.map_or("-".into(), |n| n.to_string()),
        d.severity.as_str(),
        d.code.as_deref().unwrap_or("-"),
        d.message,
        d.category.as_deref().unwrap_or("-"),
    )
}

const RUSTC_LIKE: &str = r#"
name = "rustc-like"
[[skip]]
regex = '^error: could not compile'
[[pattern]]
regex = '^(?P<severity>error|warning)(?:\[(?P<code>[^\]]+)\])?: (?P<message>.+)$'
end = '^$'
[[pattern.continuation]]
regex = '^\s*--> (?P<file>.+):(?P<line>\d+):(?P<column>\d+)$'
[[pattern.continuation]]
regex = '^\s*= help: for further information visit \S+#(?P<code>[a-z_]+)$'
code_prefix = "clippy::"
[[pattern.continuation]]
regex = '^\s*= (?P<message>.+)$'
[[pattern.continuation]]
regex = '^\s*(?:\d+\s*)?\|'
"#;

#[test]
fn multi_line_entries() {
    let input = "error[E0308]: mismatched types\n --> src/a.rs:5:5\n  |\n5 |     x\n  |     ^ expected\n\n\
                 warning: unneeded return\n --> src/b.rs:2:5\n  = note: on by default\n  = help: for further information visit https://x/index.html#needless_return\n\
                 error: could not compile `x`\n\
                 warning: no location at the end";
    let findings = parse(RUSTC_LIKE, input);
    let got: Vec<String> = findings.diagnostics().iter().map(brief).collect();
    assert_eq!(
        got,
        [
            "src/a.rs:5:5 error E0308 mismatched types [-]",
            "src/b.rs:2:5 warning clippy::needless_return unneeded return [-]",
            "-:-:- warning - no location at the end [-]",
        ]
    );
    assert_eq!(
        findings.diagnostics()[1].body.as_deref(),
        Some("note: on by default")
    );
}

#[test]
fn context_lines_name_the_file() {
    let definition = r#"
name = "stylish-like"
[[pattern]]
kind = "context"
regex = '^(?P<file>/\S.*)$'
[[pattern]]
regex = '^\s+(?P<line>\d+):(?P<column>\d+)\s+(?P<severity>error|warning)\s+(?P<message>.+?)\s{2,}(?P<code>\S+)$'
"#;
    let input = "/repo/src/a.js\n  1:7  error  'x' is unused  no-unused-vars\n\n/elsewhere/b.js\n  3:1  warning  Unexpected console  no-console\n";
    let findings = parse(definition, input);
    let got: Vec<String> = findings.diagnostics().iter().map(brief).collect();
    assert_eq!(
        got,
        [
            "src/a.js:1:7 error no-unused-vars 'x' is unused [-]",
            "/elsewhere/b.js:3:1 warning no-console Unexpected console [-]",
        ]
    );
    assert!(!findings.diagnostics()[0].outside_target);
    assert!(findings.diagnostics()[1].outside_target);
}

#[test]
fn severity_aliases_and_code_categories() {
    let definition = r#"
name = "flake8-like"
[severity]
C = "warning"
I = "note"
[[category_rule]]
code = 'E9\d\d'
category = "syntax"
[[category_rule]]
code = 'TS\d+'
category = "types"
[[pattern]]
regex = '^(?P<file>[^:]+):(?P<line>\d+): (?P<code>(?P<severity>[A-Z])[A-Z]*\d+) (?P<message>.+)$'
"#;
    // (line, severity, category)
    let table = [
        ("a.py:1: E999 SyntaxError", Severity::Error, Some("syntax")),
        ("a.py:2: E501 line too long", Severity::Error, None),
        ("a.py:3: C901 too complex", Severity::Warning, None),
        ("a.py:4: I001 import order", Severity::Note, None),
        ("a.py:5: TS2322 mismatch", Severity::Error, Some("types")),
        ("a.py:6: E9999 four digits", Severity::Error, None),
    ];
    for (line, severity, category) in table {
        let findings = parse(definition, line);
        let diagnostic = &findings.diagnostics()[0];
        assert_eq!(diagnostic.severity, severity, "{line}");
        assert_eq!(diagnostic.category.as_deref(), category, "{line}");
    }
}

#[test]
fn an_entry_is_closed_by_a_line_it_does_not_own() {
    let definition = r#"
name = "x"
[[pattern]]
regex = '^E: (?P<message>.+)$'
[[pattern.continuation]]
regex = '^  at (?P<file>\S+):(?P<line>\d+)$'
"#;
    let findings = parse(
        definition,
        "E: one\n  at a.c:1\nE: two\nnoise\n  at b.c:9\nE: three",
    );
    let got: Vec<String> = findings.diagnostics().iter().map(brief).collect();
    assert_eq!(
        got,
        [
            "a.c:1:- error - one [-]",
            "-:-:- error - two [-]",
            "-:-:- error - three [-]"
        ]
    );
}

#[test]
fn summary_counts_add_up_across_lines() {
    let definition = r#"
name = "x"
[[pattern]]
regex = '^FAIL (?P<code>\S+)$'
message = "failed"
[[summary]]
regex = '^(?P<passed>\d+) passed, (?P<failed>\d+) failed, (?P<skipped>\d+) skipped$'
"#;
    let findings = parse(
        definition,
        "FAIL a\n1 passed, 1 failed, 0 skipped\nFAIL b\n2 passed, 1 failed, 3 skipped\n",
    );
    let tests = findings.tests.unwrap();
    assert_eq!((tests.passed, tests.failed, tests.skipped), (3, 2, 3));
    assert_eq!(findings.expected.unwrap().error, Some(2));
    assert_eq!(findings.counts.error, 2);
}

#[test]
fn context_lines_may_name_the_line_too() {
    let definition = r#"
name = "tty-like"
[[pattern]]
kind = "context"
regex = '^In (?P<file>.+) line (?P<line>\d+):$'
[[pattern]]
regex = '^\s*\^-* (?P<code>SC\d+) \((?P<severity>\w+)\): (?P<message>.+)$'
"#;
    let input = "In a.sh line 13:\necho $x\n  ^-- SC2154 (warning): x unset.\n  ^-- SC2004 (style): no $.\n";
    let findings = parse(definition, input);
    let got: Vec<String> = findings.diagnostics().iter().map(brief).collect();
    assert_eq!(
        got,
        [
            "a.sh:13:- warning SC2154 x unset. [-]",
            "a.sh:13:- error SC2004 no $. [-]",
        ]
    );
}

const HEADED: &str = r#"
name = "headed"
[[pattern]]
regex = '^_{3,} (?P<code>.+?) _{3,}$'
kind = "heading"
[[pattern]]
regex = '^(?P<file>[^\s:][^:]*\.py):(?P<line>\d+): (?:\w+)?$'
kind = "location"
[[pattern]]
regex = '^(?P<file>[^\s:]+\.py):(?P<line>\d+): (?P<message>\S.*)$'
kind = "location"
[[pattern]]
regex = '^(?:FAILED|ERROR) (?P<code>(?P<file>[^\s:]+)::.+?)(?: - (?P<message>.*))?$'
severity = "error"
message = "test failed"
"#;

#[test]
fn a_heading_names_the_test_the_next_location_places() {
    // (log, the finding it places, as `brief` shows it)
    let cases: &[(&str, &str)] = &[
        // A plain test: its own frame.
        (
            "___ test_a ___\nt/test_x.py:7: AssertionError\nFAILED t/test_x.py::test_a - boom\n",
            "t/test_x.py:7:- error t/test_x.py::test_a boom [-]",
        ),
        // A method: the heading joins class and name with a dot.
        (
            "___ TestCart.test_total ___\nt/test_x.py:12: \nFAILED t/test_x.py::TestCart::test_total\n",
            "t/test_x.py:12:- error t/test_x.py::TestCart::test_total test failed [-]",
        ),
        // Parameters with dots in them.
        (
            "___ test_r[2/1-3.0] ___\nt/test_x.py:34: AssertionError\nFAILED t/test_x.py::test_r[2/1-3.0]\n",
            "t/test_x.py:34:- error t/test_x.py::test_r[2/1-3.0] test failed [-]",
        ),
        // Only the first frame counts: the test's, not the app code it called.
        (
            "___ test_a ___\nt/test_x.py:20: \napp/calc.py:19: AttributeError\nFAILED t/test_x.py::test_a\n",
            "t/test_x.py:20:- error t/test_x.py::test_a test failed [-]",
        ),
        // With no frame in the test's own file, the first one under its heading places it
        // there: an error at setup or teardown, in a fixture of a conftest.py.
        (
            "___ test_a ___\nconftest.py:3: \nERROR t/test_x.py::test_a\n",
            "conftest.py:3:- error t/test_x.py::test_a test failed [-]",
        ),
        // pytest --tb=line: no heading, one "path:line: message" line per failure, which the
        // summary's message places, each line once, in order.
        (
            "t/test_x.py:7: assert 1 == 2\nFAILED t/test_x.py::test_a - assert 1 == 2\n",
            "t/test_x.py:7:- error t/test_x.py::test_a assert 1 == 2 [-]",
        ),
        // A location with no heading before it places nothing.
        (
            "t/test_x.py:7: AssertionError\nFAILED t/test_x.py::test_a\n",
            "t/test_x.py:-:- error t/test_x.py::test_a test failed [-]",
        ),
        // A name that is only the end of another test's name does not match it.
        (
            "___ a ___\nt/test_x.py:7: \nFAILED t/test_x.py::test_a\n",
            "t/test_x.py:-:- error t/test_x.py::test_a test failed [-]",
        ),
    ];
    for (log, expected) in cases {
        let findings = parse(HEADED, log);
        let briefs: Vec<String> = findings.diagnostics().iter().map(brief).collect();
        assert_eq!(briefs, [*expected], "{log}");
    }
}

#[test]
fn two_files_with_a_test_of_the_same_name_keep_their_own_lines() {
    let log = "___ test_a ___\nt/test_x.py:7: \n___ test_a ___\nt/test_y.py:9: \n\
               FAILED t/test_x.py::test_a\nFAILED t/test_y.py::test_a\n";
    let findings = parse(HEADED, log);
    let lines: Vec<Option<u32>> = findings.diagnostics().iter().map(|d| d.line).collect();
    assert_eq!(lines, [Some(7), Some(9)]);
}

#[test]
fn a_location_without_a_code_needs_a_heading_pattern() {
    let without_heading = r#"
name = "x"
[[pattern]]
regex = '^(?P<file>\S+):(?P<line>\d+): $'
kind = "location"
"#;
    let error = definition::compile("x.toml", without_heading)
        .unwrap_err()
        .to_string();
    assert!(error.contains("needs a heading pattern"), "{error}");
    let heading_without_code =
        "name = \"x\"\n[[pattern]]\nregex = '^___ (.+) ___$'\nkind = \"heading\"\n";
    let error = definition::compile("x.toml", heading_without_code)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("a heading pattern needs a (?P<code>"),
        "{error}"
    );
}

/// mypy-like notes: `same_place` keeps a note at another place out of the error before it;
/// `wraps` joins a wrapped message back into one; a fixed `code` fills a line without one.
const WRAPPED_AND_PLACED: &str = r#"
name = "mypy-like"
[[pattern]]
regex = '^(?P<file>[^\s:][^:]*?):(?P<line>\d+): (?P<severity>error): (?P<message>.+?)(?:  \[(?P<code>[a-z-]+)\])?$'
[[pattern.continuation]]
regex = '^(?P<file>[^\s:][^:]*?):(?P<line>\d+): note: (?P<message>.+)$'
same_place = true
[[pattern.continuation]]
regex = '^(?P<message>[^\s:\[](?:[^:]|:\D)*?)?\s*(?:\[(?P<code>[a-z-]+)\])?$'
wraps = true
[[pattern]]
regex = '^(?P<file>[^\s:][^:]*?):(?P<line>\d+): (?P<severity>note): (?P<message>.+)$'
[[pattern]]
regex = '^would reformat (?P<file>.+)$'
code = "would-reformat"
message = "would reformat"
"#;

#[test]
fn same_place_wraps_and_fixed_codes() {
    let cases: &[(&str, &[&str], Option<&str>)] = &[
        // a note at the error's place is its body; at another line, a finding of its own
        (
            "a.py:1: error: bad  [x]\na.py:1: note: hint\na.py:3: note: Revealed type",
            &[
                "a.py:1:- error x bad [-]",
                "a.py:3:- note - Revealed type [-]",
            ],
            Some("hint"),
        ),
        (
            "a.py:1: error: bad  [x]\nb.py:1: note: elsewhere",
            &["a.py:1:- error x bad [-]", "b.py:1:- note - elsewhere [-]"],
            None,
        ),
        // a message wrapped on two and three lines, the code alone on the last
        (
            "a.py:2: error: Incompatible types (got\n\"float\", expected \"int\")  [return-value]",
            &[
                "a.py:2:- error return-value Incompatible types (got \"float\", expected \"int\") [-]",
            ],
            None,
        ),
        (
            "a.py:2: error: one\ntwo \n[typeddict-item]\na.py:2: note: hint",
            &["a.py:2:- error typeddict-item one two [-]"],
            Some("hint"),
        ),
        // a fixed code; a code group wins over it
        (
            "would reformat /repo/a b.py",
            &["a b.py:-:- error would-reformat would reformat [-]"],
            None,
        ),
    ];
    for (input, want, body) in cases {
        let findings = parse(WRAPPED_AND_PLACED, input);
        let got: Vec<String> = findings.diagnostics().iter().map(brief).collect();
        assert_eq!(&got, want, "{input}");
        assert_eq!(findings.diagnostics()[0].body.as_deref(), *body, "{input}");
    }
}

#[test]
fn entries_past_the_kept_ones_are_counted_with_their_codes_and_categories() {
    let definition = r#"
name = "entries"
[[category_rule]]
code = 'clippy::.*'
category = "style"
[[pattern]]
regex = '^(?P<severity>error|warning)(?:\[(?P<code>E\d+)\])?: (?P<message>.+)$'
end = '^$'
[[pattern.continuation]]
regex = '^\s*--> (?P<file>.+):(?P<line>\d+):(?P<column>\d+)$'
[[pattern.continuation]]
regex = '^\s*= help: visit \S+#(?P<code>[a-z_]+)$'
code_prefix = "clippy::"
[[pattern.continuation]]
regex = '^\s*= (?P<message>.+)$'
[[pattern.continuation]]
regex = '^(?P<severity>error|warning)?\? (?P<category>\w+)$'
"#;
    // (entry, counts as (error, warning), has a code, its category)
    type Row = (&'static str, (u64, u64), bool, Option<&'static str>);
    let table: [Row; 4] = [
        (
            "warning: w\n --> a.rs:1:2\n = help: visit x#needless_return\n = note: n\n",
            (0, 1),
            true,
            Some("style"),
        ),
        ("error[E0308]: e\n --> a.rs:3:4\n\n", (1, 0), true, None),
        (
            "warning: w2\n --> b.rs:5:6\n? types\n\n",
            (0, 1),
            false,
            Some("types"),
        ),
        ("error: e2\n = note: only a note\n\n", (1, 0), false, None),
    ];
    let kept = crate::parse::Findings::default_limit();
    let rounds = kept / table.len() + 3;
    let input: String = table
        .iter()
        .map(|row| row.0)
        .collect::<String>()
        .repeat(rounds);
    let findings = parse(definition, &input);
    let per_round = |pick: fn(&Row) -> u64| table.iter().map(pick).sum::<u64>() * rounds as u64;
    assert_eq!(findings.counts.error, per_round(|row| row.1.0));
    assert_eq!(findings.counts.warning, per_round(|row| row.1.1));
    assert_eq!(findings.with_code, per_round(|row| u64::from(row.2)));
    assert_eq!(findings.diagnostics().len(), kept);
    assert_eq!(findings.omitted, (table.len() * rounds - kept) as u64);
    let omitted: Vec<(Option<&str>, u64)> = findings
        .omitted_by_category()
        .map(|(category, counts)| (category, counts.error + counts.warning + counts.note))
        .collect();
    assert_eq!(omitted.iter().map(|o| o.1).sum::<u64>(), findings.omitted);
    let names: Vec<Option<&str>> = omitted.iter().map(|o| o.0).collect();
    // Every error is kept (they take the place of warnings): the warnings left out are counted
    // under the categories their code and their continuation line gave them.
    assert_eq!(names, [Some("style"), Some("types")]);
    // The kept ones are whole.
    let first: Vec<String> = findings.diagnostics()[..4].iter().map(brief).collect();
    assert_eq!(
        first,
        [
            "a.rs:1:2 warning clippy::needless_return w [style]",
            "a.rs:3:4 error E0308 e [-]",
            "b.rs:5:6 warning - w2 [types]",
            "-:-:- error - e2 [-]",
        ]
    );
}

#[test]
fn same_place_and_wrapped_lines_are_taken_past_the_kept_ones_too() {
    // Per round: one error whose wrapped lines give its code and whose note at its own place is
    // its body, and one note elsewhere, a finding of its own.
    let round =
        "a.py:1: error: one\ntwo \n[typeddict-item]\na.py:1: note: hint\nb.py:1: note: elsewhere\n";
    let rounds = crate::parse::Findings::default_limit() + 5;
    let findings = parse(WRAPPED_AND_PLACED, &round.repeat(rounds));
    let rounds = rounds as u64;
    assert_eq!(findings.counts.error, rounds);
    assert_eq!(findings.counts.note, rounds);
    assert_eq!(findings.with_code, rounds);
    let first: Vec<String> = findings.diagnostics()[..1].iter().map(brief).collect();
    assert_eq!(first, ["a.py:1:- error typeddict-item one two [-]"]);
}

/// Past the kept findings an entry is only counted: a code that is there whenever its rule
/// matches is counted without reading the line; one that may be missing or blank is read.
#[test]
fn codes_are_counted_past_the_kept_ones_as_they_are_before() {
    let definition = r#"
name = "clippy-like"
[[pattern]]
regex = '^(?P<severity>error|warning): (?P<message>.+)$'
end = '^$'
[[pattern.continuation]]
regex = '^\s*= see https://x\.io/[^#\s]*#(?P<code>[a-z_]+)$'
[[pattern.continuation]]
regex = '^\s*= other: (?:\[(?P<code>[^\]]*)\])?.*$'
[[pattern.continuation]]
regex = '^\s*= (?P<message>.+)$'
"#;
    // Per round: a code from an always-there group, none, a blank one, one from an optional
    // group, and a line that is not the code rule's.
    let round = "warning: a\n  = see https://x.io/l#needless_return\n\n\
                 warning: b\n  = note: no code\n\n\
                 warning: c\n  = other: [ ] blank\n\n\
                 warning: d\n  = other: [E1] coded\n\n\
                 error: e\n  = see https://x.io/l#Upper\n\n";
    let few = parse(definition, round);
    assert_eq!(
        (few.counts.error, few.counts.warning, few.with_code),
        (1, 4, 2)
    );
    let rounds = crate::parse::Findings::default_limit() / 5 + 400;
    let many = parse(definition, &round.repeat(rounds));
    let rounds = rounds as u64;
    assert_eq!(
        (many.counts.error, many.counts.warning, many.with_code),
        (rounds, 4 * rounds, 2 * rounds)
    );
    assert!(many.omitted > 0);
}

/// Every rule list of every built-in parser names, for every distinct line of the parser
/// fixtures (and the same line with non-ASCII characters before, inside and after it), the rule
/// that trying its rules one at a time names: the one search is only a faster way to the same
/// answer.
#[test]
fn every_built_in_list_takes_the_rule_one_at_a_time_would() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut lines = std::collections::BTreeSet::new();
    let mut folders = vec![root.join("tests/fixtures/parsers")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "txt") {
                let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
                lines.extend(
                    text.lines()
                        .map(|line| line.trim_end_matches('\r').to_string()),
                );
            }
        }
    }
    let lines: Vec<String> = (lines.iter().cloned())
        .chain(lines.iter().map(|line| format!("é {line}")))
        .chain(lines.iter().map(|line| format!("{line} ✖")))
        .chain(lines.iter().map(|line| line.replacen(' ', " ❯", 1)))
        .chain(lines.iter().map(|line| line.replacen(':', "é:", 1)))
        .collect();
    let mut checked = 0;
    for entry in std::fs::read_dir(root.join("gate-parsers")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let parser = definition::compile("built-in", &text).unwrap();
        let outside: Vec<&crate::parse::lazy_regex::LazyRegex> = parser.outside().collect();
        let mut lists = vec![(parser.rules(), outside.clone())];
        for (index, pattern) in parser.patterns.iter().enumerate() {
            if let Some(entry) = parser.entry_rules(index) {
                let own = pattern
                    .end
                    .iter()
                    .chain(pattern.continuations.iter().map(|c| &c.regex));
                lists.push((&entry.first, own.chain(outside.iter().copied()).collect()));
            }
        }
        for (list, rules) in lists {
            let mut cache = super::super::first_rule::RuleCache::default();
            for line in &lines {
                let one_by_one = rules.iter().position(|rule| rule.is_match(line));
                assert_eq!(
                    list.first(&mut cache, line),
                    one_by_one,
                    "{path:?}: {line:?}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 100_000, "{checked}");
}

/// A tool that fixed some of its findings prints the rest and says how many remain: those are
/// the errors to expect, not all it found.
#[test]
fn the_errors_a_tool_left_after_fixing_are_the_ones_expected() {
    let ruff = include_str!("../../gate-parsers/ruff.toml");
    let findings = |summary: &str| {
        let text = format!(
            "src/a.py:1:8: F401 [*] `os` imported but unused\n\
             src/a.py:3:1: E741 Ambiguous variable name: `l`\n{summary}\n"
        );
        let findings = parse(ruff, &text);
        assert_eq!(findings.counts.error, 2, "{summary}");
        findings.expected.and_then(|expected| expected.error)
    };
    let table = [
        ("Found 2 errors.", Some(2)),
        ("Found 5 errors (3 fixed, 2 remaining).", Some(2)),
        ("Found 1 error (0 fixed, 2 remaining).", Some(2)),
    ];
    for (summary, expected) in table {
        assert_eq!(findings(summary), expected, "{summary}");
    }
}

#[path = "regex_parser_dedupe_tests.rs"]
mod dedupe;
