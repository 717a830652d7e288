//! The sweep's GitHub client: a REST `GET` and a GraphQL `query`, and nothing that writes. Every
//! request goes through `net::send` (retries on 429 and 5xx, one deadline for the whole sweep)
//! with the token in the `Authorization` header only, never in a URL or a message.

use std::time::Instant;

use serde::de::DeserializeOwned;

use super::SweepError;
use super::options::{SweepOptions, Token};
use crate::cancel::Cancel;
use crate::net;

/// The largest reply read (a page of pull requests with their checks and threads).
const REPLY_LIMIT: u64 = 32 << 20;
/// Error text from GitHub kept in a message.
const MESSAGE_LIMIT: usize = 200;

/// The open pull requests or the merged ones, one page, with what the rules read: the head
/// commit's check rollup, the review decision and threads, the reviews' authors, the files.
pub const PULL_REQUESTS_QUERY: &str = r"query SweepPullRequests($owner: String!, $name: String!, $states: [PullRequestState!], $first: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequests(states: $states, first: $first, after: $after, orderBy: {field: UPDATED_AT, direction: DESC}) {
      pageInfo { hasNextPage endCursor }
      nodes {
        number title isDraft mergedAt headRefName headRefOid reviewDecision
        author { login }
        commits(last: 1) { nodes { commit { oid statusCheckRollup { state contexts(first: 100) { totalCount pageInfo { hasNextPage } nodes {
          __typename
          ... on CheckRun { name status conclusion title summary detailsUrl }
          ... on StatusContext { context state description targetUrl }
        } } } } } }
        reviewThreads(first: 100) { totalCount nodes { isResolved isOutdated comments(first: 1) { nodes { author { __typename login } authorAssociation body path } } } }
        reviews(first: 50) { nodes { author { login } } }
        files(first: 100) { nodes { path additions deletions } }
      }
    }
  }
}";

/// A client bound to one repository's API, a token and a deadline; it counts its requests.
pub(super) struct Client<'c> {
    api_url: String,
    graphql_url: String,
    authorization: String,
    deadline: Instant,
    requests: u32,
    cancel: &'c Cancel,
}

impl<'c> Client<'c> {
    pub fn new(options: &SweepOptions, token: &Token, cancel: &'c Cancel) -> Self {
        Self {
            api_url: options.api_url.trim_end_matches('/').to_string(),
            graphql_url: options.graphql_url.clone(),
            authorization: token.authorization(),
            deadline: Instant::now() + options.timeout,
            requests: 0,
            cancel,
        }
    }

    /// The requests sent so far, retries included.
    pub fn requests(&self) -> u32 {
        self.requests
    }

    pub fn graphql_url(&self) -> &str {
        &self.graphql_url
    }

    /// `GET <api>/<path>`, its JSON reply read as `T`.
    pub fn get<T: DeserializeOwned>(&mut self, path: &str) -> Result<T, SweepError> {
        let url = format!("{}/{}", self.api_url, path.trim_start_matches('/'));
        let body = self.send(net::Request::get(&url))?;
        parse("GET", &url, &body)
    }

    /// Sends one GraphQL query document with its variables; its `data` read as `T`. A document
    /// that does not start with `query` is refused before anything is sent.
    pub fn query<T: DeserializeOwned>(
        &mut self,
        document: &'static str,
        variables: serde_json::Value,
    ) -> Result<T, SweepError> {
        let url = self.graphql_url.clone();
        let request = net::Request::graphql_query(&url, document, variables)
            .map_err(|refused| SweepError::NotAQuery(refused.0))?;
        let reply = self.send(request)?;
        let reply: GraphqlReply<T> = parse("POST", &url, &reply)?;
        if !reply.errors.is_empty() {
            let messages = reply
                .errors
                .iter()
                .map(|error| super::rules::quote_in(&error.message, MESSAGE_LIMIT))
                .collect::<Vec<_>>()
                .join("; ");
            return Err(SweepError::Graphql { url, messages });
        }
        reply.data.ok_or_else(|| SweepError::Malformed {
            method: "POST",
            url,
            reason: "no data and no errors".into(),
        })
    }

    fn send(&mut self, request: net::Request) -> Result<Vec<u8>, SweepError> {
        let (method_name, url) = (request.method_name(), request.url().to_string());
        tracing::debug!(method = method_name, url, "GitHub");
        let request = request
            .header("Authorization", self.authorization.as_str())
            .header("Accept", "application/vnd.github+json")
            .header("X-GitHub-Api-Version", "2022-11-28")
            .redirects(3)
            .limit(REPLY_LIMIT);
        let reply = net::send(request, self.deadline, self.cancel).map_err(|source| {
            self.requests += 1;
            match source {
                net::NetError::Cancelled => SweepError::Cancelled,
                source => SweepError::Network {
                    method: method_name,
                    url: url.to_string(),
                    source,
                },
            }
        })?;
        self.requests += reply.attempts;
        if !reply.is_success() {
            return Err(SweepError::Status {
                status: reply.status,
                method: method_name,
                url: url.to_string(),
                message: error_message(&reply.body),
            });
        }
        Ok(reply.body)
    }
}

/// The `message` of GitHub's error body, quoted; else nothing.
fn error_message(body: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    struct ErrorBody {
        message: String,
    }
    serde_json::from_slice::<ErrorBody>(body)
        .map(|error| super::rules::quote_in(&error.message, MESSAGE_LIMIT))
        .unwrap_or_default()
}

fn parse<T: DeserializeOwned>(
    method: &'static str,
    url: &str,
    body: &[u8],
) -> Result<T, SweepError> {
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    serde_path_to_error::deserialize(&mut deserializer).map_err(|error| SweepError::Malformed {
        method,
        url: url.to_string(),
        reason: error.to_string(),
    })
}

/// A GraphQL reply: data, errors, or both.
#[derive(Debug, serde::Deserialize)]
struct GraphqlReply<T> {
    data: Option<T>,
    #[serde(default)]
    errors: Vec<GraphqlError>,
}

#[derive(Debug, serde::Deserialize)]
struct GraphqlError {
    message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_query_document_is_sent() {
        let options = SweepOptions {
            target: ".".into(),
            repository: None,
            token: None,
            api_url: "http://127.0.0.1:9".into(),
            graphql_url: "http://127.0.0.1:9/graphql".into(),
            merged: 5,
            timeout: std::time::Duration::from_secs(5),
            offline: false,
        };
        let token = Token::new("t0ken-for-a-test").unwrap();
        let cancel = Cancel::default();
        let mut client = Client::new(&options, &token, &cancel);
        for document in ["subscription { x }", "  { viewer { login } }", ""] {
            let refused = client.query::<serde_json::Value>(document, serde_json::json!({}));
            assert!(
                matches!(refused, Err(SweepError::NotAQuery(_))),
                "{document}"
            );
        }
        assert_eq!(client.requests(), 0);
        assert!(PULL_REQUESTS_QUERY.starts_with("query "));
    }
}
