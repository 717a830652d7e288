//! Test results in TAP, from whichever runner printed them: `node --test` (node 20's default off
//! a terminal), `vitest --reporter=tap` and `tap-flat`, `mocha --reporter tap` (TAP 12 and 13),
//! tape, node-tap, bats, pytest-tap. A test point is `ok`/`not ok`, a number, an optional `-`, the
//! test's name and an optional `# SKIP`/`# TODO` directive; what the runner says of a failure
//! follows it, as a YAML block (`---` … `...`) or as indented text (mocha's TAP 12):
//!
//! ```text
//! not ok 1 - tests/cart.test.js # time=14ms {          (vitest: a file, then its suites, open)
//!     not ok 1 - cart # time=12ms {
//!         not ok 2 - sums three prices # time=5ms
//!             ---
//!             error:
//!                 name: "AssertionError"
//!                 message: "expected 3 to be 6"
//!             at: "/repo/tests/cart.test.js:11:32"
//!             ...
//!     }
//! }
//! ```
//!
//! - **A finding** per failing test (not a `# TODO` one): severity error; the code is the test's
//!   name, after the names of the suites around it where the runner nests them in braces
//!   (vitest: `cart > sums three prices`, as its own report names it); a flat name that begins
//!   with the test file (`tests/cart.test.js > cart > …`, vitest's tap-flat) gives the file and
//!   the rest is the code.
//! - **The place**: the YAML's `at` (a frame, or a mapping of `file`/`line`/`column`) when it is
//!   in the user's code, else the first frame of its `stack` (or of mocha's indented text) that
//!   is; else the test's file without a line.
//! - **The message**: the YAML's `error` (a text, or a mapping of `name` and `message`), else its
//!   `message`, else the first line of the indented text; else "test failed".
//! - **Not tests**: a suite, which a runner reports as a test point too (vitest's ends with `{`,
//!   node's has `type: 'suite'` in its block); a point named by a test file's path alone (a file
//!   that failed to load) is a finding, but counted as no test.
//! - **Counts**: passed, failed and skipped test points (a `# TODO` one is skipped), unless the
//!   runner printed its own (`# pass N`, `# fail N`, `# skipped N`), which are taken instead.

use serde_json::{Map, Value};

use super::findings::Found;
use super::regex_parser::frames::{frame_place, is_user_frame};
use super::structured::yaml;
use super::{Findings, LineOutcome, ParseContext, ParseSession, Parser};
use crate::model::{Severity, TestCounts};

/// The parser's name.
pub const NAME: &str = "tap";

/// Lines kept of what follows a test point, and bytes of each: a runner's report of one failure
/// is far shorter; a block never ended, or a flood, is read on without growing.
const MAX_KEPT_LINES: usize = 2_000;
const MAX_KEPT_BYTES: usize = 4_096;

fn kept(text: &str) -> String {
    let mut end = text.len().min(MAX_KEPT_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_string()
}

/// The parser of TAP test results.
#[derive(Debug)]
pub struct Tap;

impl Parser for Tap {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        "test results in TAP, from any runner: node --test, vitest --reporter=tap or tap-flat, \
         mocha --reporter tap, tape, bats"
    }

    fn category(&self) -> Option<&str> {
        Some("tests")
    }

    fn command(&self) -> &str {
        "vitest run --reporter=tap-flat"
    }

    fn session<'a>(&'a self, context: &'a ParseContext) -> Box<dyn ParseSession + 'a> {
        Box::new(TapSession {
            context,
            suites: Vec::new(),
            open: None,
            counted: TestCounts::default(),
            printed: Printed::default(),
        })
    }
}

struct TapSession<'a> {
    context: &'a ParseContext,
    /// The suites open around the current line (vitest's `… {` points): indentation and name.
    suites: Vec<(usize, String)>,
    /// The last test point, until what follows it is read.
    open: Option<Open>,
    /// The test points read so far.
    counted: TestCounts,
    /// The counts the runner printed, if it did.
    printed: Printed,
}

#[derive(Default)]
struct Printed {
    passed: Option<u64>,
    failed: Option<u64>,
    skipped: Option<u64>,
}

