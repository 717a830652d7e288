//! Sums check results into a [`GateSummary`]: findings by category, infrastructure failures
//! under `infra`, a failing check without findings as one `unparsed` failure.

use std::collections::{BTreeMap, BTreeSet};

use super::check::CheckResult;
use crate::model::{
    CategorySummary, CheckRecord, CheckStatus, GateSummary, Severity, SeverityCounts,
};
use crate::process::{Interruption, describe_end, humanize};

/// The category of checks that could not give a result.
pub const INFRA_CATEGORY: &str = "infra";
/// Details kept per category; the rest are counted in `details_omitted`.
pub const MAX_DETAILS: usize = 100;
/// Longest detail line kept.
const MAX_DETAIL_CHARS: usize = 500;

/// What the baseline found flaky, and excuses from then on: of a check whose result flipped
/// between runs, exactly the failures the baseline saw (their fingerprints, and an unparsed
/// failure if there was one), never a new one; and tests that failed in their suite but passed
/// alone, by check, file and test id.
///
/// In pull-request mode (`--new-since`) the baseline also excuses the findings that were there
/// before the change: they are counted apart, as pre-existing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Flaky {
    pub checks: BTreeMap<String, Excused>,
    pub tests: BTreeSet<FlakyTest>,
    /// Pull-request mode: the pre-existing findings; `None` in a full run.
    pub preexisting: Option<crate::new_since::Preexisting>,
}

/// A flaky check's baseline failures.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Excused {
    pub fingerprints: BTreeSet<String>,
    pub unparsed: bool,
}

/// A test that failed in its suite and passed alone: (check, file, test id).
pub type FlakyTest = (String, Option<String>, String);

impl Flaky {
    pub fn is_empty(&self) -> bool {
        self.checks.is_empty() && self.tests.is_empty() && self.preexisting.is_none()
    }

    /// For each of `check`'s findings, in order, whether it was there before the change
    /// (pull-request mode; never one excused as flaky).
    pub fn preexisting(&self, check: &str, findings: &[crate::model::Diagnostic]) -> Vec<bool> {
        match &self.preexisting {
            Some(preexisting) => {
                preexisting.mark(check, findings, &|finding| self.excuses(check, finding))
            }
            None => vec![false; findings.len()],
        }
    }

    /// Whether a finding of `check` is one the baseline excused.
    pub fn excuses(&self, check: &str, diagnostic: &crate::model::Diagnostic) -> bool {
        let flaky_check = self
            .checks
            .get(check)
            .is_some_and(|excused| excused.fingerprints.contains(&diagnostic.fingerprint));
        let flaky_test = diagnostic.code.as_ref().is_some_and(|code| {
            self.tests
                .contains(&(check.to_string(), diagnostic.file.clone(), code.clone()))
        });
        flaky_check || flaky_test
    }
}

/// Builds the summary of cycle `cycle` from what each check did. What `flaky` names is
/// recorded in the check's record and a note, and not counted.
pub fn summarize(cycle: u32, results: &[CheckResult], flaky: Option<&Flaky>) -> GateSummary {
    let empty = Flaky::default();
    let flaky = flaky.unwrap_or(&empty);
    let mut categories: BTreeMap<String, CategorySummary> = BTreeMap::new();
    let mut checks = Vec::with_capacity(results.len());
    let mut notes = Vec::new();
    let mut preexisting_count = 0;
    for result in results {
        let mut record = record_of(result);
        match (&record.status, &record.infra_reason) {
            (CheckStatus::Infra, Some(reason)) => {
                let entry = categories.entry(INFRA_CATEGORY.to_string()).or_default();
                entry.failures += 1;
                add_detail(entry, format!("{}: {reason}", record.name));
            }
            _ => {
                preexisting_count +=
                    count_findings(&mut categories, result, (&mut record, &mut notes), flaky);
            }
        }
        if let Some(exit) = &record.failing_exit {
            notes.push(format!(
                "{}: {exit}: its notes count by their level and fail nothing",
                record.name
            ));
        }
        if let Some(note) = count_mismatch(&record) {
            notes.push(note);
        }
        // A failing check whose output its parser mostly did not understand says so.
        if let Some(unread) = &result.unread
            && record.status == CheckStatus::Failed
        {
            notes.push(format!("{}: {unread}", record.name));
        }
        if !result.end.leftovers.is_empty() {
            notes.push(leftovers_note(&record.name, &result.end.leftovers));
        }
        if result.findings.omitted > 0 {
            notes.push(format!(
                "{}: {} findings were counted but not kept (limit {})",
                record.name,
                result.findings.omitted,
                crate::parse::Findings::default_limit()
            ));
        }
        checks.push(record);
    }
    for summary in categories.values_mut() {
        summary.passed = summary.failures == 0;
    }
    let summary = GateSummary::of_categories(cycle, categories);
    let in_pull_request = flaky.preexisting.is_some();
    GateSummary {
        checks,
        notes,
        new_count: in_pull_request.then_some(summary.failed_count),
        preexisting_count: in_pull_request.then_some(preexisting_count),
        ..summary
    }
}

