//! CI annotation commands, read in any log whichever parser reads the rest: GitHub's workflow
//! commands (`::error file=app.py,line=3,col=1,endLine=3,title=ruff (F401)::message`, and
//! `warning`, `notice`), which ruff, pylint, yamllint, biome, stylelint, actionlint and many
//! scripts print, and Azure Pipelines' logging commands
//! (`##vso[task.logissue type=error;sourcepath=app.py;linenumber=3;code=F401;]message`).
//!
//! Values are unescaped the way `@actions/core` escapes them (`%25`, `%0D`, `%0A`, and in
//! properties `%3A`, `%2C`) and the way Azure's agent does (`%AZP25`, `%3B`, `%5D`, `%0D`,
//! `%0A`). A message's first line is the finding's message, the rest its body. The code is the
//! `code` property (Azure), else the title's (`ruff (F401)`: `F401`; `C0114`; biome's
//! `lint/suspicious/noDoubleEquals`), else a `[rule]` after the place at the message's start
//! (yamllint's `3:1 [truthy] …`), else none. A message that repeats the location
//! (`app.py:3:1: F401 …`, ruff's; `3:1 `, yamllint's) or the code first has them taken off.
//!
//! The [`Annotations`] parser reads only these lines: `auto` chooses it for a log of nothing
//! else; every other line parser gets them read by [`Annotated`] before its own rules see them.

use std::sync::LazyLock;

use regex::Regex;

use super::{Findings, Found, LineOutcome, ParseContext, ParseSession, Parser};
use crate::model::Severity;

/// The name of the parser that reads only annotation commands.
pub const NAME: &str = "annotations";

/// Reads `line` as an annotation command; `None` when it is none (other workflow commands such
/// as `::group::` or `::debug::` included).
pub fn read(line: &str) -> Option<Found> {
    // Most lines are none: only one whose first byte past its indent is `:` or `#` is looked at.
    let indent = line.bytes().position(|b| !b.is_ascii_whitespace())?;
    if !matches!(line.as_bytes()[indent], b':' | b'#') {
        return None;
    }
    let line = &line[indent..];
    if let Some(rest) = line.strip_prefix("::") {
        return github(rest);
    }
    line.strip_prefix("##vso[task.logissue").and_then(azure)
}

/// `error file=…,line=…::message` (after the leading `::`).
fn github(rest: &str) -> Option<Found> {
    let (head, message) = rest.split_once("::")?;
    let (command, properties) = match head.split_once(' ') {
        Some((command, properties)) => (command, properties),
        None => (head, ""),
    };
    let severity = match command.to_ascii_lowercase().as_str() {
        "error" => Severity::Error,
        "warning" => Severity::Warning,
        "notice" => Severity::Note,
        _ => return None,
    };
    let mut annotation = Annotation::new(severity);
    for property in properties.split(',').filter(|p| !p.trim().is_empty()) {
        let (key, value) = property.split_once('=')?;
        annotation.set(key.trim(), &unescape_github(value));
    }
    Some(annotation.finish(&unescape_github(message)))
}

/// ` type=error;sourcepath=…;]message` (after `##vso[task.logissue`).
fn azure(rest: &str) -> Option<Found> {
    // Properties end at `;]`, else at the first `]`: ruff leaves a `]` in a path unescaped.
    let (properties, message) = rest.split_once(";]").map_or_else(
        || rest.split_once(']'),
        |(properties, message)| Some((properties, message)),
    )?;
    if !properties.is_empty() && !properties.starts_with(char::is_whitespace) {
        return None;
    }
    let mut severity = None;
    let mut annotation = Annotation::new(Severity::Error);
    for property in properties.split(';').filter(|p| !p.trim().is_empty()) {
        let (key, value) = property.split_once('=')?;
        let value = unescape_azure(value);
        match key.trim().to_ascii_lowercase().as_str() {
            "type" => {
                severity = Some(match value.to_ascii_lowercase().as_str() {
                    "error" => Severity::Error,
                    "warning" => Severity::Warning,
                    _ => return None,
                });
            }
            "sourcepath" => annotation.set("file", &value),
            "linenumber" => annotation.set("line", &value),
            "columnnumber" => annotation.set("col", &value),
            other => annotation.set(other, &value),
        }
    }
    annotation.found.severity = Some(severity?);
    Some(annotation.finish(&unescape_azure(message)))
}