/// A test point and what follows it.
struct Open {
    indent: usize,
    ok: bool,
    name: String,
    directive: Directive,
    /// The YAML block's lines (indentation, text), once it is open.
    yaml: Option<Vec<(usize, String)>>,
    /// Whether the YAML block is closed.
    closed: bool,
    /// Indented text after the point (mocha's TAP 12: the message, then the stack).
    text: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Directive {
    None,
    Skip,
    Todo,
}

impl ParseSession for TapSession<'_> {
    fn line(&mut self, line: &str, findings: &mut Findings) -> LineOutcome {
        let indent = line.len() - line.trim_start().len();
        let trimmed = line.trim();
        if let Some(open) = self.open.as_mut()
            && let Some(block) = open.yaml.as_mut()
            && !open.closed
        {
            // A block the runner never ended (it crashed mid-way) ends at the next point that
            // is not inside it.
            let next_point = indent <= open.indent && test_point(line).is_some();
            if trimmed == "..." {
                open.closed = true;
                return LineOutcome::Continued(0);
            } else if !next_point {
                if block.len() < MAX_KEPT_LINES {
                    block.push((indent, kept(line.trim_start())));
                }
                return LineOutcome::Continued(0);
            }
            open.closed = true;
        }
        if let Some(point) = test_point(line) {
            self.close(findings);
            let outcome = if point.ok {
                LineOutcome::Skipped(0)
            } else {
                LineOutcome::Finding(0)
            };
            self.open = Some(point);
            return outcome;
        }
        if let Some(open) = self.open.as_mut()
            && trimmed == "---"
            && indent > open.indent
            && open.yaml.is_none()
            && open.text.is_empty()
        {
            open.yaml = Some(Vec::new());
            return LineOutcome::Continued(0);
        }
        if trimmed == "}" {
            self.close(findings);
            self.suites.pop();
            return LineOutcome::Skipped(0);
        }
        if trimmed.starts_with("TAP version ") || trimmed.starts_with("# Subtest: ") {
            self.close(findings);
            return LineOutcome::Skipped(0);
        }
        if plan(trimmed) || self.printed_count(trimmed) {
            self.close(findings);
            return LineOutcome::Summary(0);
        }
        // What a runner says of a failure as indented text (mocha) or as comments after it
        // (bats, Perl's Test::More).
        if let Some(open) = self.open.as_mut()
            && open.yaml.is_none()
            && (indent > open.indent || trimmed.is_empty() || trimmed.starts_with('#'))
        {
            let text = trimmed.strip_prefix('#').map_or(trimmed, str::trim);
            if open.text.len() < MAX_KEPT_LINES {
                open.text.push(kept(text));
            }
            return LineOutcome::Continued(0);
        }
        if self.open.as_ref().is_some_and(|open| indent <= open.indent) {
            self.close(findings);
        }
        LineOutcome::Unmatched
    }

    fn finish(&mut self, findings: &mut Findings) {
        self.close(findings);
        let counted = &self.counted;
        let tests = TestCounts {
            passed: self.printed.passed.unwrap_or(counted.passed),
            failed: self.printed.failed.unwrap_or(counted.failed),
            skipped: self.printed.skipped.unwrap_or(counted.skipped),
        };
        if tests != TestCounts::default() {
            *findings.tests_mut() = tests;
        }
    }
}

