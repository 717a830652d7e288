//! JUnit XML: failed and errored test cases become findings; passed, failed and skipped cases
//! are counted. The document is read as a stream of elements, so `<testcase>` is found wherever
//! it stands: in a `<testsuite>`, in nested suites (PHPUnit), or straight under `<testsuites>`
//! (node's junit reporter). (quick-junit's reader takes only the first of these.) A linter's
//! JUnit is read as findings: a case named `org.<tool>.<rule>` (eslint, ruff), or named by its
//! place `<module>:<line>:<column>` with the code first in its failure text (pylint).

use std::io::BufRead;

use quick_xml::events::{BytesStart, Event};

use super::{DocumentReader, Found, Sink};
use crate::model::Severity;

/// Bytes of a failure's text kept while reading it (the first line becomes the message).
const MAX_TEXT: usize = 4 * 1024;

#[derive(Debug)]
pub struct Junit;

/// The test case being read.
#[derive(Debug, Default)]
struct Case {
    name: String,
    classname: Option<String>,
    file: Option<String>,
    line: Option<u32>,
    column: Option<u32>,
    /// The name of the `<testsuite>` it is in.
    suite: Option<String>,
    /// A `<property name="severity">` of the case (ruff's formatter writes one).
    severity: Option<Severity>,
    outcome: Outcome,
}

#[derive(Debug, Default)]
enum Outcome {
    #[default]
    Passed,
    Skipped,
    Failed {
        errored: bool,
        message: Option<String>,
        ty: Option<String>,
        text: String,
    },
}

/// Test cases counted so far, by outcome.
#[derive(Debug, Default)]
struct Counts {
    passed: u64,
    failed: u64,
    skipped: u64,
    /// Failed cases that are a linter's warnings or notes, not errors.
    not_errors: u64,
}

/// What the reader keeps from one element of the document to the next.
#[derive(Debug, Default)]
struct Reading {
    /// The `<testcase>` being read.
    open: Option<Case>,
    /// Inside a `<failure>` or `<error>`: its text is the failure's.
    in_problem: bool,
    /// A `<testsuites>` or `<testsuite>` was seen, so the document is JUnit even without cases.
    seen_testcase_parent: bool,
    /// The name of the innermost `<testsuite>` open.
    suite: Option<String>,
    counts: Counts,
}

impl DocumentReader for Junit {
    fn read(&self, document: &mut dyn BufRead, sink: &mut Sink<'_>) -> bool {
        let mut reader = quick_xml::Reader::from_reader(document);
        let mut buffer = Vec::new();
        let mut reading = Reading::default();
        loop {
            let event = match reader.read_event_into(&mut buffer) {
                Ok(event) => event,
                Err(_) => return false,
            };
            if let Event::Eof = event {
                break;
            }
            reading.read_event(event, sink);
            buffer.clear();
        }
        reading.finish(sink)
    }
}

impl Reading {
    /// Reads one event of the document (anything but its end).
    fn read_event(&mut self, event: Event<'_>, sink: &mut Sink<'_>) {
        match event {
            Event::Start(element) if element.local_name().as_ref() == b"testcase" => {
                self.close_case(sink);
                self.open = Some(case_of(&element, self.suite.clone()));
            }
            Event::Empty(element) if element.local_name().as_ref() == b"testcase" => {
                self.close_case(sink);
                finish_case(
                    case_of(&element, self.suite.clone()),
                    sink,
                    &mut self.counts,
                );
            }
            Event::Start(element) | Event::Empty(element) => self.read_element(&element),
            Event::Text(text) if self.in_problem => {
                if let Ok(text) = text.decode() {
                    append_text(&mut self.open, &text);
                }
            }
            Event::CData(data) if self.in_problem => {
                append_text(&mut self.open, &String::from_utf8_lossy(&data));
            }
            Event::End(element) => match element.local_name().as_ref() {
                b"testcase" => {
                    self.close_case(sink);
                    self.in_problem = false;
                }
                b"failure" | b"error" => self.in_problem = false,
                _ => {}
            },
            _ => {}
        }
    }

    /// Reads an element other than `<testcase>`: a suite marks the document as JUnit; inside a
    /// case, `<failure>` and `<error>` fail it (their text follows) and `<skipped>` skips it.
    fn read_element(&mut self, element: &BytesStart<'_>) {
        let name = element.local_name();
        if matches!(name.as_ref(), b"testsuites" | b"testsuite") {
            self.seen_testcase_parent = true;
        }
        if name.as_ref() == b"testsuite" {
            self.suite = attribute(element, "name");
        }
        if let Some(case) = self.open.as_mut() {
            match name.as_ref() {
                b"failure" | b"error" => {
                    case.outcome = Outcome::Failed {
                        errored: name.as_ref() == b"error",
                        message: attribute(element, "message"),
                        ty: attribute(element, "type"),
                        text: String::new(),
                    };
                    self.in_problem = true;
                }
                b"skipped" => case.outcome = Outcome::Skipped,
                b"property" if attribute(element, "name").as_deref() == Some("severity") => {
                    case.severity = match attribute(element, "value").as_deref() {
                        Some("error") => Some(Severity::Error),
                        Some("warning") => Some(Severity::Warning),
                        Some("info" | "note") => Some(Severity::Note),
                        _ => None,
                    };
                }
                _ => {}
            }
        }
    }

