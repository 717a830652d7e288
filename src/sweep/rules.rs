//! The seed's judgement of what a sweep read, as pure functions: when a check is green, when a
//! reviewer's passing check says the review did not happen, what blocks a pull request, which
//! failures belong to the base, which review comments read as findings about shipped code, and
//! how forge text is quoted.

use std::collections::BTreeMap;

use super::{BaselineFailure, Check, ChecksState, PullRequest, QUOTE_LIMIT, Verdict};

/// A check run's verdict. Green only when `COMPLETED` with `SUCCESS`. `SKIPPED`, `NEUTRAL` and
/// `STALE` are "never ran": the check gave no verdict, which is not a success. Any status but
/// `COMPLETED` (queued, in progress, waiting, requested, pending) is pending.
pub fn check_run_verdict(status: &str, conclusion: Option<&str>) -> Verdict {
    if status != "COMPLETED" {
        return Verdict::Pending;
    }
    match conclusion {
        Some("SUCCESS") => Verdict::Green,
        Some("FAILURE" | "TIMED_OUT" | "CANCELLED" | "ACTION_REQUIRED" | "STARTUP_FAILURE") => {
            Verdict::Failing
        }
        // SKIPPED, NEUTRAL, STALE, none, or a conclusion GitHub adds later.
        _ => Verdict::NotRun,
    }
}

/// A commit status's verdict: `SUCCESS` green, `PENDING` and `EXPECTED` (required, never
/// reported) pending, `FAILURE` and `ERROR` failing.
pub fn status_context_verdict(state: &str) -> Verdict {
    match state {
        "SUCCESS" => Verdict::Green,
        "PENDING" | "EXPECTED" => Verdict::Pending,
        "FAILURE" | "ERROR" => Verdict::Failing,
        _ => Verdict::NotRun,
    }
}

/// All of a pull request's checks together: failing before pending before never-ran; green only
/// when there is at least one check and every one is green.
pub fn checks_state(checks: &[Check]) -> ChecksState {
    let any = |verdict| checks.iter().any(|check| check.verdict == verdict);
    if checks.is_empty() {
        ChecksState::None
    } else if any(Verdict::Failing) {
        ChecksState::Failing
    } else if any(Verdict::Pending) {
        ChecksState::Pending
    } else if any(Verdict::NotRun) {
        ChecksState::None
    } else {
        ChecksState::Green
    }
}

/// The checks as listed, weighed against GitHub's own rollup: never green when the list was cut
/// (a failing check may be past it) or when the rollup itself is not `SUCCESS`.
pub fn rollup_checks_state(
    listed: ChecksState,
    rollup: Option<&str>,
    truncated: bool,
) -> ChecksState {
    if listed != ChecksState::Green || (!truncated && matches!(rollup, None | Some("SUCCESS"))) {
        return listed;
    }
    match rollup {
        Some("FAILURE" | "ERROR") => ChecksState::Failing,
        Some("PENDING" | "EXPECTED") => ChecksState::Pending,
        _ => ChecksState::None,
    }
}

/// Whose review comment may be taken for a finding: a maintainer's (owner, member,
/// collaborator) or a reviewer app's (a bot named after a reviewer).
pub fn trusted_reviewer(
    login: Option<&str>,
    kind: Option<&str>,
    association: Option<&str>,
) -> bool {
    let maintainer = matches!(association, Some("OWNER" | "MEMBER" | "COLLABORATOR"));
    let reviewer_app =
        kind == Some("Bot") && login.is_some_and(|login| word_in(login, &REVIEWER_WORDS).is_some());
    maintainer || reviewer_app
}

/// Words that name a reviewer: a check or account so named belongs to a code review.
pub const REVIEWER_WORDS: [&str; 14] = [
    "review",
    "coderabbit",
    "copilot",
    "codex",
    "claude",
    "gemini",
    "sourcery",
    "greptile",
    "qodo",
    "pr-agent",
    "ellipsis",
    "bugbot",
    "korbit",
    "cursor",
];

/// What a reviewer's text says when the review did not really happen.
const SKIP_MARKERS: [&str; 14] = [
    "skip",
    "truncat",
    "rate limit",
    "rate-limit",
    "ratelimit",
    "paused",
    "not reviewed",
    "not been reviewed",
    "unable to review",
    "could not review",
    "did not review",
    "too large",
    "too many files",
    "quota",
];

/// The first of `words` that starts a word in `text` (case-insensitive): `review` is found in
/// "code-review" and "Reviewer", not in "preview".
pub fn word_in<'w>(text: &str, words: &[&'w str]) -> Option<&'w str> {
    let text = text.to_lowercase();
    words.iter().copied().find(|word| {
        text.match_indices(word).any(|(at, _)| {
            text[..at]
                .chars()
                .next_back()
                .is_none_or(|before| !before.is_alphanumeric())
        })
    })
}

/// Rule 2: a check named after a reviewer whose text (title and summary, or description) says
/// the review was skipped, truncated, rate limited, paused or too large — whatever the check's
/// state — as `skipped: <check>: <excerpt>`.
pub fn skipped_review(name: &str, text: &str) -> Option<String> {
    word_in(name, &REVIEWER_WORDS)?;
    let line = text
        .lines()
        .find(|line| word_in(line, &SKIP_MARKERS).is_some())?;
    Some(format!(
        "skipped: {}: {}",
        quote_in(name, 80),
        quote_in(line.trim_start_matches(['#', '>', '*', ' ']), 120)
    ))
}