/// Counts the findings of a check that gave a result into their categories, but those `flaky`
/// excuses (named in the record and a note) and the pre-existing ones; returns how many
/// pre-existing failures it left out.
fn count_findings(
    categories: &mut BTreeMap<String, CategorySummary>,
    result: &CheckResult,
    (record, notes): (&mut CheckRecord, &mut Vec<String>),
    flaky: &Flaky,
) -> u64 {
    let excused = flaky.checks.get(&record.name);
    if excused.is_some() {
        record.flaky = true;
    }
    // A flaky check's unparsed failure is excused only when the baseline had one.
    if record.unparsed && excused.is_some_and(|e| e.unparsed) {
        record.unparsed = false;
        notes.push(format!(
            "{}: failed as it did at the baseline, where it was flaky: not counted",
            record.name
        ));
    }
    let excuse = |d: &crate::model::Diagnostic| flaky.excuses(&record.name, d);
    let before = flaky.preexisting(&record.name, result.findings.diagnostics());
    let not = NotCounted {
        flaky: &excuse,
        preexisting: &before,
    };
    let (skipped, preexisting) = add_findings(categories, result, record, &not);
    if !skipped.is_empty() {
        notes.push(format!(
            "{}: {} finding(s) flaky at the baseline, not counted: {}",
            record.name,
            skipped.len(),
            skipped.join(", ")
        ));
        record.excused = skipped;
    }
    preexisting
}

/// The note on the processes a check left running (outside its group), which were killed.
fn leftovers_note(check: &str, leftovers: &[crate::process::Leftover]) -> String {
    format!(
        "{check}: left {} process(es) running after it ended, killed: {}",
        leftovers.len(),
        crate::process::name_leftovers(leftovers)
    )
}

fn record_of(result: &CheckResult) -> CheckRecord {
    let check = &result.check;
    let end = &result.end;
    let infra_reason = infra_reason(result);
    // A tool that failed only for refine-loop's own files (errors left out, nothing else found,
    // and its usual failing exit code, not a crash's) passed for the project.
    let counts = &result.findings.counts;
    let only_own = result.own_files > 0
        && counts.error == 0
        && counts.warning == 0
        && end.exit_code == Some(1);
    let exit_ok = end
        .exit_code
        .is_some_and(|code| check.success_codes.contains(&code) || only_own);
    let failing_exit = (infra_reason.is_none() && !exit_ok)
        .then(|| failing_exit(end.exit_code, counts, &check.run))
        .flatten();
    let unparsed =
        infra_reason.is_none() && !exit_ok && counts.error == 0 && failing_exit.is_none();
    let status = if infra_reason.is_some() {
        CheckStatus::Infra
    } else if (exit_ok || failing_exit.is_some()) && counts.error == 0 {
        CheckStatus::Passed
    } else {
        CheckStatus::Failed
    };
    CheckRecord {
        name: check.name.clone(),
        category: check.category.clone(),
        parser: check.parser.clone(),
        status,
        exit_code: end.exit_code,
        signal: end.signal,
        duration_ms: u64::try_from(end.duration.as_millis()).unwrap_or(u64::MAX),
        timed_out: end.stopped == Some(Interruption::Deadline),
        // What the parser read of an environment's failure (rustup's "toolchain not
        // installed" as an error) is no finding of the code's.
        counts: if infra_reason.is_some() {
            SeverityCounts::default()
        } else {
            result.findings.counts
        },
        expected_count: result.findings.expected,
        tests: result.findings.tests,
        unparsed,
        failing_exit,
        output_bytes: result.output.total(),
        lines_cut: result.lines_cut,
        infra_reason,
        leftover_processes_stopped: end.stopped == Some(Interruption::LeftoverProcesses),
        output_abandoned: end.output_abandoned,
        flaky: false,
        excused: Vec::new(),
        wrote_tracked: (result.wrote.put_back.iter())
            .chain(&result.wrote.not_put_back)
            .cloned()
            .collect(),
    }
}

