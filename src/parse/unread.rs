//! Whether a parser understood an output: a parser of one tool, given another's output (or a
//! format it does not read), finds nothing and says nothing, and the check counts 0 findings.
//! While a parser reads, [`Unread`] counts the lines no rule of it took that look like a
//! diagnostic all the same (`path.ext:line[:col]` before a space, `error:`/`warning:` at a line's
//! start, a test runner's `FAIL`/`FAILED`), and the findings whose file is a sentence rather than
//! a path (prettier 2's "Code style issues found in 4 files. Forgot to run Prettier?"), and a
//! tool's own count of errors when none was read. When they
//! are many beside what was read, [`Unread::note`] says so, for `parse` and the gate summary.

use std::sync::LazyLock;

use regex::Regex;

use super::{Findings, LineOutcome};

/// Unread lines looked at; past them a long log's lines are counted, not looked at (a misreading
/// shows in its first thousands of lines, and looking costs on every line of a noisy log).
const LOOKED_AT: u64 = 20_000;
/// Lines quoted in a note.
const EXAMPLES: usize = 2;
/// Characters of a quoted line.
const EXAMPLE_CHARS: usize = 120;

/// What a reading left unread.
#[derive(Debug, Default)]
pub struct Unread {
    lines: u64,
    looked_at: u64,
    looked_like: u64,
    examples: Vec<String>,
}

impl Unread {
    /// Notes one line and what the parser made of it.
    pub fn observe(&mut self, line: &str, outcome: LineOutcome) {
        self.lines += 1;
        if outcome != LineOutcome::Unmatched || self.looked_at >= LOOKED_AT {
            return;
        }
        self.looked_at += 1;
        if !looks_like_a_diagnostic(line) {
            return;
        }
        self.looked_like += 1;
        if self.examples.len() < EXAMPLES {
            self.examples
                .push(line.trim().chars().take(EXAMPLE_CHARS).collect());
        }
    }

    /// The note on what `parser` left unread in an output where it found `findings`, when it
    /// left much: lines that look like diagnostics, as many as half what it read or more (and at
    /// least three, or any at all when it read nothing), or findings whose file is a sentence.
    pub fn note(&self, parser: &str, findings: &Findings) -> Option<String> {
        let read = findings.counts.error + findings.counts.warning + findings.counts.note;
        let sentences: Vec<&str> = findings
            .diagnostics()
            .iter()
            .filter_map(|d| d.file.as_deref())
            .filter(|file| is_a_sentence(file))
            .collect();
        if let Some(first) = sentences.first() {
            return Some(format!(
                "read as {parser}, but {} of its findings name a sentence as their file (\"{first}\"): \
                 a summary line read as a file; check the parser",
                sentences.len()
            ));
        }
        let claimed = findings.expected.and_then(|e| e.error).unwrap_or(0);
        if read == 0 && claimed > 0 {
            return Some(format!(
                "read as {parser}, but it read none of the {claimed} errors the output's own \
                 count gives; check the parser"
            ));
        }
        let many = if read == 0 {
            self.looked_like > 0
        } else {
            self.looked_like >= 3 && self.looked_like * 2 >= read
        };
        if !many {
            return None;
        }
        let quoted: Vec<String> = self.examples.iter().map(|e| format!("\"{e}\"")).collect();
        let at_least = if self.looked_at >= LOOKED_AT {
            "at least "
        } else {
            ""
        };
        Some(format!(
            "read as {parser}, but {at_least}{} of its {} lines looked like diagnostics it did \
             not read (first: {}); check the parser",
            self.looked_like,
            self.lines,
            quoted.join(", ")
        ))
    }
}

/// A line in a shape many tools print a diagnostic in.
pub fn looks_like_a_diagnostic(line: &str) -> bool {
    static MESSAGE_FIRST: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^\s*(?:error|warning|ERROR|WARNING)(?:\[[\w:/.-]+\])?: \S|^(?:FAIL|FAILED|ERROR)[: ] ?\S",
        )
        .expect("a valid regex")
    });
    let bytes = line.as_bytes();
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if matches!(first, Some(b'e' | b'w' | b'E' | b'W' | b'F')) && MESSAGE_FIRST.is_match(line) {
        return true;
    }
    // A place: `file.ext:12[:3][:]`, `file.ext(12[,3])[:]`, `file.ext +12:3:` or
    // `file.ext: line 12,`, then a space or the end. Searched by hand from each `:`, `(` and `+`:
    // most lines of a log have none, and a regex would try every position of every line.
    memchr::memchr3_iter(b':', b'(', b'+', bytes).any(|at| place_at(bytes, at))
}