impl TapSession<'_> {
    /// Reads a count the runner printed (`# pass 3`, node's and tape's); whether it was one.
    fn printed_count(&mut self, line: &str) -> bool {
        let Some(rest) = line.strip_prefix("# ") else {
            return false;
        };
        let Some((word, number)) = rest.split_once(' ') else {
            return false;
        };
        let Ok(number) = number.trim().parse::<u64>() else {
            return false;
        };
        let slot = match word {
            "pass" => &mut self.printed.passed,
            "fail" => &mut self.printed.failed,
            "skip" | "skipped" => &mut self.printed.skipped,
            "tests" | "suites" | "todo" | "cancelled" => return true,
            _ => return false,
        };
        *slot = Some(slot.unwrap_or(0) + number);
        true
    }

    /// What the open test point comes to, now that all that follows it is read.
    fn close(&mut self, findings: &mut Findings) {
        let Some(open) = self.open.take() else {
            return;
        };
        let (name, opens) = match open.name.strip_suffix(" {") {
            Some(name) => (name.trim_end().to_string(), true),
            None => (open.name.clone(), open.name == "{"),
        };
        if opens {
            self.suites.push((open.indent, name));
            return;
        }
        let block = open.yaml.as_deref().map(read_yaml).unwrap_or(Value::Null);
        if text_of(&block, "type").is_some_and(|kind| kind == "suite") {
            return;
        }
        // A flat name that begins with the test file: the file, then the suites and the test.
        let (file, name) = match name.split_once(" > ") {
            Some((first, rest)) if is_test_file(first) => (Some(first.to_string()), rest),
            _ => (None, name.as_str()),
        };
        let file_level = file.is_none() && is_test_file(name);
        if !file_level {
            let counts = &mut self.counted;
            match (open.ok, open.directive) {
                (_, Directive::Skip | Directive::Todo) => counts.skipped += 1,
                (true, Directive::None) => counts.passed += 1,
                (false, Directive::None) => counts.failed += 1,
            }
        }
        if open.ok || open.directive != Directive::None {
            return;
        }
        // The file of the suites around it, when the outermost is a file (vitest).
        let suite_file = self
            .suites
            .first()
            .filter(|(_, name)| is_test_file(name))
            .map(|(_, name)| name.clone());
        let code: Vec<&str> = self
            .suites
            .iter()
            .map(|(_, name)| name.as_str())
            .filter(|name| !is_test_file(name))
            .chain([name])
            .collect();
        let own_file = file
            .or(suite_file)
            .or_else(|| file_level.then(|| name.to_string()));
        let place = place(&block, &open.text, self.context);
        let (file, line, column) = match place {
            Some((file, line, column)) => (Some(file), Some(line), (column > 0).then_some(column)),
            None => (own_file, None, None),
        };
        findings.add(
            NAME,
            self.context,
            Found {
                file,
                line,
                column,
                severity: Some(Severity::Error),
                code: Some(code.join(" > ")),
                message: message(&block, &open.text),
                ..Found::default()
            },
        );
    }
}

/// An `ok`/`not ok` line: `not ok 3 - name # SKIP reason`.
fn test_point(line: &str) -> Option<Open> {
    let indent = line.len() - line.trim_start().len();
    let trimmed = line.trim();
    let (ok, rest) = if let Some(rest) = trimmed.strip_prefix("not ok") {
        (false, rest)
    } else {
        (true, trimmed.strip_prefix("ok")?)
    };
    if !(rest.is_empty() || rest.starts_with(' ')) {
        return None;
    }
    let rest = rest.trim_start();
    let rest = rest
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .trim_start();
    let rest = rest.strip_prefix("- ").unwrap_or(rest);
    let rest = if rest == "-" { "" } else { rest };
    // The directive follows the first " # " (vitest puts its time there, and a suite's "{"
    // after it).
    // A directive with no name before it: `ok 4 # skip`.
    let rest = if rest.starts_with("# ") {
        format!(" {rest}")
    } else {
        rest.to_string()
    };
    let (name, directive) = match rest.split_once(" # ") {
        Some((name, after)) => {
            let word = after.trim_start().to_ascii_lowercase();
            let directive = if word.starts_with("skip") {
                Directive::Skip
            } else if word.starts_with("todo") {
                Directive::Todo
            } else {
                Directive::None
            };
            let opens = after.trim_end().ends_with(" {");
            (
                format!("{}{}", name.trim_end(), if opens { " {" } else { "" }),
                directive,
            )
        }
        None => (rest.trim_end().to_string(), Directive::None),
    };
    Some(Open {
        indent,
        ok,
        name,
        directive,
        yaml: None,
        closed: false,
        text: Vec::new(),
    })
}

/// A TAP plan, `1..N` (with a reason after `#` when N is 0).
fn plan(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("1..") else {
        return false;
    };
    let count = rest.split(" #").next().unwrap_or_default();
    !count.is_empty() && count.chars().all(|c| c.is_ascii_digit())
}

/// Whether `name` is a test file's path (a point for a whole file, or a flat name's first part).
fn is_test_file(name: &str) -> bool {
    const EXTENSIONS: &[&str] = &[
        "js", "cjs", "mjs", "jsx", "ts", "cts", "mts", "tsx", "py", "rb", "sh", "bats", "t",
    ];
    name.rsplit_once('.').is_some_and(|(stem, extension)| {
        !stem.is_empty() && !extension.contains(' ') && EXTENSIONS.contains(&extension)
    })
}