/// What a failing exit code stood for when the parser read only notes, as `exit 1; 1 note, no
/// errors`: a tool that exits 1 on a finding of any level (ShellCheck, hadolint), whose notes
/// then count by their level (they fail nothing), as the category rules say. `None` when the
/// parser read an error or a warning (a tool told to fail on warnings, `--max-warnings 0`: its
/// exit stands), or nothing, or the exit code is not 1, a findings exit (a crash's exit 2, a
/// signal's none): each stays a failure.
///
/// Through `xargs` (`git ls-files -z | xargs -0 -r shellcheck`), the findings exit is xargs' 123:
/// some run of the tool exited 1 to 125.
pub fn failing_exit(exit_code: Option<i32>, counts: &SeverityCounts, run: &str) -> Option<String> {
    let code = exit_code?;
    let findings_exit = code == 1 || (code == 123 && run.split_whitespace().any(|w| w == "xargs"));
    if !findings_exit || counts.error + counts.warning > 0 || counts.note == 0 {
        return None;
    }
    Some(format!("exit {code}; {}, no errors", read_counts(counts)))
}

/// The warnings and notes a parser read, as `2 warnings, 1 note` (a level it read none of is left
/// out).
pub fn read_counts(counts: &SeverityCounts) -> String {
    let plural = |count: u64, one: &str| match count {
        1 => format!("1 {one}"),
        _ => format!("{count} {one}s"),
    };
    let mut parts = Vec::new();
    if counts.warning > 0 {
        parts.push(plural(counts.warning, "warning"));
    }
    if counts.note > 0 {
        parts.push(plural(counts.note, "note"));
    }
    parts.join(", ")
}

/// Why a check gave no result, if it did not: it could not start, its command was not found or
/// not executable, it was stopped, or the environment failed it (no network, a tool missing).
fn infra_reason(result: &CheckResult) -> Option<String> {
    if let Some(error) = &result.spawn_error {
        return Some(format!("could not start: {error}"));
    }
    if !result.wrote.is_empty() {
        return Some(result.wrote.reason());
    }
    let end = &result.end;
    match end.stopped {
        Some(Interruption::Deadline) => {
            return Some(format!(
                "stopped at its deadline of {} ({})",
                humanize(result.check.timeout),
                describe_end(end, None, result.check.timeout)
            ));
        }
        Some(Interruption::Cancelled) => return Some("cancelled".to_string()),
        _ => {}
    }
    let last = || {
        super::last_lines(&result.output, 1)
            .pop()
            .map(|line| format!(": {line}"))
            .unwrap_or_default()
    };
    match end.exit_code {
        Some(127) => Some(format!("command not found (exit code 127){}", last())),
        Some(126) => Some(format!("command not executable (exit code 126){}", last())),
        Some(code) if !result.check.success_codes.contains(&code) => {
            let tail = super::last_lines(&result.output, super::environment::tail_lines());
            super::environment::failure(&tail, result.findings.diagnostics()).map(|line| {
                format!("the environment failed it, not the code (exit code {code}): {line}")
            })
        }
        _ => None,
    }
}

