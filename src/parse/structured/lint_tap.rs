//! A linter's TAP report (`eslint -f tap`, `stylelint -f tap`): one TAP test per file, `not ok N -
//! <path>`, its problems in the YAML block under it. The YAML is read as data (quoted strings
//! unescaped, block scalars joined), and every mapping in it with a `message` and a `severity` is
//! one problem of that file:
//!
//! ```text
//! not ok 2 - /repo/src/cart.js                    not ok 2 - /repo/styles/site.css
//!   ---                                             ---
//!   message: Expected '===' and instead saw '=='.   color-named:
//!   severity: error                                   - message: "Disallowed named color \"red\" (color-named)"
//!   data:                                               severity: warning
//!     line: 17                                          line: 5
//!     column: 14                                        column: 10
//!     ruleId: eqeqeq                              ...
//!   messages:
//!     - message: '''rounded'' is never reassigned.'
//!       ...
//! ```
//!
//! The place is the mapping's `line`/`column` or its `data`'s (ESLint); the code its `ruleId` (or
//! its `data`'s; ESLint writes `''` for a problem without a rule), else the key of the list it is
//! in (stylelint groups problems by rule). Severity: `error` is an error, `warning` a warning,
//! `info` a note. A test runner's TAP (node's, whose blocks hold no such mapping) yields nothing
//! here, and `auto` does not take it for this.

use serde_json::{Map, Value};

use super::{Found, Sink};
use crate::model::Severity;
use crate::parse::{Findings, LineOutcome, ParseContext, ParseSession, Parser};

#[derive(Debug)]
pub struct LintTap;

/// The longest line kept: a YAML line of a report is short.
const MAX_LINE: usize = 1 << 20;

impl Parser for LintTap {
    fn name(&self) -> &str {
        "lint-tap"
    }

    fn category(&self) -> Option<&str> {
        Some("lint")
    }

    fn description(&self) -> &str {
        "a linter's TAP report: eslint -f tap, stylelint -f tap (structured)"
    }

    fn command(&self) -> &str {
        "stylelint -f tap '**/*.css'"
    }

    fn reads_documents(&self) -> bool {
        true
    }

    fn session<'a>(&'a self, context: &'a ParseContext) -> Box<dyn ParseSession + 'a> {
        Box::new(TapSession {
            context,
            pending: Vec::new(),
            file: None,
            file_line: false,
            block: None,
            explained: 0,
        })
    }
}

struct TapSession<'a> {
    context: &'a ParseContext,
    /// The raw line being assembled.
    pending: Vec<u8>,
    /// The path of the last `ok`/`not ok` line.
    file: Option<String>,
    /// Whether that line is not yet counted as explained (it is once its block has a problem).
    file_line: bool,
    /// The lines of the open YAML block.
    block: Option<Vec<String>>,
    /// Lines read as the report's own.
    explained: u64,
}

impl TapSession<'_> {
    fn raw_line(&mut self, findings: &mut Findings) {
        let raw = std::mem::take(&mut self.pending);
        let text = String::from_utf8_lossy(&raw);
        self.read_line(text.trim_end_matches('\r'), findings);
    }

    fn read_line(&mut self, line: &str, findings: &mut Findings) {
        let trimmed = line.trim();
        if let Some(block) = self.block.as_mut() {
            if trimmed == "..." {
                let block = self.block.take().unwrap_or_default();
                let lines = block.len() as u64 + 2;
                let found = self.read_block(&block, findings);
                if found > 0 {
                    self.explained += lines + u64::from(std::mem::take(&mut self.file_line));
                }
            } else {
                block.push(line.to_string());
            }
            return;
        }
        if trimmed == "---" && self.file.is_some() {
            self.block = Some(Vec::new());
        } else if let Some(path) = test_line(trimmed) {
            self.file = Some(path.to_string());
            self.file_line = true;
        } else if trimmed.starts_with("TAP version ") || plan(trimmed) {
            self.explained += 1;
        }
    }

    /// Reads one YAML block into the findings of the current file; how many it held.
    fn read_block(&mut self, block: &[String], findings: &mut Findings) -> usize {
        let lines: Vec<(usize, &str)> = block
            .iter()
            .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
            .map(|l| (l.len() - l.trim_start().len(), l.trim_start()))
            .collect();
        let mut at = 0;
        let indent = lines.first().map_or(0, |l| l.0);
        let value = yaml::block(&lines, &mut at, indent);
        let mut problems = Vec::new();
        collect(&value, None, &mut problems);
        let count = problems.len();
        let mut sink = Sink {
            tool: "lint-tap",
            context: self.context,
            findings,
        };
        for mut found in problems {
            found.file = self.file.clone();
            sink.push(found);
        }
        count
    }
}