/// Rule 3: what stands between a pull request and a merge. The review decision blocks on its
/// own (`CHANGES_REQUESTED`, `REVIEW_REQUIRED`, or one this tool does not know), however its
/// threads stand; `APPROVED` and no decision prove nothing and add nothing. Checks that are not
/// green, a skipped review, unresolved threads (a trigger to read them) and a draft are listed
/// too.
pub fn blocked_by(pr: &PullRequest) -> Vec<String> {
    let mut reasons = Vec::new();
    match pr.review_decision.as_deref() {
        None | Some("APPROVED") => {}
        Some("CHANGES_REQUESTED") => {
            reasons.push("review decision CHANGES_REQUESTED: changes were requested".into());
        }
        Some("REVIEW_REQUIRED") => {
            reasons.push("review decision REVIEW_REQUIRED: a required approval is missing".into());
        }
        Some(other) => reasons.push(format!(
            "review decision {}: not an approval",
            quote_in(other, 40)
        )),
    }
    let names = |verdict: Verdict| {
        pr.check_runs
            .iter()
            .filter(|check| check.verdict == verdict)
            .map(|check| check.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match pr.checks {
        ChecksState::Green => {}
        ChecksState::Failing => {
            reasons.push(format!("checks failing: {}", names(Verdict::Failing)))
        }
        ChecksState::Pending => {
            reasons.push(format!("checks pending: {}", names(Verdict::Pending)))
        }
        ChecksState::None if pr.check_runs.is_empty() => {
            reasons.push("no checks ran on the head commit".into());
        }
        ChecksState::None => reasons.push(format!("checks never ran: {}", names(Verdict::NotRun))),
    }
    if let Some(review) = &pr.review_check {
        reasons.push(format!("review {review}"));
    }
    if pr.unresolved_threads > 0 {
        reasons.push(format!(
            "{} unresolved review thread(s)",
            pr.unresolved_threads
        ));
    }
    if pr.draft {
        reasons.push("draft".into());
    }
    reasons
}

/// Rule 5: a check failing with the same outcome on at least two unrelated open pull requests
/// (different head commits, and different authors or different branches) is the base's failure.
/// Every pull request it fails on is named.
pub fn baseline_failures(prs: &[PullRequest]) -> Vec<BaselineFailure> {
    let mut groups: BTreeMap<(&str, &str), Vec<&PullRequest>> = BTreeMap::new();
    for pr in prs {
        for check in pr
            .check_runs
            .iter()
            .filter(|c| c.verdict == Verdict::Failing)
        {
            let group = groups.entry((&check.name, check.outcome())).or_default();
            if !group.iter().any(|seen| seen.number == pr.number) {
                group.push(pr);
            }
        }
    }
    // By different people on different commits: one author's stacked pull requests share
    // their failures, and one person cannot make a baseline failure alone.
    let unrelated = |a: &PullRequest, b: &PullRequest| {
        a.head_oid != b.head_oid && a.author.is_some() && b.author.is_some() && a.author != b.author
    };
    groups
        .into_iter()
        .filter(|(_, group)| {
            group
                .iter()
                .enumerate()
                .any(|(i, a)| group[i + 1..].iter().any(|b| unrelated(a, b)))
        })
        .map(|((check, conclusion), group)| {
            let mut numbers: Vec<u64> = group.iter().map(|pr| pr.number).collect();
            numbers.sort_unstable();
            BaselineFailure {
                check: check.to_string(),
                conclusion: conclusion.to_string(),
                prs: numbers,
            }
        })
        .collect()
}

const SECURITY_WORDS: [&str; 19] = [
    "security",
    "vulnerab",
    "exploit",
    "injection",
    "xss",
    "csrf",
    "ssrf",
    "rce",
    "remote code",
    "privilege",
    "auth bypass",
    "authentication bypass",
    "path traversal",
    "insecure",
    "secret",
    "credential",
    "leak",
    "cve-",
    "sanitiz",
];

const CORRECTNESS_WORDS: [&str; 20] = [
    "bug",
    "incorrect",
    "wrong",
    "data loss",
    "race condition",
    "deadlock",
    "overflow",
    "off-by-one",
    "off by one",
    "null pointer",
    "use-after-free",
    "undefined behavio",
    "panic",
    "crash",
    "regression",
    "broken",
    "logic error",
    "potential issue",
    "critical",
    "high severity",
];

/// Rule 6: whether a review comment reads as a security or correctness finding, and which
/// (`security: "injection"`). Words only: the text is data, never obeyed.
pub fn critical_reason(body: &str) -> Option<String> {
    if let Some(word) = word_in(body, &SECURITY_WORDS) {
        return Some(format!("security: {word:?}"));
    }
    word_in(body, &CORRECTNESS_WORDS).map(|word| format!("correctness: {word:?}"))
}

/// Forge text as a quote: control characters and runs of whitespace made one space, cut to
/// [`QUOTE_LIMIT`] characters with an ellipsis.
pub fn quote(text: &str) -> String {
    quote_in(text, QUOTE_LIMIT)
}

/// [`quote`], cut to `limit` characters.
pub fn quote_in(text: &str, limit: usize) -> String {
    let words = text
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|word| !word.is_empty());
    let mut quoted = String::new();
    for word in words {
        if !quoted.is_empty() {
            quoted.push(' ');
        }
        quoted.push_str(word);
    }
    if quoted.chars().count() <= limit {
        return quoted;
    }
    let mut cut: String = quoted.chars().take(limit.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;
