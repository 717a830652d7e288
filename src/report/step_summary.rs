//! The step summary: the run's Markdown report for `$GITHUB_STEP_SUMMARY`, kept under 1 MiB.

use super::annotations::most_severe_first;
use crate::ci::github::{MAX_SUMMARY_BYTES, fit_summary};
use crate::model::Diagnostic;
use crate::secrets::Redactor;

/// The summary lists this many remaining findings, the most severe first; the report has all.
const MAX_LISTED_FINDINGS: usize = 50;

/// The summary lists this many refused moves; the report has all.
const MAX_LISTED_MOVES: usize = 10;

/// A table cell or list item shows this many characters of a text at most.
const MAX_CELL_CHARS: usize = 300;

/// What the summary shows, built by `check` (one gate) and `run` (a campaign) alike.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SummaryInput {
    /// `SUCCESS`, `NEEDS-FIX`, ...
    pub outcome: String,
    /// Why the loop stopped; `None` for a single gate.
    pub stop_reason: Option<String>,
    /// Each category's failures before the first cycle and after the last.
    pub categories: Vec<CategoryChange>,
    /// The failed count per cycle, the baseline (cycle 0) first.
    pub trend: Vec<u64>,
    /// The findings that remain.
    pub findings: Vec<Diagnostic>,
    /// Where the full report was written.
    pub report_path: Option<String>,
    /// What ended the run, when an error did.
    pub error: Option<String>,
    /// The artifact the state dir is uploaded as (the Action says), when known.
    pub artifact: Option<String>,
    /// The run left a patch (`refine-loop.patch` and the `patches/` series).
    pub patch: bool,
    /// Moves that made the gate see less, whose changes were refused: one line each.
    pub integrity_refused: Vec<String>,
}

/// One category's failures before and after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategoryChange {
    pub name: String,
    pub before: u64,
    pub after: u64,
}

/// What the summary shows of `report`.
pub fn summary_input(report: &super::Report) -> SummaryInput {
    SummaryInput {
        outcome: report.outcome_label(),
        stop_reason: report.stop_reason.map(|reason| reason.as_str().to_string()),
        categories: report.category_changes(),
        trend: report.trend.cycles.iter().map(|c| c.failed_count).collect(),
        findings: report.findings.clone(),
        report_path: Some(report.main_file().display().to_string()),
        error: report.error.clone(),
        artifact: None,
        patch: report
            .run
            .as_ref()
            .is_some_and(|run| run.delivery.reference.is_some() && run.delivery.refused.is_none()),
        integrity_refused: report
            .run
            .as_ref()
            .map(|run| run.integrity.refused.clone())
            .unwrap_or_default(),
    }
}

/// The Markdown for the step summary, redacted, at most [`MAX_SUMMARY_BYTES`] long (see
/// [`fit_summary`]): outcome and stop reason, a table of the categories before and after, a
/// Mermaid chart of the failed count per cycle (when there are two cycles or more) and the
/// remaining findings, the most severe first.
pub fn step_summary(input: &SummaryInput, redactor: &Redactor) -> String {
    let text = render(input, redactor);
    let text = redactor.redact_str(&text);
    fit_summary(&text, MAX_SUMMARY_BYTES).into_owned()
}

/// The whole summary. Every text from the run is redacted before it is cut or escaped.
fn render(input: &SummaryInput, redactor: &Redactor) -> String {
    let text = |value: &str| markdown_text(&redactor.redact_str(value));
    let mut out = format!("## refine-loop: {}\n\n", text(&input.outcome));
    if let Some(reason) = &input.stop_reason {
        out.push_str(&format!("- **Stop reason:** {}\n", text(reason)));
    }
    if let Some(error) = &input.error {
        out.push_str(&format!("- **Error:** {}\n", text(error)));
    }
    if let (Some(first), Some(last)) = (input.trend.first(), input.trend.last()) {
        let cycles = input.trend.len() - 1;
        let plural = if cycles == 1 { "" } else { "s" };
        out.push_str(&format!(
            "- **Failures:** {first} → {last} over {cycles} cycle{plural}\n"
        ));
    }
    match (&input.artifact, &input.report_path) {
        (Some(artifact), Some(path)) => {
            let file = std::path::Path::new(path)
                .file_name()
                .map_or_else(|| path.clone(), |name| name.to_string_lossy().into_owned());
            out.push_str(&format!(
                "- **Report:** {} in the artifact {}\n",
                text(&file),
                text(artifact)
            ));
            if input.patch {
                out.push_str(&format!(
                    "- **Patch:** refine-loop.patch in the artifact {}: `git apply refine-loop.patch`, or the commits one by one with `git am patches/*.patch`\n",
                    text(artifact)
                ));
            }
        }
        (None, Some(path)) => out.push_str(&format!("- **Report:** {}\n", text(path))),
        _ => {}
    }
    out.push_str("\n### Categories\n\n");
    out.push_str(&categories(&input.categories, &text));
    if !input.integrity_refused.is_empty() {
        out.push_str(&format!(
            "\n### Gate integrity: {} refused\n\nChanges that lowered the count by changing what the gate sees were rolled back:\n\n",
            input.integrity_refused.len()
        ));
        for line in input.integrity_refused.iter().take(MAX_LISTED_MOVES) {
            out.push_str(&format!("- {}\n", text(line)));
        }
        if input.integrity_refused.len() > MAX_LISTED_MOVES {
            out.push_str(&format!(
                "- … and {} more (the report has every one)\n",
                input.integrity_refused.len() - MAX_LISTED_MOVES
            ));
        }
    }
    if input.trend.len() >= 2 {
        out.push_str("\n### Failures per cycle\n\n");
        out.push_str(&trend_chart(&input.trend));
    }
    out.push_str(&format!(
        "\n### Remaining findings ({})\n\n",
        input.findings.len()
    ));
    out.push_str(&findings(&input.findings, &text));
    out
}

