//! Which repository a campaign belongs to, by what survives a fresh clone: the root commit of
//! HEAD's first-parent history, the remote's URL (normalised: https, ssh, scp-like and `.git`
//! forms agree, credentials dropped) and the target's path relative to the repository root.
//! Absolute paths and the git common dir differ on every CI runner; they are only recorded.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// A campaign's repository, as a fresh clone at any path sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Identity {
    /// The root commit(s) reached from HEAD along first parents; empty when the clone is
    /// shallow (its oldest commit is not a root) or HEAD is unborn.
    pub root_commits: Vec<String>,
    /// The normalised URL of `origin` (else of the first remote by name), without credentials.
    pub remote: Option<String>,
    /// The target relative to the repository root, `/`-separated; `.` for the root itself.
    pub target: String,
}

/// Why a stored identity is not this repository's: the field, and both values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    pub field: &'static str,
    pub stored: String,
    pub current: String,
}

impl Identity {
    /// The identity of `repo`, whose work tree is at `root`, for the target folder `target`,
    /// without its root commits: finding them walks the whole history, which only a new
    /// campaign needs ([`Identity::with_roots`]).
    pub fn of(repo: &git2::Repository, root: &Path, target: &Path) -> Self {
        Self {
            root_commits: Vec::new(),
            remote: remote_url(repo).map(|url| normalize_remote(&url)),
            target: relative_target(root, target),
        }
    }

    /// `self` with `repo`'s root commits, found once, when a campaign starts.
    pub fn with_roots(mut self, repo: &git2::Repository) -> Self {
        if self.root_commits.is_empty() {
            self.root_commits = root_commits(repo);
        }
        self
    }

    /// Whether `self` (stored when the campaign started) is `current`'s repository and target.
    /// Root commits decide when both sides know them (the stored root commit is in HEAD's
    /// history); in a shallow clone the remote decides; when neither can be compared, the
    /// campaign is taken as this repository's (the caller says so).
    pub fn check(
        &self,
        current: &Identity,
        repo: &git2::Repository,
    ) -> Result<Confirmed, Mismatch> {
        if self.target != current.target {
            return Err(Mismatch {
                field: "target (relative to the repository root)",
                stored: self.target.clone(),
                current: current.target.clone(),
            });
        }
        let shallow = repo.is_shallow();
        if !self.root_commits.is_empty() && !shallow {
            // In HEAD's history, not merely in the object store (a subtree merge, another
            // branch).
            let head = repo.head().ok().and_then(|head| head.target());
            let known = self.root_commits.iter().any(|id| {
                let (Ok(root), Some(head)) = (git2::Oid::from_str(id), head) else {
                    return false;
                };
                root == head || repo.graph_descendant_of(head, root).unwrap_or(false)
            });
            if known {
                return Ok(Confirmed::ByRootCommit);
            }
            let current = if current.root_commits.is_empty() {
                root_commits(repo)
            } else {
                current.root_commits.clone()
            };
            return Err(Mismatch {
                field: "root commit",
                stored: self.root_commits.join(", "),
                current: listed(&current),
            });
        }
        match (&self.remote, &current.remote) {
            (Some(stored), Some(now)) if stored == now => Ok(Confirmed::ByRemote),
            (Some(stored), Some(now)) => Err(Mismatch {
                field: "remote",
                stored: stored.clone(),
                current: now.clone(),
            }),
            _ => Ok(Confirmed::Unconfirmed),
        }
    }
}

/// How a stored identity was found to be this repository's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confirmed {
    ByRootCommit,
    /// A shallow clone (or a campaign started in one): the remotes agree.
    ByRemote,
    /// Neither root commits nor remotes could be compared.
    Unconfirmed,
}

fn listed(items: &[String]) -> String {
    if items.is_empty() {
        "unknown (a shallow clone or no commit)".to_owned()
    } else {
        items.join(", ")
    }
}

/// The root commits of HEAD's first-parent history, oldest last; empty in a shallow clone.
pub fn root_commits(repo: &git2::Repository) -> Vec<String> {
    if repo.is_shallow() {
        return Vec::new();
    }
    let Ok(mut walk) = repo.revwalk() else {
        return Vec::new();
    };
    if walk.push_head().is_err() || walk.simplify_first_parent().is_err() {
        return Vec::new();
    }
    let mut roots = Vec::new();
    for oid in walk.flatten() {
        if repo.find_commit(oid).is_ok_and(|c| c.parent_count() == 0) {
            roots.push(oid.to_string());
        }
    }
    roots
}

/// The URL of `origin`, else of the first remote by name.
fn remote_url(repo: &git2::Repository) -> Option<String> {
    let names = repo.remotes().ok()?;
    let mut names: Vec<&str> = names.iter().flatten().flatten().collect();
    names.sort_unstable();
    let name = if names.contains(&"origin") {
        "origin"
    } else {
        names.first()?
    };
    let remote = repo.find_remote(name).ok()?;
    remote.url().ok().map(str::to_owned)
}

/// Hosts whose owner and repository names are case-insensitive.
const CASE_INSENSITIVE_HOSTS: [&str; 3] = ["github.com", "gitlab.com", "bitbucket.org"];

/// `host/path` for a network URL (`https://user:token@Host:443/o/r.git`, `ssh://git@host/o/r`,
/// `git@host:o/r.git` all give `host/o/r`), the path for a local one; never credentials.
pub fn normalize_remote(url: &str) -> String {
    let url = url.trim();
    let (host, path) = if let Some((scheme, rest)) = url.split_once("://") {
        if scheme.eq_ignore_ascii_case("file") {
            (None, rest)
        } else {
            let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
            (Some(authority), path)
        }
    } else if let Some((authority, path)) = scp_like(url) {
        (Some(authority), path)
    } else {
        (None, url)
    };
    let path = path.trim_end_matches('/');
    let path = path
        .strip_suffix(".git")
        .unwrap_or(path)
        .trim_end_matches('/');
    let Some(authority) = host else {
        return path.to_owned();
    };
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let host = match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    }
    .to_ascii_lowercase();
    let path = path.trim_start_matches('/');
    if CASE_INSENSITIVE_HOSTS.contains(&host.as_str()) {
        format!("{host}/{}", path.to_lowercase())
    } else {
        format!("{host}/{path}")
    }
}

/// `[user@]host:path`, git's scp-like syntax: a colon before any slash, and not a drive letter.
fn scp_like(url: &str) -> Option<(&str, &str)> {
    let colon = url.find(':')?;
    let slash = url.find('/').unwrap_or(usize::MAX);
    (colon < slash && colon > 1).then(|| (&url[..colon], &url[colon + 1..]))
}

/// `target` relative to `root`, `/`-separated; `.` when they are the same folder.
pub fn relative_target(root: &Path, target: &Path) -> String {
    let relative = target.strip_prefix(root).unwrap_or(target);
    let parts: Vec<String> = relative
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    }
}

#[cfg(test)]
#[path = "identity_tests.rs"]
mod tests;
