//! The sweep of a repository's open surface on GitHub: open and recently merged pull requests
//! and open issues, read once, read-only, and judged by the seed's rules (see `rules.rs`). It
//! yields `sweep.json`, a section for the final report, and at most two in-tree candidates.
//!
//! Nothing read from the forge is an instruction: titles, bodies and comments are only quoted,
//! cut to [`QUOTE_LIMIT`] characters. The client (`github.rs`) can send a REST `GET` and a
//! GraphQL `query`, nothing else: `net::Request` has no other constructors, and `clippy.toml`
//! keeps every other way of sending out of the code.
//!
//! # `sweep.json`
//!
//! ```json
//! {
//!   "format_version": 1,
//!   "repository": "octo-org/widgets",          // null when it could not be found (skipped)
//!   "read_at": "2026-11-30T05:00:00Z",
//!   "skipped": null,                           // or why nothing was read: no token, no remote
//!   "requests": 7,                             // HTTP requests sent, retries included
//!   "open_prs": [PullRequest],
//!   "open_prs_truncated": false,               // more open PRs than were read
//!   "merged_prs": [PullRequest],               // the N merged ones updated last (GitHub
//!                                              // cannot order by merge time), newest merge first
//!   "open_issues": { "count": 1, "truncated": false,
//!                    "issues": [{ "number": 9, "title": "…", "author": "octocat" }] },
//!   "baseline_failures": [{ "check": "lint", "conclusion": "FAILURE", "prs": [11, 12, 13] }],
//!   "merged_with_unresolved_threads": [{ "number": 7, "title": "…", "unresolved_threads": 1,
//!                                        "critical": true, "reasons": ["security: …"] }],
//!   "findings": [{ "kind": "baseline-failure", "title": "…", "evidence": "…", "paths": [],
//!                  "confidence": 4, "critical": false }]
//! }
//! ```
//!
//! A `PullRequest`: `number`, `title`, `author`, `head_ref`, `head_oid`, `draft`, `merged_at`,
//! `review_decision` (as GitHub spells it, or null), `checks` (`green`, `failing`, `pending` or
//! `none`), `check_runs` (`name`, `kind` = `check_run`|`status_context`, `status`,
//! `conclusion`, `verdict` = `green`|`failing`|`pending`|`not_run`, `detail`), `review_check`
//! (`"skipped: <check>: <excerpt>"` or null), `blocked_by`, `review_threads`,
//! `unresolved_threads`, `threads` (the unresolved, not outdated ones: `author`, `path`, `body`,
//! `critical` = why it reads as a security or correctness finding, or null),
//! `reviewers`, `dependency_files`, `version_changes` (`file`, `dependency`, `from`, `to`,
//! `bump` = `major`|`zero_minor`|`minor`|`patch`|`other`), `human_only`, `human_only_reasons`,
//! `critical`.

mod findings;
mod github;
mod options;
mod read;
mod report;
mod rules;
mod versions;
mod wire;

use serde::{Deserialize, Serialize};

pub use findings::candidates;
pub use options::{RepositoryName, SweepOptions, Token};
pub use read::run_sweep;
pub use report::{SWEEP_FILE, write_sweep_json};

/// What `sweep.json` is written as.
pub const FORMAT_VERSION: u32 = crate::state::format::SWEEP;
/// Text read from the forge is quoted in at most this many characters.
pub const QUOTE_LIMIT: usize = 200;

/// One sweep: what was read and what the rules made of it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Sweep {
    pub format_version: u32,
    pub repository: Option<String>,
    pub read_at: String,
    pub skipped: Option<String>,
    pub requests: u32,
    pub open_prs: Vec<PullRequest>,
    pub open_prs_truncated: bool,
    pub merged_prs: Vec<PullRequest>,
    pub open_issues: OpenIssues,
    pub baseline_failures: Vec<BaselineFailure>,
    pub merged_with_unresolved_threads: Vec<MergedWithThreads>,
    pub findings: Vec<Finding>,
}

impl Sweep {
    /// A sweep that read nothing, and why.
    pub fn skipped(repository: Option<String>, reason: impl Into<String>) -> Self {
        Self {
            format_version: FORMAT_VERSION,
            repository,
            read_at: crate::clock::now_iso8601(),
            skipped: Some(reason.into()),
            ..Self::default()
        }
    }
}

/// How a pull request's checks stand, all of them taken together.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ChecksState {
    /// Every check ran and succeeded.
    Green,
    /// At least one check failed.
    Failing,
    /// None failed, and at least one has not finished.
    Pending,
    /// Nothing to call green: no checks at all, or a check that never ran (skipped, neutral,
    /// stale) among ones that succeeded.
    #[default]
    None,
}

/// How one check stands.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Green,
    Failing,
    Pending,
    NotRun,
}

/// What kind of check GitHub reported: a check run (Actions, apps) or a commit status.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    CheckRun,
    StatusContext,
}

