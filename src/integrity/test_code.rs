//! Tests weakened: fewer tests (a test file deleted or moved out of the runner's collection, a
//! test function removed or renamed away), fewer assertions, an assertion's expected value
//! changed in a test that was failing, an assertion that always holds; and the runners' own
//! totals: fewer tests collected, or more of them skipped. The counts are pooled over the
//! change, so a test moved from one file to another is no move.

use std::collections::{HashMap, HashSet};

use super::definition::TestRule;
use super::lines::{LineIndex, shown, trim};
use super::{Catalogue, Class, FilePair, GateView, Move, Subject};
use crate::model::{CheckRecord, TestCounts};

/// Lines an assertion may run over, at most.
const STATEMENT_LINES: usize = 30;
/// Bytes an assertion may take, at most.
const STATEMENT_BYTES: usize = 4000;

/// A test definition or an assertion, as found.
#[derive(Debug, Clone)]
struct Found {
    line: u64,
    /// As a report shows it.
    text: String,
    /// What identifies it on the other side: the hash of a definition's line, or of an
    /// assertion, without its layout (spaces, brackets, commas, the kind of quotes).
    key: u64,
    /// An assertion's numbers and strings.
    literals: Vec<String>,
}

/// One file's tests on one side of the change.
#[derive(Debug, Default)]
struct Reading {
    definitions: Vec<Found>,
    assertions: Vec<Found>,
}

/// One file under one test rule, on both sides.
#[derive(Debug)]
struct FileTests {
    entry: usize,
    rule: usize,
    path: String,
    before: Reading,
    after: Reading,
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

