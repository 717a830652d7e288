//! JUnit XML (read with quick-junit): failed and errored test cases become findings; passed,
//! failed and skipped cases are counted.

use quick_junit::{NonSuccessKind, Report, TestCaseStatus};
use quick_xml::events::{BytesStart, Event};

use super::{DocumentReader, Found, Sink};
use crate::model::Severity;

#[derive(Debug)]
pub struct Junit;

impl DocumentReader for Junit {
    fn read(&self, document: &[u8], sink: &mut Sink<'_>) -> bool {
        let Ok(text) = std::str::from_utf8(document) else {
            return false;
        };
        // Tools print the report with text around it (pytest's summary); read from the XML on.
        let start = text
            .find("<?xml")
            .or_else(|| text.find("<testsuites"))
            .or_else(|| text.find("<testsuite"));
        let Some(start) = start else {
            return false;
        };
        let document = &text[start..];
        let cases = match Report::deserialize_from_str(document) {
            Ok(report) if report.test_suites.iter().any(|s| !s.test_cases.is_empty()) => {
                cases_of_report(&report)
            }
            // Some tools put test cases straight under <testsuites> (node's junit reporter),
            // which quick-junit does not read: walk the elements instead.
            _ => match walk_cases(document) {
                Some(cases) => cases,
                None => return false,
            },
        };
        let (mut passed, mut failed, mut skipped) = (0u64, 0u64, 0u64);
        for case in cases {
            match case.outcome {
                Outcome::Passed => passed += 1,
                Outcome::Skipped => skipped += 1,
                Outcome::Failed { message } => {
                    failed += 1;
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
        let tests = sink.findings().tests_mut();
        tests.passed += passed;
        tests.failed += failed;
        tests.skipped += skipped;
        let expected = sink.findings().expected_mut();
        expected.error = Some(failed);
        true
    }
}

/// A test case, whichever way it was read.
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
        message: String,
    },
}

fn cases_of_report(report: &Report) -> Vec<Case> {
    let mut cases = Vec::new();
    for suite in &report.test_suites {
        for case in &suite.test_cases {
            let attribute = |key: &str| {
                case.extra
                    .iter()
                    .find(|(k, _)| k.as_str() == key)
                    .map(|(_, v)| v.as_str().to_string())
            };
            let outcome = match &case.status {
                TestCaseStatus::Success { .. } => Outcome::Passed,
                TestCaseStatus::Skipped { .. } => Outcome::Skipped,
                TestCaseStatus::NonSuccess {
                    kind,
                    message,
                    description,
                    ty,
                    ..
                } => Outcome::Failed {
                    message: failure_message(
                        message.as_ref().map(|m| m.as_str()),
                        description.as_ref().map(|d| d.as_str()),
                        ty.as_ref().map(|t| t.as_str()),
                        matches!(kind, NonSuccessKind::Error),
                    ),
                },
            };
            cases.push(Case {
                name: case.name.as_str().to_string(),
                classname: case.classname.as_ref().map(|c| c.as_str().to_string()),
                line: attribute("line").and_then(|l| l.parse().ok()),
                file: attribute("file"),
                outcome,
            });
        }
    }
    cases
}

fn failure_message(
    message: Option<&str>,
    description: Option<&str>,
    ty: Option<&str>,
    errored: bool,
) -> String {
    message
        .filter(|m| !m.trim().is_empty())
        .or(description.filter(|d| !d.trim().is_empty()))
        .or(ty)
        .map(|m| m.trim().to_string())
        .unwrap_or_else(|| {
            if errored {
                "test errored"
            } else {
                "test failed"
            }
            .to_string()
        })
}

/// Reads `<testcase>` elements wherever they are, with their `<failure>`, `<error>` and
/// `<skipped>` children. `None` when the document is not XML.
fn walk_cases(document: &str) -> Option<Vec<Case>> {
    let mut reader = quick_xml::Reader::from_str(document);
    let mut cases = Vec::new();
    let mut open: Option<Case> = None;
    let mut problem: Option<(bool, Option<String>, String)> = None;
    loop {
        match reader.read_event().ok()? {
            Event::Start(element) | Event::Empty(element)
                if element.local_name().as_ref() == b"testcase" =>
            {
                if let Some(case) = open.take() {
                    cases.push(case);
                }
                open = Some(Case {
                    name: attribute(&element, "name").unwrap_or_default(),
                    classname: attribute(&element, "classname"),
                    file: attribute(&element, "file"),
                    line: attribute(&element, "line").and_then(|l| l.parse().ok()),
                    outcome: Outcome::Passed,
                });
            }
            Event::Start(element) | Event::Empty(element) => {
                let name = element.local_name();
                if let Some(case) = open.as_mut() {
                    match name.as_ref() {
                        b"failure" | b"error" => {
                            let errored = name.as_ref() == b"error";
                            let message = attribute(&element, "message");
                            let ty = attribute(&element, "type").unwrap_or_default();
                            case.outcome = Outcome::Failed {
                                message: failure_message(
                                    message.as_deref(),
                                    None,
                                    Some(&ty),
                                    errored,
                                ),
                            };
                            problem = Some((errored, message, ty));
                        }
                        b"skipped" => case.outcome = Outcome::Skipped,
                        _ => {}
                    }
                }
            }
            Event::Text(text) => {
                // A failure without a message attribute: its text is the message.
                if let (Some(case), Some((errored, None, ty))) = (open.as_mut(), &problem)
                    && let Ok(body) = text.decode()
                    && !body.trim().is_empty()
                {
                    case.outcome = Outcome::Failed {
                        message: failure_message(Some(&body), None, Some(ty), *errored),
                    };
                }
            }
            Event::End(element) => match element.local_name().as_ref() {
                b"testcase" => {
                    if let Some(case) = open.take() {
                        cases.push(case);
                    }
                    problem = None;
                }
                b"failure" | b"error" => problem = None,
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    if let Some(case) = open.take() {
        cases.push(case);
    }
    Some(cases)
}

fn attribute(element: &BytesStart<'_>, key: &str) -> Option<String> {
    element
        .attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == key.as_bytes())
        .and_then(|a| a.normalized_value(quick_xml::XmlVersion::Implicit1_0).ok())
        .map(|v| v.into_owned())
}
