//! `junit.xml`: one test suite per category, one test case per check and per remaining finding,
//! in the shape junit-10.xsd (the schema of Jenkins' xunit plugin) allows, which is also what
//! GitLab reads: `testsuites` › `testsuite` › `testcase` (`name`, `classname`, `time`) with a
//! `failure` or `error` (`message`, `type`, text) and `system-out`.
//!
//! Written element by element with quick-xml: the schema allows no attribute beyond its own (no
//! `file` or `line` on a case, no `skipped` on `testsuites`) and no `properties` in a case, so a
//! finding's file is in its case's name, its line in the failure text, and a check's exit code or
//! signal in its `system-out`.
//!
//! A finding's case is named `file: rule`, never with its line: Jenkins and GitLab keep a test's
//! history by its name, and a name with the line would start a new history whenever an edit
//! above it moved the finding. The findings of one rule in one file are one case.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io;
use std::time::Duration;

use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesText, Event};

use super::ci::{CiReportError, Finding};
use super::{CheckFindings, Report};
use crate::gate::INFRA_CATEGORY;
use crate::model::{CheckRecord, CheckStatus};

/// Renders the report as JUnit XML. A check's case fails when the check failed (an `<error>`
/// when it gave no result, under `infra`); the findings of one check, file and rule are a failed
/// case named by the file and rule. Every suite and case carries `time` (0 for findings).
pub fn render_junit(report: &Report) -> Result<Vec<u8>, CiReportError> {
    let mut suites: BTreeMap<&str, Suite> = BTreeMap::new();
    for check in &report.checks {
        let suite = suites.entry(check_category(&check.record)).or_default();
        let case = check_case(check);
        suite.time += case.time;
        suite.cases.push(case);
    }
    let findings = super::ci::findings(report);
    for group in same_case(&findings) {
        let suite = suites.entry(group[0].category()).or_default();
        suite.cases.push(finding_case(&group));
    }
    write_document(&suites).map_err(|source| CiReportError::Junit { source })
}

/// One `<testsuite>`: a category's cases and the time its checks took.
#[derive(Debug, Default)]
struct Suite {
    time: Duration,
    cases: Vec<Case>,
}

impl Suite {
    /// How many of the cases ended in `kind`.
    fn count(&self, kind: Kind) -> usize {
        self.cases
            .iter()
            .filter(|case| case.outcome.as_ref().is_some_and(|o| o.kind == kind))
            .count()
    }
}

/// One `<testcase>`.
#[derive(Debug)]
struct Case {
    name: String,
    classname: String,
    time: Duration,
    /// None when the case passed.
    outcome: Option<Outcome>,
    system_out: Option<String>,
}

/// A case's `<failure>` or `<error>`.
#[derive(Debug)]
struct Outcome {
    kind: Kind,
    message: String,
    ty: String,
    text: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Failure,
    Error,
    /// Pull-request mode: findings there before the change, not counted.
    Skipped,
}

impl Kind {
    fn element(self) -> &'static str {
        match self {
            Kind::Failure => "failure",
            Kind::Error => "error",
            Kind::Skipped => "skipped",
        }
    }
}

/// The category a check's own result counts under: its own, or `infra` when it gave no result.
fn check_category(record: &CheckRecord) -> &str {
    match record.status {
        CheckStatus::Infra => INFRA_CATEGORY,
        _ => &record.category,
    }
}

fn check_case(check: &CheckFindings) -> Case {
    let record = &check.record;
    // Pull-request mode: a check that failed only on what was there before the change passes.
    let only_preexisting = !check.preexisting.is_empty()
        && !record.unparsed
        && (check.findings.iter().zip(&check.preexisting))
            .all(|(finding, &before)| before || finding.severity != crate::model::Severity::Error);
    let outcome = match record.status {
        CheckStatus::Passed => None,
        CheckStatus::Failed if only_preexisting => None,
        CheckStatus::Failed => Some(Outcome {
            kind: Kind::Failure,
            message: failure_message(check),
            ty: "check failed".into(),
            text: None,
        }),
        CheckStatus::Infra => Some(Outcome {
            kind: Kind::Error,
            message: record
                .infra_reason
                .as_deref()
                .unwrap_or("gave no result")
                .into(),
            ty: "infra".into(),
            text: None,
        }),
    };
    // How the check's process ended, one `name: value` line each.
    let ended: Vec<String> = [("exit code", record.exit_code), ("signal", record.signal)]
        .into_iter()
        .filter_map(|(name, value)| Some(format!("{name}: {}", value?)))
        .collect();
    Case {
        name: record.name.clone(),
        classname: record.category.clone(),
        time: Duration::from_millis(record.duration_ms),
        outcome,
        system_out: (!ended.is_empty()).then(|| ended.join("\n")),
    }
}

