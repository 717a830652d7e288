//! Tests weakened: fewer tests (a test file deleted or moved out of the runner's collection, a
//! test function removed or renamed away), fewer assertions, the data a failing test expects
//! changed, an assertion that always holds; and the runners' own totals: fewer tests
//! collected, fewer run, more skipped. The counts are pooled over the change, so a test moved
//! from one file to another is no move.

use std::collections::{HashMap, HashSet};

use super::definition::TestRule;
use super::lines::{LineDiff, LineIndex, shown, trim};
use super::{Catalogue, Class, FilePair, GateView, Move, Subject};
use crate::model::{CheckRecord, TestCounts};

/// Lines an assertion may run over, at most.
const STATEMENT_LINES: usize = 30;
/// Bytes an assertion may take, at most.
const STATEMENT_BYTES: usize = 4000;
/// Changed lines of data reported per failing test file, at most.
const DATA_SHOWN: usize = 5;

/// A test definition or an assertion, as found.
#[derive(Debug, Clone)]
struct Found {
    line: u64,
    /// As a report shows it.
    text: String,
    /// What identifies it on the other side: the hash of a definition's line, or of an
    /// assertion, without its layout (spaces, brackets, commas, the kind of quotes).
    key: u64,
}

/// One file's tests on one side of the change.
#[derive(Debug, Default)]
struct Reading {
    definitions: Vec<Found>,
    assertions: Vec<Found>,
}

/// A line a change removed from, or added to, a file where a test was failing: its numbers and
/// strings, the data the test expects.
#[derive(Debug, Clone)]
struct DataLine {
    line: u64,
    text: String,
    literals: Vec<String>,
}

/// One file under one test rule, on both sides.
#[derive(Debug)]
struct FileTests {
    entry: usize,
    rule: usize,
    path: String,
    before: Reading,
    after: Reading,
    /// A file where a test was failing: the lines of data the change removed and added.
    data: Option<(Vec<DataLine>, Vec<DataLine>)>,
}

/// The tests of every file the change touched, per test rule.
#[derive(Debug)]
pub struct Tally<'c> {
    catalogue: &'c Catalogue,
    files: Vec<FileTests>,
}

impl<'c> Tally<'c> {
    pub fn new(catalogue: &'c Catalogue) -> Self {
        Self {
            catalogue,
            files: Vec::new(),
        }
    }

    /// Reads the tests of both sides of `pair` under each of `rules`; `diff` is a modified
    /// file's, `failing` says a test failed in it. A file whose tests and assertions are the
    /// same on both sides (by key) adds as much to each side of the pooled counts as it takes
    /// away, so it is left out, unless a test failed in it. Returns the lines of the tests the
    /// change added (definitions new by key).
    pub fn read(
        &mut self,
        pair: &FilePair<'_>,
        rules: &[(usize, usize)],
        diff: Option<&LineDiff<'_>>,
        failing: bool,
    ) -> Vec<u64> {
        let mut new_tests = Vec::new();
        for &(entry_index, rule_index) in rules {
            let rule = &self.catalogue.entries()[entry_index].tests[rule_index];
            let before = pair.before.map(|t| locate(rule, t)).unwrap_or_default();
            let after = pair.after.map(|t| locate(rule, t)).unwrap_or_default();
            let data = diff
                .filter(|_| failing)
                .map(|diff| (data_lines(&diff.removed), data_lines(&diff.added)));
            let changed_data = data
                .as_ref()
                .is_some_and(|(removed, added)| !removed.is_empty() || !added.is_empty());
            if before.same_keys(&after) && !changed_data {
                continue;
            }
            let before = before.read(pair.before.unwrap_or_default());
            let after = after.read(pair.after.unwrap_or_default());
            // New tests: as many as the file's count rose, on definition lines the change
            // added (every test of a created file).
            let rose = after
                .definitions
                .len()
                .saturating_sub(before.definitions.len());
            let added: HashSet<u64> = diff.map_or_else(
                || after.definitions.iter().map(|f| f.line).collect(),
                |diff| diff.added.iter().map(|(line, _)| *line).collect(),
            );
            new_tests.extend(
                (after.definitions.iter())
                    .filter(|f| added.contains(&f.line))
                    .map(|f| f.line)
                    .take(rose),
            );
            self.files.push(FileTests {
                entry: entry_index,
                rule: rule_index,
                path: pair.path.to_string(),
                before,
                after,
                data,
            });
        }
        new_tests
    }