/// The path of an `ok N - path` or `not ok N - path` line.
fn test_line(line: &str) -> Option<&str> {
    let rest = line
        .strip_prefix("not ok ")
        .or_else(|| line.strip_prefix("ok "))?;
    let (number, path) = rest.split_once(" - ")?;
    (number.chars().all(|c| c.is_ascii_digit()) && !path.is_empty()).then_some(path)
}

/// A TAP plan, `1..N`.
fn plan(line: &str) -> bool {
    line.strip_prefix("1..")
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

/// Every problem in `value`: a mapping with a `message` and a `severity`. `key` is the key the
/// value stands under (a list of stylelint's problems stands under its rule).
fn collect(value: &Value, key: Option<&str>, problems: &mut Vec<Found>) {
    match value {
        Value::Object(map) => {
            if let (Some(message), Some(severity)) = (text(map, "message"), text(map, "severity")) {
                problems.push(problem(map, message, &severity, key));
            }
            for (key, value) in map {
                collect(value, Some(key), problems);
            }
        }
        Value::Array(items) => {
            for item in items {
                collect(item, key, problems);
            }
        }
        _ => {}
    }
}

fn problem(map: &Map<String, Value>, message: String, severity: &str, key: Option<&str>) -> Found {
    let data = map.get("data").and_then(Value::as_object);
    let field = |name: &str| text(map, name).or_else(|| data.and_then(|d| text(d, name)));
    let number = |name: &str| field(name).and_then(|n| n.parse().ok());
    let code = match field("ruleId") {
        Some(rule) => Some(rule),
        // ESLint's `data` always says ruleId, '' when there is none.
        None if data.is_some() => None,
        None => key.filter(|k| *k != "messages").map(str::to_string),
    };
    Found {
        line: number("line"),
        column: number("column"),
        end_line: number("endLine"),
        end_column: number("endColumn"),
        severity: Some(match severity.to_ascii_lowercase().as_str() {
            "warning" | "warn" => Severity::Warning,
            "info" | "note" | "notice" => Severity::Note,
            _ => Severity::Error,
        }),
        code: code.filter(|c| !c.is_empty()),
        message,
        ..Found::default()
    }
}

/// A scalar of the mapping as text (YAML scalars are read as strings).
fn text(map: &Map<String, Value>, name: &str) -> Option<String> {
    match map.get(name)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

impl ParseSession for TapSession<'_> {
    fn line(&mut self, line: &str, findings: &mut Findings) -> LineOutcome {
        self.read_line(line, findings);
        LineOutcome::Unmatched
    }

    fn bytes(&mut self, mut chunk: &[u8], findings: &mut Findings) {
        while let Some(newline) = memchr::memchr(b'\n', chunk) {
            self.append(&chunk[..newline]);
            self.raw_line(findings);
            chunk = &chunk[newline + 1..];
        }
        self.append(chunk);
    }

    fn finish(&mut self, findings: &mut Findings) {
        if !self.pending.is_empty() {
            self.raw_line(findings);
        }
    }

    fn explained_lines(&self, _lines: u64) -> u64 {
        self.explained
    }
}

impl TapSession<'_> {
    fn append(&mut self, part: &[u8]) {
        let room = MAX_LINE.saturating_sub(self.pending.len());
        self.pending
            .extend_from_slice(&part[..part.len().min(room)]);
    }
}

