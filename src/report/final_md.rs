//! `REFINE-LOOP-FINAL.md`: the report a person reads first. A refactoring run's: outcome and
//! stop rule, the cycles, the categories before and after, regressions, scope, the baseline,
//! the record and what to do next. A campaign's and a merge's have their own renderers.

use std::fmt::Write as _;

use super::{Report, RunPart, ScopePart, baseline_md, merge_md};
use crate::markdown::inline;

pub(super) fn refactoring_report(report: &Report, run: &RunPart) -> String {
    let mut text = String::from("# refine-loop: final report\n\n");
    if let Some(reason) = report.stop_reason {
        let _ = writeln!(
            text,
            "**Outcome: {}** — stopped by `{}`: {}.\n",
            report.outcome.as_str(),
            reason.as_str(),
            reason.explain()
        );
    }
    let _ = writeln!(
        text,
        "Goal: harden `{}` against its quality gate ({} checks), the refactoring loop, at most {} cycles.\n",
        report.target.display(),
        run.checks_configured,
        run.max_cycles
    );
    let _ = writeln!(
        text,
        "Failures: {} at the baseline, {} now.\n",
        report.baseline.failed_count, report.last.failed_count
    );
    new_since_section(&mut text, report, run.notes.new_since_skipped.as_deref());
    spent_line(&mut text, report);
    let unmasked: u64 = report.trend.cycles.iter().filter_map(|c| c.unmasked).sum();
    if unmasked > 0 {
        let _ = writeln!(
            text,
            "Unmasked: {unmasked}: findings that kept fixes brought to light outside the files they \
             changed (code that compiles or runs now, and is checked for the first time). They are \
             not regressions: they joined the kept state and later cycles work them.\n"
        );
    }
    cycles_table(&mut text, report);
    text.push_str("\n## Categories, before → after\n\n");
    for name in report.history.categories.keys() {
        // From the baseline (a category a later cycle first showed, like a cancelled check's
        // `infra`, started at 0), to the kept state.
        let first = report
            .baseline
            .categories
            .get(name)
            .map_or(0, |c| c.failures);
        let now = report.last.categories.get(name).map_or(0, |c| c.failures);
        let _ = writeln!(text, "- {}: {first} → {now}", inline(name));
    }
    if !report.history.regressions.is_empty() {
        text.push_str("\n## Regressions\n\n");
        for regression in &report.history.regressions {
            let _ = writeln!(
                text,
                "- {} failed in cycle {} ({} failures) after passing",
                inline(&regression.category),
                regression.cycle,
                regression.failures
            );
        }
    }
    if !run.scope.everything || !run.scope.violations.is_empty() {
        text.push_str(&scope_section(&run.scope));
    }
    if !run.set_aside.is_empty() {
        text.push_str("\n## Set aside, not deleted\n\n");
        for line in &run.set_aside {
            let _ = writeln!(text, "- {line}");
        }
    }
    text.push_str(&integrity_section(&run.integrity));
    change_detection_section(&mut text, &run.full_scans);
    ignored_section(&mut text, &run.ignored);
    text.push_str(&baseline_md::report_section(&run.notes));
    record_section(&mut text, run);
    changes_section(&mut text, report, run);
    next_steps(&mut text, report, run);
    text
}

/// What the delegates spent, as they reported it; the runs whose usage is unknown are named as
/// such, never taken as free. Nothing when no delegate ran.
fn spent_line(text: &mut String, report: &Report) {
    if let Some(cap) = report
        .run
        .as_ref()
        .and_then(|run| run.notes.spending_cap.as_ref())
    {
        let _ = writeln!(text, "Stopped at the spending cap: {cap}.\n");
    }
    let cycles = &report.trend.cycles;
    let spent = crate::model::TokenUsage::total(cycles.iter().filter_map(|c| c.tokens.as_ref()));
    let unknown: u64 = cycles.iter().filter_map(|c| c.usage_unknown).sum();
    let unknown_note = format!(
        "the usage of {unknown} delegate run(s) is unknown (no `usage` reader, or nothing it \
         could read): not counted as free"
    );
    match (spent, unknown) {
        (None, 0) => {}
        (None, _) => {
            let _ = writeln!(text, "Spent: unknown; {unknown_note}.\n");
        }
        (Some(spent), _) => {
            let _ = write!(
                text,
                "Spent, as the delegates reported it: {}",
                spent.describe()
            );
            if unknown > 0 {
                let _ = write!(text, "; at least, since {unknown_note}");
            }
            text.push_str(".\n\n");
        }
    }
}

