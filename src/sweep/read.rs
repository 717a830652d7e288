//! One sweep, start to end: refuse when offline; find the repository and the token, or skip;
//! read the open and the last merged pull requests, the open issues and the diffs of dependency
//! updates; judge them; find what the tree can fix.

use super::github::{Client, PULL_REQUESTS_QUERY};
use super::options::{RepositoryName, repository_of_origin};
use super::wire::{FileEntry, IssueNode, RepositoryData};
use super::{
    FORMAT_VERSION, Issue, MergedWithThreads, OpenIssues, PullRequest, Sweep, SweepError,
    SweepOptions, findings, rules, versions,
};
use crate::cancel::Cancel;

/// Pull requests asked for in one GraphQL page.
const PAGE_SIZE: usize = 25;
/// Open pull requests read at most.
const MAX_OPEN: usize = 100;
/// Merged pull requests read at most, whatever `--merged` says.
pub const MAX_MERGED: usize = 100;
/// Pages of open issues read at most (100 a page, pull requests among them).
const ISSUE_PAGES: u32 = 3;
/// Dependency updates whose diff is read at most.
const MAX_DIFFS: usize = 30;

/// Sweeps the open surface of the repository `options` name, read-only. Skipped (`Ok`, with
/// the reason in `skipped`) when there is no GitHub repository to read or no token to read it
/// with; refused when offline. An error status or a network failure is an error.
pub fn run_sweep(options: &SweepOptions, cancel: &Cancel) -> Result<Sweep, SweepError> {
    if options.offline {
        return Err(SweepError::Offline);
    }
    let repository = match &options.repository {
        Some(repository) => repository.clone(),
        None => match repository_of_origin(&options.target) {
            Ok(repository) => repository,
            Err(reason) => return Ok(Sweep::skipped(None, reason)),
        },
    };
    let Some(token) = &options.token else {
        return Ok(Sweep::skipped(
            Some(repository.to_string()),
            "unauthenticated: neither GITHUB_TOKEN nor GH_TOKEN is set",
        ));
    };
    let read_at = crate::clock::now_iso8601();
    let mut client = Client::new(options, token, cancel);
    let (mut open_prs, open_prs_truncated) =
        read_pull_requests(&mut client, &repository, "OPEN", MAX_OPEN)?;
    let (mut merged_prs, _) = read_pull_requests(
        &mut client,
        &repository,
        "MERGED",
        options.merged.min(MAX_MERGED),
    )?;
    merged_prs.sort_by(|a, b| b.merged_at.cmp(&a.merged_at));
    let open_issues = read_issues(&mut client, &repository)?;
    for pr in open_prs
        .iter_mut()
        .filter(|pr| !pr.dependency_files.is_empty())
        .take(MAX_DIFFS)
    {
        read_versions(&mut client, &repository, pr)?;
    }
    judge(&mut open_prs, &mut merged_prs);
    let mut sweep = Sweep {
        format_version: FORMAT_VERSION,
        repository: Some(repository.to_string()),
        read_at,
        skipped: None,
        requests: client.requests(),
        baseline_failures: rules::baseline_failures(&open_prs),
        merged_with_unresolved_threads: merged_with_threads(&merged_prs),
        open_prs,
        open_prs_truncated,
        merged_prs,
        open_issues,
        findings: Vec::new(),
    };
    sweep.findings = findings::in_tree(&sweep, &options.target);
    Ok(sweep)
}

/// What stands between each open pull request and a merge (rule 3); which merged one shipped
/// with a finding (rule 6).
fn judge(open: &mut [PullRequest], merged: &mut [PullRequest]) {
    for pr in open {
        pr.blocked_by = rules::blocked_by(pr);
    }
    for pr in merged {
        pr.critical = pr.threads.iter().any(|thread| thread.critical.is_some());
    }
}