fn categories(categories: &[CategoryChange], text: &impl Fn(&str) -> String) -> String {
    if categories.is_empty() {
        return "No categories.\n".to_string();
    }
    let mut out =
        String::from("| Category | Before | After | Change |\n| --- | ---: | ---: | ---: |\n");
    for category in categories {
        let change = i128::from(category.after) - i128::from(category.before);
        let change = if change > 0 {
            format!("+{change}")
        } else {
            change.to_string()
        };
        out.push_str(&format!(
            "| {} | {} | {} | {change} |\n",
            text(&category.name),
            category.before,
            category.after
        ));
    }
    out
}

/// The line's colour: a red that reads on GitHub's light and dark themes alike (Mermaid's
/// default palette starts with a near-white line on the light theme).
const CHART_COLOUR: &str = "#cf222e";

/// A Mermaid `xychart-beta` line of the failed count per cycle, in [`CHART_COLOUR`].
fn trend_chart(trend: &[u64]) -> String {
    let cycles: Vec<String> = (0..trend.len())
        .map(|cycle| format!("\"{cycle}\""))
        .collect();
    let counts: Vec<String> = trend.iter().map(u64::to_string).collect();
    let top = trend.iter().copied().max().unwrap_or(0).max(1);
    format!(
        "```mermaid\n%%{{init: {{\"themeVariables\": {{\"xyChart\": {{\"plotColorPalette\": \"{CHART_COLOUR}\"}}}}}}}}%%\n\
         xychart-beta\n    title \"Failures per cycle\"\n    x-axis \"Cycle\" \
         [{}]\n    y-axis \"Failures\" 0 --> {top}\n    line [{}]\n```\n",
        cycles.join(", "),
        counts.join(", ")
    )
}

fn findings(findings: &[Diagnostic], text: &impl Fn(&str) -> String) -> String {
    if findings.is_empty() {
        return "None.\n".to_string();
    }
    let mut out =
        String::from("| Severity | Location | Code | Message |\n| --- | --- | --- | --- |\n");
    for finding in most_severe_first(findings)
        .into_iter()
        .take(MAX_LISTED_FINDINGS)
    {
        let location = finding.file.as_deref().map_or(String::new(), |file| {
            let numbers = [finding.line, finding.column].into_iter().map_while(|n| n);
            std::iter::once(file.to_string())
                .chain(numbers.map(|number| number.to_string()))
                .collect::<Vec<_>>()
                .join(":")
        });
        out.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            finding.severity.as_str(),
            text(&location),
            text(finding.code.as_deref().unwrap_or("")),
            text(&finding.message)
        ));
    }
    if findings.len() > MAX_LISTED_FINDINGS {
        out.push_str(&format!(
            "\n{} more not listed here; the report lists them all.\n",
            findings.len() - MAX_LISTED_FINDINGS
        ));
    }
    out
}

/// `value` as inline Markdown text that stays in its table cell or list item: on one line, at
/// most [`MAX_CELL_CHARS`] characters (then `…`), escaped ([`crate::markdown::inline`]).
fn markdown_text(value: &str) -> String {
    if value.chars().nth(MAX_CELL_CHARS).is_none() {
        return crate::markdown::inline(value);
    }
    let cut: String = value.chars().take(MAX_CELL_CHARS).collect();
    crate::markdown::inline(&cut) + "…"
}

#[cfg(test)]
#[path = "step_summary_tests.rs"]
mod tests;