    /// Counts the open test case, if any, and reports it when it failed.
    fn close_case(&mut self, sink: &mut Sink<'_>) {
        if let Some(case) = self.open.take() {
            finish_case(case, sink, &mut self.counts);
        }
    }

    /// Closes the last case and adds the counts to the findings; false when the document had
    /// neither a suite nor a case (it is not JUnit).
    fn finish(mut self, sink: &mut Sink<'_>) -> bool {
        self.close_case(sink);
        let Counts {
            passed,
            failed,
            skipped,
            not_errors,
        } = self.counts;
        if !self.seen_testcase_parent && passed + failed + skipped == 0 {
            return false;
        }
        let tests = sink.findings().tests_mut();
        tests.passed += passed;
        tests.failed += failed;
        tests.skipped += skipped;
        let expected = sink.findings().expected_mut();
        expected.error = Some(
            expected
                .error
                .unwrap_or(0)
                .saturating_add(failed - not_errors),
        );
        true
    }
}

fn case_of(element: &BytesStart<'_>, suite: Option<String>) -> Case {
    Case {
        column: attribute(element, "column").and_then(|c| c.parse().ok()),
        suite,
        name: attribute(element, "name").unwrap_or_default(),
        classname: attribute(element, "classname"),
        file: attribute(element, "file"),
        line: attribute(element, "line").and_then(|l| l.parse().ok()),
        severity: None,
        outcome: Outcome::Passed,
    }
}

fn append_text(open: &mut Option<Case>, more: &str) {
    if let Some(Case {
        outcome: Outcome::Failed { text, .. },
        ..
    }) = open
        && text.len() < MAX_TEXT
    {
        let room = MAX_TEXT - text.len();
        let cut = more
            .char_indices()
            .map(|(i, _)| i)
            .take_while(|&i| i <= room)
            .last()
            .unwrap_or(0);
        let piece = if more.len() <= room {
            more
        } else {
            &more[..cut]
        };
        text.push_str(piece);
    }
}

fn finish_case(case: Case, sink: &mut Sink<'_>, counts: &mut Counts) {
    match case.outcome {
        Outcome::Passed => counts.passed += 1,
        Outcome::Skipped => counts.skipped += 1,
        Outcome::Failed {
            errored,
            message,
            ty,
            text,
        } => {
            counts.failed += 1;
            let place = lint_place(&text);
            let message = [message, Some(text.clone()), ty]
                .into_iter()
                .flatten()
                .find(|m| !m.trim().is_empty())
                .map(|m| m.trim().to_string())
                .unwrap_or_else(|| {
                    if errored {
                        "test errored"
                    } else {
                        "test failed"
                    }
                    .into()
                });
            // A linter's JUnit (eslint's, ruff's and biome's formatters): each case is one
            // finding, named `org.<tool>.<rule>`, in a suite named by the file.
            if let Some((tool, rule)) = lint_rule(&case.name)
                && let Some(file) = case.file.clone().or(case.suite.clone())
            {
                let (line, column, severity) = place;
                let severity = case.severity.or(severity).unwrap_or(Severity::Error);
                if severity != Severity::Error {
                    counts.not_errors += 1;
                }
                sink.push(Found {
                    file: Some(file),
                    line: case.line.or(line),
                    column: case.column.or(column),
                    severity: Some(severity),
                    code: lint_code(tool, rule),
                    message,
                    ..Found::default()
                });
                return;
            }
            // A linter's JUnit that names each case by its place (pylint's `app.calc:7:7`, with
            // `file` and `line` attributes): the column is the name's, the code the failure
            // text's leading `C0121:`.
            if let Some(column) = place_column(&case.name, case.line)
                && case.file.is_some()
                && let Some((code, message)) = text.lines().next().and_then(code_first)
            {
                sink.push(Found {
                    file: case.file,
                    line: case.line,
                    column: Some(column),
                    severity: Some(Severity::Error),
                    code: Some(code.to_string()),
                    message: message.to_string(),
                    ..Found::default()
                });
                return;
            }
            let code = match case.classname.as_deref() {
                Some(class) if !class.is_empty() => format!("{class}.{}", case.name),
                _ => case.name,
            };
            sink.push(Found {
                file: case.file,
                line: case.line,
                severity: Some(Severity::Error),
                code: Some(code),
                message,
                ..Found::default()
            });
        }
    }
}

/// The column of a case named by its place, `<module>:<line>:<column>`, when the line is the
/// case's `line` attribute.
fn place_column(name: &str, line: Option<u32>) -> Option<u32> {
    let (rest, column) = name.rsplit_once(':')?;
    let (_, named_line) = rest.rsplit_once(':')?;
    (named_line.parse::<u32>().ok()? == line?)
        .then(|| column.parse().ok())
        .flatten()
}

