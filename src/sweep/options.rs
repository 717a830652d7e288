//! What a sweep reads and with what: the repository, the token, the API endpoints, how many
//! merged pull requests, the deadline. Taken from flags and the environment once, here.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::SweepError;

/// `owner/name` of a GitHub repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepositoryName {
    pub owner: String,
    pub name: String,
}

impl RepositoryName {
    /// Reads `owner/name`; `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        let (owner, name) = text.trim().split_once('/')?;
        let valid = |part: &str| {
            !part.is_empty()
                && part != "."
                && part != ".."
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        };
        (valid(owner) && valid(name)).then(|| Self {
            owner: owner.to_string(),
            name: name.to_string(),
        })
    }

    /// The repository a remote URL names, when it is on `github.com` or on `server_host` (a
    /// GitHub Enterprise server, from `GITHUB_SERVER_URL`): `https://github.com/o/r.git`,
    /// `ssh://git@github.com/o/r`, `git@github.com:o/r.git`.
    pub fn from_remote_url(url: &str, server_host: Option<&str>) -> Option<Self> {
        let url = url.trim();
        let (authority, path) = match url.split_once("://") {
            Some((_scheme, rest)) => rest.split_once('/')?,
            // scp-like: [user@]host:path, no slash before the colon.
            None => url
                .split_once(':')
                .filter(|(host, _)| !host.contains('/'))?,
        };
        let host = authority.rsplit('@').next()?;
        let host = host.split(':').next()?.to_ascii_lowercase();
        let known = ["github.com", "www.github.com", "ssh.github.com"].contains(&host.as_str())
            || server_host.is_some_and(|server| server.eq_ignore_ascii_case(&host));
        if !known {
            return None;
        }
        let path = path.trim_matches('/');
        let path = path.strip_suffix(".git").unwrap_or(path);
        Self::parse(path)
    }
}

impl fmt::Display for RepositoryName {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}/{}", self.owner, self.name)
    }
}

/// The API token. Its `Debug` never shows it; it is only ever put in the `Authorization` header.
#[derive(Clone)]
pub struct Token(String);

impl Token {
    /// A token, unless `value` is blank.
    pub fn new(value: &str) -> Option<Self> {
        let value = value.trim();
        (!value.is_empty()).then(|| Self(value.to_string()))
    }

    pub(super) fn authorization(&self) -> String {
        format!("Bearer {}", self.0)
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("Token([hidden])")
    }
}

/// Everything a sweep needs, resolved.
#[derive(Debug, Clone)]
pub struct SweepOptions {
    /// The repository whose `origin` names the GitHub repository when `repository` is not set.
    pub target: PathBuf,
    pub repository: Option<RepositoryName>,
    /// `None`: unauthenticated, the sweep is skipped.
    pub token: Option<Token>,
    /// The REST base, like `https://api.github.com`.
    pub api_url: String,
    pub graphql_url: String,
    /// The last merged pull requests to read (at most 100).
    pub merged: usize,
    /// For the whole sweep, every request and retry included.
    pub timeout: Duration,
    /// Refuse: nothing may be sent.
    pub offline: bool,
}

impl SweepOptions {
    pub const DEFAULT_MERGED: usize = 5;
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
    pub const DEFAULT_API_URL: &str = "https://api.github.com";
    pub const DEFAULT_GRAPHQL_URL: &str = "https://api.github.com/graphql";

    /// Options for `target` from the environment: the repository (`repository` when given,
    /// else `GITHUB_REPOSITORY`, else none: `origin` will say), `GITHUB_TOKEN` (else
    /// `GH_TOKEN`), `GITHUB_API_URL`, `GITHUB_GRAPHQL_URL` and `REFINE_LOOP_OFFLINE`; a variable
    /// set empty counts as unset. A `GITHUB_REPOSITORY` that is not `owner/name` is an error.
    pub fn from_environment(
        target: PathBuf,
        repository: Option<RepositoryName>,
    ) -> Result<Self, SweepError> {
        let repository = match (repository, variable("GITHUB_REPOSITORY")) {
            (Some(repository), _) => Some(repository),
            (None, Some(value)) => Some(RepositoryName::parse(&value).ok_or(
                SweepError::BadRepository {
                    from: "GITHUB_REPOSITORY",
                    value,
                },
            )?),
            (None, None) => None,
        };
        let token = variable("GITHUB_TOKEN")
            .or_else(|| variable("GH_TOKEN"))
            .and_then(|value| Token::new(&value));
        let offline = variable("REFINE_LOOP_OFFLINE").is_some_and(|value| {
            !matches!(
                value.to_ascii_lowercase().as_str(),
                "0" | "false" | "no" | "off"
            )
        });
        Ok(Self {
            target,
            repository,
            token,
            api_url: variable("GITHUB_API_URL").unwrap_or_else(|| Self::DEFAULT_API_URL.into()),
            graphql_url: variable("GITHUB_GRAPHQL_URL")
                .unwrap_or_else(|| Self::DEFAULT_GRAPHQL_URL.into()),
            merged: Self::DEFAULT_MERGED,
            timeout: Self::DEFAULT_TIMEOUT,
            offline,
        })
    }
}

