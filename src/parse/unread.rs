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

/// Lines quoted in a note.
const EXAMPLES: usize = 2;
/// Characters of a quoted line.
const EXAMPLE_CHARS: usize = 120;

/// What a reading left unread.
#[derive(Debug, Default)]
pub struct Unread {
    lines: u64,
    looked_like: u64,
    examples: Vec<String>,
}

impl Unread {
    /// Notes one line and what the parser made of it.
    pub fn observe(&mut self, line: &str, outcome: LineOutcome) {
        self.lines += 1;
        if outcome != LineOutcome::Unmatched || !looks_like_a_diagnostic(line) {
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
        Some(format!(
            "read as {parser}, but {} of its {} lines looked like diagnostics it did not read \
             (first: {}); check the parser",
            self.looked_like,
            self.lines,
            quoted.join(", ")
        ))
    }
}

/// A line in a shape many tools print a diagnostic in.
pub fn looks_like_a_diagnostic(line: &str) -> bool {
    static SHAPES: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(concat!(
            // path.ext:line[:col] (or path.ext(line,col), path.ext +line:col) then a space
            r#"(?:^|[\s'"])[^\s:'"()]*[\w)\]]\.[A-Za-z][A-Za-z0-9]{0,7}"#,
            r"(?::\d+(?::\d+)?:?|\(\d+(?:,\s?\d+)?\):?| \+\d+:\d+:|: line \d+,)(?:\s|$)",
            r"|^\s*(?:error|warning|ERROR|WARNING)(?:\[[\w:/.-]+\])?: \S",
            r"|^(?:FAIL|FAILED|ERROR)[: ] ?\S",
        ))
        .expect("a valid regex")
    });
    SHAPES.is_match(line)
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
