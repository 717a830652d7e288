//! JUnit XML: failed and errored test cases become findings; passed, failed and skipped cases
//! are counted. The document is read as a stream of elements, so `<testcase>` is found wherever
//! it stands: in a `<testsuite>`, in nested suites (PHPUnit), or straight under `<testsuites>`
//! (node's junit reporter). (quick-junit's reader takes only the first of these.)

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

impl DocumentReader for Junit {
    fn read(&self, document: &mut dyn BufRead, sink: &mut Sink<'_>) -> bool {
        let mut reader = quick_xml::Reader::from_reader(document);
        let mut buffer = Vec::new();
        let mut open: Option<Case> = None;
        let mut in_problem = false;
        let mut seen_testcase_parent = false;
        let (mut passed, mut failed, mut skipped) = (0u64, 0u64, 0u64);
        loop {
            let event = match reader.read_event_into(&mut buffer) {
                Ok(event) => event,
                Err(_) => return false,
            };
            match event {
                Event::Start(element) if element.local_name().as_ref() == b"testcase" => {
                    if let Some(case) = open.take() {
                        finish_case(case, sink, &mut passed, &mut failed, &mut skipped);
                    }
                    open = Some(case_of(&element));
                }
                Event::Empty(element) if element.local_name().as_ref() == b"testcase" => {
                    if let Some(case) = open.take() {
                        finish_case(case, sink, &mut passed, &mut failed, &mut skipped);
                    }
                    finish_case(
                        case_of(&element),
                        sink,
                        &mut passed,
                        &mut failed,
                        &mut skipped,
                    );
                }
                Event::Start(element) | Event::Empty(element) => {
                    let name = element.local_name();
                    if matches!(name.as_ref(), b"testsuites" | b"testsuite") {
                        seen_testcase_parent = true;
                    }
                    if let Some(case) = open.as_mut() {
                        match name.as_ref() {
                            b"failure" | b"error" => {
                                case.outcome = Outcome::Failed {
                                    errored: name.as_ref() == b"error",
                                    message: attribute(&element, "message"),
                                    ty: attribute(&element, "type"),
                                    text: String::new(),
                                };
                                in_problem = true;
                            }
                            b"skipped" => case.outcome = Outcome::Skipped,
                            _ => {}
                        }
                    }
                }
                Event::Text(text) if in_problem => {
                    if let Ok(text) = text.decode() {
                        append_text(&mut open, &text);
                    }
                }
                Event::CData(data) if in_problem => {
                    append_text(&mut open, &String::from_utf8_lossy(&data));
                }
                Event::End(element) => match element.local_name().as_ref() {
                    b"testcase" => {
                        if let Some(case) = open.take() {
                            finish_case(case, sink, &mut passed, &mut failed, &mut skipped);
                        }
                        in_problem = false;
                    }
                    b"failure" | b"error" => in_problem = false,
                    _ => {}
                },
                Event::Eof => break,
                _ => {}
            }
            buffer.clear();
        }
        if let Some(case) = open.take() {
            finish_case(case, sink, &mut passed, &mut failed, &mut skipped);
        }
        if !seen_testcase_parent && passed + failed + skipped == 0 {
            return false;
        }
        let tests = sink.findings().tests_mut();
        tests.passed += passed;
        tests.failed += failed;
        tests.skipped += skipped;
        let expected = sink.findings().expected_mut();
        expected.error = Some(expected.error.unwrap_or(0).saturating_add(failed));
        true
    }
}

fn case_of(element: &BytesStart<'_>) -> Case {
    Case {
        name: attribute(element, "name").unwrap_or_default(),
        classname: attribute(element, "classname"),
        file: attribute(element, "file"),
        line: attribute(element, "line").and_then(|l| l.parse().ok()),
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

fn finish_case(
    case: Case,
    sink: &mut Sink<'_>,
    passed: &mut u64,
    failed: &mut u64,
    skipped: &mut u64,
) {
    match case.outcome {
        Outcome::Passed => *passed += 1,
        Outcome::Skipped => *skipped += 1,
        Outcome::Failed {
            errored,
            message,
            ty,
            text,
        } => {
            *failed += 1;
            let message = [message, Some(text), ty]
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

fn attribute(element: &BytesStart<'_>, key: &str) -> Option<String> {
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
