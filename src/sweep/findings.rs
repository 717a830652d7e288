//! What the sweep found that a change in the tree can address (rule 8), and those findings as
//! the refine preset's candidates: at most two behaviour-preserving ones, plus every critical
//! finding about shipped code as a handoff.

use std::path::Path;

use super::rules::{quote_in, word_in};
use super::{Finding, PullRequest, Sweep};
use crate::campaign::candidates::Proposal;

/// Non-critical candidates a sweep yields at most.
pub const MAX_CANDIDATES: usize = 2;

/// Reviewers, the files that configure them in a repository, and the words their checks and
/// accounts are named with.
const REVIEWER_CONFIGS: [(&str, &[&str], &[&str]); 5] = [
    (
        "CodeRabbit",
        &[".coderabbit.yaml", ".coderabbit.yml"],
        &["coderabbit"],
    ),
    (
        "Gemini Code Assist",
        &[".gemini/config.yaml", ".gemini/styleguide.md"],
        &["gemini"],
    ),
    (
        "Sourcery",
        &[".sourcery.yaml", ".sourcery.yml"],
        &["sourcery"],
    ),
    ("Greptile", &["greptile.json"], &["greptile"]),
    (
        "Qodo Merge",
        &[".pr_agent.toml"],
        &["qodo", "pr-agent", "codium"],
    ),
];

const DEPENDABOT_CONFIGS: [&str; 2] = [".github/dependabot.yml", ".github/dependabot.yaml"];
const RENOVATE_CONFIGS: [&str; 7] = [
    "renovate.json",
    "renovate.json5",
    ".github/renovate.json",
    ".github/renovate.json5",
    ".gitlab/renovate.json",
    ".renovaterc",
    ".renovaterc.json",
];

/// The findings, in the order they are worth taking: baseline failures, two update bots on one
/// manifest, reviewers configured and never seen, then the critical ones.
pub(super) fn in_tree(sweep: &Sweep, target: &Path) -> Vec<Finding> {
    // Configs live at the repository's root, which the target may be below.
    let root = git2::Repository::discover(target)
        .ok()
        .and_then(|repo| repo.workdir().map(Path::to_path_buf))
        .unwrap_or_else(|| target.to_path_buf());
    let present = |paths: &[&str]| -> Vec<String> {
        paths
            .iter()
            .filter(|path| root.join(path).is_file())
            .map(|path| path.to_string())
            .collect()
    };
    let mut findings = baseline_failures(sweep);
    let all_prs: Vec<&PullRequest> = sweep.open_prs.iter().chain(&sweep.merged_prs).collect();
    findings.extend(two_update_bots(
        &present(&DEPENDABOT_CONFIGS),
        &present(&RENOVATE_CONFIGS),
        &all_prs,
    ));
    for (reviewer, files, words) in REVIEWER_CONFIGS {
        let configs = present(files);
        if !configs.is_empty() && !all_prs.is_empty() && !reviewer_ran(&all_prs, words) {
            findings.push(reviewer_never_ran(reviewer, configs, &all_prs));
        }
    }
    findings.extend(
        sweep
            .merged_prs
            .iter()
            .filter(|pr| pr.critical)
            .map(merged_unresolved),
    );
    findings
}

/// A check failing the same way on unrelated pull requests: a finding each.
fn baseline_failures(sweep: &Sweep) -> Vec<Finding> {
    sweep
        .baseline_failures
        .iter()
        .map(|failure| {
            let evidence = failure
                .prs
                .iter()
                .filter_map(|number| sweep.open_prs.iter().find(|pr| pr.number == *number))
                .map(|pr| failing_on(pr, &failure.check))
                .collect::<Vec<_>>()
                .join("\n");
            Finding {
                kind: "baseline-failure".into(),
                title: format!(
                    "fix what makes check `{}` end {} on every open pull request",
                    failure.check, failure.conclusion
                ),
                evidence,
                paths: Vec::new(),
                confidence: u8::try_from(failure.prs.len() + 1).unwrap_or(5).min(5),
                critical: false,
            }
        })
        .collect()
}

/// A reviewer named by `words` left a check, a review or a review thread on a pull request.
fn reviewer_ran(prs: &[&PullRequest], words: &[&str]) -> bool {
    prs.iter().any(|pr| {
        let names = pr.check_runs.iter().map(|check| check.name.as_str());
        let people = pr
            .reviewers
            .iter()
            .chain(pr.threads.iter().filter_map(|t| t.author.as_ref()));
        names
            .chain(people.map(String::as_str))
            .any(|name| word_in(name, words).is_some())
    })
}

/// A reviewer configured in the tree that never ran on the pull requests read.
fn reviewer_never_ran(reviewer: &str, configs: Vec<String>, prs: &[&PullRequest]) -> Finding {
    let numbers: Vec<String> = prs.iter().map(|pr| format!("#{}", pr.number)).collect();
    Finding {
        kind: "reviewer-never-ran".into(),
        title: format!("{reviewer} is configured in the tree but never ran here"),
        evidence: format!(
            "found {}; no check, review or review thread by {reviewer} on the {} pull requests read ({})",
            configs.join(", "),
            prs.len(),
            numbers.join(", ")
        ),
        paths: configs,
        confidence: match prs.len() {
            0..3 => 2,
            3..10 => 3,
            _ => 4,
        },
        critical: false,
    }
}

