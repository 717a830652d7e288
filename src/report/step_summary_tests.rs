use std::borrow::Cow;

use super::*;
use crate::ci::github::{CLOSING_FENCE, truncation_note};
use crate::model::Severity;

const SECRET: &str = "s3cr3t-value-1";

fn redactor() -> Redactor {
    Redactor::new([("GITHUB_TOKEN".to_string(), SECRET.to_string())]).unwrap()
}

fn finding(severity: Severity, file: &str, line: u32, code: &str, message: &str) -> Diagnostic {
    Diagnostic {
        file: Some(file.to_string()),
        line: Some(line),
        column: None,
        end_line: None,
        end_column: None,
        severity,
        code: Some(code.to_string()),
        message: message.to_string(),
        category: None,
        fingerprint: String::new(),
        outside_target: false,
        body: None,
    }
}

fn change(name: &str, before: u64, after: u64) -> CategoryChange {
    CategoryChange {
        name: name.to_string(),
        before,
        after,
    }
}

#[test]
fn a_campaign_summary() {
    let input = SummaryInput {
        outcome: "NEEDS-FIX".to_string(),
        stop_reason: Some("no-progress".to_string()),
        categories: vec![
            change("lint", 10, 2),
            change("type_check", 1, 1),
            change("tests", 0, 3),
        ],
        trend: vec![11, 5, 5, 6],
        findings: vec![
            finding(
                Severity::Warning,
                "src/b.py",
                3,
                "W291",
                "trailing whitespace",
            ),
            finding(
                Severity::Error,
                "src/a.py",
                7,
                "E501",
                "line too long (120 > 88)",
            ),
        ],
        report_path: Some(".refine-loop/report.md".to_string()),
        error: None,
        artifact: None,
        patch: false,
        integrity_refused: Vec::new(),
    };
    let expected = r##"## refine-loop: NEEDS-FIX

- **Stop reason:** no-progress
- **Failures:** 11 → 6 over 3 cycles
- **Report:** .refine-loop/report.md

### Categories

| Category | Before | After | Change |
| --- | ---: | ---: | ---: |
| lint | 10 | 2 | -8 |
| type\_check | 1 | 1 | 0 |
| tests | 0 | 3 | +3 |

### Failures per cycle

```mermaid
%%{init: {"themeVariables": {"xyChart": {"plotColorPalette": "#cf222e"}}}}%%
xychart-beta
    title "Failures per cycle"
    x-axis "Cycle" ["0", "1", "2", "3"]
    y-axis "Failures" 0 --> 11
    line [11, 5, 5, 6]
```

### Remaining findings (2)

| Severity | Location | Code | Message |
| --- | --- | --- | --- |
| error | src/a.py:7 | E501 | line too long (120 \> 88) |
| warning | src/b.py:3 | W291 | trailing whitespace |
"##;
    assert_eq!(step_summary(&input, &redactor()), expected);
}

#[test]
fn a_single_gate_summary_has_no_chart() {
    let input = SummaryInput {
        outcome: "SUCCESS".to_string(),
        trend: vec![0],
        ..SummaryInput::default()
    };
    let expected = "## refine-loop: SUCCESS

- **Failures:** 0 → 0 over 0 cycles

### Categories

No categories.

### Remaining findings (0)

None.
";
    assert_eq!(step_summary(&input, &redactor()), expected);
}

#[test]
fn the_chart_axis_starts_at_zero_and_never_ends_there() {
    let table: [(&[u64], &str); 3] = [
        (&[0, 0], "0 --> 1"),
        (&[3, 0], "0 --> 3"),
        (&[1, 40, 2], "0 --> 40"),
    ];
    for (trend, axis) in table {
        let chart = trend_chart(trend);
        assert!(
            chart.contains(&format!("y-axis \"Failures\" {axis}\n")),
            "{chart}"
        );
    }
}

