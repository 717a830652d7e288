//! The shapes of well-known credentials (GitHub, GitLab, Slack, AWS, Google, OpenAI and Anthropic,
//! npm; private key blocks; authorization headers), found in any bytes by one regex.

use regex::bytes::Regex;

use super::{SecretsError, Span};

/// No shape's match is longer than this: every pattern's repetitions are bounded to stay under
/// it. A private key block goes further, but only its begin marker is the shape's match.
pub(super) const MAX_SHAPE_LEN: usize = 512;

/// A private key block's end marker is never longer than this.
pub(super) const MAX_END_MARKER_LEN: usize = 128;

/// Which part of a shape's match is the secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Extent {
    /// The whole match.
    Match,
    /// What follows the last space or tab in the match: the credential of a header, not its name
    /// and scheme.
    AfterLastBlank,
    /// The match (a begin marker) through the block's end marker, or to the end of the input when
    /// there is none.
    ThroughEndMarker,
}

/// A credential shape: the name its marker shows, and a pattern with no capturing group.
#[derive(Debug)]
struct Shape {
    name: &'static str,
    pattern: &'static str,
    extent: Extent,
}

/// The shapes, in the order they are tried at one position. None matches a line break, and all
/// but the private key's begin marker start at a word boundary, so `mask_ghp_...` is left alone.
const SHAPES: [Shape; 10] = [
    Shape {
        name: "github-token",
        pattern: r"\bgh[pousr]_[A-Za-z0-9]{36,251}",
        extent: Extent::Match,
    },
    Shape {
        name: "github-token",
        pattern: r"\bgithub_pat_[A-Za-z0-9_]{22,244}",
        extent: Extent::Match,
    },
    Shape {
        name: "gitlab-token",
        pattern: r"\bglpat-[A-Za-z0-9_-]{20,250}",
        extent: Extent::Match,
    },
    Shape {
        name: "slack-token",
        pattern: r"\bxox[abposr]-[A-Za-z0-9-]{10,250}",
        extent: Extent::Match,
    },
    Shape {
        name: "aws-access-key-id",
        pattern: r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
        extent: Extent::Match,
    },
    Shape {
        name: "google-api-key",
        pattern: r"\bAIza[0-9A-Za-z_-]{35}",
        extent: Extent::Match,
    },
    // OpenAI (`sk-`, `sk-proj-`) and Anthropic (`sk-ant-`) keys.
    Shape {
        name: "sk-api-key",
        pattern: r"\bsk-[A-Za-z0-9_-]{20,250}",
        extent: Extent::Match,
    },
    Shape {
        name: "npm-token",
        pattern: r"\bnpm_[A-Za-z0-9]{36}\b",
        extent: Extent::Match,
    },
    Shape {
        name: "private-key",
        pattern: r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----",
        extent: Extent::ThroughEndMarker,
    },
    // `Authorization: Bearer <token>`, `Basic <base64>`, `token <token>`, also quoted as in JSON.
    Shape {
        name: "authorization-header",
        pattern: r#"\b(?i:authorization)["']?[ \t]{0,16}[:=][ \t]{0,16}["']?(?i:bearer|basic|token)[ \t]{1,16}[A-Za-z0-9._~+/=-]{8,400}"#,
        extent: Extent::AfterLastBlank,
    },
];

const END_MARKER: &str = r"-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----";

/// The names the shapes' markers show, in the order of their kinds.
pub(super) fn names() -> impl Iterator<Item = &'static str> {
    SHAPES.iter().map(|shape| shape.name)
}

/// The shapes compiled: one regex with a capturing group per shape, so that a haystack is
/// scanned once, with the regex crate's literal prefilter, whatever the number of shapes.
#[derive(Debug)]
pub(super) struct Shapes {
    any: Regex,
    end_marker: Regex,
}

impl Shapes {
    pub(super) fn new() -> Result<Self, SecretsError> {
        let alternatives: Vec<String> = SHAPES
            .iter()
            .map(|shape| format!("({})", shape.pattern))
            .collect();
        // Unicode off: the haystack is bytes, and `\b` is an ASCII word boundary.
        let any = Regex::new(&format!("(?-u){}", alternatives.join("|"))).map_err(|source| {
            SecretsError::Pattern {
                what: "token shapes",
                source,
            }
        })?;
        let end_marker =
            Regex::new(&format!("(?-u){END_MARKER}")).map_err(|source| SecretsError::Pattern {
                what: "private key end marker",
                source,
            })?;
        Ok(Self { any, end_marker })
    }

    /// Pushes a span for every shape found in `haystack` starting at or after `from`, in order;
    /// the bytes before `from` are context for the word boundary. A shape's span has the kind
    /// `first_kind` plus its index.
    pub(super) fn find(
        &self,
        haystack: &[u8],
        from: usize,
        first_kind: usize,
        out: &mut Vec<Span>,
    ) {
        let mut locations = self.any.capture_locations();
        let mut at = from;
        while let Some(found) = self.any.captures_read_at(&mut locations, haystack, at) {
            let Some(index) = (0..SHAPES.len()).find(|index| locations.get(index + 1).is_some())
            else {
                break;
            };
            let mut span = Span {
                start: found.start(),
                end: found.end(),
                shown: 0,
                kind: first_kind + index,
                open: false,
            };
            match SHAPES[index].extent {
                Extent::Match => {}
                Extent::AfterLastBlank => {
                    let matched = &haystack[span.start..span.end];
                    if let Some(blank) = matched.iter().rposition(|&b| b == b' ' || b == b'\t') {
                        span.shown = blank + 1;
                    }
                }
                Extent::ThroughEndMarker => match self.end_of_block(haystack, span.end) {
                    Some(end) => span.end = end,
                    None => {
                        span.end = haystack.len();
                        span.open = true;
                    }
                },
            }
            out.push(span);
            at = span.end;
        }
    }

    /// Where the first private key end marker at or after `from` ends.
    pub(super) fn end_of_block(&self, haystack: &[u8], from: usize) -> Option<usize> {
        self.end_marker
            .find_at(haystack, from)
            .map(|marker| marker.end())
    }
}

#[cfg(test)]
#[path = "shapes_tests.rs"]
mod tests;
