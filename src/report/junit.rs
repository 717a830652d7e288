//! `junit.xml`: one test suite per category, one test case per check and per remaining finding.

use std::collections::BTreeMap;
use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use super::ci::{CiCheck, CiReportError, CiReportInput, Finding};
use crate::gate::INFRA_CATEGORY;
use crate::model::{CheckRecord, CheckStatus};

/// Renders the report as JUnit XML. A check's case fails when the check failed (an `<error>`
/// when it gave no result, under `infra`); every finding is a failed case of its own, with its
/// file and line on the case. Every element carries `time` (0 for findings).
pub fn render_junit(input: &CiReportInput<'_>) -> Result<Vec<u8>, CiReportError> {
    let mut suites: BTreeMap<&str, TestSuite> = BTreeMap::new();
    let mut times: BTreeMap<&str, Duration> = BTreeMap::new();
    for check in &input.checks {
        let category = check_category(check.record);
        let duration = Duration::from_millis(check.record.duration_ms);
        *times.entry(category).or_default() += duration;
        suite(&mut suites, category).add_test_case(check_case(check, duration));
    }
    let findings = input.findings();
    for finding in &findings {
        suite(&mut suites, finding.category()).add_test_case(finding_case(finding));
    }
    let mut report = Report::new("refine-loop");
    let mut total = Duration::ZERO;
    for (category, mut suite) in suites {
        let time = times.get(category).copied().unwrap_or_default();
        total += time;
        suite.set_time(time);
        report.add_test_suite(suite);
    }
    report.set_time(total);
    let mut bytes = Vec::new();
    report
        .serialize(&mut bytes)
        .map_err(|source| CiReportError::Junit { source })?;
    if !bytes.ends_with(b"\n") {
        bytes.push(b'\n');
    }
    Ok(bytes)
}

/// The category a check's own result counts under: its own, or `infra` when it gave no result.
fn check_category(record: &CheckRecord) -> &str {
    match record.status {
        CheckStatus::Infra => INFRA_CATEGORY,
        _ => &record.category,
    }
}

fn suite<'s, 'a>(suites: &'s mut BTreeMap<&'a str, TestSuite>, name: &'a str) -> &'s mut TestSuite {
    suites.entry(name).or_insert_with(|| TestSuite::new(name))
}

fn check_case(check: &CiCheck<'_>, duration: Duration) -> TestCase {
    let record = check.record;
    let status = match record.status {
        CheckStatus::Passed => TestCaseStatus::success(),
        CheckStatus::Failed => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status
                .set_message(failure_message(check))
                .set_type("check failed");
            status
        }
        CheckStatus::Infra => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
            status
                .set_message(record.infra_reason.as_deref().unwrap_or("gave no result"))
                .set_type("infra");
            status
        }
    };
    let mut case = TestCase::new(record.name.as_str(), status);
    case.set_classname(record.category.as_str())
        .set_time(duration);
    if let Some(code) = record.exit_code {
        case.add_property(Property::new("exit_code", code.to_string()));
    }
    if let Some(signal) = record.signal {
        case.add_property(Property::new("signal", signal.to_string()));
    }
    case
}

/// `exited with code 1: 2 errors, 1 warning`, and why nothing was read when that is so.
fn failure_message(check: &CiCheck<'_>) -> String {
    let record = check.record;
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

fn finding_case(finding: &Finding<'_>) -> TestCase {
    let diagnostic = finding.diagnostic;
    let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
    let mut description = format!("{}: {}", diagnostic.severity.as_str(), diagnostic.detail());
    if let Some(body) = &diagnostic.body {
        description.push('\n');
        description.push_str(body);
    }
    status
        .set_message(finding.message())
        .set_type(finding.rule())
        .set_description(description);
    let mut case = TestCase::new(case_name(finding), status);
    case.set_classname(finding.check.name.as_str())
        .set_time(Duration::ZERO);
    if let Some(path) = finding.path() {
        case.extra.insert("file".into(), path.into());
    }
    if let Some(line) = finding.line() {
        case.extra.insert("line".into(), line.to_string().into());
    }
    case
}

/// `src/a.py:12:5: E711`: where the finding is and which rule, without its message.
fn case_name(finding: &Finding<'_>) -> String {
    let mut name = finding.path().unwrap_or("(no file)").to_string();
    for number in [finding.line(), finding.column()]
        .into_iter()
        .map_while(|n| n)
    {
        name.push_str(&format!(":{number}"));
    }
    format!("{name}: {}", finding.rule())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture;

    fn fixture_xml() -> String {
        let records = fixture::records();
        let findings = fixture::findings();
        String::from_utf8(render_junit(&fixture::input(&records, &findings)).unwrap()).unwrap()
    }

    #[test]
    fn snapshot() {
        insta::assert_snapshot!("junit_xml", &fixture_xml());
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
        assert_eq!(check.properties[0].value.as_str(), "1");

        let escaped = &lint.test_cases[1];
        assert_eq!(
            escaped.extra.get("file").map(|v| v.as_str()),
            Some("src/app.py")
        );
        assert_eq!(escaped.extra.get("line").map(|v| v.as_str()), Some("12"));
        assert_eq!(escaped.time, Some(Duration::ZERO));
        match &escaped.status {
            TestCaseStatus::NonSuccess { message, ty, .. } => {
                assert_eq!(
                    message.as_ref().map(|m| m.as_str()),
                    Some(fixture::findings()[0].message.as_str())
                );
                assert_eq!(ty.as_ref().map(|t| t.as_str()), Some("E711"));
            }
            other => panic!("a finding passed: {other:?}"),
        }
        let unicode = &lint.test_cases[2];
        assert_eq!(
            unicode.extra.get("file").map(|v| v.as_str()),
            Some("docs/grüße.py")
        );
        let no_line = &lint.test_cases[3];
        assert_eq!(
            no_line.extra.get("file").map(|v| v.as_str()),
            Some("pyproject.toml")
        );
        assert_eq!(no_line.extra.get("line"), None);

        let passed = &report.test_suites[1].test_cases[0];
        assert_eq!(passed.status, TestCaseStatus::success());
        assert_eq!(passed.time, Some(Duration::from_millis(2250)));
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
    }
}
