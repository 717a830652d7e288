//! The files a run leaves: each delegate's report, `trend.json`, `category-history.json`,
//! `heuristics.json` and `REFINE-LOOP-FINAL.md`.

use std::fmt::Write as _;
use std::path::Path;

use super::Attempt;
use super::refactoring::RunReport;
use crate::config::Settings;
use crate::model::GateSummary;
use crate::process::describe_end;
use crate::state::{self, StateError};

/// Bytes of a delegate's output kept in its report.
const REPORT_OUTPUT: usize = 16 * 1024;

/// `cycle-N/delegate-reports/fix-<category>.md`.
pub fn write_delegate_report(
    path: &Path,
    cycle: u32,
    attempt: &Attempt,
    settings: &Settings,
) -> Result<(), StateError> {
    let delegate = &settings.delegates[attempt.delegate];
    let run = &attempt.run;
    let mut text = format!("# Cycle {cycle}: fix `{}`\n\n", attempt.category);
    let _ = writeln!(text, "- delegate: `{}`", delegate.describe());
    let end = match &run.spawn_error {
        Some(error) => format!("could not start: {error}"),
        None => describe_end(&run.end, None, delegate.timeout),
    };
    let _ = writeln!(text, "- ended: {end}");
    let _ = writeln!(
        text,
        "- verdict: {}",
        run.verdict
            .as_ref()
            .map_or("(none written)", |v| v.as_str())
    );
    let outcome = if attempt.changes.is_empty() {
        "no change".to_string()
    } else if attempt.kept {
        "kept".to_string()
    } else {
        format!("rolled back: {}", attempt.rejected_because.join("; "))
    };
    let _ = writeln!(text, "- result: {outcome}");
    if let Some(note) = &run.note {
        let _ = writeln!(text, "- not applied: {note}");
    }
    if let Some(usage) = &run.usage {
        let _ = writeln!(
            text,
            "- tokens: {} prompt + {} completion = {}",
            usage.prompt_tokens, usage.completion_tokens, usage.total_tokens
        );
    }
    let _ = writeln!(text, "\n## What it changed (from git)\n");
    if attempt.changes.is_empty() {
        text.push_str("Nothing.\n");
    }
    for change in &attempt.changes {
        let _ = writeln!(
            text,
            "- `{}`: {} → {}",
            change.path,
            change.before.describe(),
            change.after.describe()
        );
    }
    if !attempt.incidents.is_empty() {
        text.push_str("\n## What it must not do\n\n");
        for incident in &attempt.incidents {
            let _ = writeln!(text, "- {}", incident.describe());
        }
    }
    if let Some(crate::delegate::Verdict::NeedsFix(findings)) = &run.verdict {
        text.push_str("\n## For a person\n\n");
        for finding in findings {
            let _ = writeln!(text, "- {finding}");
        }
    }
    let tail = run.output.tail();
    let start = tail.len().saturating_sub(REPORT_OUTPUT);
    let output = String::from_utf8_lossy(&tail[start..]);
    let _ = write!(
        text,
        "\n## Its output ({} bytes{})\n\n```text\n{}\n```\n",
        run.output.total(),
        if run.output.total() as usize > REPORT_OUTPUT {
            ", the end shown"
        } else {
            ""
        },
        output.trim_end().replace("```", "` ` `")
    );
    state::write_atomic(path, text.as_bytes())
}

/// The final report's section on the scope: what it was, and every change made outside it.
pub fn scope_section(
    settings: &Settings,
    violations: &[String],
    remaining: &[crate::model::Diagnostic],
) -> String {
    let mut text = format!("\n## Scope\n\n{}\n\n", settings.run.scope.describe());
    let outside = remaining
        .iter()
        .filter(|d| !super::in_scope(&settings.run.scope, d))
        .count();
    if outside > 0 {
        let _ = writeln!(
            text,
            "{outside} finding(s) outside the scope are reported in the gate summary and were not worked.\n"
        );
    }
    if violations.is_empty() {
        text.push_str("No delegate changed anything outside it.\n");
    }
    for violation in violations {
        let _ = writeln!(text, "- scope violation: {violation}");
    }
    text
}

/// `trend.json`, `category-history.json`, `heuristics.json` and `REFINE-LOOP-FINAL.md`.
pub fn write_run_files(settings: &Settings, report: &RunReport) -> Result<(), StateError> {
    let dir = &settings.state_dir;
    let last = &report.end.kept.summary;
    // The state the run leaves (a cycle's own summary is what its gate measured, kept or not).
    let mut last = last.clone();
    last.cycle = report.end.trend.cycles.last().map_or(0, |c| c.cycle);
    state::write_json(&dir.join(crate::gate::SUMMARY_FILE), &last)?;
    state::write_json(&dir.join("trend.json"), &report.end.trend)?;
    state::write_json(&dir.join("category-history.json"), &report.end.history)?;
    state::write_json(&dir.join("heuristics.json"), &report.end.heuristics)?;
    state::write_atomic(
        &dir.join("REFINE-LOOP-FINAL.md"),
        final_report(settings, report, &last).as_bytes(),
    )
}