/// The YAML block, read as data. A double-quoted text may go on over lines that are not
/// indented (vitest writes a multi-line message so): they are taken as its own.
fn read_yaml(block: &[(usize, String)]) -> Value {
    let mut lines: Vec<(usize, &str)> = Vec::with_capacity(block.len());
    let mut quoted = false;
    for (indent, text) in block {
        if quoted {
            let deeper = lines.last().map_or(0, |l| l.0) + 1;
            lines.push((deeper, text));
            quoted = !closes_quote(text);
            continue;
        }
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        lines.push((*indent, text));
        quoted = text
            .split_once(": \"")
            .is_some_and(|(_, value)| !closes_quote(value));
    }
    let indent = lines.first().map_or(0, |l| l.0);
    yaml::block(&lines, &mut 0, indent)
}

/// Whether `text` holds a `"` that is not escaped (the end of a double-quoted text).
fn closes_quote(text: &str) -> bool {
    let mut escaped = false;
    for c in text.chars() {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => return true,
            _ => escaped = false,
        }
    }
    false
}

fn text_of<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str)
}

/// The failure's message (its first line).
fn message(block: &Value, text: &[String]) -> String {
    let first_line = |s: &str| {
        s.lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(str::to_string)
    };
    let from_block = match block.get("error") {
        Some(Value::String(error)) => first_line(error),
        Some(Value::Object(error)) => {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .and_then(first_line);
            match (error.get("name").and_then(Value::as_str), message) {
                (Some(name), Some(message)) => Some(format!("{name}: {message}")),
                (_, message) => message,
            }
        }
        _ => None,
    };
    from_block
        .or_else(|| text_of(block, "message").and_then(first_line))
        .or_else(|| {
            text.iter()
                .filter(|l| comment_place(l).is_none())
                .find_map(|l| first_line(l))
        })
        .unwrap_or_else(|| "test failed".to_string())
}

/// Where the test failed, in the user's code: the block's `at`, else the first such frame of its
/// `stack` or of the indented text.
fn place(block: &Value, text: &[String], context: &ParseContext) -> Option<(String, u32, u32)> {
    let user = |(file, line, column): (String, u32, u32)| {
        is_user_frame(&file, context).then_some((file, line, column))
    };
    let at = match block.get("at") {
        Some(Value::String(at)) => frame(at),
        Some(Value::Object(at)) => at_mapping(at),
        _ => None,
    };
    at.and_then(user)
        .or_else(|| {
            text_of(block, "stack")?
                .lines()
                .find_map(|l| frame(l).and_then(user))
        })
        .or_else(|| text.iter().find_map(|l| frame(l).and_then(user)))
        .or_else(|| {
            text.iter()
                .find_map(|l| comment_place(l))
                .map(|(file, line)| (file, line, 0))
                .filter(|(file, ..)| is_user_frame(file, context))
        })
}

/// The place a comment gives: bats' `(in test file test/x.bats, line 5)`, Perl's
/// `at t/basic.t line 12.`
fn comment_place(line: &str) -> Option<(String, u32)> {
    let line = line.trim();
    let (file, number) = if let Some(rest) = line.strip_prefix("(in test file ") {
        rest.strip_suffix(')')?.rsplit_once(", line ")?
    } else {
        line.strip_prefix("at ")?
            .strip_suffix('.')?
            .rsplit_once(" line ")?
    };
    Some((file.to_string(), number.parse().ok()?))
}

/// tape's and node-tap's `at: {file, line, column}`.
fn at_mapping(at: &Map<String, Value>) -> Option<(String, u32, u32)> {
    let number = |key: &str| match at.get(key)? {
        Value::String(s) => s.parse().ok(),
        Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
        _ => None,
    };
    let file = at.get("file")?.as_str()?.to_string();
    Some((file, number("line")?, number("column").unwrap_or(1)))
}

/// A frame: `at fn (path:line:col)`, `fn (path:line:col)` (node's stack in TAP), `at path:l:c`
/// or `path:line:col` (a `file://` URL is read as its path when the finding's is resolved).
fn frame(line: &str) -> Option<(String, u32, u32)> {
    let frame = line.trim();
    let frame = frame.strip_prefix("at ").unwrap_or(frame);
    frame_place(frame).map(|(path, line, column)| (path.to_string(), line, column))
}

#[cfg(test)]
#[path = "tap_tests.rs"]
mod tests;