#[test]
fn findings_are_listed_most_severe_first_and_capped() {
    let findings: Vec<Diagnostic> = (1..=60)
        .map(|line| finding(Severity::Warning, "w.rs", line, "W", "w"))
        .chain([finding(Severity::Error, "z.rs", 1, "E", "e")])
        .collect();
    let text = self::findings(&findings, &|value: &str| markdown_text(value));
    let rows: Vec<&str> = text.lines().filter(|line| line.starts_with("| ")).collect();
    // The header, its separator, then the findings.
    assert_eq!(rows.len(), 2 + MAX_LISTED_FINDINGS);
    assert_eq!(rows[2], "| error | z.rs:1 | E | e |");
    assert_eq!(rows[3], "| warning | w.rs:1 | W | w |");
    assert_eq!(rows[51], "| warning | w.rs:49 | W | w |");
    assert!(text.ends_with("\n11 more not listed here; the report lists them all.\n"));
}

#[test]
fn markdown_text_stays_in_its_cell() {
    let long = "é".repeat(MAX_CELL_CHARS + 5);
    let cut = format!("{}…", "é".repeat(MAX_CELL_CHARS));
    let table = [
        ("plain", "plain"),
        ("a | b", r"a \| b"),
        (r"a \| b", r"a \\\| b"),
        ("two\nlines\r\n", "two lines  "),
        ("<script>&amp;", r"\<script\>\&amp;"),
        (
            "*bold* _em_ `code` [link](x) ~~del~~",
            r"\*bold\* \_em\_ \`code\` \[link\](x) \~\~del\~\~",
        ),
        (long.as_str(), cut.as_str()),
    ];
    for (input, expected) in table {
        assert_eq!(markdown_text(input), expected, "{input:?}");
    }
}

/// Whether `fitted` is `original` cut at a line break, then a closing fence when needed, then
/// the truncation note; and at most `limit` long.
fn assert_cut_at_a_line(original: &str, fitted: &str, limit: usize) {
    assert!(fitted.len() <= limit, "{} > {limit}", fitted.len());
    let (kept, note) = fitted
        .split_once("\n> **Truncated:** ")
        .unwrap_or_else(|| panic!("no truncation note in {fitted:?}"));
    let kept = kept.strip_suffix(CLOSING_FENCE).unwrap_or(kept);
    assert!(original.starts_with(kept));
    assert!(kept.is_empty() || kept.ends_with('\n'));
    let left_out = original.len() - kept.len();
    assert!(note.starts_with(&format!("{left_out} bytes of this summary were left out")));
    assert!(fitted.ends_with("the report in the state dir has everything.\n"));
}

#[test]
fn fitting_under_a_limit() {
    let text = &format!("line one\nline two é\nline three {}\n", "x".repeat(300));
    // Under or at the limit: unchanged, borrowed.
    for limit in [text.len(), text.len() + 1, MAX_SUMMARY_BYTES] {
        assert!(matches!(fit_summary(text, limit), Cow::Borrowed(t) if t == text));
    }
    let note_length = truncation_note(text.len()).len() + CLOSING_FENCE.len();
    // (limit, lines kept)
    let table = [
        (note_length, ""),
        (note_length + 8, ""),
        (note_length + 9, "line one\n"),
        // Bytes 18 and 19 are the `é`: a cut there would split it.
        (note_length + 19, "line one\n"),
        (note_length + 20, "line one\n"),
        (note_length + 21, "line one\nline two é\n"),
    ];
    for (limit, kept) in table {
        let fitted = fit_summary(text, limit);
        assert_cut_at_a_line(text, &fitted, limit);
        assert!(fitted.starts_with(kept), "{limit}: {fitted}");
        assert!(
            !fitted[kept.len()..].starts_with("line"),
            "{limit}: {fitted}"
        );
    }
    // No room for the note: nothing.
    assert_eq!(fit_summary(text, note_length - 1), "");
    assert_eq!(fit_summary(text, 0), "");
}

#[test]
fn a_cut_inside_a_code_block_closes_it() {
    let after = format!("after {}\n", "x".repeat(300));
    let text = &format!("intro\n```mermaid\nxychart-beta\n    line [1, 2]\n```\n{after}");
    let limit = truncation_note(text.len()).len() + CLOSING_FENCE.len() + 30;
    let fitted = fit_summary(text, limit);
    assert_cut_at_a_line(text, &fitted, limit);
    assert!(
        fitted.starts_with("intro\n```mermaid\nxychart-beta\n```\n\n> **Truncated:** "),
        "{fitted}"
    );
    let after_block = text.len() - after.len();
    let limit = truncation_note(text.len()).len() + CLOSING_FENCE.len() + after_block;
    let fitted = fit_summary(text, limit);
    assert!(fitted.starts_with(&format!("{}\n> **Truncated:** ", &text[..after_block])));
}