    /// The moves, rule by rule: `subjects` tell where a deleted file went, `before` which
    /// files held a failing test.
    pub fn compare(&self, subjects: &[Subject], before: &GateView<'_>) -> Vec<Move> {
        let mut rules: Vec<(usize, usize)> = self.files.iter().map(|f| (f.entry, f.rule)).collect();
        rules.sort_unstable();
        rules.dedup();
        let mut moves = Vec::new();
        for (entry, rule) in rules {
            let files: Vec<&FileTests> = (self.files.iter())
                .filter(|f| (f.entry, f.rule) == (entry, rule))
                .collect();
            let test_rule = &self.catalogue.entries()[entry].tests[rule];
            let name = format!(
                "{}/{}",
                self.catalogue.entries()[entry].name,
                test_rule.name
            );
            let mut push = |path: &str, line: Option<u64>, what: &str, text: String| {
                moves.push(Move {
                    class: Class::Tests,
                    rule: name.clone(),
                    path: Some(path.to_string()),
                    line,
                    what: what.to_string(),
                    text,
                    allowed_by: None,
                });
            };
            definitions(&files, test_rule, subjects, before, &mut push);
            assertions(&files, &mut push);
            for file in files.iter().filter(|f| f.data.is_some()) {
                expected_data(file, test_rule.trivial.as_ref(), &mut push);
            }
            if let Some(trivial) = &test_rule.trivial {
                // Only more of them than before: one rewritten (by a fixer) was one already.
                let count = |side: fn(&FileTests) -> &Reading| -> usize {
                    (files.iter().flat_map(|f| &side(f).assertions))
                        .filter(|a| trivial.is_match(a.text.as_bytes()))
                        .count()
                };
                let more = count(|f| &f.after).saturating_sub(count(|f| &f.before));
                let added = unmatched(&files, |f| &f.after.assertions, |f| &f.before.assertions);
                let new_trivial = (added.iter())
                    .filter(|(_, found)| trivial.is_match(found.text.as_bytes()))
                    .take(more);
                for (path, found) in new_trivial {
                    push(
                        path,
                        Some(found.line),
                        "an assertion that always holds added",
                        found.text.clone(),
                    );
                }
            }
        }
        moves
    }
}

/// A move of the rule being compared: path, line, what was done, what was found.
type Push<'p> = dyn FnMut(&str, Option<u64>, &str, String) + 'p;

/// Tests gone: test files deleted or moved out of the runner's collection (those whose tests
/// do not live on elsewhere, renamed), then definitions that vanished, as many as there are
/// fewer tests, and in a file where a test was failing, every one that vanished.
fn definitions(
    files: &[&FileTests],
    rule: &TestRule,
    subjects: &[Subject],
    gate: &GateView<'_>,
    push: &mut Push<'_>,
) {
    let vanished = unmatched(files, |f| &f.before.definitions, |f| &f.after.definitions);
    let mut accounted = 0;
    let mut gone_files: HashSet<&str> = HashSet::new();
    for file in files {
        if file.before.definitions.is_empty() || !file.after.definitions.is_empty() {
            continue;
        }
        let Some(subject) = subjects.iter().find(|s| s.path == file.path) else {
            continue;
        };
        if subject.after.sha256().is_some() {
            continue;
        }
        let gone: Vec<&Found> = (vanished.iter())
            .filter(|(path, _)| *path == file.path)
            .map(|(_, found)| *found)
            .collect();
        let Some(first) = gone.first() else {
            continue; // its tests live on in another file: renamed, and edited
        };
        let went = subject.before.sha256().and_then(|sha| {
            subjects
                .iter()
                .find(|s| s.before.sha256().is_none() && s.after.sha256() == Some(sha))
        });
        let count = gone.len();
        match went {
            Some(to) if !rule.files.is_match(&to.path) => push(
                &file.path,
                Some(first.line),
                &format!("test file moved out of the runner's collection ({count} tests)"),
                format!("{} → {}", file.path, to.path),
            ),
            _ => push(
                &file.path,
                Some(first.line),
                &format!("test file deleted ({count} tests)"),
                first.text.clone(),
            ),
        }
        accounted += count;
        gone_files.insert(&file.path);
    }
    let total = |side: fn(&FileTests) -> &Reading| -> usize {
        files.iter().map(|f| side(f).definitions.len()).sum()
    };
    let mut deficit = total(|f| &f.before)
        .saturating_sub(total(|f| &f.after))
        .saturating_sub(accounted);
    for (path, found) in vanished
        .into_iter()
        .filter(|(path, _)| !gone_files.contains(path))
    {
        if deficit > 0 {
            deficit -= 1;
            push(
                path,
                Some(found.line),
                "test removed, or renamed out of the runner's collection",
                found.text.clone(),
            );
        } else if gate.failing_tests.contains(path) {
            push(
                path,
                Some(found.line),
                "a failing test file's test removed or renamed",
                found.text.clone(),
            );
        }
    }
}