fn cycles_table(text: &mut String, report: &Report) {
    text.push_str(
        "## Cycles\n\n| cycle | failed | change | kept | note |\n|---|---|---|---|---|\n",
    );
    for cycle in &report.trend.cycles {
        let kept = match cycle.accepted {
            None => "baseline",
            Some(true) => "yes",
            Some(false) => "no",
        };
        let mut note = String::new();
        if cycle.breakthrough {
            note.push_str("breakthrough");
        }
        if let Some(unmasked) = cycle.unmasked {
            note.push_str(&format!("unmasked: {unmasked} "));
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
}

/// Findings listed in each part of the pull-request section, at most.
const NEW_SINCE_SHOWN: usize = 20;

/// Pull-request mode (`--new-since`): the base, and the findings new since it first, then the
/// pre-existing ones, counted apart; or (`skipped`) why `auto` made a full run.
fn new_since_section(text: &mut String, report: &Report, skipped: Option<&str>) {
    let Some(since) = report.new_since() else {
        if let Some(reason) = skipped {
            let _ = writeln!(text, "{}\n", inline(reason));
        }
        return;
    };
    let short = since.base.get(..12).unwrap_or(&since.base);
    let judged = match since.mode.as_str() {
        "gate" => "the gate run on the base",
        _ => "the lines the change added or modified",
    };
    let source = match since.source.as_str() {
        "github" => "GitHub's pull request",
        "gitlab" => "GitLab's merge request",
        "jenkins" => "Jenkins' change request",
        _ => "given on the command line",
    };
    let worked = match report.run {
        Some(_) => format!(
            " and were worked; delegates could change only the {} file(s) the change touched",
            since.changed_files.len()
        ),
        None => String::new(),
    };
    let _ = writeln!(
        text,
        "## Findings new since {reference}\n\nPull-request mode: only findings new since \
         {reference} (base `{short}`, {source}, judged by {judged}) count{worked}. New: {} \
         at the baseline, {} now. Pre-existing: {} pre-existing failure(s), left as they were \
         and not counted.\n",
        since.new_count,
        report.last.failed_count,
        (report.last.preexisting_count).unwrap_or(since.preexisting_count),
        reference = inline(&since.reference),
    );
    let mut new = Vec::new();
    let mut before = Vec::new();
    for check in &report.checks {
        for (index, finding) in check.findings.iter().enumerate() {
            match check.preexisting.get(index).copied().unwrap_or(false) {
                true => before.push(finding),
                false => new.push(finding),
            }
        }
    }
    for (title, findings) in [("New", &new), ("Pre-existing (not worked)", &before)] {
        if findings.is_empty() {
            continue;
        }
        let _ = writeln!(text, "{title}:\n");
        for finding in findings.iter().take(NEW_SINCE_SHOWN) {
            let _ = writeln!(text, "- {}", inline(&finding.detail()));
        }
        if findings.len() > NEW_SINCE_SHOWN {
            let _ = writeln!(text, "- and {} more", findings.len() - NEW_SINCE_SHOWN);
        }
        text.push('\n');
    }
}

/// The section on the scope: what it was, and every change made outside it.
pub(super) fn scope_section(scope: &ScopePart) -> String {
    let mut text = format!("\n## Scope\n\n{}\n\n", scope.description);
    if scope.outside > 0 {
        let _ = writeln!(
            text,
            "{} finding(s) outside the scope are reported in the gate summary and were not worked.\n",
            scope.outside
        );
    }
    if scope.violations.is_empty() {
        text.push_str("No delegate changed anything outside it.\n");
    }
    for violation in &scope.violations {
        let _ = writeln!(text, "- scope violation: {violation}");
    }
    text
}

/// Moves listed in each list of the integrity section, at most.
const INTEGRITY_SHOWN: usize = 50;

/// Gate integrity: each move that made the gate see less, refused, allowed or only reported,
/// and per delegate how often it tried.
pub(super) fn integrity_section(part: &super::IntegrityPart) -> String {
    use crate::integrity::Mode;
    let mut text = String::from("\n## Gate integrity\n\n");
    if part.mode == Mode::Off {
        text.push_str("Not looked for: `[loop] integrity = \"off\"`.\n");
        return text;
    }
    let (refused, allowed, reported) = (&part.refused, &part.allowed, &part.reported);
    if refused.is_empty() && allowed.is_empty() && reported.is_empty() {
        text.push_str(
            "No change tried to lower the count by changing what the gate sees (a suppression, a \
             skipped or weakened test, the gate's configuration, code moved out of its reach).\n",
        );
        return text;
    }
    let _ = writeln!(
        text,
        "A change that lowers the count by changing what the gate sees is no fix \
         (`[loop] integrity = \"{}\"`).",
        part.mode.name()
    );
    let lists = [
        ("Refused: rolled back, a strike for the delegate", refused),
        ("Allowed by `[[integrity.allow]]`, kept", allowed),
        ("Reported: judged as any change", reported),
    ];
    for (title, lines) in lists.into_iter().filter(|(_, lines)| !lines.is_empty()) {
        let _ = writeln!(text, "\n{title}:\n");
        for line in lines.iter().take(INTEGRITY_SHOWN) {
            let _ = writeln!(text, "- {line}");
        }
        if lines.len() > INTEGRITY_SHOWN {
            let _ = writeln!(text, "- … and {} more", lines.len() - INTEGRITY_SHOWN);
        }
    }
    text.push_str(
        "\n| delegate | changes refused | moves refused | allowed | reported |\n|---|---|---|---|---|\n",
    );
    for row in &part.delegates {
        let _ = writeln!(
            text,
            "| {} | {} | {} | {} | {} |",
            crate::markdown::code_span(&row.delegate).replace('|', "\\|"),
            row.changes_refused,
            row.refused,
            row.allowed,
            row.reported
        );
    }
    for row in part.delegates.iter().filter(|row| row.barred) {
        let _ = writeln!(
            text,
            "\n{} was barred for the rest of the run: {} of its changes were refused.",
            crate::markdown::code_span(&row.delegate),
            row.changes_refused
        );
    }
    text
}

/// Ignored files put back, and those not protected; nothing when there are neither.
/// Why the loop scanned the whole tree instead of following the kernel's watch, when it did.
fn change_detection_section(text: &mut String, full_scans: &[String]) {
    if full_scans.is_empty() {
        return;
    }
    text.push_str(
        "\n## Change detection\n\nThe kernel's watch on the tree (inotify) could not tell every \
         change, so the loop scanned the whole tree instead, because:\n\n",
    );
    for reason in full_scans {
        let _ = writeln!(text, "- {reason}");
    }
}

fn ignored_section(text: &mut String, ignored: &super::IgnoredPart) {
    if ignored.restored.is_empty() && ignored.not_protected.is_empty() {
        return;
    }
    text.push_str("\n## Ignored files\n\n");
    for line in &ignored.restored {
        let _ = writeln!(
            text,
            "- put back after a delegate deleted or changed it: {line}"
        );
    }
    for line in &ignored.not_protected {
        let _ = writeln!(text, "- not protected (over `protect_ignored_max`): {line}");
    }
}

fn record_section(text: &mut String, run: &RunPart) {
    text.push_str("\n## The record\n\n");
    let delivery = &run.delivery;
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
}

/// Where the accepted changes are, and how to keep or drop them.
fn changes_section(text: &mut String, report: &Report, run: &RunPart) {
    if run.delivery.commits == 0 && run.earlier.is_empty() {
        return;
    }
    text.push_str("\n## Where the changes are\n\n");
    let _ = writeln!(text, "{}", where_changes_are(report, run));
}

/// The accepted changes' place, and the commands that keep or drop them (also the console's);
/// then the earlier runs' changes the tree holds too, and the order that drops them all.
pub fn where_changes_are(report: &Report, run: &RunPart) -> String {
    let dir = report.layout.dir().display();
    if run.in_worktree {
        return format!(
            "The accepted changes are not in your working tree (the run worked in a linked \
             worktree). Take them with `git apply {dir}/refine-loop.patch`, or as commits with \
             `git am {dir}/patches/*.patch`."
        );
    }
    let mut text = String::new();
    if run.delivery.commits > 0 {
        text = format!(
            "The accepted changes are in your working tree, uncommitted (`git diff` shows them), and \
             in `{dir}/refine-loop.patch` and `{dir}/patches/` (a `git am` series). Keep them: \
             review them, then `git add` and commit them. Drop them: `git apply -R {dir}/refine-loop.patch`."
        );
    }
    if !run.earlier.is_empty() {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(&earlier_runs(report, run));
    }
    text
}

/// The earlier runs' changes the work tree holds, each run's patch, and the commands that drop
/// them all, newest first (each patch applies in reverse only on the tree the next one left).
fn earlier_runs(report: &Report, run: &RunPart) -> String {
    let dir = report.layout.dir().display();
    let mut text = String::from(
        "The working tree also holds earlier runs' accepted changes, not committed (this run \
         built on them), each set aside with its report under `runs/<id>/`:\n",
    );
    let mut undo = Vec::new();
    if run.delivery.commits > 0 {
        undo.push(format!("git apply -R {dir}/refine-loop.patch"));
    }
    for earlier in &run.earlier {
        let _ = match &earlier.patch {
            Some(patch) => {
                undo.push(format!("git apply -R {}", patch.display()));
                writeln!(
                    text,
                    "- run {}: `{}` (commits on `{}`)",
                    earlier.id,
                    patch.display(),
                    earlier.reference
                )
            }
            None => writeln!(
                text,
                "- run {}: no patch was written (see its report); its commits are on `{}`",
                earlier.id, earlier.reference
            ),
        };
    }
    let _ = write!(
        text,
        "\nKeep them: commit them with this run's. Drop them, newest first: `{}`.",
        undo.join(" && ")
    );
    text
}

fn next_steps(text: &mut String, report: &Report, run: &RunPart) {
    text.push_str("\n## What to do next\n\n");
    let last = &report.last;
    if last.failed_count == 0 {
        text.push_str("- The gate passes. Review the changes and commit them.\n");
    } else {
        for (name, category) in last.categories.iter().filter(|(_, c)| !c.passed) {
            let why = run
                .remaining
                .iter()
                .find(|r| r.category == *name)
                .map(why_left)
                .unwrap_or_default();
            let _ = writeln!(
                text,
                "- {}: {} failures left{why}; the first: {}",
                inline(name),
                category.failures,
                category
                    .details
                    .first()
                    .map_or("(no detail)".to_string(), |detail| inline(detail))
            );
        }
    }
    for heuristic in &run.heuristics {
        let _ = writeln!(text, "- {heuristic}");
    }
}

/// Why a category's findings are left, as a clause: in the user's protected files, unmasked,
/// no fixer, or the fixer tried.
fn why_left(remaining: &super::Remaining) -> String {
    let mut parts = Vec::new();
    if remaining.protected > 0 {
        parts.push(format!(
            "{} in your own uncommitted files (protected: no fixer may change them, by design)",
            remaining.protected
        ));
    }
    if remaining.unmasked > 0 {
        parts.push(format!("{} unmasked during the run", remaining.unmasked));
    }
    if !remaining.fixer {
        parts.push("no fixer takes this category: uncomment an agent, or add a delegate".into());
    } else if remaining.tried > 0 {
        parts.push(format!(
            "the fixer tried {} time(s) without a change that was kept",
            remaining.tried
        ));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join("; "))
    }
}

/// A run that ended in an error: what went wrong, and the gate as far as the run got.
pub(super) fn error_report(report: &Report, error: &str) -> String {
    let mut text = format!(
        "# refine-loop: final report\n\n**Outcome: {}** — the run ended in an error:\n\n```text\n{}\n```\n\n",
        report.outcome.as_str(),
        crate::markdown::code_block(error),
    );
    if report.trend.cycles.is_empty() {
        text.push_str("The baseline gate did not run.\n");
    } else {
        let _ = writeln!(
            text,
            "The baseline found {} failures and {} warnings.\n",
            report.baseline.failed_count, report.baseline.warning_count
        );
        text.push_str(&merge_md::categories_section(&report.baseline));
    }
    text
}

/// A report without a run's record: the gate's categories.
pub(super) fn gate_report(report: &Report) -> String {
    let mut text = format!(
        "# refine-loop: gate report\n\n**Outcome: {}**\n\nFailures: {}, warnings: {}.\n\n",
        report.outcome.as_str(),
        report.last.failed_count,
        report.last.warning_count
    );
    new_since_section(&mut text, report, None);
    text.push_str(&merge_md::categories_section(&report.last));
    text
}

#[cfg(test)]
mod tests {
    use crate::model::Preset;
    use crate::report::{Mode, final_report, fixture};

    #[test]
    fn the_refactoring_report() {
        let report = fixture::report(Mode::Run(Preset::Refactoring));
        insta::assert_snapshot!(final_report(&report));
    }

    #[test]
    fn a_category_a_later_cycle_first_showed_starts_at_the_baselines_zero() {
        // A cancelled cycle's gate records the check it stopped as infra; the baseline had none.
        let mut report = fixture::report(Mode::Run(Preset::Refactoring));
        let cancelled = crate::model::GateSummary::with_failures(2, &[("infra", 1)]);
        report.history.push(&cancelled);
        report.last.categories.remove("infra");
        assert!(!report.baseline.categories.contains_key("infra"));
        let text = final_report(&report);
        assert!(text.contains("- infra: 0 → 0\n"), "{text}");
    }

    #[test]
    fn earlier_runs_are_named_with_the_order_that_drops_them() {
        let earlier = |id: &str| crate::report::EarlierRun {
            id: id.to_string(),
            patch: Some(format!("/work/shop/.refine-loop/runs/{id}/refine-loop.patch").into()),
            reference: format!("refs/refine-loop/{id}"),
        };
        let undo_this = "git apply -R /work/shop/.refine-loop/refine-loop.patch";
        let undo_2 = "git apply -R /work/shop/.refine-loop/runs/run-2/refine-loop.patch";
        let undo_1 = "git apply -R /work/shop/.refine-loop/runs/run-1/refine-loop.patch";
        // (this run's commits, earlier runs, the undo named, or no section)
        let both = format!("`{undo_this} && {undo_2} && {undo_1}`");
        let earlier_only = format!("`{undo_2} && {undo_1}`");
        let cases: &[(usize, &[&str], Option<&str>)] = &[
            (1, &[], Some(undo_this)),
            (1, &["run-2", "run-1"], Some(&both)),
            (0, &["run-2", "run-1"], Some(&earlier_only)),
            (0, &[], None),
        ];
        for (commits, ids, undo) in cases {
            let mut report = fixture::report(Mode::Run(Preset::Refactoring));
            let run = report.run.as_mut().unwrap();
            run.delivery.commits = *commits;
            run.earlier = ids.iter().map(|id| earlier(id)).collect();
            let text = final_report(&report);
            match undo {
                Some(undo) => assert!(text.contains(undo), "{commits} {ids:?}: {text}"),
                None => assert!(!text.contains("## Where the changes are"), "{text}"),
            }
            assert_eq!(
                text.contains("earlier runs' accepted changes"),
                !ids.is_empty(),
                "{text}"
            );
            for id in *ids {
                assert!(
                    text.contains(&format!("- run {id}: `/work/shop/.refine-loop/runs/{id}/refine-loop.patch` (commits on `refs/refine-loop/{id}`)")),
                    "{text}"
                );
            }
        }
    }

    #[test]
    fn the_report_of_a_gate_alone() {
        let report = fixture::report(Mode::Check);
        insta::assert_snapshot!(final_report(&report));
    }
}
