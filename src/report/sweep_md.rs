//! The sweep's text for people: the final report's "Open surface (sweep)" section and the lines
//! `refine-loop sweep` prints. Everything quoted from the forge is made inert: it reads as data.

use std::fmt::Write as _;
use std::path::Path;

use crate::markdown::inline;
use crate::sweep::{ChecksState, PullRequest, Sweep};

fn checks_word(state: ChecksState) -> &'static str {
    match state {
        ChecksState::Green => "green",
        ChecksState::Failing => "failing",
        ChecksState::Pending => "pending",
        ChecksState::None => "none",
    }
}

/// The "## Open surface (sweep)" section of the final report. Everything quoted from the forge
/// is cut and made inert: it reads as data.
pub fn sweep_section(sweep: &Sweep) -> String {
    let mut out = String::from("## Open surface (sweep)\n\n");
    let repository = sweep.repository.as_deref().unwrap_or("(no repository)");
    if let Some(reason) = &sweep.skipped {
        let _ = writeln!(out, "Skipped ({}): {}.", inline(repository), inline(reason));
        return out;
    }
    let _ = writeln!(
        out,
        "Read `{repository}` at {} in {} requests: {} open pull requests{}, {} merged, {} open issues{}.\n",
        sweep.read_at,
        sweep.requests,
        sweep.open_prs.len(),
        if sweep.open_prs_truncated {
            " (more not read)"
        } else {
            ""
        },
        sweep.merged_prs.len(),
        sweep.open_issues.count,
        if sweep.open_issues.truncated {
            " (more not read)"
        } else {
            ""
        },
    );
    open_prs(&mut out, &sweep.open_prs);
    baseline_failures(&mut out, sweep);
    merged_unresolved(&mut out, sweep);
    tree_findings(&mut out, sweep);
    out.push_str("Text from the forge is quoted as data, never followed.\n");
    out
}

/// The lines printed on stdout after a sweep.
pub fn summary_lines(sweep: &Sweep, written: &Path) -> String {
    let mut out = String::new();
    let repository = sweep.repository.as_deref().unwrap_or("(no repository)");
    if let Some(reason) = &sweep.skipped {
        let _ = writeln!(out, "sweep skipped: {reason}");
        let _ = writeln!(out, "wrote {}", written.display());
        return out;
    }
    let count = |prs: &[PullRequest], state| prs.iter().filter(|pr| pr.checks == state).count();
    let _ = writeln!(
        out,
        "sweep of {repository}: {} open PRs ({} green, {} failing, {} pending, {} without checks), {} merged, {} open issues, {} requests",
        sweep.open_prs.len(),
        count(&sweep.open_prs, ChecksState::Green),
        count(&sweep.open_prs, ChecksState::Failing),
        count(&sweep.open_prs, ChecksState::Pending),
        count(&sweep.open_prs, ChecksState::None),
        sweep.merged_prs.len(),
        sweep.open_issues.count,
        sweep.requests
    );
    for failure in &sweep.baseline_failures {
        let numbers: Vec<String> = failure.prs.iter().map(|n| format!("#{n}")).collect();
        let _ = writeln!(
            out,
            "baseline failure: {} {} on {}",
            failure.check,
            failure.conclusion,
            numbers.join(", ")
        );
    }
    for pr in sweep.open_prs.iter().filter(|pr| pr.human_only) {
        let _ = writeln!(
            out,
            "human only: #{}: {}",
            pr.number,
            pr.human_only_reasons.join("; ")
        );
    }
    for pr in sweep.open_prs.iter().filter(|pr| pr.review_check.is_some()) {
        let _ = writeln!(
            out,
            "review not done: #{}: {}",
            pr.number,
            pr.review_check.as_deref().unwrap_or_default()
        );
    }
    for merged in sweep
        .merged_with_unresolved_threads
        .iter()
        .filter(|m| m.critical)
    {
        let _ = writeln!(
            out,
            "critical: merged #{} has unresolved findings",
            merged.number
        );
    }
    let _ = writeln!(
        out,
        "{} findings in the tree; wrote {}",
        sweep.findings.len(),
        written.display()
    );
    out
}

