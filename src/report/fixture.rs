//! The small gate result every CI renderer's snapshot test uses: two categories, a failed and a
//! passed check, three findings (one without a line, one with a non-ASCII message and path, one
//! with characters that XML and JSON escape).

use std::path::Path;

use super::{CiCheck, CiReportInput};
use crate::model::{CheckRecord, CheckStatus, Diagnostic, Severity, SeverityCounts};

pub fn records() -> Vec<CheckRecord> {
    let record = |name: &str, category: &str, status, exit_code, duration_ms| CheckRecord {
        name: name.into(),
        category: category.into(),
        parser: "auto".into(),
        status,
        exit_code: Some(exit_code),
        signal: None,
        duration_ms,
        timed_out: false,
        counts: SeverityCounts::default(),
        expected_count: None,
        tests: None,
        unparsed: false,
        output_bytes: 0,
        lines_cut: 0,
        infra_reason: None,
        leftover_processes_stopped: false,
        output_abandoned: false,
        flaky: false,
        excused: Vec::new(),
    };
    vec![
        CheckRecord {
            counts: SeverityCounts {
                error: 1,
                warning: 1,
                note: 1,
            },
            ..record("ruff", "lint", CheckStatus::Failed, 1, 1500)
        },
        record("pytest", "tests", CheckStatus::Passed, 0, 2250),
    ]
}

pub fn findings() -> Vec<Diagnostic> {
    let diagnostic =
        |file: Option<&str>, line, column, severity, code: Option<&str>, message: &str| {
            Diagnostic {
                file: file.map(Into::into),
                line,
                column,
                end_line: None,
                end_column: None,
                severity,
                code: code.map(Into::into),
                message: message.into(),
                category: None,
                fingerprint: Diagnostic::compute_fingerprint("ruff", code, file, message),
                outside_target: false,
                body: None,
            }
        };
    vec![
        diagnostic(
            Some("src/app.py"),
            Some(12),
            Some(5),
            Severity::Error,
            Some("E711"),
            r#"comparison to None: use `x is None`, not `x == None` <&> "quoted" 'single'"#,
        ),
        diagnostic(
            Some("docs/grüße.py"),
            Some(7),
            None,
            Severity::Warning,
            Some("E501"),
            "Zeile zu lang (120 > 88): „Grüße“ 🚀",
        ),
        diagnostic(
            Some("pyproject.toml"),
            None,
            None,
            Severity::Note,
            None,
            "project declares no license",
        ),
    ]
}

/// Compares `actual` with `src/report/snapshots/NAME`; with `UPDATE_SNAPSHOTS=1` set, writes
/// it there instead (then review the diff).
pub fn assert_snapshot(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/report/snapshots")
        .join(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap();
    assert_eq!(actual, expected, "snapshot {name} differs");
}

pub fn input<'a>(records: &'a [CheckRecord], findings: &'a [Diagnostic]) -> CiReportInput<'a> {
    CiReportInput {
        checks: vec![
            CiCheck {
                record: &records[0],
                findings,
            },
            CiCheck {
                record: &records[1],
                findings: &[],
            },
        ],
        anchor: "refine-loop.toml".into(),
    }
}
