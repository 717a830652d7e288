//! Structured readers: tools' machine-readable output read as data, not as lines. cargo/rustc
//! `--message-format=json` (JSON lines, read as they stream), ESLint `-f json`, SARIF 2.1.0 and
//! JUnit XML (whole documents, held up to a bound).

mod cargo_json;
mod eslint_json;
mod junit;
mod sarif;

use super::{Findings, LineOutcome, ParseContext, ParseSession, Parser, resolve_path};
use crate::model::{Diagnostic, Severity};

/// The largest document held in memory; a larger one is not read (and says so).
const MAX_DOCUMENT_BYTES: usize = 256 << 20;

/// The built-in structured readers.
pub fn readers() -> Vec<Box<dyn Parser>> {
    vec![
        Box::new(cargo_json::CargoJson),
        Box::new(DocumentParser {
            name: "eslint-json",
            category: Some("lint"),
            description: "ESLint -f json (structured)",
            command: "npx eslint -f json .",
            reader: &eslint_json::EslintJson,
        }),
        Box::new(DocumentParser {
            name: "junit",
            category: Some("tests"),
            description: "JUnit XML (structured)",
            command: "python -m pytest --junitxml=/dev/stdout -q >/dev/null",
            reader: &junit::Junit,
        }),
        Box::new(DocumentParser {
            name: "sarif",
            category: None,
            description: "SARIF 2.1.0 (structured)",
            command: "ruff check --output-format=sarif .",
            reader: &sarif::Sarif,
        }),
    ]
}

/// A parser that reads the whole output as one document.
struct DocumentParser {
    name: &'static str,
    category: Option<&'static str>,
    description: &'static str,
    command: &'static str,
    reader: &'static dyn DocumentReader,
}

impl std::fmt::Debug for DocumentParser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DocumentParser")
            .field("name", &self.name)
            .finish()
    }
}

impl Parser for DocumentParser {
    fn name(&self) -> &str {
        self.name
    }

    fn category(&self) -> Option<&str> {
        self.category
    }

    fn description(&self) -> &str {
        self.description
    }

    fn command(&self) -> &str {
        self.command
    }

    fn reads_documents(&self) -> bool {
        true
    }

    fn session<'a>(&'a self, context: &'a ParseContext) -> Box<dyn ParseSession + 'a> {
        Box::new(DocumentSession::new(self.name, self.reader, context))
    }
}

/// A whole document, read when the output ends.
trait DocumentReader: Send + Sync {
    /// Reads the document into `findings`; false when it is not this reader's kind of document.
    fn read(&self, document: &[u8], sink: &mut Sink<'_>) -> bool;
}

/// What a reader emits into: paths are resolved against the target here.
pub struct Sink<'a> {
    tool: &'a str,
    context: &'a ParseContext,
    findings: &'a mut Findings,
}

/// One finding as a reader sees it.
#[derive(Debug, Default)]
pub struct Found {
    pub file: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub end_line: Option<u32>,
    pub end_column: Option<u32>,
    pub severity: Option<Severity>,
    pub code: Option<String>,
    pub message: String,
}

impl Sink<'_> {
    pub fn push(&mut self, found: Found) {
        let severity = found.severity.unwrap_or(Severity::Error);
        if !self.findings.accepts(severity) {
            self.findings.count(severity, None, found.code.is_some());
            return;
        }
        let resolved = found
            .file
            .as_deref()
            .map(|raw| resolve_path(raw, &self.context.target, &self.context.cwd_relative));
        let file = resolved.as_ref().map(|r| r.path.clone());
        let message = found
            .message
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
        self.findings.push(Diagnostic {
            fingerprint: Diagnostic::compute_fingerprint(
                self.tool,
                found.code.as_deref(),
                file.as_deref(),
                &message,
            ),
            outside_target: resolved.is_some_and(|r| r.outside_target),
            file,
            line: found.line,
            column: found.column,
            end_line: found.end_line,
            end_column: found.end_column,
            severity,
            code: found.code,
            message,
            category: None,
            body: None,
        });
    }

    pub fn findings(&mut self) -> &mut Findings {
        self.findings
    }
}

/// A session that collects the output (bounded) and reads it as one document at the end.
struct DocumentSession<'a> {
    tool: &'a str,
    reader: &'a dyn DocumentReader,
    context: &'a ParseContext,
    buffer: Vec<u8>,
    too_large: bool,
    not_a_document: bool,
    recognized: bool,
}

impl<'a> DocumentSession<'a> {
    fn new(tool: &'a str, reader: &'a dyn DocumentReader, context: &'a ParseContext) -> Self {
        Self {
            tool,
            reader,
            context,
            buffer: Vec::new(),
            too_large: false,
            not_a_document: false,
            recognized: false,
        }
    }
}

impl DocumentSession<'_> {
    fn push(&mut self, chunk: &[u8]) {
        if self.not_a_document {
            return;
        }
        // A document starts with `{`, `[` or `<`: anything else is not read (nor held).
        if self.buffer.iter().all(u8::is_ascii_whitespace)
            && let Some(first) = chunk
                .iter()
                .find(|b| !b.is_ascii_whitespace() && !matches!(b, 0xEF | 0xBB | 0xBF))
            && !matches!(first, b'{' | b'[' | b'<')
        {
            self.not_a_document = true;
            self.buffer = Vec::new();
            return;
        }
        if self.too_large || self.buffer.len() + chunk.len() > MAX_DOCUMENT_BYTES {
            self.too_large = true;
            return;
        }
        self.buffer.extend_from_slice(chunk);
    }
}

impl ParseSession for DocumentSession<'_> {
    fn line(&mut self, line: &str, _findings: &mut Findings) -> LineOutcome {
        self.push(line.as_bytes());
        self.push(b"\n");
        LineOutcome::Unmatched
    }

    fn bytes(&mut self, chunk: &[u8]) {
        self.push(chunk);
    }

    fn finish(&mut self, findings: &mut Findings) {
        if self.not_a_document {
            return;
        }
        if self.too_large {
            tracing::warn!(
                reader = self.tool,
                "the document is larger than {MAX_DOCUMENT_BYTES} bytes and was not read"
            );
            return;
        }
        let document = std::mem::take(&mut self.buffer);
        let mut sink = Sink {
            tool: self.tool,
            context: self.context,
            findings,
        };
        self.recognized = self.reader.read(&document, &mut sink);
    }

    fn recognized_whole(&self) -> bool {
        self.recognized
    }
}

/// A number from JSON as a line or column.
fn position(value: &serde_json::Value) -> Option<u32> {
    value.as_u64().and_then(|n| u32::try_from(n).ok())
}