    /// Reads the tests of both sides of `pair`, under each rule whose files it is. A file whose
    /// tests and assertions are the same on both sides (by key) adds as much to each side of
    /// the pooled counts as it takes away, so it is left out.
    pub fn read(&mut self, pair: &FilePair<'_>, rules: &[(usize, usize)]) {
        for &(entry_index, rule_index) in rules {
            let rule = &self.catalogue.entries()[entry_index].tests[rule_index];
            {
                let before = pair.before.map(|t| locate(rule, t)).unwrap_or_default();
                let after = pair.after.map(|t| locate(rule, t)).unwrap_or_default();
                if before.same_keys(&after) {
                    continue;
                }
                self.files.push(FileTests {
                    entry: entry_index,
                    rule: rule_index,
                    path: pair.path.to_string(),
                    before: before.read(pair.before.unwrap_or_default()),
                    after: after.read(pair.after.unwrap_or_default()),
                });
            }
        }
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
            let mut push = |path: &str, found: Option<&Found>, what: String, text: String| {
                moves.push(Move {
                    class: Class::Tests,
                    rule: name.clone(),
                    path: Some(path.to_string()),
                    line: found.map(|f| f.line),
                    what,
                    text,
                    allowed_by: None,
                });
            };
            // Test files gone, or moved out of the runner's collection.
            let mut accounted = 0;
            let mut gone_files: HashSet<&str> = HashSet::new();
            for file in &files {
                let count = file.before.definitions.len();
                if count == 0 || !file.after.definitions.is_empty() {
                    continue;
                }
                let Some(subject) = subjects.iter().find(|s| s.path == file.path) else {
                    continue;
                };
                if subject.after.sha256().is_some() {
                    continue;
                }
                let went = subject.before.sha256().and_then(|sha| {
                    subjects
                        .iter()
                        .find(|s| s.before.sha256().is_none() && s.after.sha256() == Some(sha))
                });
                let first = file.before.definitions.first();
                match went {
                    Some(to) if test_rule.files.is_match(&to.path) => continue,
                    Some(to) => push(
                        &file.path,
                        first,
                        format!("test file moved out of the runner's collection ({count} tests)"),
                        format!("{} → {}", file.path, to.path),
                    ),
                    None => push(
                        &file.path,
                        first,
                        format!("test file deleted ({count} tests)"),
                        first.map(|f| f.text.clone()).unwrap_or_default(),
                    ),
                }
                accounted += count;
                gone_files.insert(&file.path);
            }
            // Fewer tests than before: those whose definitions vanished.
            let total = |side: fn(&FileTests) -> &Reading| -> usize {
                files.iter().map(|f| side(f).definitions.len()).sum()
            };
            let deficit = total(|f| &f.before)
                .saturating_sub(total(|f| &f.after))
                .saturating_sub(accounted);
            if deficit > 0 {
                let vanished = vanished(&files, |r| &r.definitions);
                for (path, found) in vanished
                    .into_iter()
                    .filter(|(path, _)| !gone_files.contains(path))
                    .take(deficit)
                {
                    push(
                        path,
                        Some(found),
                        "test removed, or renamed out of the runner's collection".into(),
                        found.text.clone(),
                    );
                }
            }
            // Fewer assertions; an expected value changed where a test failed; one that
            // always holds.
            let assertions = |side: fn(&FileTests) -> &Reading| -> usize {
                files.iter().map(|f| side(f).assertions.len()).sum()
            };
            // A test file gone is one move, not one for each of its assertions.
            let in_gone_files: usize = (files.iter())
                .filter(|f| gone_files.contains(f.path.as_str()))
                .map(|f| f.before.assertions.len())
                .sum();
            let fewer = assertions(|f| &f.before)
                .saturating_sub(assertions(|f| &f.after))
                .saturating_sub(in_gone_files);
            let gone: Vec<(&str, &Found)> = vanished(&files, |r| &r.assertions)
                .into_iter()
                .filter(|(path, _)| !gone_files.contains(path))
                .collect();
            let added = appeared(&files);
            let mut added_literals: HashMap<&str, usize> = HashMap::new();
            for (_, found) in &added {
                for literal in &found.literals {
                    *added_literals.entry(literal).or_default() += 1;
                }
            }
            for (index, (path, found)) in gone.iter().enumerate() {
                if index < fewer {
                    push(
                        path,
                        Some(found),
                        "assertion removed".into(),
                        found.text.clone(),
                    );
                    continue;
                }
                if !before.failing_tests.contains(*path) {
                    continue;
                }
                let mut left = added_literals.clone();
                let kept_values = found.literals.iter().all(|literal| {
                    left.get_mut(literal.as_str())
                        .filter(|n| **n > 0)
                        .map(|n| *n -= 1)
                        .is_some()
                });
                let nearest = (added.iter())
                    .filter(|(p, _)| p == path)
                    .min_by_key(|(_, f)| f.line.abs_diff(found.line))
                    .map(|(_, f)| *f);
                let is_trivial = |f: &Found| {
                    (test_rule.trivial.as_ref()).is_some_and(|t| t.is_match(f.text.as_bytes()))
                };
                // An assertion replaced by one that always holds is that move, below.
                if !kept_values && !nearest.is_some_and(is_trivial) {
                    let instead = nearest
                        .map(|f| format!(" → {}", f.text))
                        .unwrap_or_default();
                    push(
                        path,
                        Some(found),
                        "a failing test's expected value changed".into(),
                        format!("{}{instead}", found.text),
                    );
                }
            }
            if let Some(trivial) = &test_rule.trivial {
                // Only more of them than before: one rewritten (by a fixer) was one already.
                let count = |side: fn(&FileTests) -> &Reading| -> usize {
                    (files.iter().flat_map(|f| &side(f).assertions))
                        .filter(|a| trivial.is_match(a.text.as_bytes()))
                        .count()
                };
                let more = count(|f| &f.after).saturating_sub(count(|f| &f.before));
                let new_trivial = added
                    .iter()
                    .filter(|(_, found)| trivial.is_match(found.text.as_bytes()))
                    .take(more);
                for (path, found) in new_trivial {
                    {
                        push(
                            path,
                            Some(found),
                            "an assertion that always holds added".into(),
                            found.text.clone(),
                        );
                    }
                }
            }
        }
        moves
    }
}