/// Assertions removed: as many as the pooled count fell, from the files whose own count fell.
fn assertions(files: &[&FileTests], push: &mut Push<'_>) {
    let gone_files: HashSet<&str> = (files.iter())
        .filter(|f| {
            !f.before.definitions.is_empty()
                && f.after.definitions.is_empty()
                && f.after.assertions.is_empty()
        })
        .map(|f| f.path.as_str())
        .collect();
    let count = |side: fn(&FileTests) -> &Reading| -> usize {
        (files.iter())
            .filter(|f| !gone_files.contains(f.path.as_str()))
            .map(|f| side(f).assertions.len())
            .sum()
    };
    let mut budget = count(|f| &f.before).saturating_sub(count(|f| &f.after));
    let mut fell: HashMap<&str, usize> = (files.iter())
        .map(|f| {
            (
                f.path.as_str(),
                f.before
                    .assertions
                    .len()
                    .saturating_sub(f.after.assertions.len()),
            )
        })
        .collect();
    for (path, found) in unmatched(files, |f| &f.before.assertions, |f| &f.after.assertions) {
        if budget == 0 {
            break;
        }
        if gone_files.contains(path) {
            continue;
        }
        if let Some(left) = fell.get_mut(path).filter(|left| **left > 0) {
            *left -= 1;
            budget -= 1;
            push(
                path,
                Some(found.line),
                "assertion removed",
                found.text.clone(),
            );
        }
    }
}

/// In a file where a test was failing, a number or string on a line the change removed that
/// no line it added has: the data the test expects (an assertion's value, a parametrized case,
/// a table row, an `expected =`) made to fit the code.
fn expected_data(file: &FileTests, trivial: Option<&regex::bytes::Regex>, push: &mut Push<'_>) {
    let Some((removed, added)) = &file.data else {
        return;
    };
    let mut left: HashMap<&str, usize> = HashMap::new();
    for line in added {
        for literal in &line.literals {
            *left.entry(literal).or_default() += 1;
        }
    }
    let mut shown_lines = 0;
    for line in removed {
        let mut kept = true;
        for literal in &line.literals {
            match left.get_mut(literal.as_str()).filter(|n| **n > 0) {
                Some(n) => *n -= 1,
                None => kept = false,
            }
        }
        if kept || shown_lines == DATA_SHOWN {
            continue;
        }
        shown_lines += 1;
        let nearest = (added.iter()).min_by_key(|a| a.line.abs_diff(line.line));
        // Replaced by an assertion that always holds: that move says it.
        if nearest.is_some_and(|a| trivial.is_some_and(|t| t.is_match(a.text.as_bytes()))) {
            continue;
        }
        let instead = nearest
            .map(|a| format!(" → {}", a.text))
            .unwrap_or_default();
        push(
            &file.path,
            Some(line.line),
            "a failing test's expected data changed",
            format!("{}{instead}", line.text),
        );
    }
}

