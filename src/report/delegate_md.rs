//! Each delegate's report: `cycle-N/delegate-reports/fix-<category>.md`.

use std::fmt::Write as _;
use std::time::Duration;

use crate::delegate::DelegateRun;
use crate::process::describe_end;
use crate::workspace::{Change, Incident};

/// Bytes of a delegate's output kept in its report.
const REPORT_OUTPUT: usize = 16 * 1024;

/// Unmasked findings listed in a report.
const UNMASKED_SHOWN: usize = 20;

/// One attempt, as its report tells it.
#[derive(Debug, Clone, Copy)]
pub struct DelegateReport<'a> {
    pub cycle: u32,
    pub category: &'a str,
    /// The delegate, as the config names it, and its deadline.
    pub delegate: &'a str,
    pub timeout: Duration,
    pub run: &'a DelegateRun,
    pub changes: &'a [Change],
    pub incidents: &'a [Incident],
    pub kept: bool,
    pub rejected_because: &'a [String],
    /// New findings the change brought to light outside the files it touched (kept).
    pub unmasked: &'a [String],
    /// What its change did that makes the gate see less, and whether the change went for it.
    pub integrity: &'a [crate::integrity::Move],
    pub integrity_refused: bool,
}

/// `cycle-N/delegate-reports/fix-<category>.md`: how the delegate ended, its verdict, what the
/// loop made of its change, what it changed (from git), what it must not have done, and the end
/// of its output.
pub fn delegate_report(attempt: &DelegateReport<'_>) -> String {
    let run = attempt.run;
    let mut text = format!("# Cycle {}: fix `{}`\n\n", attempt.cycle, attempt.category);
    let _ = writeln!(text, "- delegate: `{}`", attempt.delegate);
    if let Some(command) = &run.command {
        let _ = writeln!(
            text,
            "- ran on the paths of its work in the scope: {}",
            crate::markdown::code_span(command)
        );
    }
    let end = match &run.spawn_error {
        Some(error) => format!("could not start: {error}"),
        None => describe_end(&run.end, None, attempt.timeout),
    };
    let _ = writeln!(text, "- ended: {end}");
    let verdict = match (&run.verdict, &run.verdict_refused) {
        (Some(verdict), _) => verdict.as_str().to_string(),
        (None, Some(refused)) => format!("(not read: {refused})"),
        (None, None) => "(none written)".to_string(),
    };
    let _ = writeln!(text, "- verdict: {verdict}");
    let outcome = outcome(attempt);
    let _ = writeln!(text, "- result: {outcome}");
    if let Some(note) = &run.note {
        let _ = writeln!(text, "- not applied: {note}");
    }
    for line in &run.own_files {
        let _ = writeln!(text, "- its own file {line}");
    }
    for line in &run.kernel_refused {
        let _ = writeln!(text, "- the kernel refused a write: {line}");
    }
    if let Some(usage) = &run.usage {
        let _ = writeln!(text, "- tokens: {}", usage.describe());
    } else if let Some(why) = &run.usage_unknown {
        let _ = writeln!(text, "- tokens: usage unknown ({why}); not counted as free");
    }
    let _ = writeln!(text, "\n## What it changed (from git)\n");
    if attempt.changes.is_empty() {
        text.push_str("Nothing.\n");
    }
    for change in attempt.changes {
        let _ = writeln!(
            text,
            "- {}: {} → {}",
            crate::markdown::code_span(&change.path.to_string()),
            change.before.describe(),
            change.after.describe()
        );
    }
    unmasked_section(&mut text, attempt.unmasked);
    integrity_section(&mut text, attempt);
    if !attempt.incidents.is_empty() {
        text.push_str("\n## What it must not do\n\n");
        for incident in attempt.incidents {
            let _ = writeln!(text, "- {}", incident.describe());
        }
    }
    if let Some(crate::delegate::Verdict::NeedsFix(findings)) = &run.verdict {
        text.push_str("\n## For a person\n\n");
        // The delegate's words: escaped, so none can open a heading or forge an outcome.
        for finding in findings {
            let _ = writeln!(text, "- {}", crate::markdown::inline(finding));
        }
    }
    if let Some(answer) = &run.answer {
        let _ = write!(
            text,
            "\n## Its answer\n\n```text\n{}\n```\n",
            crate::markdown::code_block(answer.trim_end())
        );
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
        crate::markdown::code_block(&output)
    );
    text
}