/// `exited with code 1: 2 errors, 1 warning`, and why nothing was read when that is so.
fn failure_message(check: &CheckFindings) -> String {
    let record = &check.record;
    let ended = match (record.exit_code, record.signal) {
        (Some(code), _) => format!("exited with code {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        (None, None) => "failed".to_string(),
    };
    if record.unparsed {
        return format!("{ended} with no finding parser \"{}\" reads", record.parser);
    }
    let counts = record.counts;
    let plural = |n: u64, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    format!(
        "{ended}: {}, {}",
        plural(counts.error, "error"),
        plural(counts.warning, "warning")
    )
}

/// The findings in report order, those of one case (check, case name) together, in the order
/// each case first appears.
fn same_case<'a, 'b>(findings: &'b [Finding<'a>]) -> Vec<Vec<&'b Finding<'a>>> {
    let mut groups: Vec<Vec<&Finding<'_>>> = Vec::new();
    let mut index: BTreeMap<(&str, String, bool), usize> = BTreeMap::new();
    for finding in findings {
        let key = (
            finding.check.name.as_str(),
            case_name(finding),
            finding.preexisting,
        );
        match index.get(&key) {
            Some(&at) => groups[at].push(finding),
            None => {
                index.insert(key, groups.len());
                groups.push(vec![finding]);
            }
        }
    }
    groups
}

/// The case of one rule's findings in one file: the file and rule as the name, the check as the
/// class, the first message as the failure's (with how many more), and for each finding
/// `severity: file:line:column: code: message` (with the tool's further lines) as the failure's
/// text: the line is there, not in the name.
fn finding_case(group: &[&Finding<'_>]) -> Case {
    let first = group[0];
    let mut text = String::new();
    for finding in group {
        let diagnostic = finding.diagnostic;
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&format!(
            "{}: {}",
            diagnostic.severity.as_str(),
            diagnostic.detail()
        ));
        if let Some(body) = &diagnostic.body {
            text.push('\n');
            text.push_str(body);
        }
    }
    let mut message = first.message();
    if group.len() > 1 {
        message.push_str(&format!(" (and {} more)", group.len() - 1));
    }
    // Pull-request mode: findings there before the change are skipped, not failed.
    let kind = if first.preexisting {
        message = format!("pre-existing, there before the change: {message}");
        Kind::Skipped
    } else {
        Kind::Failure
    };
    Case {
        name: case_name(first),
        classname: first.check.name.clone(),
        time: Duration::ZERO,
        outcome: Some(Outcome {
            kind,
            message,
            ty: first.rule().into(),
            text: Some(text),
        }),
        system_out: None,
    }
}

/// `src/a.py: E711`: which file and which rule, without the line (which moves) or the message.
fn case_name(finding: &Finding<'_>) -> String {
    format!(
        "{}: {}",
        finding.path().unwrap_or("(no file)"),
        finding.rule()
    )
}

fn write_document(suites: &BTreeMap<&str, Suite>) -> io::Result<Vec<u8>> {
    let mut writer = Writer::new_with_indent(Vec::new(), b' ', 4);
    writer.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let (mut tests, mut failures, mut errors, mut time) = (0, 0, 0, Duration::ZERO);
    for suite in suites.values() {
        tests += suite.cases.len();
        failures += suite.count(Kind::Failure);
        errors += suite.count(Kind::Error);
        time += suite.time;
    }
    writer
        .create_element("testsuites")
        .with_attributes([
            ("name", "refine-loop"),
            ("tests", &tests.to_string()),
            ("failures", &failures.to_string()),
            ("errors", &errors.to_string()),
            ("time", &seconds(time)),
        ])
        .write_inner_content(|writer| {
            for (name, suite) in suites {
                write_suite(writer, name, suite)?;
            }
            Ok(())
        })?;
    let mut bytes = writer.into_inner();
    bytes.push(b'\n');
    Ok(bytes)
}