/// What `side` of `files` held before and not after, by key, counted: a definition or an
/// assertion that moved stays.
fn vanished<'f>(
    files: &[&'f FileTests],
    side: fn(&Reading) -> &Vec<Found>,
) -> Vec<(&'f str, &'f Found)> {
    let mut after: HashMap<u64, usize> = HashMap::new();
    for file in files {
        for found in side(&file.after) {
            *after.entry(found.key).or_default() += 1;
        }
    }
    let mut gone = Vec::new();
    for file in files {
        for found in side(&file.before) {
            match after.get_mut(&found.key) {
                Some(left) if *left > 0 => *left -= 1,
                _ => gone.push((file.path.as_str(), found)),
            }
        }
    }
    gone
}

/// The assertions the change added (by key, counted).
fn appeared<'f>(files: &[&'f FileTests]) -> Vec<(&'f str, &'f Found)> {
    let mut before: HashMap<u64, usize> = HashMap::new();
    for file in files {
        for found in &file.before.assertions {
            *before.entry(found.key).or_default() += 1;
        }
    }
    let mut new = Vec::new();
    for file in files {
        for found in &file.after.assertions {
            match before.get_mut(&found.key) {
                Some(left) if *left > 0 => *left -= 1,
                _ => new.push((file.path.as_str(), found)),
            }
        }
    }
    new
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
        let found = |spot: &Spot, literals: bool| Found {
            line: index.line_of(spot.start),
            text: shown(&text[spot.start..spot.end]),
            key: spot.key,
            literals: if literals {
                self::literals(&text[spot.start..spot.end])
            } else {
                Vec::new()
            },
        };
        Reading {
            definitions: self.definitions.iter().map(|s| found(s, false)).collect(),
            assertions: self.assertions.iter().map(|s| found(s, true)).collect(),
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
            let line = &text[start..end];
            located.definitions.push(Spot {
                start,
                end,
                key: key(line),
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
#[cfg(test)]
fn skeleton(statement: &[u8]) -> String {
    String::from_utf8_lossy(&skeleton_bytes(statement).collect::<Vec<u8>>()).into_owned()
}

fn skeleton_bytes(statement: &[u8]) -> impl Iterator<Item = u8> + '_ {
    statement
        .iter()
        .filter(|b| !b.is_ascii_whitespace() && !matches!(b, b'(' | b')' | b',' | b';' | b'\\'))
        .map(|&b| if b == b'\'' || b == b'`' { b'"' } else { b })
}

/// The numbers and strings of a statement, each as written but for `_` in numbers, case, and
/// escapes.
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
            if !value.is_empty() {
                found.push(format!("s:{}", String::from_utf8_lossy(&value)));
            }
            at = end + 1;
        } else if byte.is_ascii_digit()
            && (at == 0
                || !(statement[at - 1].is_ascii_alphanumeric() || statement[at - 1] == b'_'))
        {
            let mut end = at;
            while end < statement.len()
                && (statement[end].is_ascii_alphanumeric() || matches!(statement[end], b'_' | b'.'))
            {
                end += 1;
            }
            let number: String = String::from_utf8_lossy(&statement[at..end])
                .chars()
                .filter(|&c| c != '_')
                .collect::<String>()
                .to_ascii_lowercase();
            found.push(format!("n:{}", number.trim_end_matches('.')));
            at = end;
        } else {
            at += 1;
        }
    }
    found
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
            vec!["n:1000", "s:ab'c", "n:0xff"]
        );
        assert_eq!(
            literals(b"assert_eq!(add(2, 2), 4.0);"),
            vec!["n:2", "n:2", "n:4.0"]
        );
        assert!(literals(b"assert x is None").is_empty());
    }
}