/// The block YAML that TAP reporters write (js-yaml's and the `yaml` package's dumps): mappings
/// and sequences by indentation, plain, single- and double-quoted scalars (a plain or quoted one
/// may go on over more-indented lines), and `|` / `>` block scalars. Flow collections, anchors
/// and tags are not read (their text is kept as a plain scalar).
pub(crate) mod yaml {
    use serde_json::{Map, Value};

    /// Reads the node at `indent` starting at `lines[*at]` (indentation, text without it).
    pub fn block(lines: &[(usize, &str)], at: &mut usize, indent: usize) -> Value {
        match lines.get(*at) {
            Some(&(i, text)) if i == indent && (text == "-" || text.starts_with("- ")) => {
                sequence(lines, at, indent)
            }
            Some(&(i, _)) if i == indent => mapping(lines, at, indent),
            _ => Value::Null,
        }
    }

    fn sequence(lines: &[(usize, &str)], at: &mut usize, indent: usize) -> Value {
        let mut items = Vec::new();
        while let Some(&(i, text)) = lines.get(*at) {
            if i != indent || !(text == "-" || text.starts_with("- ")) {
                break;
            }
            let rest = text[1..].trim_start();
            if rest.is_empty() {
                *at += 1;
                let inner = lines.get(*at).map_or(indent + 2, |l| l.0);
                items.push(if inner > indent {
                    block(lines, at, inner)
                } else {
                    Value::Null
                });
                continue;
            }
            // The item's first line stands where its text begins: `- key: value` opens a
            // mapping at that column, whose next keys are indented as far.
            let column = indent + (text.len() - rest.len());
            let mut owned: Vec<(usize, &str)> = lines.to_vec();
            owned[*at] = (column, rest);
            items.push(block(&owned, at, column));
        }
        Value::Array(items)
    }

    fn mapping(lines: &[(usize, &str)], at: &mut usize, indent: usize) -> Value {
        let mut map = Map::new();
        while let Some(&(i, text)) = lines.get(*at) {
            if i != indent || text.starts_with("- ") {
                break;
            }
            let Some((key, rest)) = key_value(text) else {
                break;
            };
            *at += 1;
            let value = if rest.is_empty() {
                match lines.get(*at) {
                    Some(&(next, _)) if next > indent => block(lines, at, next),
                    // A sequence may stand at its key's indentation.
                    Some(&(next, t)) if next == indent && (t == "-" || t.starts_with("- ")) => {
                        sequence(lines, at, indent)
                    }
                    _ => Value::Null,
                }
            } else if let Some(style) = block_style(rest) {
                block_scalar(lines, at, indent, style)
            } else {
                let mut scalar_text = rest.to_string();
                while let Some(&(next, more)) = lines.get(*at) {
                    if next <= indent {
                        break;
                    }
                    scalar_text.push('\n');
                    scalar_text.push_str(more);
                    *at += 1;
                }
                Value::String(scalar(&scalar_text))
            };
            map.insert(unquote_key(key), value);
        }
        Value::Object(map)
    }

    /// `key: rest` (rest may be empty); a quoted key may hold `: `.
    fn key_value(text: &str) -> Option<(&str, &str)> {
        let end = if text.starts_with(['"', '\'']) {
            let quote = text.chars().next()?;
            let close = text[1..].find(quote)? + 1;
            close + 1
        } else {
            0
        };
        let colon = text[end..]
            .match_indices(':')
            .map(|(i, _)| i + end)
            .find(|&i| text[i + 1..].is_empty() || text[i + 1..].starts_with(' '))?;
        Some((&text[..colon], text[colon + 1..].trim()))
    }

    fn unquote_key(key: &str) -> String {
        let key = key.trim();
        if key.starts_with(['"', '\'']) {
            scalar(key)
        } else {
            key.to_string()
        }
    }

    /// `|`, `|-`, `>`, `>-` (and `+`): whether it folds and whether it keeps the final newline.
    fn block_style(rest: &str) -> Option<(bool, bool)> {
        let mut chars = rest.chars();
        let folded = match chars.next()? {
            '|' => false,
            '>' => true,
            _ => return None,
        };
        let tail: String = chars.collect();
        let tail = tail.trim_start_matches(|c: char| c.is_ascii_digit());
        match tail {
            "" | "+" => Some((folded, true)),
            "-" => Some((folded, false)),
            _ => None,
        }
    }