/// Whether a place starts at `at` (a `:`, `(` or `+`) after a file name with an extension.
fn place_at(bytes: &[u8], at: usize) -> bool {
    let mark = bytes[at];
    let name_end = if mark == b'+' {
        match at.checked_sub(1) {
            Some(space) if bytes[space] == b' ' => space,
            _ => return false,
        }
    } else {
        at
    };
    if !has_extension_before(bytes, name_end) {
        return false;
    }
    let digits = |from: usize| {
        bytes[from.min(bytes.len())..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let ends = |at: usize| bytes.get(at).is_none_or(u8::is_ascii_whitespace);
    let mut next = at + 1;
    match mark {
        b':' if bytes[next..].starts_with(b" line ") => {
            let n = digits(next + 6);
            n > 0 && bytes.get(next + 6 + n) == Some(&b',')
        }
        b':' => {
            let n = digits(next);
            if n == 0 {
                return false;
            }
            next += n;
            if bytes.get(next) == Some(&b':') && digits(next + 1) > 0 {
                next += 1 + digits(next + 1);
            }
            if bytes.get(next) == Some(&b':') {
                next += 1;
            }
            ends(next)
        }
        b'(' => {
            let n = digits(next);
            if n == 0 {
                return false;
            }
            next += n;
            if bytes.get(next) == Some(&b',') {
                next += 1;
                if bytes.get(next) == Some(&b' ') {
                    next += 1;
                }
                let n = digits(next);
                if n == 0 {
                    return false;
                }
                next += n;
            }
            if bytes.get(next) != Some(&b')') {
                return false;
            }
            next += 1;
            if bytes.get(next) == Some(&b':') {
                next += 1;
            }
            ends(next)
        }
        _ => {
            // ` +12:3:` (clang's vi format)
            let n = digits(next);
            n > 0 && bytes.get(next + n) == Some(&b':') && {
                let m = digits(next + n + 1);
                m > 0 && bytes.get(next + n + 1 + m) == Some(&b':') && ends(next + n + 2 + m)
            }
        }
    }
}

/// Whether `bytes` up to `end` finish with a file name's extension: `.` and one to eight ASCII
/// letters and digits (the first a letter), after a letter, digit, `_`, `)`, `]` or a non-ASCII
/// character.
fn has_extension_before(bytes: &[u8], end: usize) -> bool {
    let extension = bytes[..end]
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_alphanumeric())
        .count();
    if !(1..=8).contains(&extension) || end < extension + 2 {
        return false;
    }
    let dot = end - extension - 1;
    bytes[dot] == b'.'
        && bytes[dot + 1].is_ascii_alphabetic()
        && (bytes[dot - 1].is_ascii_alphanumeric()
            || matches!(bytes[dot - 1], b'_' | b')' | b']')
            || !bytes[dot - 1].is_ascii())
}

/// A file name that reads as a sentence: words, a space between them, and the end of a sentence.
fn is_a_sentence(file: &str) -> bool {
    let words = file.split_whitespace().count();
    words >= 4 && !file.contains('/') && file.trim_end().ends_with(['.', '?', '!'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagnostic_shapes_are_told_from_other_lines() {
        let cases = [
            ("src/lib.rs:10:5: warning: unused variable", true),
            ("app/calc.py:1: [F401] `os` imported but unused", true),
            ("  prix été/calcul.py:12:3 error x", true),
            ("c/util.c(13,9): warning: x", true),
            ("c/util.c +13:9: warning: x", true),
            (
                "src/broken.js: line 3, col 10, Expected ',' and instead saw '1'.",
                true,
            ),
            ("error[E0425]: cannot find value `x`", true),
            ("warning: unused import", true),
            (
                "FAIL: test_total (tests.test_stock.StockTest.test_total)",
                true,
            ),
            ("FAILED tests/test_x.py::test_a - boom", true),
            // not diagnostics
            ("    at Object.<anonymous> (/repo/x.test.js:5:3)", false),
            ("Compiling foo v0.1.0 (/repo)", false),
            ("Ran 8 tests in 0.001s", false),
            ("version 1.2.3", false),
            ("12:30:01 build started", false),
            ("see https://example.com:8080/a.html for more", false),
            ("", false),
        ];
        for (line, expected) in cases {
            assert_eq!(looks_like_a_diagnostic(line), expected, "{line}");
        }
    }

    #[test]
    fn a_note_needs_many_unread_lines_or_a_sentence_for_a_file() {
        let mut unread = Unread::default();
        for _ in 0..3 {
            unread.observe("x.py:1:1: E1 boom", LineOutcome::Unmatched);
        }
        unread.observe("x.py:1:1: E1 boom", LineOutcome::Finding(0));
        let none = Findings::default();
        let note = unread.note("eslint", &none).unwrap();
        assert!(
            note.starts_with("read as eslint, but 3 of its 4 lines"),
            "{note}"
        );

        let mut few = Unread::default();
        few.observe("x.py:1:1: E1 boom", LineOutcome::Skipped(0));
        few.observe("just text", LineOutcome::Unmatched);
        assert_eq!(few.note("ruff", &none), None);
        assert!(!is_a_sentence("src/prix été (v2)/remise [beta].py"));
        assert!(is_a_sentence(
            "Code style issues found in 4 files. Forgot to run Prettier?"
        ));
    }
}
