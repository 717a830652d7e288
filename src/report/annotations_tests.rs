use super::*;

fn redactor() -> Redactor {
    Redactor::new([("GITHUB_TOKEN".to_string(), "s3cr3t-value-1".to_string())]).unwrap()
}

fn finding(severity: Severity, file: Option<&str>, line: Option<u32>, message: &str) -> Diagnostic {
    Diagnostic {
        file: file.map(String::from),
        line,
        column: None,
        end_line: None,
        end_column: None,
        severity,
        code: None,
        message: message.to_string(),
        category: None,
        fingerprint: String::new(),
        outside_target: false,
        body: None,
    }
}

/// `count` findings of `severity`, on lines 1.. of `src/<word>.rs`.
fn findings(severity: Severity, count: u32) -> Vec<Diagnostic> {
    let word = severity.as_str();
    (1..=count)
        .map(|line| finding(severity, Some(&format!("src/{word}.rs")), Some(line), word))
        .collect()
}

fn annotate(diagnostics: &[Diagnostic]) -> Vec<String> {
    annotations(diagnostics, Path::new("/ws"), Path::new("/ws"), &redactor())
}

#[test]
fn limits_per_severity_and_the_overflow_notice() {
    let notice = |text: &str| {
        format!(
            "::notice title=refine-loop::{text}: GitHub shows at most 10 errors, 10 warnings and \
             10 notices per step; the step summary and the report list the remaining findings."
        )
    };
    // (errors, warnings, notes) -> (error lines, warning lines, note lines, overflow notice)
    let table = [
        ((0, 0, 0), (0, 0, 0, None)),
        ((1, 0, 0), (1, 0, 0, None)),
        ((10, 0, 0), (10, 0, 0, None)),
        (
            (11, 0, 0),
            (10, 0, 0, Some("1 more finding not annotated (1 error)")),
        ),
        (
            (25, 0, 0),
            (10, 0, 0, Some("15 more findings not annotated (15 errors)")),
        ),
        ((0, 10, 0), (0, 10, 0, None)),
        (
            (0, 11, 0),
            (0, 10, 0, Some("1 more finding not annotated (1 warning)")),
        ),
        (
            (0, 25, 0),
            (
                0,
                10,
                0,
                Some("15 more findings not annotated (15 warnings)"),
            ),
        ),
        ((10, 10, 0), (10, 10, 0, None)),
        (
            (25, 11, 0),
            (
                10,
                10,
                0,
                Some("16 more findings not annotated (15 errors, 1 warning)"),
            ),
        ),
        ((0, 0, 10), (0, 0, 10, None)),
        // The notice that counts takes the place of one note.
        (
            (0, 0, 11),
            (0, 0, 9, Some("2 more findings not annotated (2 notes)")),
        ),
        (
            (11, 0, 1),
            (10, 0, 1, Some("1 more finding not annotated (1 error)")),
        ),
        (
            (11, 12, 12),
            (
                10,
                10,
                9,
                Some("6 more findings not annotated (1 error, 2 warnings, 3 notes)"),
            ),
        ),
    ];
    for ((errors, warnings, notes), (error_lines, warning_lines, note_lines, overflow)) in table {
        // Given least severe first, to show the order is the function's.
        let mut diagnostics = findings(Severity::Note, notes);
        diagnostics.extend(findings(Severity::Warning, warnings));
        diagnostics.extend(findings(Severity::Error, errors));
        let lines = annotate(&diagnostics);
        let case = (errors, warnings, notes);
        let mut expected: Vec<String> = Vec::new();
        for (count, command, word) in [
            (error_lines, "error", "error"),
            (warning_lines, "warning", "warning"),
            (note_lines, "notice", "note"),
        ] {
            expected.extend(
                (1..=count)
                    .map(|line| format!("::{command} file=src/{word}.rs,line={line}::{word}")),
            );
        }
        expected.extend(overflow.map(notice));
        assert_eq!(lines, expected, "{case:?}");
    }
}