    fn block_scalar(
        lines: &[(usize, &str)],
        at: &mut usize,
        indent: usize,
        (folded, keep): (bool, bool),
    ) -> Value {
        let mut parts = Vec::new();
        while let Some(&(next, text)) = lines.get(*at) {
            if next <= indent {
                break;
            }
            parts.push(text);
            *at += 1;
        }
        let mut text = parts.join(if folded { " " } else { "\n" });
        if keep {
            text.push('\n');
        }
        Value::String(text)
    }

    /// A scalar's text: quotes removed and escapes read; a plain scalar's lines joined by spaces.
    pub fn scalar(text: &str) -> String {
        let text = text.trim();
        if let Some(inner) = text.strip_prefix('\'') {
            let inner = inner.strip_suffix('\'').unwrap_or(inner);
            return fold(inner).replace("''", "'");
        }
        if let Some(inner) = text.strip_prefix('"') {
            let inner = inner.strip_suffix('"').unwrap_or(inner);
            return double_quoted(&fold(inner));
        }
        fold(text)
    }

    /// Lines of a flow scalar joined as YAML folds them: a line break is a space.
    fn fold(text: &str) -> String {
        text.lines().map(str::trim).collect::<Vec<_>>().join(" ")
    }

    fn double_quoted(text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some('0') => out.push('\0'),
                Some('x') => push_code(&mut out, &mut chars, 2),
                Some('u') => push_code(&mut out, &mut chars, 4),
                Some('U') => push_code(&mut out, &mut chars, 8),
                Some(other) => out.push(other),
                None => out.push('\\'),
            }
        }
        out
    }

    fn push_code(out: &mut String, chars: &mut std::str::Chars<'_>, digits: usize) {
        let hex: String = chars.take(digits).collect();
        match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
            Some(c) => out.push(c),
            None => out.push(char::REPLACEMENT_CHARACTER),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn read(report: &str) -> Vec<String> {
        let context = ParseContext {
            target: PathBuf::from("/repo"),
            cwd_relative: String::new(),
            sample: false,
        };
        let findings = crate::parse::parse_bytes(&LintTap, &context, report.as_bytes());
        findings
            .diagnostics()
            .iter()
            .map(|d| {
                format!(
                    "{}:{}:{} {:?} {} {}",
                    d.file.as_deref().unwrap_or("-"),
                    d.line.unwrap_or(0),
                    d.column.unwrap_or(0),
                    d.severity,
                    d.code.as_deref().unwrap_or("-"),
                    d.message
                )
            })
            .collect()
    }

    #[test]
    fn eslint_and_stylelint_shapes() {
        let eslint = "TAP version 13\n1..2\nok 1 - /repo/a.js\nnot ok 2 - /repo/b c.js\n  ---\n  message: 'Parsing error: Unexpected keyword ''return'''\n  severity: error\n  data:\n    line: 3\n    column: 3\n    ruleId: ''\n  messages:\n    - message: >-\n        a long\n        message\n      severity: warning\n      data:\n        line: 4\n        column: 1\n        ruleId: no-console\n  ...\n";
        assert_eq!(
            read(eslint),
            [
                "b c.js:3:3 Error - Parsing error: Unexpected keyword 'return'",
                "b c.js:4:1 Warning no-console a long message",
            ]
        );
        let stylelint = "TAP version 14\n1..1\nnot ok 1 - /repo/s.css\n  ---\n  color-named:\n    - message: \"Disallowed \\\"red\\\" (color-named)\"\n      severity: warning\n      line: 5\n      column: 10\n  ...\n";
        assert_eq!(
            read(stylelint),
            ["s.css:5:10 Warning color-named Disallowed \"red\" (color-named)"]
        );
    }

    #[test]
    fn a_test_runners_tap_is_not_a_lint_report() {
        let node = "TAP version 13\nnot ok 1 - adds\n  ---\n  duration_ms: 1\n  location: '/repo/t.js:1:1'\n  error: 'boom'\n  ...\n1..1\n";
        assert!(read(node).is_empty());
    }
}