/// The lines of a change that are code: not comments, not imports; with their literals (the
/// data), none for many.
fn data_lines(lines: &[(u64, &[u8])]) -> Vec<DataLine> {
    const NOT_DATA: [&[u8]; 12] = [
        b"#",
        b"//",
        b"/*",
        b"*",
        b"import ",
        b"from ",
        b"use ",
        b"package ",
        b"require(",
        b"extern crate",
        b"mod ",
        b"using ",
    ];
    lines
        .iter()
        .filter(|(_, line)| !NOT_DATA.iter().any(|prefix| line.starts_with(prefix)))
        .map(|(number, line)| DataLine {
            line: *number,
            text: shown(line),
            literals: literals(line),
        })
        .collect()
}

/// What `from` of `files` holds that `against` does not, by key, counted (a definition or an
/// assertion that moved is in both): the before side against the after side is what vanished,
/// the after side against the before side what appeared.
fn unmatched<'f>(
    files: &[&'f FileTests],
    from: fn(&FileTests) -> &Vec<Found>,
    against: fn(&FileTests) -> &Vec<Found>,
) -> Vec<(&'f str, &'f Found)> {
    let mut left: HashMap<u64, usize> = HashMap::new();
    for found in files.iter().flat_map(|file| against(file)) {
        *left.entry(found.key).or_default() += 1;
    }
    let mut unmatched = Vec::new();
    for file in files {
        for found in from(file) {
            match left.get_mut(&found.key) {
                Some(count) if *count > 0 => *count -= 1,
                _ => unmatched.push((file.path.as_str(), found)),
            }
        }
    }
    unmatched
}

/// Where a test definition or an assertion is in a file, and its key.
#[derive(Debug, Clone, Copy)]
struct Spot {
    start: usize,
    end: usize,
    key: u64,
}

/// The test definitions and assertions of one side of a file, located.
#[derive(Debug, Default)]
struct Located {
    definitions: Vec<Spot>,
    assertions: Vec<Spot>,
}

impl Located {
    /// Both sides hold the same definitions and assertions, counted, by key.
    fn same_keys(&self, other: &Self) -> bool {
        let sorted = |spots: &[Spot]| {
            let mut keys: Vec<u64> = spots.iter().map(|s| s.key).collect();
            keys.sort_unstable();
            keys
        };
        sorted(&self.definitions) == sorted(&other.definitions)
            && sorted(&self.assertions) == sorted(&other.assertions)
    }

    /// What a report shows of each, from `text`.
    fn read(&self, text: &[u8]) -> Reading {
        let index = LineIndex::new(text);
        let found = |spot: &Spot| Found {
            line: index.line_of(spot.start),
            text: shown(&text[spot.start..spot.end]),
            key: spot.key,
        };
        Reading {
            definitions: self.definitions.iter().map(found).collect(),
            assertions: self.assertions.iter().map(found).collect(),
        }
    }
}

/// The test definitions (their lines) and assertions (their statements) of `text` under
/// `rule`, with their keys.
fn locate(rule: &TestRule, text: &[u8]) -> Located {
    let mut located = Located::default();
    if let Some(definition) = &rule.definition {
        for found in definition.find_iter(text) {
            let start = memchr::memrchr(b'\n', &text[..found.start()]).map_or(0, |at| at + 1);
            let end = memchr::memchr(b'\n', &text[found.start()..])
                .map_or(text.len(), |at| found.start() + at);
            // A test is known by what names it: the definition as matched (`def test_x(`) and
            // the title that follows (`it('adds'`), not its parameters or body.
            let title = (literals(&text[found.end()..end]).into_iter())
                .find(|literal| literal.starts_with("s:"))
                .unwrap_or_default();
            let mut named = found.as_bytes().to_vec();
            named.extend_from_slice(title.as_bytes());
            located.definitions.push(Spot {
                start,
                end,
                key: key(&named),
            });
        }
    }
    if let Some(assertion) = &rule.assertion {
        for found in assertion.find_iter(text) {
            let statement = statement_at(text, found.start());
            located.assertions.push(Spot {
                start: found.start(),
                end: found.start() + statement.len(),
                key: key(statement),
            });
        }
    }
    located
}