fn write_suite(writer: &mut Writer<Vec<u8>>, name: &str, suite: &Suite) -> io::Result<()> {
    writer
        .create_element("testsuite")
        .with_attributes([
            ("name", xml_text(name).as_ref()),
            ("tests", &suite.cases.len().to_string()),
            ("skipped", &suite.count(Kind::Skipped).to_string()),
            ("errors", &suite.count(Kind::Error).to_string()),
            ("failures", &suite.count(Kind::Failure).to_string()),
            ("time", &seconds(suite.time)),
        ])
        .write_inner_content(|writer| {
            for case in &suite.cases {
                write_case(writer, case)?;
            }
            Ok(())
        })?;
    Ok(())
}

fn write_case(writer: &mut Writer<Vec<u8>>, case: &Case) -> io::Result<()> {
    let element = writer.create_element("testcase").with_attributes([
        ("name", xml_text(&case.name).as_ref()),
        ("classname", xml_text(&case.classname).as_ref()),
        ("time", &seconds(case.time)),
    ]);
    if case.outcome.is_none() && case.system_out.is_none() {
        element.write_empty()?;
        return Ok(());
    }
    element.write_inner_content(|writer| {
        if let Some(outcome) = &case.outcome {
            let element = writer
                .create_element(outcome.kind.element())
                .with_attribute(("message", xml_text(&outcome.message).as_ref()));
            // `skipped` takes a message alone.
            let element = match outcome.kind {
                Kind::Skipped => element,
                _ => element.with_attribute(("type", xml_text(&outcome.ty).as_ref())),
            };
            match &outcome.text {
                Some(text) => element.write_text_content(BytesText::new(&xml_text(text)))?,
                None => element.write_empty()?,
            };
        }
        if let Some(out) = &case.system_out {
            writer
                .create_element("system-out")
                .write_text_content(BytesText::new(&xml_text(out)))?;
        }
        Ok(())
    })?;
    Ok(())
}

/// Seconds with three decimals (junit-10.xsd's `SUREFIRE_TIME` allows no more).
fn seconds(time: Duration) -> String {
    format!("{:.3}", time.as_secs_f64())
}

/// `text` as XML 1.0 can hold it (quick-xml escapes the rest): without ANSI escapes (a tool's
/// colours) and without the characters XML 1.0 forbids outright, one of which leaves the whole
/// file unreadable.
fn xml_text(text: &str) -> Cow<'_, str> {
    let text = crate::parse::without_escapes(text);
    if text.contains(forbidden_in_xml) {
        Cow::Owned(text.replace(forbidden_in_xml, ""))
    } else {
        text
    }
}

/// Control characters other than tab, newline and carriage return, and U+FFFE and U+FFFF: the
/// characters outside XML 1.0's `Char` a Rust string can hold.
fn forbidden_in_xml(c: char) -> bool {
    matches!(c, '\0'..='\x08' | '\x0b' | '\x0c' | '\x0e'..='\x1f' | '\u{fffe}' | '\u{ffff}')
}