/// A variable's value, `None` when unset, empty or not UTF-8.
fn variable(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .filter(|value| !value.trim().is_empty())
}

/// The GitHub repository the target's `origin` remote names, or why there is none (the sweep
/// is then skipped).
pub(super) fn repository_of_origin(target: &Path) -> Result<RepositoryName, String> {
    let repo = git2::Repository::discover(target)
        .map_err(|_| format!("{} is not in a git repository", target.display()))?;
    let remote = repo
        .find_remote("origin")
        .map_err(|_| "the target has no origin remote".to_string())?;
    let url = remote
        .url()
        .map_err(|_| "the origin remote's URL is not UTF-8".to_string())?;
    let server_host = variable("GITHUB_SERVER_URL").and_then(|server| {
        let rest = server.split_once("://").map_or(server.as_str(), |(_, r)| r);
        rest.split(['/', ':']).next().map(str::to_string)
    });
    RepositoryName::from_remote_url(url, server_host.as_deref())
        .ok_or_else(|| "the origin remote is not a GitHub repository".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_slash_name_and_nothing_else() {
        let cases = [
            ("octo-org/widgets", Some(("octo-org", "widgets"))),
            ("o/r.js", Some(("o", "r.js"))),
            (" o/r ", Some(("o", "r"))),
            ("o", None),
            ("o/", None),
            ("/r", None),
            ("o/r/x", None),
            ("o/..", None),
            ("o r/x", None),
            ("o/r?x=1", None),
        ];
        for (text, expected) in cases {
            let parsed = RepositoryName::parse(text);
            let expected = expected.map(|(owner, name)| RepositoryName {
                owner: owner.into(),
                name: name.into(),
            });
            assert_eq!(parsed, expected, "{text}");
        }
    }

    #[test]
    fn remote_urls_in_https_and_ssh_forms() {
        let cases = [
            ("https://github.com/o/r.git", None, Some("o/r")),
            ("https://github.com/o/r", None, Some("o/r")),
            ("https://github.com/o/r/", None, Some("o/r")),
            (
                "https://x-access-token:abc@github.com/o/r.git",
                None,
                Some("o/r"),
            ),
            ("http://github.com:443/o/r", None, Some("o/r")),
            ("git@github.com:o/r.git", None, Some("o/r")),
            ("github.com:o/r", None, Some("o/r")),
            ("ssh://git@github.com/o/r.git", None, Some("o/r")),
            ("ssh://git@ssh.github.com:443/o/r.git", None, Some("o/r")),
            ("git://github.com/o/r", None, Some("o/r")),
            ("https://GitHub.com/o/r", None, Some("o/r")),
            ("https://gitlab.com/o/r.git", None, None),
            ("git@gitlab.com:o/r.git", None, None),
            (
                "https://ghe.example.com/o/r",
                Some("ghe.example.com"),
                Some("o/r"),
            ),
            ("https://ghe.example.com/o/r", None, None),
            ("https://github.com/o/r/pulls", None, None),
            ("/srv/git/r.git", None, None),
            ("../r", None, None),
        ];
        for (url, server, expected) in cases {
            let found = RepositoryName::from_remote_url(url, server).map(|r| r.to_string());
            assert_eq!(found.as_deref(), expected, "{url}");
        }
    }

    #[test]
    fn a_token_is_never_shown_by_debug() {
        let token = Token::new("  sweep-secret-value  ").unwrap();
        assert_eq!(format!("{token:?}"), "Token([hidden])");
        assert_eq!(token.authorization(), "Bearer sweep-secret-value");
        assert!(Token::new("   ").is_none());
    }
}