/// The hash of [`skeleton`], without building it.
fn key(statement: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut hasher = std::hash::DefaultHasher::new();
    for byte in skeleton_bytes(statement) {
        hasher.write_u8(byte);
    }
    hasher.finish()
}

/// The statement that starts at `start`: to the end of its line, and on while a bracket is
/// open, the line ends in `\`, or the next line goes on with a method call (`.toBe(3)`); at most
/// [`STATEMENT_LINES`] lines and [`STATEMENT_BYTES`] bytes (a minified line is cut).
fn statement_at(text: &[u8], start: usize) -> &[u8] {
    let mut depth: i64 = 0;
    let mut lines = 0;
    let mut at = start;
    let limit = text.len().min(start.saturating_add(STATEMENT_BYTES));
    while at < limit {
        match text[at] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'\n' => {
                lines += 1;
                let next = text[at + 1..].iter().find(|b| !b.is_ascii_whitespace());
                let open = depth > 0 || trim(&text[start..at]).ends_with(b"\\");
                let goes_on = open || next == Some(&b'.');
                if !goes_on || lines >= STATEMENT_LINES {
                    break;
                }
            }
            _ => {}
        }
        at += 1;
    }
    &text[start..at]
}

/// An assertion without its layout: no spaces, brackets or commas, one kind of quote, no
/// trailing `;`. A formatter's rewrapping or requoting keeps it.
fn skeleton_bytes(statement: &[u8]) -> impl Iterator<Item = u8> + '_ {
    statement
        .iter()
        .filter(|b| !b.is_ascii_whitespace() && !matches!(b, b'(' | b')' | b',' | b';' | b'\\'))
        .map(|&b| if b == b'\'' || b == b'`' { b'"' } else { b })
}

/// The numbers and strings of a line: numbers by value (`10.50`, `1_0.5e0` and `0x0A` are
/// those of `10.5` and `10`), strings without their quotes and escapes. A string that formats
/// (`{}`, `%s`, `${x}`) counts for what it holds, not as a string: a fixer rewriting a message
/// (`.format` to an f-string) changes no data.
fn literals(statement: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let mut at = 0;
    while at < statement.len() {
        let byte = statement[at];
        if matches!(byte, b'"' | b'\'' | b'`') {
            let mut end = at + 1;
            let mut value = Vec::new();
            while end < statement.len() && statement[end] != byte {
                if statement[end] == b'\\' {
                    end += 1;
                }
                if let Some(&b) = statement.get(end) {
                    value.push(b);
                }
                end += 1;
            }
            // A string that formats holds data only in what it formats (an f-string's `{x + 1}`).
            let formats = value.iter().any(|b| matches!(b, b'{' | b'%' | b'$'));
            if formats {
                found.extend(literals(&value));
            } else if !value.is_empty() {
                found.push(format!("s:{}", String::from_utf8_lossy(&value)));
            }
            at = end + 1;
        } else if (byte.is_ascii_digit()
            || (byte == b'.' && statement.get(at + 1).is_some_and(u8::is_ascii_digit)))
            && (at == 0
                || !(statement[at - 1].is_ascii_alphanumeric()
                    || matches!(statement[at - 1], b'_' | b'.')))
        {
            let mut end = at;
            while end < statement.len()
                && (statement[end].is_ascii_alphanumeric() || matches!(statement[end], b'_' | b'.'))
            {
                end += 1;
            }
            let written: String = String::from_utf8_lossy(&statement[at..end])
                .chars()
                .filter(|&c| c != '_')
                .collect::<String>()
                .to_ascii_lowercase();
            found.push(format!("n:{}", number_value(&written)));
            at = end;
        } else {
            at += 1;
        }
    }
    found
}

/// A number as written, by its value where it has one (`10.50` and `10.5` alike).
fn number_value(written: &str) -> String {
    let hex = written
        .strip_prefix("0x")
        .and_then(|digits| u64::from_str_radix(digits, 16).ok());
    let value = hex.map(|n| n as f64).or_else(|| {
        written
            .trim_end_matches(['f', 'l', 'u', 'i', 'n'])
            .parse::<f64>()
            .ok()
    });
    value.map_or_else(|| written.to_string(), |v| format!("{v}"))
}