/// Up to `limit` pull requests in `state` (`OPEN`, `MERGED`), most recently updated first, one
/// query a page; and whether more were left.
fn read_pull_requests(
    client: &mut Client,
    repository: &RepositoryName,
    state: &str,
    limit: usize,
) -> Result<(Vec<PullRequest>, bool), SweepError> {
    let mut prs = Vec::new();
    let mut after: Option<String> = None;
    while prs.len() < limit {
        let variables = serde_json::json!({
            "owner": repository.owner,
            "name": repository.name,
            "states": [state],
            "first": PAGE_SIZE.min(limit - prs.len()),
            "after": after,
        });
        let data: RepositoryData = client.query(PULL_REQUESTS_QUERY, variables)?;
        let Some(found) = data.repository else {
            return Err(SweepError::Graphql {
                url: client.graphql_url().to_string(),
                messages: format!("the repository {repository} was not found"),
            });
        };
        let page = found.pull_requests;
        prs.extend(
            page.nodes
                .into_iter()
                .flatten()
                .map(|node| node.into_pull_request()),
        );
        match page.page_info.end_cursor {
            Some(cursor) if page.page_info.has_next_page => after = Some(cursor),
            _ => return Ok((prs, false)),
        }
    }
    prs.truncate(limit);
    Ok((prs, true))
}

/// The open issues, pull requests left out: up to [`ISSUE_PAGES`] pages of 100.
fn read_issues(client: &mut Client, repository: &RepositoryName) -> Result<OpenIssues, SweepError> {
    let mut issues = Vec::new();
    for page in 1..=ISSUE_PAGES {
        let entries: Vec<IssueNode> = client.get(&format!(
            "repos/{repository}/issues?state=open&per_page=100&page={page}"
        ))?;
        let full = entries.len() == 100;
        issues.extend(
            entries
                .into_iter()
                .filter(|entry| entry.pull_request.is_none())
                .map(|entry| Issue {
                    number: entry.number,
                    title: rules::quote(&entry.title),
                    author: entry.user.map(|user| user.login),
                }),
        );
        if !full {
            return Ok(OpenIssues {
                count: issues.len(),
                truncated: false,
                issues,
            });
        }
    }
    Ok(OpenIssues {
        count: issues.len(),
        truncated: true,
        issues,
    })
}

/// Reads a dependency update's diff and judges its version changes (rule 4).
fn read_versions(
    client: &mut Client,
    repository: &RepositoryName,
    pr: &mut PullRequest,
) -> Result<(), SweepError> {
    let files: Vec<FileEntry> = client.get(&format!(
        "repos/{repository}/pulls/{}/files?per_page=100",
        pr.number
    ))?;
    let mut unreadable = Vec::new();
    for file in files
        .iter()
        .filter(|f| versions::is_dependency_file(&f.filename))
    {
        match &file.patch {
            Some(patch) => pr
                .version_changes
                .extend(versions::version_changes(&file.filename, patch)),
            None => unreadable.push(file.filename.clone()),
        }
    }
    pr.human_only_reasons = versions::human_only_reasons(&pr.version_changes, &unreadable);
    pr.human_only = !pr.human_only_reasons.is_empty();
    Ok(())
}

/// Rule 6: the merged pull requests that still carry unresolved threads, and whether one reads
/// as a security or correctness finding.
fn merged_with_threads(merged: &[PullRequest]) -> Vec<MergedWithThreads> {
    merged
        .iter()
        .filter(|pr| pr.unresolved_threads > 0)
        .map(|pr| MergedWithThreads {
            number: pr.number,
            title: pr.title.clone(),
            unresolved_threads: pr.unresolved_threads,
            critical: pr.critical,
            reasons: pr
                .threads
                .iter()
                .filter_map(|thread| {
                    let why = thread.critical.as_ref()?;
                    Some(format!("{why}: {}", rules::quote_in(&thread.body, 120)))
                })
                .collect(),
        })
        .collect()
}
