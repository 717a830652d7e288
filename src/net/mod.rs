//! The network edges: a model endpoint and the GitHub API, both opt-in. One agent shape for
//! both: TLS by rustls, `HTTPS_PROXY`/`ALL_PROXY`/`NO_PROXY` honoured, statuses returned rather
//! than raised, every reply read under a byte limit, and 429/5xx retried with backoff until a
//! deadline.

use std::time::{Duration, Instant};

/// Why a request got no usable reply.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    #[error("no reply within the deadline ({0:.1?})")]
    Deadline(Duration),
    #[error("the reply is larger than {limit} bytes")]
    TooLarge { limit: u64 },
    #[error("{0}")]
    Transport(String),
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
pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .user_agent(concat!("refine-loop/", env!("CARGO_PKG_VERSION")))
        .max_redirects(3)
        .build()
        .into()
}

/// One request to send, built again for each attempt.
#[derive(Debug, Clone, Copy)]
pub enum Method<'a> {
    Get,
    /// A JSON body.
    Post(&'a [u8]),
}

/// Sends `method url` with `headers`, retrying 429 and 5xx with backoff (or the server's
/// `Retry-After`) while the next try still fits before `deadline`. The body is read under
/// `limit` bytes.
pub fn send(
    agent: &ureq::Agent,
    (method, url): (Method<'_>, &str),
    headers: &[(&str, &str)],
    deadline: Instant,
    limit: u64,
) -> Result<Reply, NetError> {
    let started = Instant::now();
    let mut backoff = Duration::from_secs(1);
    let mut attempts = 0;
    loop {
        attempts += 1;
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Err(NetError::Deadline(started.elapsed()));
        }
        let outcome = match method {
            Method::Get => {
                let mut request = agent.get(url);
                for (name, value) in headers {
                    request = request.header(*name, *value);
                }
                request
                    .config()
                    .timeout_global(Some(remaining))
                    .build()
                    .call()
            }
            Method::Post(body) => {
                let mut request = agent.post(url);
                for (name, value) in headers {
                    request = request.header(*name, *value);
                }
                request
                    .config()
                    .timeout_global(Some(remaining))
                    .build()
                    .content_type("application/json")
                    .send(body)
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
            .map(Duration::from_secs);
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
        let wait = retry_after.unwrap_or(backoff);
        if Instant::now() + wait >= deadline {
            return Ok(reply);
        }
        tracing::info!(status, ?wait, url, "retrying");
        std::thread::sleep(wait);
        backoff = (backoff * 2).min(Duration::from_secs(30));
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