/// The attempt's result: no change, kept (and what it unmasked), or rolled back and why.
fn outcome(attempt: &DelegateReport<'_>) -> String {
    if attempt.changes.is_empty() {
        "no change".to_string()
    } else if attempt.kept && !attempt.unmasked.is_empty() {
        format!(
            "kept; unmasked: {} (new findings outside the files it changed, brought to light by \
             its fix; the next cycles work them)",
            attempt.unmasked.len()
        )
    } else if attempt.kept {
        "kept".to_string()
    } else {
        format!("rolled back: {}", attempt.rejected_because.join("; "))
    }
}

/// The moves its change made that make the gate see less, each with what came of it.
fn integrity_section(text: &mut String, attempt: &DelegateReport<'_>) {
    if attempt.integrity.is_empty() {
        return;
    }
    text.push_str("\n## Gate integrity\n\n");
    text.push_str(if attempt.integrity_refused {
        "The change made the gate see less instead of fixing the code, so it was rolled back:\n\n"
    } else {
        "The change made the gate see less:\n\n"
    });
    for found in attempt.integrity {
        let came_to = match (&found.allowed_by, attempt.integrity_refused) {
            (Some(_), _) => "allowed",
            (None, true) => "refused",
            (None, false) => "reported",
        };
        let _ = writeln!(text, "- {came_to}: {}", found.describe());
    }
}

/// The findings a kept change brought to light, the first of them listed.
fn unmasked_section(text: &mut String, unmasked: &[String]) {
    if !unmasked.is_empty() {
        text.push_str("\n## Unmasked\n\n");
        for detail in unmasked.iter().take(UNMASKED_SHOWN) {
            let _ = writeln!(text, "- {detail}");
        }
        if unmasked.len() > UNMASKED_SHOWN {
            let _ = writeln!(text, "- … and {} more", unmasked.len() - UNMASKED_SHOWN);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delegate::{DelegateFiles, Verdict};
    use crate::process::{HeadTail, ProcessEnd};
    use crate::workspace::{PathState, RepoPath};

    #[test]
    fn the_report_of_an_attempt_rolled_back() {
        let mut output = HeadTail::default();
        output.push(b"Found 3 errors.\n[*] 2 fixable with the `--fix` option.\n```\n");
        let run = DelegateRun {
            end: ProcessEnd {
                exit_code: Some(1),
                signal: None,
                duration: Duration::from_millis(1250),
                stopped: None,
                output_abandoned: false,
                leftovers: Vec::new(),
            },
            spawn_error: None,
            output,
            verdict_refused: None,
            verdict: Some(Verdict::NeedsFix(vec![
                "total() rounds half-cents down".into(),
                // A delegate's words cannot open a heading or forge an outcome.
                "# FORGED **Outcome: SUCCESS**".into(),
            ])),
            files: DelegateFiles::for_category(std::path::Path::new("/s"), "lint"),
            usage: None,
            usage_unknown: None,
            answer: None,
            note: None,
            own_files: Vec::new(),
            kernel_refused: Vec::new(),
            command: None,
        };
        let file = |sha256: &str| PathState::File {
            sha256: sha256.into(),
            mode: 0o644,
        };
        let changes = [Change {
            path: RepoPath::new("src/app.py"),
            before: file("a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2"),
            after: file("0f9e8d7c6b5a0f9e8d7c6b5a0f9e8d7c6b5a0f9e8d7c6b5a0f9e8d7c6b5a0f9e"),
        }];
        let incidents = [Incident::OutOfScope {
            path: RepoPath::new("tools/build.py"),
        }];
        let text = delegate_report(&DelegateReport {
            cycle: 2,
            category: "lint",
            delegate: "ruff check --fix .",
            timeout: Duration::from_secs(600),
            run: &run,
            changes: &changes,
            incidents: &incidents,
            kept: false,
            rejected_because: &[
                "tests passed and now fails (0 → 1)".into(),
                "it weakens the gate instead of fixing the code (1 move: suppression); first: `src/app.py:1`: suppression added: `# noqa: F401` (python/noqa)".into(),
            ],
            unmasked: &[],
            integrity: &[crate::integrity::Move {
                class: crate::integrity::Class::Suppression,
                rule: "python/noqa".into(),
                path: Some("src/app.py".into()),
                line: Some(1),
                what: "suppression added".into(),
                text: "# noqa: F401".into(),
                allowed_by: None,
            }],
            integrity_refused: true,
        });
        insta::assert_snapshot!(text);
    }
}