/// A merged pull request that shipped with a critical unresolved review thread.
fn merged_unresolved(pr: &PullRequest) -> Finding {
    let threads: Vec<&super::Thread> = pr.threads.iter().filter(|t| t.critical.is_some()).collect();
    Finding {
        kind: "merged-unresolved".into(),
        title: format!(
            "merged pull request #{} shipped with an unresolved review finding",
            pr.number
        ),
        evidence: threads
            .iter()
            .map(|thread| {
                format!(
                    "#{} {}: {} by {}: {}",
                    pr.number,
                    thread.path.as_deref().unwrap_or("(no path)"),
                    thread.critical.as_deref().unwrap_or_default(),
                    thread.author.as_deref().unwrap_or("(unknown)"),
                    thread.body
                )
            })
            .collect::<Vec<_>>()
            .join("\n"),
        paths: threads.iter().filter_map(|t| t.path.clone()).collect(),
        confidence: 3,
        critical: true,
    }
}

/// `#12 (head 1a2b3c4 by ann on fix-x): lint FAILURE: <detail>`.
fn failing_on(pr: &PullRequest, check: &str) -> String {
    let detail = pr
        .check_runs
        .iter()
        .find(|c| c.name == check)
        .map(|c| {
            let outcome = c.outcome();
            match &c.detail {
                Some(detail) => format!("{outcome}: {}", quote_in(detail, 120)),
                None => outcome.to_string(),
            }
        })
        .unwrap_or_default();
    format!(
        "#{} (head {} by {} on {}): {check} {detail}",
        pr.number,
        pr.head_oid.get(..7).unwrap_or(&pr.head_oid),
        pr.author.as_deref().unwrap_or("(unknown)"),
        pr.head_ref
    )
}

/// Two update bots over one repository: both configured in the tree, or both with pull
/// requests that change the same dependency file.
fn two_update_bots(
    dependabot: &[String],
    renovate: &[String],
    prs: &[&PullRequest],
) -> Option<Finding> {
    let by = |bot: &str| -> Vec<&PullRequest> {
        prs.iter()
            .copied()
            .filter(|pr| {
                pr.author
                    .as_deref()
                    .is_some_and(|a| a.to_lowercase().contains(bot))
            })
            .collect()
    };
    let (from_dependabot, from_renovate) = (by("dependabot"), by("renovate"));
    let shared = from_dependabot.iter().find_map(|a| {
        from_renovate.iter().find_map(|b| {
            let file = a
                .dependency_files
                .iter()
                .find(|f| b.dependency_files.contains(f))?;
            Some(format!(
                "#{} by {} and #{} by {} both change {file}",
                a.number,
                a.author.as_deref().unwrap_or_default(),
                b.number,
                b.author.as_deref().unwrap_or_default()
            ))
        })
    });
    let configured = !dependabot.is_empty() && !renovate.is_empty();
    let mut evidence = Vec::new();
    let mut paths: Vec<String> = Vec::new();
    if configured {
        paths.extend(dependabot.iter().chain(renovate).cloned());
        evidence.push(format!("both configured in the tree: {}", paths.join(", ")));
    }
    // Both configured says they may overlap; both updating one file says they do.
    let (title, confidence) = match (configured, &shared) {
        (false, None) => return None,
        (true, None) => (
            "Dependabot and Renovate are both configured: keep one per manifest",
            3,
        ),
        (false, Some(_)) => (
            "Dependabot and Renovate update the same manifest: keep one",
            4,
        ),
        (true, Some(_)) => (
            "Dependabot and Renovate update the same manifest: keep one",
            5,
        ),
    };
    evidence.extend(shared);
    Some(Finding {
        kind: "two-update-bots".into(),
        title: title.into(),
        confidence,
        evidence: evidence.join("\n"),
        paths,
        critical: false,
    })
}

/// The sweep's findings as the refine preset's candidates (family `sweep/<kind>`, source
/// `sweep`): the first [`MAX_CANDIDATES`] behaviour-preserving ones, and every critical one as
/// a behaviour-changing handoff.
pub fn candidates(sweep: &Sweep) -> Vec<Proposal> {
    let ordinary = sweep
        .findings
        .iter()
        .filter(|f| !f.critical)
        .take(MAX_CANDIDATES);
    let critical = sweep.findings.iter().filter(|f| f.critical);
    ordinary.chain(critical).map(proposal_of).collect()
}

fn proposal_of(finding: &Finding) -> Proposal {
    let (impact, effort, severity) = match finding.kind.as_str() {
        "baseline-failure" => (4, 3, "medium"),
        "two-update-bots" => (3, 2, "low"),
        "merged-unresolved" => (5, 3, "high"),
        _ => (2, 1, "low"),
    };
    Proposal {
        family: format!("sweep/{}", finding.kind),
        title: finding.title.clone(),
        evidence: finding.evidence.clone(),
        paths: finding.paths.clone(),
        impact,
        confidence: finding.confidence,
        effort,
        behaviour_changing: finding.critical,
        critical: finding.critical,
        severity: severity.into(),
        source: "sweep".into(),
        diagnostics: Vec::new(),
    }
}

#[cfg(test)]
#[path = "findings_tests.rs"]
mod tests;