/// The runners' own totals, check by check: fewer tests collected, more of them skipped, or
/// no count any more where there was one.
pub fn runner_totals(before: &[CheckRecord], after: &[CheckRecord]) -> Vec<Move> {
    let mut moves = Vec::new();
    for was in before {
        let Some(was_counts) = was.tests else {
            continue;
        };
        let Some(is) = after.iter().find(|c| c.name == was.name) else {
            continue;
        };
        let collected = |t: &TestCounts| t.passed + t.failed + t.skipped;
        let ran = |t: &TestCounts| t.passed + t.failed;
        let (what, text) = match is.tests {
            None if collected(&was_counts) > 0 => (
                "the test runner no longer reports its tests".to_string(),
                format!(
                    "{}: {} tests → none reported",
                    was.name,
                    collected(&was_counts)
                ),
            ),
            None => continue,
            Some(counts) if collected(&counts) < collected(&was_counts) => (
                "fewer tests collected".to_string(),
                format!(
                    "{}: {} tests → {}",
                    was.name,
                    collected(&was_counts),
                    collected(&counts)
                ),
            ),
            Some(counts) if ran(&counts) < ran(&was_counts) => (
                "fewer tests run (more skipped)".to_string(),
                format!(
                    "{}: {} run, {} skipped → {} run, {} skipped",
                    was.name,
                    ran(&was_counts),
                    was_counts.skipped,
                    ran(&counts),
                    counts.skipped
                ),
            ),
            Some(counts) if counts.skipped > was_counts.skipped => (
                "more tests skipped".to_string(),
                format!(
                    "{}: {} skipped → {} (with {} run → {})",
                    was.name,
                    was_counts.skipped,
                    counts.skipped,
                    ran(&was_counts),
                    ran(&counts)
                ),
            ),
            Some(_) => continue,
        };
        moves.push(Move {
            class: Class::Tests,
            rule: "runner/totals".into(),
            path: None,
            line: None,
            what,
            text,
            allowed_by: None,
        });
    }
    moves
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An assertion without its layout: no spaces, brackets or commas, one kind of quote, no
    /// trailing `;`. A formatter's rewrapping or requoting keeps it.
    fn skeleton(statement: &[u8]) -> String {
        String::from_utf8_lossy(&skeleton_bytes(statement).collect::<Vec<u8>>()).into_owned()
    }

    #[test]
    fn statements_run_while_brackets_are_open() {
        let table: [(&str, &str); 5] = [
            ("assert x == 1\nfoo()\n", "assert x == 1"),
            (
                "assert (\n    x == 1\n), \"m\"\nfoo()",
                "assert (\n    x == 1\n), \"m\"",
            ),
            ("expect(a)\n  .toBe(3);\nnext", "expect(a)\n  .toBe(3);"),
            ("assert x \\\n  == 1\nnext", "assert x \\\n  == 1"),
            ("assert_eq!(a, b);", "assert_eq!(a, b);"),
        ];
        for (text, statement) in table {
            assert_eq!(
                statement_at(text.as_bytes(), 0),
                statement.as_bytes(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn a_formatters_layout_keeps_the_skeleton() {
        let same = [
            ("assert x == {'a': 1}", "assert (\n    x == {\"a\": 1,}\n)"),
            ("expect(a).toBe('b')", "expect(a)\n  .toBe(\"b\");"),
            ("assert_eq!(a,b)", "assert_eq!(\n    a,\n    b\n);"),
        ];
        for (one, other) in same {
            assert_eq!(
                skeleton(one.as_bytes()),
                skeleton(other.as_bytes()),
                "{one}"
            );
        }
        assert_ne!(skeleton(b"assert x == 1"), skeleton(b"assert x == 2"));
    }

    #[test]
    fn literals_are_numbers_and_strings() {
        assert_eq!(
            literals(b"assert total(items, 1_000) == 'ab\\'c' and x2 == 0XFF"),
            vec!["n:1000", "s:ab'c", "n:255"]
        );
        assert_eq!(
            literals(b"assert_eq!(add(2, 2), 4.0);"),
            vec!["n:2", "n:2", "n:4"]
        );
        assert!(literals(b"assert x is None").is_empty());
    }
}