/// What a check's findings are not counted for: `flaky` says which the baseline excused, and
/// `preexisting` marks (by index) those there before the change.
struct NotCounted<'a> {
    flaky: &'a dyn Fn(&crate::model::Diagnostic) -> bool,
    preexisting: &'a [bool],
}

/// Adds the check's findings to their categories, but those `not` says not to count; returns
/// the codes of the ones skipped as flaky, and the number of pre-existing failures.
fn add_findings(
    categories: &mut BTreeMap<String, CategorySummary>,
    result: &CheckResult,
    record: &CheckRecord,
    not: &NotCounted<'_>,
) -> (Vec<String>, u64) {
    let (skip, preexisting) = (not.flaky, not.preexisting);
    let mut before = 0;
    let mut skipped = Vec::new();
    let own = categories.entry(record.category.clone()).or_default();
    if record.unparsed {
        own.failures += 1;
        own.unparsed = true;
        let tail = super::last_lines(&result.output, 3).join(" ⏎ ");
        let how = describe_end(&result.end, None, result.check.timeout);
        add_detail(
            own,
            if tail.is_empty() {
                format!("{}: failed ({how}) and printed nothing", record.name)
            } else {
                format!(
                    "{}: failed ({how}) with no {} parser \"{}\" reads{}; output ends: {tail}",
                    record.name,
                    if record.counts.warning + record.counts.note == 0 {
                        "finding"
                    } else {
                        "error"
                    },
                    record.parser,
                    read_besides(&record.counts)
                )
            },
        );
    }
    let diagnostics = result.findings.diagnostics();
    // Errors first, then warnings, so that the kept details are the ones that fail the gate.
    for severity in [Severity::Error, Severity::Warning] {
        for (index, diagnostic) in diagnostics.iter().enumerate() {
            if diagnostic.severity != severity {
                continue;
            }
            if preexisting.get(index).copied().unwrap_or(false) {
                before += u64::from(severity == Severity::Error);
                continue;
            }
            if skip(diagnostic) {
                skipped.push(
                    diagnostic
                        .code
                        .clone()
                        .unwrap_or_else(|| diagnostic.detail()),
                );
                continue;
            }
            let category = diagnostic.category.as_deref().unwrap_or(&record.category);
            let entry = categories.entry(category.to_string()).or_default();
            match severity {
                Severity::Error => entry.failures += 1,
                _ => entry.warnings += 1,
            }
            add_detail(entry, diagnostic.detail());
        }
    }
    // Findings counted but not kept still count, under the category their parser gave them.
    for (category, counts) in result.findings.omitted_by_category() {
        let entry = categories
            .entry(category.unwrap_or(&record.category).to_string())
            .or_default();
        entry.failures += counts.error;
        entry.warnings += counts.warning;
    }
    (skipped, before)
}

/// What a parser read beside errors, for a sentence about its check: ` (it read 1 note)`, or
/// nothing when it read none.
pub fn read_besides(counts: &SeverityCounts) -> String {
    let read = read_counts(counts);
    if read.is_empty() {
        read
    } else {
        format!(" (it read {read})")
    }
}

fn add_detail(summary: &mut CategorySummary, detail: String) {
    if summary.details.len() >= MAX_DETAILS {
        summary.details_omitted += 1;
        return;
    }
    let detail = if detail.chars().count() > MAX_DETAIL_CHARS {
        let cut: String = detail.chars().take(MAX_DETAIL_CHARS).collect();
        format!("{cut}…")
    } else {
        detail
    };
    summary.details.push(detail);
}

