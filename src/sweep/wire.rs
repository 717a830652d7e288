//! GitHub's replies as they come (GraphQL nodes, REST issues and files), and how a pull
//! request's node becomes a [`PullRequest`] with its checks, threads and reviewers read. Every
//! field GitHub may send as null is optional here.

use serde::Deserialize;

use super::rules::{self, quote};
use super::{Check, CheckKind, PullRequest, Thread};

/// `{ "nodes": [...] }`, where the list and its items may be null.
#[derive(Debug, Deserialize)]
pub struct Nodes<T> {
    nodes: Option<Vec<Option<T>>>,
}

impl<T> Default for Nodes<T> {
    fn default() -> Self {
        Self { nodes: None }
    }
}

impl<T> Nodes<T> {
    fn into_items(self) -> impl Iterator<Item = T> {
        self.nodes.into_iter().flatten().flatten()
    }

    fn items(&self) -> impl Iterator<Item = &T> {
        self.nodes.iter().flatten().flatten()
    }
}

#[derive(Debug, Deserialize)]
pub struct RepositoryData {
    pub repository: Option<Repository>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Repository {
    pub pull_requests: PullRequestPage,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PullRequestPage {
    pub page_info: PageInfo,
    pub nodes: Vec<Option<PullRequestNode>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageInfo {
    pub has_next_page: bool,
    pub end_cursor: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Actor {
    login: String,
    /// `Bot` for an app's account, `User` for a person's.
    #[serde(default, rename = "__typename")]
    kind: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PullRequestNode {
    number: u64,
    title: String,
    #[serde(default)]
    is_draft: bool,
    merged_at: Option<String>,
    head_ref_name: String,
    head_ref_oid: String,
    review_decision: Option<String>,
    author: Option<Actor>,
    #[serde(default)]
    commits: Nodes<CommitNode>,
    #[serde(default)]
    review_threads: Nodes<ThreadNode>,
    #[serde(default)]
    reviews: Nodes<ReviewNode>,
    #[serde(default)]
    files: Nodes<FileNode>,
}

#[derive(Debug, Deserialize)]
struct CommitNode {
    commit: Commit,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Commit {
    status_check_rollup: Option<Rollup>,
}

#[derive(Debug, Deserialize)]
struct Rollup {
    /// GitHub's own sum of every check: `SUCCESS`, `FAILURE`, `ERROR`, `PENDING`, `EXPECTED`.
    state: Option<String>,
    #[serde(default)]
    contexts: Contexts,
}

/// The rollup's checks: a page of them, and how many there are.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Contexts {
    #[serde(default)]
    total_count: Option<usize>,
    #[serde(default)]
    page_info: Option<ContextsPage>,
    #[serde(flatten)]
    nodes: Nodes<RollupContext>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ContextsPage {
    has_next_page: bool,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "__typename")]
enum RollupContext {
    CheckRun {
        name: String,
        status: String,
        conclusion: Option<String>,
        title: Option<String>,
        summary: Option<String>,
    },
    StatusContext {
        context: String,
        state: String,
        description: Option<String>,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ThreadNode {
    is_resolved: bool,
    #[serde(default)]
    is_outdated: bool,
    #[serde(default)]
    comments: Nodes<CommentNode>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CommentNode {
    author: Option<Actor>,
    /// `OWNER`, `MEMBER`, `COLLABORATOR`, `CONTRIBUTOR`, `NONE`, ...
    #[serde(default)]
    author_association: Option<String>,
    #[serde(default)]
    body: String,
    path: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ReviewNode {
    author: Option<Actor>,
}

#[derive(Debug, Deserialize)]
struct FileNode {
    path: String,
}

impl PullRequestNode {
    /// The pull request as read: checks with their verdicts, the review check, unresolved
    /// threads quoted. What needs more than this node (versions, blocking) is judged later.
    pub fn into_pull_request(self) -> PullRequest {
        let rollup = self
            .commits
            .into_items()
            .last()
            .and_then(|node| node.commit.status_check_rollup);
        let rollup_state = rollup.as_ref().and_then(|r| r.state.clone());
        let contexts = rollup.map(|rollup| rollup.contexts).unwrap_or_default();
        let listed = contexts.nodes.items().count();
        let checks_truncated = contexts.page_info.is_some_and(|page| page.has_next_page)
            || contexts.total_count.is_some_and(|total| total > listed);
        let mut review_check = None;
        let mut check_runs = Vec::new();
        for (check, text) in contexts.nodes.into_items().filter_map(check_of) {
            if review_check.is_none() {
                review_check = rules::skipped_review(&check.name, &text);
            }
            check_runs.push(check);
        }
        let review_threads = self.review_threads.items().count();
        // Unresolved threads, outdated ones too: a later push does not answer a finding.
        let threads: Vec<Thread> = self
            .review_threads
            .into_items()
            .filter(|thread| !thread.is_resolved)
            .map(ThreadNode::into_thread)
            .collect();
        let mut reviewers: Vec<String> = self
            .reviews
            .into_items()
            .filter_map(|review| review.author.map(|a| a.login))
            .collect();
        reviewers.sort();
        reviewers.dedup();
        let dependency_files = self
            .files
            .into_items()
            .map(|file| file.path)
            .filter(|path| super::versions::is_dependency_file(path))
            .collect();
        PullRequest {
            number: self.number,
            title: quote(&self.title),
            author: self.author.map(|a| a.login),
            head_ref: self.head_ref_name,
            head_oid: self.head_ref_oid,
            draft: self.is_draft,
            merged_at: self.merged_at,
            review_decision: self.review_decision,
            checks: rules::rollup_checks_state(
                rules::checks_state(&check_runs),
                rollup_state.as_deref(),
                checks_truncated,
            ),
            checks_truncated,
            check_runs,
            review_check,
            review_threads,
            unresolved_threads: threads.len(),
            threads,
            reviewers,
            dependency_files,
            ..PullRequest::default()
        }
    }
}

impl ThreadNode {
    /// An unresolved thread as read: its first comment's author, path and quoted body, and
    /// whether it is critical (only a maintainer's or a reviewer app's finding can be).
    fn into_thread(self) -> Thread {
        let outdated = self.is_outdated;
        let first = self.comments.into_items().next();
        let body = first.as_ref().map_or("", |c| c.body.as_str());
        let author = first.as_ref().and_then(|c| c.author.as_ref());
        let trusted = rules::trusted_reviewer(
            author.map(|a| a.login.as_str()),
            author.and_then(|a| a.kind.as_deref()),
            first.as_ref().and_then(|c| c.author_association.as_deref()),
        );
        Thread {
            author: author.map(|a| a.login.clone()),
            path: first.as_ref().and_then(|c| c.path.clone()),
            body: quote(body),
            outdated,
            // Anyone can comment on a public pull request: only a maintainer's or a
            // reviewer app's finding can be critical.
            critical: trusted.then(|| rules::critical_reason(body)).flatten(),
        }
    }
}

/// A context as a check, with its whole text (for the reviewer rule, which reads past the
/// quote).
fn check_of(context: RollupContext) -> Option<(Check, String)> {
    let (name, kind, status, conclusion, text) = match context {
        RollupContext::CheckRun {
            name,
            status,
            conclusion,
            title,
            summary,
        } => {
            let text = [title, summary]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join("\n");
            (name, CheckKind::CheckRun, status, conclusion, text)
        }
        RollupContext::StatusContext {
            context,
            state,
            description,
        } => (
            context,
            CheckKind::StatusContext,
            state,
            None,
            description.unwrap_or_default(),
        ),
        RollupContext::Unknown => return None,
    };
    let verdict = match kind {
        CheckKind::CheckRun => rules::check_run_verdict(&status, conclusion.as_deref()),
        CheckKind::StatusContext => rules::status_context_verdict(&status),
    };
    let detail = Some(quote(&text)).filter(|detail| !detail.is_empty());
    let check = Check {
        name,
        kind,
        status,
        conclusion,
        verdict,
        detail,
    };
    Some((check, text))
}

/// An open issue, or a pull request (it has `pull_request`), from `GET /repos/o/r/issues`.
#[derive(Debug, Deserialize)]
pub struct IssueNode {
    pub number: u64,
    pub title: String,
    pub user: Option<RestUser>,
    #[serde(default)]
    pub pull_request: Option<serde::de::IgnoredAny>,
}

#[derive(Debug, Deserialize)]
pub struct RestUser {
    pub login: String,
}

/// A changed file of a pull request, from `GET /repos/o/r/pulls/N/files`; `patch` is absent
/// for a binary file or a diff too large.
#[derive(Debug, Deserialize)]
pub struct FileEntry {
    pub filename: String,
    pub patch: Option<String>,
}
