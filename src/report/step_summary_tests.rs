use std::borrow::Cow;

use super::*;
use crate::ci::github::{CLOSING_FENCE, truncation_note};
use crate::model::{GateSummary, Outcome, Preset, Severity, StopReason};
use crate::report::Mode;
use crate::state::Layout;

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

/// A refactoring run's report: each category's failures before and after, the failed count per
/// cycle (the baseline first), and the findings that remain.
fn report(
    outcome: Outcome,
    categories: &[(&str, u64, u64)],
    trend: &[u64],
    findings: Vec<Diagnostic>,
) -> Report {
    let before: Vec<(&str, u64)> = categories.iter().map(|&(n, b, _)| (n, b)).collect();
    let after: Vec<(&str, u64)> = categories.iter().map(|&(n, _, a)| (n, a)).collect();
    let mut report = Report::bare(
        Mode::Run(Preset::Refactoring),
        outcome,
        "/work/shop".into(),
        Layout::new(".refine-loop"),
        GateSummary::with_failures(0, &before),
    );
    report.last = GateSummary::with_failures(1, &after);
    for (cycle, &failed) in (0..).zip(trend) {
        let mut summary = GateSummary::empty(cycle);
        summary.failed_count = failed;
        report.trend.push(&summary, None, false);
    }
    report.findings = findings;
    report
}

#[test]
fn a_campaign_summary() {
    let mut input = report(
        Outcome::NeedsFix,
        &[("lint", 10, 2), ("tests", 0, 3), ("type_check", 1, 1)],
        &[11, 5, 5, 6],
        vec![
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
    );
    input.stop_reason = Some(StopReason::NoProgress);
    let expected = r##"## refine-loop: NEEDS-FIX

- **Stop reason:** no-progress
- **Failures:** 11 → 6 over 3 cycles
- **Report:** .refine-loop/REFINE-LOOP-FINAL.md

### Categories

| Category | Before | After | Change |
| --- | ---: | ---: | ---: |
| lint | 10 | 2 | -8 |
| tests | 0 | 3 | +3 |
| type\_check | 1 | 1 | 0 |

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
    assert_eq!(step_summary(&input, None, &redactor()), expected);
}

#[test]
fn a_single_gate_summary_has_no_chart() {
    let input = report(Outcome::Success, &[], &[0], Vec::new());
    let expected = "## refine-loop: SUCCESS

- **Failures:** 0 → 0 over 0 cycles
- **Report:** .refine-loop/REFINE-LOOP-FINAL.md

### Categories

No categories.

### Remaining findings (0)

None.
";
    assert_eq!(step_summary(&input, None, &redactor()), expected);
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
    let names: Vec<String> = (0..30_000)
        .map(|index| format!("catégorie-ü-{index}"))
        .collect();
    let categories: Vec<(&str, u64, u64)> = (0..)
        .zip(&names)
        .map(|(index, name)| (name.as_str(), index, 0))
        .collect();
    let input = report(Outcome::Budget, &categories, &[5, 4], Vec::new());
    let full = render(&input, None, &redactor());
    assert!(full.len() > MAX_SUMMARY_BYTES);
    let summary = step_summary(&input, None, &redactor());
    assert_cut_at_a_line(&full, &summary, MAX_SUMMARY_BYTES);
    assert!(summary.len() > MAX_SUMMARY_BYTES - 1000);
    assert!(std::str::from_utf8(summary.as_bytes()).is_ok());
    assert!(summary.starts_with("## refine-loop: BUDGET\n"));
    // Just under: unchanged.
    let small = report(Outcome::Budget, &categories[..100], &[5, 4], Vec::new());
    assert_eq!(
        step_summary(&small, None, &redactor()),
        render(&small, None, &redactor())
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
    let lint = with_secret("lint");
    let mut input = report(Outcome::Error, &[(&lint, 1, 1)], &[1, 1], vec![finding]);
    input.layout = Layout::new(with_secret("/tmp/state"));
    input.error = Some(with_secret("error"));
    let summary = step_summary(&input, None, &redactor());
    assert!(!summary.contains(SECRET), "{summary}");
    assert!(!summary.contains(&SECRET[..5]), "{summary}");
    // The category, the finding's path and code, the report's path and the error; the message's
    // mark is cut with it.
    assert_eq!(
        summary.matches(r"\[REDACTED:GITHUB\_TOKEN\]").count(),
        5,
        "{summary}"
    );
}

#[test]
fn the_summary_of_a_run() {
    let report = crate::report::fixture::report(Mode::Run(Preset::Refactoring));
    insta::assert_snapshot!(step_summary(&report, None, &redactor()));
}

#[test]
fn an_error_is_said_and_redacted() {
    let mut input = report(Outcome::Error, &[], &[], Vec::new());
    input.error = Some(format!(
        "infrastructure failure: ruff is not installed {SECRET}"
    ));
    let summary = step_summary(&input, None, &redactor());
    assert!(
        summary.contains("- **Error:** infrastructure failure: ruff is not installed"),
        "{summary}"
    );
    assert!(!summary.contains(SECRET), "{summary}");
}

#[test]
fn the_artifact_and_the_patch_in_it_are_named() {
    let input = crate::report::fixture::report(Mode::Run(Preset::Refactoring));
    let summary = step_summary(&input, Some("refine-loop-harden-1a2b3c4d-1"), &redactor());
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
    assert!(!summary.contains("/work/shop"), "{summary}");
}

#[test]
fn in_pull_request_mode_the_summary_counts_the_preexisting_failures_apart() {
    let mut input = report(Outcome::Success, &[("lint", 2, 0)], &[2, 0], Vec::new());
    input.last.preexisting_count = Some(3);
    input.new_since = Some(crate::model::NewSinceNote {
        reference: "main".into(),
        preexisting_count: 3,
        ..crate::model::NewSinceNote::default()
    });
    let text = render(&input, None, &redactor());
    assert!(
        text.contains(
            "- **New since main:** only these count; 3 pre-existing failure(s) left as they were, not counted\n"
        ),
        "{text}"
    );
    assert!(text.contains("### Remaining new findings (0)"), "{text}");
}
