//! The step summary: the run's Markdown report for `$GITHUB_STEP_SUMMARY`, kept under 1 MiB.

use super::Report;
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

/// One category's failures before and after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategoryChange {
    pub name: String,
    pub before: u64,
    pub after: u64,
}

/// The Markdown for the step summary, redacted, at most [`MAX_SUMMARY_BYTES`] long (see
/// [`fit_summary`]): outcome and stop reason, a table of the categories before and after, a
/// Mermaid chart of the failed count per cycle (when there are two cycles or more) and the
/// remaining findings, the most severe first. `artifact` is what the Action uploads the state
/// dir as, when it says.
pub fn step_summary(report: &Report, artifact: Option<&str>, redactor: &Redactor) -> String {
    let text = render(report, artifact, redactor);
    let text = redactor.redact_str(&text);
    fit_summary(&text, MAX_SUMMARY_BYTES).into_owned()
}

/// The whole summary. Every text from the run is redacted before it is cut or escaped.
fn render(report: &Report, artifact: Option<&str>, redactor: &Redactor) -> String {
    let text = |value: &str| markdown_text(&redactor.redact_str(value));
    let trend: Vec<u64> = report.trend.cycles.iter().map(|c| c.failed_count).collect();
    let mut out = format!("## refine-loop: {}\n\n", text(&report.outcome_label()));
    if let Some(reason) = report.stop_reason {
        out.push_str(&format!("- **Stop reason:** {}\n", text(reason.as_str())));
    }
    if let Some(error) = &report.error {
        out.push_str(&format!("- **Error:** {}\n", text(error)));
    }
    if let Some(spent) = report.spent().filter(|spent| spent.turns > 0) {
        out.push_str(&format!("- **Spent:** {}\n", text(&spent.describe())));
    }
    if let Some(cap) = report
        .run
        .as_ref()
        .and_then(|run| run.notes.spending_cap.as_ref())
    {
        out.push_str(&format!("- **Spending cap:** {}\n", text(cap)));
    }
    if let (Some(first), Some(last)) = (trend.first(), trend.last()) {
        let cycles = trend.len() - 1;
        let plural = if cycles == 1 { "" } else { "s" };
        out.push_str(&format!(
            "- **Failures:** {first} → {last} over {cycles} cycle{plural}\n"
        ));
    }
    if let Some(since) = report.new_since() {
        out.push_str(&format!(
            "- **New since {}:** only these count; {} pre-existing failure(s) left as they were, not counted\n",
            text(&since.reference),
            report.last.preexisting_count.unwrap_or(since.preexisting_count)
        ));
    } else if let Some(reason) = report
        .run
        .as_ref()
        .and_then(|run| run.notes.new_since_skipped.as_ref())
    {
        out.push_str(&format!("- **Full run:** {}\n", text(reason)));
    }
    let path = report.main_file();
    match artifact {
        Some(artifact) => {
            let file = path.file_name().unwrap_or(path.as_os_str());
            out.push_str(&format!(
                "- **Report:** {} in the artifact {}\n",
                text(&file.to_string_lossy()),
                text(artifact)
            ));
            let patch = report.run.as_ref().is_some_and(|run| {
                run.delivery.reference.is_some() && run.delivery.refused.is_none()
            });
            if patch {
                out.push_str(&format!(
                    "- **Patch:** refine-loop.patch in the artifact {}: `git apply refine-loop.patch`, or the commits one by one with `git am patches/*.patch`\n",
                    text(artifact)
                ));
            }
        }
        None => out.push_str(&format!(
            "- **Report:** {}\n",
            text(&path.display().to_string())
        )),
    }
    out.push_str("\n### Categories\n\n");
    out.push_str(&categories(&report.category_changes(), &text));
    let refused = report
        .run
        .as_ref()
        .map_or(&[][..], |run| &run.integrity.refused);
    if !refused.is_empty() {
        out.push_str(&format!(
            "\n### Gate integrity: {} refused\n\nChanges that lowered the count by changing what the gate sees were rolled back:\n\n",
            refused.len()
        ));
        for line in refused.iter().take(MAX_LISTED_MOVES) {
            out.push_str(&format!("- {}\n", text(line)));
        }
        if refused.len() > MAX_LISTED_MOVES {
            out.push_str(&format!(
                "- … and {} more (the report has every one)\n",
                refused.len() - MAX_LISTED_MOVES
            ));
        }
    }
    if trend.len() >= 2 {
        out.push_str("\n### Failures per cycle\n\n");
        out.push_str(&trend_chart(&trend));
    }
    let heading = match report.new_since() {
        Some(_) => "Remaining new findings",
        None => "Remaining findings",
    };
    out.push_str(&format!("\n### {heading} ({})\n\n", report.findings.len()));
    out.push_str(&findings(&report.findings, &text));
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