/// A failure text's first line split into its leading code and the message: `C0121:Comparison …`.
fn code_first(line: &str) -> Option<(&str, &str)> {
    let (code, message) = line.split_once(':')?;
    let word = code.chars().next()?.is_ascii_alphabetic()
        && code
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
    (word && (code.chars().any(|c| c.is_ascii_digit()) || code.contains('-')))
        .then(|| (code, message.trim()))
}

/// The tool and rule of a linter's test case name, `org.<tool>.<rule>`.
fn lint_rule(name: &str) -> Option<(&str, &str)> {
    let (tool, rule) = name.strip_prefix("org.")?.split_once('.')?;
    let word = |s: &str| !s.is_empty() && !s.contains(char::is_whitespace);
    (word(tool) && word(rule) && tool.chars().all(|c| c.is_ascii_alphanumeric()))
        .then_some((tool, rule))
}

/// The code of a linter's case as the tool names it elsewhere: ESLint writes `unknown` for a
/// problem without a rule (a parsing error); biome writes its categories
/// (`lint/style/useConst`) with dots.
fn lint_code(tool: &str, rule: &str) -> Option<String> {
    match tool {
        "eslint" if rule == "unknown" => None,
        "biome" => Some(rule.replace('.', "/")),
        _ => Some(rule.to_string()),
    }
}

/// Line, column and severity from the text of a linter's failure, which ESLint's formatter writes
/// as its compact line, `line 17, col 14, Error - message (rule)` (biome and ruff write `line 4,
/// col 12, message`, with the place in attributes too).
fn lint_place(text: &str) -> (Option<u32>, Option<u32>, Option<Severity>) {
    let Some(rest) = text.trim_start().strip_prefix("line ") else {
        return (None, None, None);
    };
    let Some((line, rest)) = rest.split_once(", col ") else {
        return (None, None, None);
    };
    let Some((column, rest)) = rest.split_once(", ") else {
        return (None, None, None);
    };
    let severity = if rest.starts_with("Error - ") {
        Some(Severity::Error)
    } else if rest.starts_with("Warning - ") {
        Some(Severity::Warning)
    } else {
        None
    };
    (line.parse().ok(), column.parse().ok(), severity)
}

pub(super) fn attribute(element: &BytesStart<'_>, key: &str) -> Option<String> {
    element
        .attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == key.as_bytes())
        .and_then(|a| a.normalized_value(quick_xml::XmlVersion::Implicit1_0).ok())
        .map(|v| v.into_owned())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::parse::{Findings, ParseContext};

    fn read(xml: &str) -> (bool, Findings) {
        let context = ParseContext {
            target: PathBuf::from("/repo"),
            cwd_relative: String::new(),
            sample: false,
        };
        let mut findings = Findings::default();
        let mut sink = Sink {
            tool: "junit",
            context: &context,
            findings: &mut findings,
        };
        let recognized = Junit.read(&mut xml.as_bytes(), &mut sink);
        (recognized, findings)
    }

    #[test]
    fn layouts() {
        let table = [
            (
                "<testsuites><testsuite><testcase name=\"a\"/><testcase name=\"b\"><failure message=\"boom\"/></testcase></testsuite></testsuites>",
                (1, 1, 0),
                vec!["b: boom"],
            ),
            (
                "<testsuites><testsuite name=\"outer\"><testsuite name=\"inner\"><testcase classname=\"C\" name=\"t\"><error/></testcase></testsuite></testsuite></testsuites>",
                (0, 1, 0),
                vec!["C.t: test errored"],
            ),
            (
                "<testsuites><testcase name=\"n\"><failure type=\"T\"><![CDATA[first line\nsecond]]></failure></testcase><testcase name=\"s\"><skipped/></testcase></testsuites>",
                (0, 1, 1),
                vec!["n: first line"],
            ),
            ("<testsuite/>", (0, 0, 0), vec![]),
            (
                "<testsuites><testsuite name=\"app.calc\"><testcase name=\"app.calc:7:7\" classname=\"pylint\" file=\"app/calc.py\" line=\"7\"><failure type=\"convention\" message=\"singleton-comparison\">C0121:Comparison 'values == None'\napp/calc.py:7:7:if values == None:</failure></testcase></testsuite></testsuites>",
                (0, 1, 0),
                vec!["C0121: Comparison 'values == None'"],
            ),
        ];
        for (xml, (passed, failed, skipped), messages) in table {
            let (recognized, findings) = read(xml);
            assert!(recognized, "{xml}");
            let tests = findings.tests.unwrap();
            assert_eq!(
                (tests.passed, tests.failed, tests.skipped),
                (passed, failed, skipped),
                "{xml}"
            );
            let got: Vec<String> = findings
                .diagnostics()
                .iter()
                .map(|d| format!("{}: {}", d.code.as_deref().unwrap_or(""), d.message))
                .collect();
            assert_eq!(got, messages, "{xml}");
        }
    }

    #[test]
    fn not_junit() {
        assert!(!read("<html><body/></html>").0);
        assert!(!read("<testsuite><testcase name=\"a\"></wrong>").0);
    }
}