/// The open pull requests, a row each.
fn open_prs(out: &mut String, prs: &[PullRequest]) {
    if !prs.is_empty() {
        out.push_str(
            "| PR | checks | review decision | unresolved threads | blocked by | human only |\n",
        );
        out.push_str("|---|---|---|---|---|---|\n");
        for pr in prs {
            let _ = writeln!(
                out,
                "| #{} {} | {} | {} | {} | {} | {} |",
                pr.number,
                inline(&pr.title),
                checks_word(pr.checks),
                pr.review_decision.as_deref().map_or("—".into(), inline),
                pr.unresolved_threads,
                if pr.blocked_by.is_empty() {
                    "—".into()
                } else {
                    inline(&pr.blocked_by.join("; "))
                },
                if pr.human_only {
                    inline(&pr.human_only_reasons.join("; "))
                } else {
                    "—".into()
                },
            );
        }
        out.push('\n');
    }
}

/// Failures shared by unrelated pull requests.
fn baseline_failures(out: &mut String, sweep: &Sweep) {
    if !sweep.baseline_failures.is_empty() {
        out.push_str("Baseline failures (the same failure on unrelated pull requests; never a candidate's):\n\n");
        for failure in &sweep.baseline_failures {
            let numbers: Vec<String> = failure.prs.iter().map(|n| format!("#{n}")).collect();
            let _ = writeln!(
                out,
                "- {} {} on {}",
                inline(&failure.check),
                failure.conclusion,
                numbers.join(", ")
            );
        }
        out.push('\n');
    }
}

/// Merged pull requests with unresolved review threads.
fn merged_unresolved(out: &mut String, sweep: &Sweep) {
    if !sweep.merged_with_unresolved_threads.is_empty() {
        out.push_str("Merged with unresolved review threads:\n\n");
        for merged in &sweep.merged_with_unresolved_threads {
            let critical = if merged.critical {
                " — **critical**"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "- #{} {}: {} unresolved{critical}",
                merged.number,
                inline(&merged.title),
                merged.unresolved_threads
            );
            for reason in &merged.reasons {
                let _ = writeln!(out, "  - {}", inline(reason));
            }
        }
        out.push('\n');
    }
}

/// Findings in the tree.
fn tree_findings(out: &mut String, sweep: &Sweep) {
    if !sweep.findings.is_empty() {
        out.push_str("Findings in the tree:\n\n");
        for finding in &sweep.findings {
            let _ = writeln!(
                out,
                "- `sweep/{}`{} (confidence {}): {}",
                finding.kind,
                if finding.critical {
                    " **critical**"
                } else {
                    ""
                },
                finding.confidence,
                inline(&finding.title)
            );
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forge_text_is_inert_in_markdown() {
        let cases = [
            ("plain title", "plain title"),
            ("a | b", "a \\| b"),
            (
                "<script>alert(1)</script>",
                "\\<script\\>alert(1)\\</script\\>",
            ),
            ("cc @octocat", "cc @\u{200b}octocat"),
            ("`rm -rf /`", "\\`rm -rf /\\`"),
            ("[click](https://x)", "\\[click\\](https://x)"),
            ("# heading\nnext", "\\# heading next"),
        ];
        for (text, expected) in cases {
            assert_eq!(inline(text), expected, "{text}");
        }
    }

    #[test]
    fn a_skipped_sweep_says_why_and_nothing_else() {
        let sweep = Sweep::skipped(Some("o/r".into()), "the target has no origin remote");
        assert_eq!(
            sweep_section(&sweep),
            "## Open surface (sweep)\n\nSkipped (o/r): the target has no origin remote.\n"
        );
        let lines = summary_lines(&sweep, Path::new("s/sweep.json"));
        assert_eq!(
            lines,
            "sweep skipped: the target has no origin remote\nwrote s/sweep.json\n"
        );
    }
}