#[test]
fn most_severe_first_then_file_line_and_column() {
    let mut diagnostics = vec![
        finding(Severity::Warning, Some("a.rs"), Some(1), "w a:1"),
        finding(Severity::Error, None, None, "e no file"),
        finding(Severity::Error, Some("b.rs"), Some(2), "e b:2"),
        finding(Severity::Error, Some("b.rs"), Some(10), "e b:10"),
        finding(Severity::Error, Some("a.rs"), Some(30), "e a:30"),
        finding(Severity::Error, Some("b.rs"), None, "e b"),
        finding(Severity::Note, Some("a.rs"), Some(1), "n a:1"),
    ];
    diagnostics[3].column = Some(7);
    diagnostics.push(Diagnostic {
        column: Some(3),
        message: "e b:10:3".to_string(),
        ..diagnostics[3].clone()
    });
    assert_eq!(
        annotate(&diagnostics),
        [
            "::error file=a.rs,line=30::e a:30",
            "::error file=b.rs::e b",
            "::error file=b.rs,line=2::e b:2",
            "::error file=b.rs,line=10,col=3::e b:10:3",
            "::error file=b.rs,line=10,col=7::e b:10",
            "::error::e no file",
            "::warning file=a.rs,line=1::w a:1",
            "::notice file=a.rs,line=1::n a:1",
        ]
    );
}

#[test]
fn escaping_of_message_and_properties() {
    let diagnostic = Diagnostic {
        file: Some("dir,with:odd%chars/a b.py".to_string()),
        line: Some(4),
        column: Some(2),
        code: Some("clippy::needless_return".to_string()),
        message: "100% sure: a, b\r\nnext line".to_string(),
        body: Some("  | more\n  = help: x".to_string()),
        ..finding(Severity::Error, None, None, "")
    };
    assert_eq!(
        annotate(&[diagnostic]),
        ["::error file=dir%2Cwith%3Aodd%25chars/a b.py,line=4,col=2,\
             title=clippy%3A%3Aneedless_return::100%25 sure: a, b%0D%0Anext line%0A  | more%0A  \
             = help: x"]
    );
    let category_title = Diagnostic {
        category: Some("lint, strict: 50%".to_string()),
        ..finding(
            Severity::Warning,
            None,
            None,
            "::error::injected\n::error::line",
        )
    };
    assert_eq!(
        annotate(&[category_title]),
        ["::warning title=lint%2C strict%3A 50%25::::error::injected%0A::error::line"]
    );
}

#[test]
fn paths_relative_to_the_workspace() {
    // (workspace, target, finding's path) -> the annotation's path
    let table = [
        ("/ws", "/ws", "src/a.rs", Some("src/a.rs")),
        ("/ws", "/ws/crates/x", "src/a.rs", Some("crates/x/src/a.rs")),
        (
            "/ws/",
            "/ws/./crates/x/",
            "./src/a.rs",
            Some("crates/x/src/a.rs"),
        ),
        ("/ws", "/ws/crates/x", "../y/b.rs", Some("crates/y/b.rs")),
        ("/ws", "crates/x", "a.rs", Some("crates/x/a.rs")),
        ("/ws", "/ws", "/ws/src/absolute.rs", Some("src/absolute.rs")),
        ("/ws", "/ws", "../other/a.rs", None),
        ("/ws", "/ws/a", "../../../../etc/passwd", None),
        ("/ws", "/ws", "/usr/lib/python3/x.py", None),
        ("/ws", "/wsx", "a.rs", None),
        ("/ws", "/ws", "", None),
        ("/ws", "/ws", ".", None),
    ];
    for (workspace, target, file, expected) in table {
        let workspace = normalized(Path::new(workspace));
        let target = normalized(&workspace.join(target));
        assert_eq!(
            workspace_relative(&workspace, &target, file).as_deref(),
            expected,
            "{workspace:?} {target:?} {file}"
        );
    }
    assert_eq!(
        normalized(Path::new("../../a/./b/..")),
        Path::new("../../a")
    );
    assert_eq!(normalized(Path::new("/../a")), Path::new("/a"));
}