/// An annotation's properties as they are read.
struct Annotation {
    found: Found,
    title: Option<String>,
}

impl Annotation {
    fn new(severity: Severity) -> Self {
        Self {
            found: Found {
                severity: Some(severity),
                ..Found::default()
            },
            title: None,
        }
    }

    fn set(&mut self, key: &str, value: &str) {
        let value = value.trim();
        let number = || value.parse::<u32>().ok();
        let found = &mut self.found;
        match key.to_ascii_lowercase().as_str() {
            "file" if !value.is_empty() => found.file = Some(value.to_string()),
            "line" => found.line = number(),
            "col" | "column" => found.column = number(),
            "endline" => found.end_line = number(),
            "endcolumn" | "endcol" => found.end_column = number(),
            "code" if !value.is_empty() => found.code = Some(value.to_string()),
            "title" if !value.is_empty() => self.title = Some(value.to_string()),
            _ => {}
        }
    }

    fn finish(mut self, message: &str) -> Found {
        if self.found.code.is_none() {
            self.found.code = self.title.as_deref().and_then(code_of_title);
        }
        let (first, body) = match message.split_once('\n') {
            Some((first, body)) => (first.trim_end_matches('\r'), Some(body)),
            None => (message, None),
        };
        // yamllint's `line:column [rule] message`.
        let (first, placed) = match strip_place_and_rule(first, self.found.line) {
            Some((rest, rule)) => {
                if self.found.code.is_none() {
                    self.found.code = rule.map(str::to_string);
                }
                (rest, true)
            }
            None => (first, false),
        };
        let (mut text, column) = strip_location(first, self.found.line);
        // ruff leaves `col` out of a multi-line annotation but prints it in the message.
        self.found.column = self.found.column.or(column);
        // (not after yamllint's place: its message may start with its rule's word, `truthy value`)
        if let Some(code) = &self.found.code
            && !placed
            && let Some(rest) = text.strip_prefix(code.as_str())
            && let Some(rest) = rest.strip_prefix([' ', ':'])
        {
            text = rest.trim_start();
        }
        // ruff's mark of a fixable finding.
        text = text.strip_prefix("[*] ").unwrap_or(text);
        self.found.message = match (text.trim(), &self.title) {
            ("", Some(title)) => title.clone(),
            (text, _) => text.to_string(),
        };
        self.found.body = body
            .map(|body| body.trim_end().to_string())
            .filter(|body| !body.is_empty());
        self.found
    }
}

/// The code a title names: the last parenthesised word (`ruff (F401)`), the word after a
/// `tool: ` (`pylint: C0114`), or a title of one word (`C0114`, `lint/style/useConst`).
fn code_of_title(title: &str) -> Option<String> {
    static CODE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:\S+)$|\((?P<paren>[^\s()]+)\)$|^[\w.-]+: (?P<after>\S+)$")
            .expect("a valid regex")
    });
    let captures = CODE.captures(title.trim())?;
    let code = captures
        .name("paren")
        .or(captures.name("after"))
        .map_or(title.trim(), |m| m.as_str());
    Some(code.to_string())
}

/// `message` without a leading `path:line[:column]: ` that repeats the annotation's `line`, and
/// the column it names.
fn strip_location(message: &str, line: Option<u32>) -> (&str, Option<u32>) {
    static LOCATION: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\S.*?:(?P<line>\d+)(?::(?P<column>\d+))?:? ").expect("a valid regex")
    });
    let Some(captures) = LOCATION.captures(message) else {
        return (message, None);
    };
    if line.is_none() || captures["line"].parse::<u32>().ok() != line {
        return (message, None);
    }
    let column = captures
        .name("column")
        .and_then(|c| c.as_str().parse().ok());
    (message[captures[0].len()..].trim_start(), column)
}