fn final_report(settings: &Settings, report: &RunReport, last: &GateSummary) -> String {
    let mut text = String::from("# refine-loop: final report\n\n");
    let _ = writeln!(
        text,
        "**Outcome: {}** — stopped by `{}`: {}.\n",
        report.outcome.as_str(),
        report.stop_reason.as_str(),
        report.stop_reason.explain()
    );
    let _ = writeln!(
        text,
        "Goal: harden `{}` against its quality gate ({} checks), the refactoring loop, at most {} cycles.\n",
        settings.target.display(),
        settings.gate.checks.len(),
        settings.run.max_cycles
    );
    let _ = writeln!(
        text,
        "Failures: {} at the baseline, {} now.\n",
        report.end.baseline.failed_count, report.end.kept.summary.failed_count
    );
    text.push_str(
        "## Cycles\n\n| cycle | failed | change | kept | note |\n|---|---|---|---|---|\n",
    );
    for cycle in &report.end.trend.cycles {
        let kept = match cycle.accepted {
            None => "baseline",
            Some(true) => "yes",
            Some(false) => "no",
        };
        let mut note = String::new();
        if cycle.breakthrough {
            note.push_str("breakthrough");
        }
        if let Some(attempt) = cycle.attempt_failed_count {
            note.push_str(&format!("rolled back (the changes left {attempt})"));
        }
        let _ = writeln!(
            text,
            "| {} | {} | {:+} | {kept} | {note} |",
            cycle.cycle, cycle.failed_count, cycle.delta
        );
    }
    text.push_str("\n## Categories, before → after\n\n");
    for (name, cycles) in &report.end.history.categories {
        let first = cycles.first().map_or(0, |c| c.failures);
        let now = last.categories.get(name).map_or(0, |c| c.failures);
        let _ = writeln!(text, "- {name}: {first} → {now}");
    }
    if !report.end.history.regressions.is_empty() {
        text.push_str("\n## Regressions\n\n");
        for regression in &report.end.history.regressions {
            let _ = writeln!(
                text,
                "- {} failed in cycle {} ({} failures) after passing",
                regression.category, regression.cycle, regression.failures
            );
        }
    }
    if !settings.run.scope.is_everything() || !report.end.scope_violations.is_empty() {
        text.push_str(&scope_section(
            settings,
            &report.end.scope_violations,
            &report.end.kept.diagnostics,
        ));
    }
    text.push_str(&super::baseline::report_section(&report.end.notes));
    text.push_str("\n## The record\n\n");
    let delivery = &report.delivery;
    match &delivery.reference {
        Some(reference) => {
            let _ = writeln!(
                text,
                "- {} accepted cycle(s) committed on `{reference}` (not on any branch; nothing was pushed).",
                delivery.commits
            );
        }
        None => text.push_str("- No change was kept: there is nothing to apply.\n"),
    }
    match &delivery.refused {
        Some(reason) => {
            let _ = writeln!(text, "- Patches refused: {reason}.");
        }
        None if delivery.reference.is_some() => text.push_str(
            "- `patches/` is a `git am` series of those commits; `refine-loop.patch` is all of them as one `git apply` patch; `manifest.json` lists every changed file's sha256 before and after.\n",
        ),
        None => {}
    }
    text.push_str("\n## What to do next\n\n");
    if last.failed_count == 0 {
        text.push_str("- The gate passes. Review the changes and commit them.\n");
    } else {
        for (name, category) in last.categories.iter().filter(|(_, c)| !c.passed) {
            let _ = writeln!(
                text,
                "- {name}: {} failures left; the first: {}",
                category.failures,
                category
                    .details
                    .first()
                    .map_or("(no detail)", String::as_str)
            );
        }
    }
    for heuristic in &report.end.heuristics.heuristics {
        let _ = writeln!(text, "- {}", heuristic.message);
    }
    text
}

/// The lines of the final report's scope section for an attempt's changes outside the scope.
pub fn scope_violations(
    attempt: &Attempt,
    cycle: super::CycleNumber,
    settings: &Settings,
) -> Vec<String> {
    attempt
        .incidents
        .iter()
        .filter(|incident| matches!(incident, crate::workspace::Incident::OutOfScope { .. }))
        .map(|incident| {
            format!(
                "cycle {}, `{}` on {}: {}",
                cycle.index,
                settings.delegates[attempt.delegate].describe(),
                attempt.category,
                incident.describe()
            )
        })
        .collect()
}
