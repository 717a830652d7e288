//! Keeps secrets out of everything the loop writes: redacts the environment's secret values and
//! well-known credential shapes from bytes, at once or as a stream, and finds them in a patch.
//!
//! What is redacted:
//! - the value of every variable whose name looks secret (`TOKEN`, `SECRET`, `PASSWORD`,
//!   `API_KEY`, `AUTH`, ... see `environment.rs`), trimmed, when it is at least
//!   [`MIN_SECRET_LEN`] bytes and not one byte repeated; also its URL-encoded form. Wherever it
//!   appears, inside a longer word too: a secret is a secret;
//! - credential shapes, whatever the environment: GitHub, GitLab, Slack, npm tokens, AWS access
//!   key ids, Google API keys, `sk-` keys (OpenAI, Anthropic), private key blocks and the
//!   credential of `Authorization:` headers (see `shapes.rs`).
//!
//! Each is replaced by `[REDACTED:<what>]`, where `<what>` is the variable's name or the shape's.
//! Matches that overlap are merged into one marker, named after the one that starts first (the
//! longest when two start together, a variable before a shape), so no byte of either survives.

mod count;
mod environment;
mod shapes;
mod writer;

use std::borrow::Cow;
use std::cmp::Reverse;
use std::convert::Infallible;
use std::fmt;

use memchr::memmem::Finder;

pub use environment::{MIN_SECRET_LEN, is_secret_name};
pub use writer::RedactingWriter;

use shapes::Shapes;

/// The redactor for this process's environment, made on first use: everything the loop writes
/// in its state dir goes through it. `None` only if the built-in patterns failed to compile.
pub fn process_redactor() -> Option<&'static Redactor> {
    static REDACTOR: std::sync::OnceLock<Option<Redactor>> = std::sync::OnceLock::new();
    REDACTOR
        .get_or_init(|| match Redactor::from_env() {
            Ok(redactor) => Some(redactor),
            Err(error) => {
                tracing::error!(%error, "secrets cannot be redacted");
                None
            }
        })
        .as_ref()
}

/// `bytes` with every secret this process knows of redacted.
pub fn redacted(bytes: &[u8]) -> Cow<'_, [u8]> {
    process_redactor().map_or(Cow::Borrowed(bytes), |redactor| redactor.redact(bytes))
}

/// `text` with every secret this process knows of redacted: what a renderer escapes (Markdown,
/// a workflow command) goes through this first, since an escaped secret (`ghp\_…`) no longer
/// has the shape the redaction of the written file looks for.
pub fn redacted_text(text: &str) -> Cow<'_, str> {
    process_redactor().map_or(Cow::Borrowed(text), |redactor| redactor.redact_str(text))
}

/// What can fail while preparing to redact.
#[derive(Debug, thiserror::Error)]
pub enum SecretsError {
    #[error("the built-in {what} pattern does not compile")]
    Pattern {
        what: &'static str,
        #[source]
        source: regex::Error,
    },
}

/// Where a secret was found, and what it is, never the secret itself: for refusing to write a
/// patch that carries one, and saying where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretFinding {
    /// The variable's name (`GITHUB_TOKEN`) or the shape's (`github-token`).
    pub what: String,
    /// Byte offset of the secret in the input.
    pub offset: usize,
    /// Line of the secret in the input, from 1.
    pub line: usize,
}

impl fmt::Display for SecretFinding {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "{} on line {} (byte {})",
            self.what, self.line, self.offset
        )
    }
}

/// A stretch of input holding a secret. It starts where its match starts, so that a stream is
/// never cut between a header's name and its credential; the `shown` bytes at its start (the name
/// and scheme of a header) are written as they are, the rest is replaced by the marker of `kind`
/// (an index into the redactor's names). `open` marks a private key block whose end marker was
/// not in the input, so the span runs to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: usize,
    end: usize,
    shown: usize,
    kind: usize,
    open: bool,
}

/// One secret value of the environment (or an encoding of it) to look for.
struct Needle {
    finder: Finder<'static>,
    kind: usize,
}

/// Redacts secrets from bytes; built once per run from the environment.
pub struct Redactor {
    /// The names markers show, by kind: the secret variables (sorted), then the shapes.
    names: Vec<String>,
    /// `[REDACTED:<name>]` by kind.
    markers: Vec<Vec<u8>>,
    variable_count: usize,
    /// Longest first, so that of two values starting at one place the longer names the marker.
    needles: Vec<Needle>,
    /// The longest needle with no line break in it, and the longest with one (0 when none).
    longest_single_line: usize,
    longest_multi_line: usize,
    shapes: Shapes,
}

impl fmt::Debug for Redactor {
    /// Names only: the values are the secrets.
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Redactor")
            .field("secret_variables", &self.secret_variable_names())
            .field("needles", &self.needles.len())
            .finish_non_exhaustive()
    }
}

impl Redactor {
    /// A redactor for the variables of this process's environment.
    pub fn from_env() -> Result<Self, SecretsError> {
        use std::os::unix::ffi::OsStringExt;
        Self::from_variables(
            std::env::vars_os()
                .map(|(name, value)| (name.to_string_lossy().into_owned(), value.into_vec())),
        )
    }