#[cfg(test)]
mod tests {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus};

    use super::*;
    use crate::report::fixture;

    fn fixture_xml() -> String {
        let records = fixture::records();
        let findings = fixture::findings();
        String::from_utf8(render_junit(&fixture::input(&records, &findings)).unwrap()).unwrap()
    }

    /// A gate run with failures of every kind: a failed check whose findings have paths with
    /// spaces, non-ASCII and XML's special characters, a line but no column, no line, no path,
    /// a path outside the target, and text with ANSI escapes and characters XML 1.0 forbids; a
    /// check killed by a signal; and a check that gave no result (an infrastructure error).
    fn failing_run_xml() -> String {
        let mut records = fixture::records();
        records[1].status = CheckStatus::Infra;
        records[1].exit_code = Some(127);
        records[1].infra_reason =
            Some("command not found: \"py<test>\" & co (exit code 127)".into());
        let mut killed = records[0].clone();
        killed.name = "mypy <strict>".into();
        killed.category = "types & \"checks\"".into();
        killed.exit_code = None;
        killed.signal = Some(9);
        records.push(killed);
        let mut findings = fixture::findings();
        let first = findings[0].clone();
        let finding = |file: Option<&str>, line, column, code: Option<&str>, message: &str| {
            let mut diagnostic = first.clone();
            diagnostic.file = file.map(Into::into);
            diagnostic.line = line;
            diagnostic.column = column;
            diagnostic.code = code.map(Into::into);
            diagnostic.message = message.into();
            diagnostic.fingerprint = String::new();
            diagnostic
        };
        let mut spaced = finding(
            Some("src/my dir/grüße <&> \"q\" 'a'.py"),
            Some(3),
            Some(1),
            Some("F401"),
            "`os` imported but unused \u{1b}[1;31mred\u{1b}[0m \u{7}\u{c}\u{ffff}\u{fffe} end",
        );
        spaced.body = Some("  |\n3 | import os  # <&>\n  | ^^ \u{1b}[2mhere\u{1b}[0m".into());
        let mut outside = finding(
            Some("/usr/lib/python3/site.py"),
            Some(1),
            Some(2),
            None,
            "outside the target",
        );
        outside.outside_target = true;
        findings.extend([
            spaced,
            finding(
                Some("docs/a b.md"),
                Some(9),
                None,
                Some("MD013"),
                "line too long",
            ),
            finding(Some("setup.cfg"), None, None, Some("CFG1"), "no line here"),
            finding(
                None,
                None,
                None,
                None,
                "the gate printed an error with no file",
            ),
            outside,
        ]);
        let mut types = findings[0].clone();
        types.category = Some("types".into());
        types.message = "Incompatible return value type (got \"int\", expected \"str\")".into();
        let types = [types];
        let input = fixture::checks_report(
            vec![
                (records[0].clone(), findings.to_vec()),
                (records[1].clone(), Vec::new()),
                (records[2].clone(), types.to_vec()),
            ],
            fixture::parsers(&records),
        );
        String::from_utf8(render_junit(&input).unwrap()).unwrap()
    }

    /// libxml2's verdict on `xml` against junit-10.xsd, through lxml (whose wheel bundles it):
    /// Ok with what the validator printed, or Err with its errors. A missing schema or lxml
    /// fails the test, telling to run scripts/test, which installs both into .tools/.
    fn validate_junit(xml: &str) -> Result<String, String> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let tools = root.join(".tools");
        let xsd = tools.join("xsd/junit-10.xsd");
        assert!(
            xsd.is_file(),
            "{} is missing: run scripts/test, which fetches it into .tools/",
            xsd.display()
        );
        let mut python_path = vec![tools.join("python")];
        python_path.extend(std::env::split_paths(
            &std::env::var_os("PYTHONPATH").unwrap_or_default(),
        ));
        let python_path = std::env::join_paths(python_path).unwrap();
        let python = |args: &[&std::ffi::OsStr]| {
            std::process::Command::new("python3")
                .args(args)
                .env("PYTHONPATH", &python_path)
                .output()
                .expect("python3 runs")
        };
        assert!(
            python(&["-c".as_ref(), "import lxml.etree".as_ref()])
                .status
                .success(),
            "lxml is not installed: run scripts/test, which installs the pinned tools into .tools/"
        );
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("junit.xml");
        std::fs::write(&file, xml).unwrap();
        let script = root.join("scripts/tools/validate_junit.py");
        let output = python(&[script.as_ref(), xsd.as_ref(), file.as_ref()]);
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        if output.status.success() {
            Ok(said)
        } else {
            Err(said)
        }
    }

    #[track_caller]
    fn assert_valid_junit(xml: &str) {
        if let Err(errors) = validate_junit(xml) {
            panic!("not valid against junit-10.xsd:\n{errors}\n{xml}");
        }
    }

    #[test]
    fn valid_against_the_junit_10_xsd() {
        assert_valid_junit(&failing_run_xml());
        assert_valid_junit(&fixture_xml());
        let records = fixture::records();
        let nothing = fixture::checks_report(Vec::new(), fixture::parsers(&records));
        assert_valid_junit(&String::from_utf8(render_junit(&nothing).unwrap()).unwrap());
    }

    #[test]
    fn the_junit_10_xsd_rejects_what_it_should() {
        // The validator is live: an attribute the schema does not declare on a test case, a
        // property list inside one and a test suite without its counts all fail.
        let xml = fixture_xml();
        let case = "<testcase name=\"ruff\"";
        for (changed, error) in [
            (
                xml.replacen(case, &format!("{case} file=\"src/app.py\""), 1),
                "Element 'testcase', attribute 'file': The attribute 'file' is not allowed.",
            ),
            (
                xml.replacen(
                    "</testcase>",
                    "<properties><property name=\"a\" value=\"b\"/></properties></testcase>",
                    1,
                ),
                "Element 'properties': This element is not expected.",
            ),
            (
                xml.replacen(" tests=\"4\"", "", 1),
                "Element 'testsuite': The attribute 'tests' is required but missing.",
            ),
        ] {
            assert_ne!(changed, xml);
            match validate_junit(&changed) {
                Ok(said) => panic!("accepted: {said}\n{changed}"),
                Err(errors) => assert!(errors.contains(error), "{errors}"),
            }
        }
    }

    #[test]
    fn snapshot() {
        insta::assert_snapshot!("junit_xml", &fixture_xml());
        insta::assert_snapshot!("junit_xml_failing_run", &failing_run_xml());
    }

    #[test]
    fn round_trips_through_quick_junit() {
        let xml = fixture_xml();
        let report = Report::deserialize_from_str(&xml).unwrap();
        assert_eq!(
            report.name.as_ref().map(|n| n.as_str()),
            Some("refine-loop")
        );
        assert_eq!(report.time, Some(Duration::from_millis(3750)));
        assert_eq!((report.tests, report.failures, report.errors), (5, 4, 0));
        let names: Vec<&str> = report.test_suites.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["lint", "tests"]);
        for suite in &report.test_suites {
            assert!(
                suite.time.is_some(),
                "suite {} has no time",
                suite.name.as_str()
            );
            for case in &suite.test_cases {
                assert!(
                    case.time.is_some(),
                    "case {} has no time",
                    case.name.as_str()
                );
            }
        }
        let lint = &report.test_suites[0];
        assert_eq!(lint.test_cases.len(), 4);
        let check = &lint.test_cases[0];
        assert_eq!(check.name.as_str(), "ruff");
        assert_eq!(check.time, Some(Duration::from_millis(1500)));
        match &check.status {
            TestCaseStatus::NonSuccess { kind, message, .. } => {
                assert_eq!(*kind, NonSuccessKind::Failure);
                assert_eq!(
                    message.as_ref().map(|m| m.as_str()),
                    Some("exited with code 1: 1 error, 1 warning")
                );
            }
            other => panic!("the failed check passed: {other:?}"),
        }
        assert_eq!(system_out(check), Some("exit code: 1"));

        // A finding's file is in its case's name and its line in its failure's text, not in
        // attributes junit-10.xsd has no room for.
        let escaped = &lint.test_cases[1];
        assert_eq!(escaped.name.as_str(), "src/app.py: E711");
        assert_eq!(escaped.classname.as_ref().map(|c| c.as_str()), Some("ruff"));
        assert!(escaped.extra.is_empty() && escaped.properties.is_empty());
        assert_eq!(escaped.time, Some(Duration::ZERO));
        let (message, ty, text) = failure(escaped);
        assert_eq!(message, fixture::findings()[0].message);
        assert_eq!(ty, "E711");
        assert_eq!(text, format!("error: {}", fixture::findings()[0].detail()));
        assert!(text.starts_with("error: src/app.py:12:5: E711: "));
        let names: Vec<&str> = lint.test_cases[2..]
            .iter()
            .map(|case| case.name.as_str())
            .collect();
        assert_eq!(names, ["docs/grüße.py: E501", "pyproject.toml: ruff"]);

        let passed = &report.test_suites[1].test_cases[0];
        assert_eq!(passed.status, TestCaseStatus::success());
        assert_eq!(passed.time, Some(Duration::from_millis(2250)));
        assert_eq!(system_out(passed), Some("exit code: 0"));
    }

    fn system_out(case: &TestCase) -> Option<&str> {
        case.system_out.as_ref().map(|out| out.as_str())
    }

    /// A failed case's failure: message, type and text.
    #[track_caller]
    fn failure(case: &TestCase) -> (String, String, String) {
        match &case.status {
            TestCaseStatus::NonSuccess {
                kind: NonSuccessKind::Failure,
                message,
                ty,
                description,
                ..
            } => {
                let text = |value: &Option<quick_junit::XmlString>| {
                    value.as_ref().map(|v| v.to_string()).unwrap_or_default()
                };
                (text(message), text(ty), text(description))
            }
            other => panic!("{} did not fail: {other:?}", case.name.as_str()),
        }
    }

    #[test]
    fn a_failing_run_keeps_what_the_schema_has_no_room_for_where_readers_see_it() {
        let report = Report::deserialize_from_str(&failing_run_xml()).unwrap();
        // The two findings with no file inside the target under one rule are one case.
        assert_eq!((report.tests, report.failures, report.errors), (11, 10, 1));
        let names: Vec<&str> = report.test_suites.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["infra", "lint", "types", "types & \"checks\""]);
        let [infra, lint, types, killed] = &report.test_suites[..] else {
            unreachable!()
        };
        assert_eq!(system_out(&infra.test_cases[0]), Some("exit code: 127"));
        let killed = &killed.test_cases[0];
        assert_eq!(killed.name.as_str(), "mypy <strict>");
        assert_eq!(system_out(killed), Some("signal: 9"));
        assert_eq!(
            failure(killed).0,
            "was killed by signal 9: 1 error, 1 warning"
        );
        assert_eq!(
            types.test_cases[0].classname.as_ref().map(|c| c.as_str()),
            Some("mypy <strict>")
        );

        let cases: Vec<&str> = lint.test_cases[4..]
            .iter()
            .map(|case| case.name.as_str())
            .collect();
        assert_eq!(
            cases,
            [
                "src/my dir/grüße <&> \"q\" 'a'.py: F401",
                "docs/a b.md: MD013",
                "setup.cfg: CFG1",
                "(no file): ruff",
            ]
        );
        // Escapes and the characters XML 1.0 forbids are gone; the rest of the text is kept.
        let (message, _, text) = failure(&lint.test_cases[4]);
        assert_eq!(message, "`os` imported but unused red  end");
        assert_eq!(
            text,
            "error: src/my dir/grüße <&> \"q\" 'a'.py:3:1: F401: `os` imported but unused red  end\n  |\n3 | import os  # <&>\n  | ^^ here"
        );
        let (message, _, text) = failure(&lint.test_cases[7]);
        assert_eq!(
            message,
            "the gate printed an error with no file (and 1 more)"
        );
        assert_eq!(
            text,
            "error: the gate printed an error with no file\nerror: /usr/lib/python3/site.py:1:2: outside the target"
        );
    }

    #[test]
    fn a_case_is_named_by_file_and_rule_so_moving_lines_keeps_its_name() {
        let records = fixture::records();
        let first = fixture::findings()[0].clone();
        let at = |line: u32, column: u32, message: &str| {
            let mut diagnostic = first.clone();
            diagnostic.line = Some(line);
            diagnostic.column = Some(column);
            diagnostic.message = message.into();
            diagnostic.fingerprint = String::new();
            diagnostic
        };
        let xml = |findings: Vec<crate::model::Diagnostic>| {
            let input = fixture::checks_report(
                vec![(records[0].clone(), findings)],
                fixture::parsers(&records),
            );
            String::from_utf8(render_junit(&input).unwrap()).unwrap()
        };
        let before = xml(vec![at(12, 5, "one"), at(40, 1, "two")]);
        let after = xml(vec![at(15, 5, "one"), at(43, 1, "two")]);
        assert_valid_junit(&before);
        let cases = |xml: &str| {
            let report = Report::deserialize_from_str(xml).unwrap();
            report.test_suites[0].test_cases[1..]
                .iter()
                .map(|case| (case.name.to_string(), failure(case)))
                .collect::<Vec<_>>()
        };
        let (before, after) = (cases(&before), cases(&after));
        assert_eq!(before.len(), 1, "{before:?}");
        assert_eq!(before[0].0, "src/app.py: E711");
        assert_eq!(
            after[0].0, before[0].0,
            "the name did not move with the lines"
        );
        let (message, ty, text) = &after[0].1;
        assert_eq!(message, "one (and 1 more)");
        assert_eq!(ty, "E711");
        assert!(
            text.contains("src/app.py:15:5: E711: one")
                && text.contains("src/app.py:43:1: E711: two"),
            "{text}"
        );
    }

    #[test]
    fn a_check_without_a_result_is_an_error_under_infra() {
        let mut records = fixture::records();
        records[1].status = CheckStatus::Infra;
        records[1].exit_code = Some(127);
        records[1].infra_reason = Some("command not found (exit code 127)".into());
        let xml = String::from_utf8(render_junit(&fixture::input(&records, &[])).unwrap()).unwrap();
        let report = Report::deserialize_from_str(&xml).unwrap();
        let names: Vec<&str> = report.test_suites.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["infra", "lint"]);
        assert_eq!((report.failures, report.errors), (1, 1));
        let infra = &report.test_suites[0];
        assert_eq!(infra.time, Some(Duration::from_millis(2250)));
        match &infra.test_cases[0].status {
            TestCaseStatus::NonSuccess { kind, message, .. } => {
                assert_eq!(*kind, NonSuccessKind::Error);
                assert_eq!(
                    message.as_ref().map(|m| m.as_str()),
                    Some("command not found (exit code 127)")
                );
            }
            other => panic!("the infra check passed: {other:?}"),
        }
        assert_eq!(system_out(&infra.test_cases[0]), Some("exit code: 127"));
    }
}