/// A note when the tool's own count of its findings differs from what was parsed.
fn count_mismatch(record: &CheckRecord) -> Option<String> {
    let expected = record.expected_count?;
    let mut differences = Vec::new();
    if let Some(errors) = expected.error
        && errors != record.counts.error
    {
        differences.push(format!("{errors} errors (parsed {})", record.counts.error));
    }
    if let Some(warnings) = expected.warning
        && warnings != record.counts.warning
    {
        differences.push(format!(
            "{warnings} warnings (parsed {})",
            record.counts.warning
        ));
    }
    (!differences.is_empty()).then(|| {
        format!(
            "{}: the tool reported {}; parser \"{}\" may be missing some of its output",
            record.name,
            differences.join(" and "),
            record.parser
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Diagnostic, Severity};

    fn finding(file: &str, code: &str, fingerprint: &str) -> Diagnostic {
        Diagnostic {
            file: Some(file.into()),
            line: None,
            column: None,
            end_line: None,
            end_column: None,
            severity: Severity::Error,
            code: Some(code.into()),
            message: "failed".into(),
            category: None,
            fingerprint: fingerprint.into(),
            outside_target: false,
            body: None,
        }
    }

    const XARGS: &str = "git ls-files -z -- '*.sh' | xargs -0 -r shellcheck -f gcc";

    #[test]
    fn a_failing_exit_with_only_warnings_or_notes_counts_by_level() {
        let counts = |error, warning, note| SeverityCounts {
            error,
            warning,
            note,
        };
        // (exit code, counts, what the exit stood for)
        let cases = [
            (Some(1), counts(0, 0, 1), Some("exit 1; 1 note, no errors")),
            // Through xargs, its 123 (a run of the tool exited 1 to 125); elsewhere a crash's.
            (
                Some(123),
                counts(0, 0, 2),
                Some("exit 123; 2 notes, no errors"),
            ),
            (Some(1), counts(0, 0, 3), Some("exit 1; 3 notes, no errors")),
            // A warning read: the exit stands (a tool told to fail on warnings).
            (Some(1), counts(0, 1, 0), None),
            (Some(1), counts(0, 2, 1), None),
            // An error read: the exit is the error's.
            (Some(1), counts(1, 0, 1), None),
            // Nothing read: an unparsed failure.
            (Some(1), counts(0, 0, 0), None),
            // Not a findings exit: a crash after a note is still a failure.
            (Some(2), counts(0, 0, 1), None),
            (Some(101), counts(0, 1, 0), None),
            (None, counts(0, 0, 1), None),
        ];
        for (exit_code, counts, expected) in cases {
            assert_eq!(
                failing_exit(exit_code, &counts, XARGS).as_deref(),
                expected,
                "{exit_code:?} {counts:?}"
            );
        }
        assert_eq!(
            failing_exit(Some(123), &counts(0, 0, 2), "shellcheck a.sh"),
            None
        );
    }

    #[test]
    fn only_what_the_baseline_saw_is_excused() {
        let mut flaky = Flaky::default();
        flaky.checks.insert(
            "integration".into(),
            Excused {
                fingerprints: ["seen".to_string()].into(),
                unparsed: false,
            },
        );
        flaky.tests.insert((
            "pytest".into(),
            Some("tests/test_a.py".into()),
            "tests/test_a.py::test_b".into(),
        ));
        // (check, finding, excused)
        let cases = [
            ("integration", finding("a.py", "E1", "seen"), true),
            ("integration", finding("a.py", "E1", "new"), false),
            ("other", finding("a.py", "E1", "seen"), false),
            (
                "pytest",
                finding("tests/test_a.py", "tests/test_a.py::test_b", "x"),
                true,
            ),
            (
                "pytest",
                finding("tests/test_z.py", "tests/test_a.py::test_b", "x"),
                false,
            ),
            (
                "pytest",
                finding("tests/test_a.py", "tests/test_a.py::test_c", "x"),
                false,
            ),
            (
                "jest",
                finding("tests/test_a.py", "tests/test_a.py::test_b", "x"),
                false,
            ),
        ];
        for (check, diagnostic, expected) in cases {
            assert_eq!(
                flaky.excuses(check, &diagnostic),
                expected,
                "{check} {diagnostic:?}"
            );
        }
    }
}
