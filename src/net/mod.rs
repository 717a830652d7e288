//! The network edges: a model endpoint and the GitHub API, both opt-in. One agent shape for
//! both: TLS by rustls, `HTTPS_PROXY`/`ALL_PROXY`/`NO_PROXY` honoured, statuses returned rather
//! than raised, every reply read under a byte limit, and 429/5xx retried with backoff until a
//! deadline.

use std::time::{Duration, Instant};

use crate::cancel::Cancel;

/// Why a request got no usable reply.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    #[error("no reply within the deadline ({0:.1?})")]
    Deadline(Duration),
    #[error("the reply is larger than {limit} bytes")]
    TooLarge { limit: u64 },
    #[error("{0}")]
    Transport(String),
    #[error("cancelled before an answer came")]
    Cancelled,
}

/// A reply, read whole.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub body: Vec<u8>,
    /// The requests it took (retries included).
    pub attempts: u32,
}

impl Reply {
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body as text, for messages (lossy, at most `max` bytes).
    pub fn body_excerpt(&self, max: usize) -> String {
        let cut = &self.body[..self.body.len().min(max)];
        String::from_utf8_lossy(cut).into_owned()
    }
}

/// The agent every network edge uses. Proxies come from the environment (ureq reads
/// `ALL_PROXY`, `HTTPS_PROXY`, `HTTP_PROXY` and `NO_PROXY`); a status is a value, not an error.
/// `redirects` is how many it follows (a model endpoint: none, so its key goes nowhere else).
#[expect(
    clippy::disallowed_types,
    reason = "net is the one place that holds an agent: every request goes through send"
)]
fn agent(redirects: u32) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .user_agent(concat!("refine-loop/", env!("CARGO_PKG_VERSION")))
        .max_redirects(redirects)
        .build()
        .into()
}

/// A request's method, and a POST's JSON body. Private: a request is made by the constructors
/// of [`Request`] alone, so the only methods sent are GET and POST, and a POST is either a model
/// call or a GraphQL query.
#[derive(Debug, Clone)]
enum Method {
    Get,
    Post(Vec<u8>),
}

/// One request, sent again as it is on each retry.
#[derive(Debug, Clone)]
pub struct Request {
    method: Method,
    url: String,
    headers: Vec<(String, String)>,
    /// Redirects followed.
    redirects: u32,
    /// The reply's body is read up to this many bytes.
    limit: u64,
}

/// Why a GraphQL document is not sent: it is not a query alone.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0} is not a GraphQL query; only queries are sent")]
pub struct NotAQuery(pub String);

impl Request {
    /// `GET url`.
    pub fn get(url: impl Into<String>) -> Self {
        Self::new(Method::Get, url.into())
    }

    /// A call of a model endpoint: `body` (JSON) POSTed to `url`.
    pub fn model_call(url: impl Into<String>, body: Vec<u8>) -> Self {
        Self::new(Method::Post(body), url.into())
    }

    /// A GraphQL query with its variables, POSTed to `url`. A document that does not start with
    /// `query`, or that holds a mutation or a subscription anywhere, is refused: nothing here
    /// changes anything on the forge.
    pub fn graphql_query(
        url: impl Into<String>,
        document: &str,
        variables: serde_json::Value,
    ) -> Result<Self, NotAQuery> {
        let first = document.split_whitespace().next().unwrap_or_default();
        let operations = document
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|word| matches!(*word, "mutation" | "subscription"));
        if first != "query" && !first.starts_with("query{") || operations.count() > 0 {
            return Err(NotAQuery(
                first.chars().take(40).collect::<String>().replace('{', ""),
            ));
        }
        let body = serde_json::json!({ "query": document, "variables": variables }).to_string();
        Ok(Self::new(Method::Post(body.into_bytes()), url.into()))
    }

    fn new(method: Method, url: String) -> Self {
        Self {
            method,
            url,
            headers: Vec::new(),
            redirects: 0,
            limit: 1 << 20,
        }
    }

    /// With the header `name: value`.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Following up to `redirects` redirects (none by default).
    pub fn redirects(mut self, redirects: u32) -> Self {
        self.redirects = redirects;
        self
    }

    /// Reading at most `limit` bytes of the reply (1 MiB by default).
    pub fn limit(mut self, limit: u64) -> Self {
        self.limit = limit;
        self
    }

    /// `GET` or `POST`, for messages.
    pub fn method_name(&self) -> &'static str {
        match self.method {
            Method::Get => "GET",
            Method::Post(_) => "POST",
        }
    }

    pub fn url(&self) -> &str {
        &self.url
    }
}