#[test]
fn a_file_outside_the_workspace_goes_into_the_message() {
    let redactor = redactor();
    let table = [
        (
            Some(12),
            Some(3),
            "::error title=E1::/usr/lib/x.py:12:3: bad",
        ),
        (Some(12), None, "::error title=E1::/usr/lib/x.py:12: bad"),
        (None, Some(3), "::error title=E1::/usr/lib/x.py: bad"),
    ];
    for (line, column, expected) in table {
        let diagnostic = Diagnostic {
            column,
            code: Some("E1".to_string()),
            outside_target: true,
            ..finding(Severity::Error, Some("/usr/lib/x.py"), line, "bad")
        };
        let lines = annotations(
            &[diagnostic],
            Path::new("/home/runner/work/repo/repo"),
            Path::new("/home/runner/work/repo/repo/app"),
            &redactor,
        );
        assert_eq!(lines, [expected]);
    }
}

#[test]
fn secrets_never_reach_an_annotation() {
    let secret = "s3cr3t-value-1";
    let diagnostic = Diagnostic {
        column: Some(1),
        code: Some(format!("code-{secret}")),
        body: Some(format!("body {secret}")),
        ..finding(
            Severity::Error,
            Some(&format!("src/{secret}.rs")),
            Some(1),
            &format!("message {secret}, 100%"),
        )
    };
    let outside = Diagnostic {
        file: Some(format!("/tmp/{secret}:x.rs")),
        ..diagnostic.clone()
    };
    let lines = annotate(&[diagnostic, outside]);
    assert_eq!(
        lines,
        [
            // `/tmp/...` sorts before `src/...`.
            "::error title=code-[REDACTED%3AGITHUB_TOKEN]::/tmp/[REDACTED:GITHUB_TOKEN]:x.rs:1:1: \
             message [REDACTED:GITHUB_TOKEN], 100%25%0Abody [REDACTED:GITHUB_TOKEN]",
            "::error file=src/[REDACTED%3AGITHUB_TOKEN].rs,line=1,col=1,\
             title=code-[REDACTED%3AGITHUB_TOKEN]::message [REDACTED:GITHUB_TOKEN], 100%25%0Abody \
             [REDACTED:GITHUB_TOKEN]",
        ]
    );
    for line in &lines {
        assert!(!line.contains(secret), "{line}");
    }
}

#[test]
fn the_annotations_of_a_run() {
    let report =
        crate::report::fixture::report(crate::report::Mode::Run(crate::model::Preset::Refactoring));
    let lines = annotations(
        &report.findings,
        Path::new("/work"),
        &report.target,
        &redactor(),
    );
    insta::assert_snapshot!(lines.join("\n"));
}

#[test]
fn the_cap_is_shared_by_every_failing_category() {
    let mut findings: Vec<Diagnostic> = (1..=12)
        .map(|line| {
            let mut lint = finding(Severity::Error, Some("src/a.py"), Some(line), "lint");
            lint.category = Some("lint".into());
            lint
        })
        .collect();
    let mut test = finding(
        Severity::Error,
        Some("tests/test_z.py"),
        Some(9),
        "test failed",
    );
    test.category = Some("tests".into());
    findings.push(test);
    let lines = annotations(&findings, Path::new("/w"), Path::new("/w"), &redactor());
    let errors: Vec<&String> = lines.iter().filter(|l| l.starts_with("::error ")).collect();
    assert_eq!(errors.len(), MAX_ERRORS);
    assert!(
        errors[1].contains("file=tests/test_z.py,line=9"),
        "the failing test is annotated second: {errors:?}"
    );
}