#[test]
fn a_summary_over_one_mebibyte_is_cut() {
    // Multi-byte names, so a cut anywhere but at a line break would split a character.
    let categories: Vec<CategoryChange> = (0..30_000)
        .map(|index| change(&format!("catégorie-ü-{index}"), index, 0))
        .collect();
    let input = SummaryInput {
        outcome: "BUDGET".to_string(),
        categories,
        trend: vec![5, 4],
        ..SummaryInput::default()
    };
    let full = render(&input, &redactor());
    assert!(full.len() > MAX_SUMMARY_BYTES);
    let summary = step_summary(&input, &redactor());
    assert_cut_at_a_line(&full, &summary, MAX_SUMMARY_BYTES);
    assert!(summary.len() > MAX_SUMMARY_BYTES - 1000);
    assert!(std::str::from_utf8(summary.as_bytes()).is_ok());
    assert!(summary.starts_with("## refine-loop: BUDGET\n"));
    // Just under: unchanged.
    let mut small = input.clone();
    small.categories.truncate(100);
    assert_eq!(
        step_summary(&small, &redactor()),
        render(&small, &redactor())
    );
}

#[test]
fn secrets_never_reach_the_summary() {
    let with_secret = |text: &str| format!("{text} {SECRET}");
    let mut finding = finding(
        Severity::Error,
        &with_secret("src"),
        1,
        &with_secret("E"),
        "m",
    );
    // Past the cell's length, so only redaction before the cut hides it.
    finding.message = format!("{}{SECRET}", "x".repeat(MAX_CELL_CHARS - 5));
    let input = SummaryInput {
        outcome: with_secret("ERROR"),
        stop_reason: Some(with_secret("reason")),
        categories: vec![change(&with_secret("lint"), 1, 1)],
        trend: vec![1, 1],
        findings: vec![finding],
        report_path: Some(with_secret("/tmp/report")),
        error: None,
        artifact: None,
        patch: false,
        integrity_refused: Vec::new(),
    };
    let summary = step_summary(&input, &redactor());
    assert!(!summary.contains(SECRET), "{summary}");
    assert!(!summary.contains(&SECRET[..5]), "{summary}");
    assert_eq!(
        summary.matches(r"\[REDACTED:GITHUB\_TOKEN\]").count(),
        6,
        "{summary}"
    );
}

#[test]
fn the_summary_of_a_run() {
    let report =
        crate::report::fixture::report(crate::report::Mode::Run(crate::model::Preset::Refactoring));
    insta::assert_snapshot!(step_summary(&summary_input(&report), &redactor()));
}

#[test]
fn an_error_is_said_and_redacted() {
    let input = SummaryInput {
        outcome: "ERROR".to_string(),
        error: Some(format!(
            "infrastructure failure: ruff is not installed {SECRET}"
        )),
        ..SummaryInput::default()
    };
    let summary = step_summary(&input, &redactor());
    assert!(
        summary.contains("- **Error:** infrastructure failure: ruff is not installed"),
        "{summary}"
    );
    assert!(!summary.contains(SECRET), "{summary}");
}

#[test]
fn the_artifact_and_the_patch_in_it_are_named() {
    let input = SummaryInput {
        outcome: "SUCCESS".to_string(),
        report_path: Some("/home/runner/work/shop/.refine-loop/REFINE-LOOP-FINAL.md".into()),
        artifact: Some("refine-loop-harden-1a2b3c4d-1".into()),
        patch: true,
        ..SummaryInput::default()
    };
    let summary = step_summary(&input, &redactor());
    assert!(
        summary.contains(
            "- **Report:** REFINE-LOOP-FINAL.md in the artifact refine-loop-harden-1a2b3c4d-1\n"
        ),
        "{summary}"
    );
    assert!(
        summary.contains(
            "`git apply refine-loop.patch`, or the commits one by one with `git am patches/*.patch`"
        ),
        "{summary}"
    );
    assert!(!summary.contains("/home/runner"), "{summary}");
}