/// One check of a pull request's head commit.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Check {
    pub name: String,
    pub kind: CheckKind,
    /// A check run's status (`COMPLETED`, `IN_PROGRESS`, …) or a commit status's state
    /// (`SUCCESS`, `PENDING`, …).
    pub status: String,
    /// A check run's conclusion (`SUCCESS`, `FAILURE`, `SKIPPED`, …); null for a status.
    pub conclusion: Option<String>,
    pub verdict: Verdict,
    /// Title and summary (a check run) or description (a status), quoted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl Check {
    /// The outcome two failures must share to be the same failure: the conclusion of a check
    /// run, the state of a status.
    pub fn outcome(&self) -> &str {
        self.conclusion.as_deref().unwrap_or(&self.status)
    }
}

/// An unresolved review thread, quoted from its first comment.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Thread {
    pub author: Option<String>,
    pub path: Option<String>,
    pub body: String,
    /// The code it is on changed since (it is still unresolved).
    #[serde(default)]
    pub outdated: bool,
    /// Its text reads as a security or correctness finding (why, when it does).
    pub critical: Option<String>,
}

/// A dependency's version as a pull request's diff changes it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct VersionChange {
    pub file: String,
    pub dependency: String,
    pub from: String,
    pub to: String,
    pub bump: Bump,
}

/// How far a version moved.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Bump {
    /// The major number changed (either way).
    Major,
    /// Below 1.0, the minor number changed, or below 0.1 the patch number: breaking by semver.
    ZeroMinor,
    Minor,
    Patch,
    /// Not a version the rules can read (a prerelease tag only, a git reference).
    Other,
}

/// A pull request as read, and judged.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PullRequest {
    pub number: u64,
    pub title: String,
    pub author: Option<String>,
    pub head_ref: String,
    pub head_oid: String,
    pub draft: bool,
    pub merged_at: Option<String>,
    pub review_decision: Option<String>,
    pub checks: ChecksState,
    /// GitHub listed only some of the checks (more than 100): never green then.
    #[serde(default)]
    pub checks_truncated: bool,
    pub check_runs: Vec<Check>,
    pub review_check: Option<String>,
    pub blocked_by: Vec<String>,
    pub review_threads: usize,
    pub unresolved_threads: usize,
    pub threads: Vec<Thread>,
    pub reviewers: Vec<String>,
    pub dependency_files: Vec<String>,
    pub version_changes: Vec<VersionChange>,
    pub human_only: bool,
    pub human_only_reasons: Vec<String>,
    pub critical: bool,
}

/// The open issues read (pull requests left out).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct OpenIssues {
    pub count: usize,
    /// More open issues than were read.
    pub truncated: bool,
    pub issues: Vec<Issue>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Issue {
    pub number: u64,
    pub title: String,
    pub author: Option<String>,
}

/// A check that fails the same way on unrelated open pull requests: the base's failure, never a
/// candidate's.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct BaselineFailure {
    pub check: String,
    pub conclusion: String,
    pub prs: Vec<u64>,
}

/// A merged pull request that still carries unresolved review threads.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MergedWithThreads {
    pub number: u64,
    pub title: String,
    pub unresolved_threads: usize,
    /// A thread reads as a security or correctness finding about shipped code.
    pub critical: bool,
    pub reasons: Vec<String>,
}

/// Something the sweep found that a change in the tree can address.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Finding {
    /// `baseline-failure`, `two-update-bots`, `reviewer-never-ran` or `merged-unresolved`.
    pub kind: String,
    pub title: String,
    pub evidence: String,
    pub paths: Vec<String>,
    /// 1 to 5, from what was observed.
    pub confidence: u8,
    /// A finding about shipped code that ends the round.
    pub critical: bool,
}

/// Why a sweep could not be done.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error(
        "the sweep reads the GitHub API and this run is offline (--offline or REFINE_LOOP_OFFLINE)"
    )]
    Offline,
    #[error("{from}: {value:?} is not a repository: expected owner/name")]
    BadRepository { from: &'static str, value: String },
    #[error("GitHub answered {status} to {method} {url}{}", message_suffix(.message))]
    Status {
        status: u16,
        method: &'static str,
        url: String,
        message: String,
    },
    #[error("{method} {url}: {source}")]
    Network {
        method: &'static str,
        url: String,
        #[source]
        source: crate::net::NetError,
    },
    #[error("{method} {url}: the reply is not what GitHub sends: {reason}")]
    Malformed {
        method: &'static str,
        url: String,
        reason: String,
    },
    #[error("the GraphQL query to {url} failed: {messages}")]
    Graphql { url: String, messages: String },
    #[error("{0} is not a GraphQL query; the sweep sends queries only")]
    NotAQuery(String),
    #[error("cancelled")]
    Cancelled,
    #[error(transparent)]
    State(#[from] crate::state::StateError),
}

fn message_suffix(message: &str) -> String {
    if message.is_empty() {
        String::new()
    } else {
        format!(": {message}")
    }
}

impl SweepError {
    /// 2 for a refusal before anything was sent, 5 when the forge could not be read, 4 when the
    /// result could not be written.
    pub fn exit_code(&self) -> i32 {
        use crate::exit_code;
        match self {
            Self::Offline | Self::BadRepository { .. } => exit_code::USAGE,
            Self::Status { .. }
            | Self::Network { .. }
            | Self::Malformed { .. }
            | Self::Graphql { .. }
            | Self::NotAQuery(_) => exit_code::SWEEP_UNREADABLE,
            Self::State(_) => exit_code::ERROR,
            Self::Cancelled => exit_code::CANCELLED,
        }
    }
}