/// `message` without a leading `line:column ` and `[rule] ` (yamllint's) whose line is the
/// annotation's, and the rule.
fn strip_place_and_rule(message: &str, line: Option<u32>) -> Option<(&str, Option<&str>)> {
    static PLACE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?P<line>\d+):\d+ (?:\[(?P<rule>[\w.-]+)\] )?")
            .expect("a built-in pattern compiles")
    });
    let captures = PLACE.captures(message)?;
    (captures["line"].parse::<u32>().ok()? == line?).then(|| {
        let rule = captures.name("rule").map(|m| m.as_str());
        (&message[captures[0].len()..], rule)
    })
}

fn unescape_github(value: &str) -> String {
    if !value.contains('%') {
        return value.to_string();
    }
    value
        .replace("%0D", "\r")
        .replace("%0A", "\n")
        .replace("%3A", ":")
        .replace("%2C", ",")
        .replace("%25", "%")
}

fn unescape_azure(value: &str) -> String {
    if !value.contains('%') {
        return value.to_string();
    }
    value
        .replace("%0D", "\r")
        .replace("%0A", "\n")
        .replace("%3B", ";")
        .replace("%5D", "]")
        .replace("%AZP25", "%")
}

/// The parser of annotation commands alone.
#[derive(Debug)]
pub struct Annotations;

impl Parser for Annotations {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        "CI annotation commands: GitHub's ::error/::warning/::notice, Azure's ##vso[task.logissue]"
    }

    fn command(&self) -> &str {
        "ruff check --output-format=github ."
    }

    fn reads_annotations(&self) -> bool {
        true
    }

    fn session<'a>(&'a self, context: &'a ParseContext) -> Box<dyn ParseSession + 'a> {
        Box::new(Annotated {
            tool: NAME,
            context,
            inner: None,
        })
    }
}

/// A line parser's session with annotation commands read first: a line that is one becomes a
/// finding of the parser's tool, and the parser's own rules never see it.
pub struct Annotated<'a> {
    tool: &'a str,
    context: &'a ParseContext,
    inner: Option<Box<dyn ParseSession + 'a>>,
}

impl std::fmt::Debug for Annotated<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Annotated")
            .field("tool", &self.tool)
            .finish()
    }
}

impl<'a> Annotated<'a> {
    /// `parser`'s session reading annotation commands too (a reader of whole documents, or the
    /// parser of annotations itself, as it is).
    pub fn open(parser: &'a dyn Parser, context: &'a ParseContext) -> Box<dyn ParseSession + 'a> {
        let session = parser.session(context);
        if parser.reads_documents() || parser.reads_annotations() {
            return session;
        }
        Box::new(Self {
            tool: parser.name(),
            context,
            inner: Some(session),
        })
    }
}

impl ParseSession for Annotated<'_> {
    fn line(&mut self, line: &str, findings: &mut Findings) -> LineOutcome {
        if let Some(found) = read(line) {
            findings.add(self.tool, self.context, found);
            return LineOutcome::Annotation;
        }
        match &mut self.inner {
            Some(inner) => inner.line(line, findings),
            None => LineOutcome::Unmatched,
        }
    }

    fn bytes(&mut self, chunk: &[u8], findings: &mut Findings) {
        if let Some(inner) = &mut self.inner {
            inner.bytes(chunk, findings);
        }
    }

    fn finish(&mut self, findings: &mut Findings) {
        if let Some(inner) = &mut self.inner {
            inner.finish(findings);
        }
    }

    fn explained_lines(&self, lines: u64) -> u64 {
        self.inner
            .as_ref()
            .map_or(0, |inner| inner.explained_lines(lines))
    }
}

#[cfg(test)]
#[path = "annotations_tests.rs"]
mod tests;