/// The shortest wait before a retry, whatever `Retry-After` says (0 would spin).
const MIN_WAIT: Duration = Duration::from_millis(500);
/// The longest wait before a retry.
const MAX_WAIT: Duration = Duration::from_secs(60);
/// A retry needs at least this long before the deadline to be worth sending.
const LAST_CHANCE: Duration = Duration::from_secs(1);

/// Sends `request`, retrying 429 and 5xx with backoff (or the server's `Retry-After`, within
/// bounds) while the next try still fits before `deadline`; the last such reply is returned as
/// it is. The exchange runs on a thread of its own, so that a cancel is answered at once.
pub fn send(request: Request, deadline: Instant, cancel: &Cancel) -> Result<Reply, NetError> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(exchange(&request, deadline));
    });
    loop {
        if cancel.is_requested() {
            return Err(NetError::Cancelled);
        }
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(reply) => return reply,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(NetError::Transport(
                    "the request thread ended without an answer".into(),
                ));
            }
        }
    }
}

#[expect(
    clippy::disallowed_methods,
    reason = "the two methods a Request can have, GET and POST, are sent here and nowhere else"
)]
fn exchange(request: &Request, deadline: Instant) -> Result<Reply, NetError> {
    let agent = agent(request.redirects);
    let started = Instant::now();
    let mut backoff = Duration::from_secs(1);
    let mut attempts = 0;
    loop {
        attempts += 1;
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Err(NetError::Deadline(started.elapsed()));
        }
        let outcome = match &request.method {
            Method::Get => {
                let mut builder = agent.get(&request.url);
                for (name, value) in &request.headers {
                    builder = builder.header(name, value);
                }
                builder
                    .config()
                    .timeout_global(Some(remaining))
                    .build()
                    .call()
            }
            Method::Post(body) => {
                let mut builder = agent.post(&request.url);
                for (name, value) in &request.headers {
                    builder = builder.header(name, value);
                }
                builder
                    .config()
                    .timeout_global(Some(remaining))
                    .build()
                    .content_type("application/json")
                    .send(body.as_slice())
            }
        };
        let mut response = match outcome {
            Ok(response) => response,
            Err(ureq::Error::Timeout(_)) => return Err(NetError::Deadline(started.elapsed())),
            Err(error) => return Err(NetError::Transport(error.to_string())),
        };
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.trim().parse::<u64>().ok())
            .map(|seconds| Duration::from_secs(seconds.min(MAX_WAIT.as_secs())));
        let limit = request.limit;
        let body = match response.body_mut().with_config().limit(limit).read_to_vec() {
            Ok(body) => body,
            Err(ureq::Error::BodyExceedsLimit(_)) => return Err(NetError::TooLarge { limit }),
            Err(ureq::Error::Timeout(_)) => return Err(NetError::Deadline(started.elapsed())),
            Err(error) => return Err(NetError::Transport(error.to_string())),
        };
        let reply = Reply {
            status,
            body,
            attempts,
        };
        if !retryable(status) {
            return Ok(reply);
        }
        let wait = retry_after.unwrap_or(backoff).clamp(MIN_WAIT, MAX_WAIT);
        let fits = Instant::now()
            .checked_add(wait + LAST_CHANCE)
            .is_some_and(|retry| retry < deadline);
        if !fits {
            return Ok(reply);
        }
        tracing::info!(status, ?wait, url = %request.url, "retrying");
        std::thread::sleep(wait);
        backoff = (backoff * 2).min(MAX_WAIT);
    }
}

/// A status worth asking again for: rate limited, or the server's own failure.
fn retryable(status: u16) -> bool {
    status == 429 || matches!(status, 500 | 502 | 503 | 504)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_query_is_a_graphql_request() {
        let cases = [
            ("query { viewer { login } }", true),
            ("  query Open($first: Int) { a }", true),
            ("query{ a }", true),
            ("mutation { closeIssue(id: 1) }", false),
            ("query A { a } mutation B { b }", false),
            ("query A { a }\nsubscription B { b }", false),
            ("subscription { x }", false),
            ("  { viewer { login } }", false),
            ("", false),
            ("queryX { a }", false),
        ];
        for (document, sent) in cases {
            let request =
                Request::graphql_query("http://x/graphql", document, serde_json::json!({}));
            assert_eq!(request.is_ok(), sent, "{document:?}");
            if let Ok(request) = request {
                assert_eq!(request.method_name(), "POST");
            }
        }
    }

    #[test]
    fn rate_limits_and_server_failures_are_retried_and_nothing_else() {
        let cases = [
            (200, false),
            (400, false),
            (401, false),
            (404, false),
            (422, false),
            (429, true),
            (500, true),
            (501, false),
            (502, true),
            (503, true),
            (504, true),
        ];
        for (status, expected) in cases {
            assert_eq!(retryable(status), expected, "{status}");
        }
    }
}