    fn from_variables(
        environment: impl IntoIterator<Item = (String, Vec<u8>)>,
    ) -> Result<Self, SecretsError> {
        let mut variables: Vec<(String, Vec<u8>)> = environment
            .into_iter()
            .filter(|(name, _)| is_secret_name(name))
            .filter_map(|(name, value)| {
                environment::secret_value(&value).map(|secret| (name, secret.to_vec()))
            })
            .collect();
        variables.sort();
        let mut values: Vec<(Vec<u8>, usize)> = Vec::new();
        for (kind, (_, value)) in variables.iter().enumerate() {
            values.extend(environment::url_encoded(value).map(|encoded| (encoded, kind)));
            // As JSON, XML and Markdown write it: a secret escaped into a report is still the
            // secret.
            for escaped in [
                environment::json_escaped(value),
                environment::xml_escaped(value),
                environment::markdown_escaped(value),
            ]
            .into_iter()
            .flatten()
            {
                values.push((escaped, kind));
            }
            values.push((value.clone(), kind));
        }
        // Longest first; one needle per distinct value, named after the first variable holding it.
        values.sort_by(|(a, a_kind), (b, b_kind)| {
            (Reverse(a.len()), a_kind, a).cmp(&(Reverse(b.len()), b_kind, b))
        });
        let mut needles: Vec<Needle> = Vec::new();
        let (mut longest_single_line, mut longest_multi_line) = (0, 0);
        for (value, kind) in &values {
            if needles
                .iter()
                .any(|needle| needle.finder.needle() == value.as_slice())
            {
                continue;
            }
            let longest = if value.contains(&b'\n') {
                &mut longest_multi_line
            } else {
                &mut longest_single_line
            };
            *longest = (*longest).max(value.len());
            needles.push(Needle {
                finder: Finder::new(value).into_owned(),
                kind: *kind,
            });
        }
        let names: Vec<String> = variables
            .into_iter()
            .map(|(name, _)| name)
            .chain(shapes::names().map(String::from))
            .collect();
        let markers = names
            .iter()
            .map(|name| format!("[REDACTED:{name}]").into_bytes())
            .collect();
        Ok(Self {
            variable_count: names.len() - shapes::names().count(),
            names,
            markers,
            needles,
            longest_single_line,
            longest_multi_line,
            shapes: Shapes::new()?,
        })
    }

    /// The names of the variables whose values are redacted, sorted.
    pub fn secret_variable_names(&self) -> Vec<&str> {
        self.names[..self.variable_count]
            .iter()
            .map(String::as_str)
            .collect()
    }

    /// `input` with every secret replaced by its marker; borrowed when there is none.
    pub fn redact<'a>(&self, input: &'a [u8]) -> Cow<'a, [u8]> {
        let spans = self.spans(input, 0);
        if spans.is_empty() {
            return Cow::Borrowed(input);
        }
        let mut output = Vec::with_capacity(input.len());
        let Ok(()) = self.for_each_piece(input, 0, input.len(), &spans, |piece| {
            output.extend_from_slice(piece);
            Ok::<(), Infallible>(())
        });
        Cow::Owned(output)
    }

    /// [`Self::redact`] for text. Markers replace whole secrets, so valid UTF-8 stays valid unless
    /// an environment value is itself not UTF-8; then the result is converted lossily.
    pub fn redact_str<'a>(&self, input: &'a str) -> Cow<'a, str> {
        match self.redact(input.as_bytes()) {
            Cow::Borrowed(_) => Cow::Borrowed(input),
            Cow::Owned(bytes) => Cow::Owned(
                String::from_utf8(bytes)
                    .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned()),
            ),
        }
    }

    /// Every secret in `input`: what it is, its byte offset and its line; merged as in
    /// [`Self::redact`], one finding per marker it would write.
    pub fn findings(&self, input: &[u8]) -> Vec<SecretFinding> {
        let mut line = 1;
        let mut counted = 0;
        self.spans(input, 0)
            .into_iter()
            .map(|span| {
                let offset = span.start + span.shown;
                line += memchr::memchr_iter(b'\n', &input[counted..offset]).count();
                counted = offset;
                SecretFinding {
                    what: self.names[span.kind].clone(),
                    offset,
                    line,
                }
            })
            .collect()
    }

    /// The secrets in `haystack` that start at or after `from`, merged where they overlap, in
    /// order. The bytes before `from` are context (a word boundary looks one byte back).
    fn spans(&self, haystack: &[u8], from: usize) -> Vec<Span> {
        let mut found = Vec::new();
        for needle in &self.needles {
            let length = needle.finder.needle().len();
            found.extend(needle.finder.find_iter(&haystack[from..]).map(|at| Span {
                start: from + at,
                end: from + at + length,
                shown: 0,
                kind: needle.kind,
                open: false,
            }));
        }
        self.shapes
            .find(haystack, from, self.variable_count, &mut found);
        merge(found)
    }

    /// Calls `emit` with the pieces of `haystack[from..to]` redacted: the bytes between spans and
    /// the spans' markers. The spans lie within `from..to`, except that an open one may run on.
    fn for_each_piece<E>(
        &self,
        haystack: &[u8],
        from: usize,
        to: usize,
        spans: &[Span],
        mut emit: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut at = from;
        for span in spans {
            emit(&haystack[at..span.start + span.shown])?;
            emit(&self.markers[span.kind])?;
            at = span.end.min(to);
        }
        emit(&haystack[at..to])
    }
}

/// Sorts spans and merges those that overlap (spans that only touch stay apart). A merged span
/// keeps the kind of the first (longest at one start, lowest kind on a tie), and shows no byte
/// that another one covers.
fn merge(mut spans: Vec<Span>) -> Vec<Span> {
    spans.sort_unstable_by_key(|span| (span.start, Reverse(span.end), span.kind));
    let mut merged: Vec<Span> = Vec::with_capacity(spans.len());
    for span in spans {
        match merged.last_mut() {
            Some(last) if span.start < last.end => {
                last.end = last.end.max(span.end);
                last.shown = last.shown.min(span.start - last.start);
                last.open |= span.open;
            }
            _ => merged.push(span),
        }
    }
    merged
}

#[cfg(test)]
#[path = "secrets_tests.rs"]
mod tests;
