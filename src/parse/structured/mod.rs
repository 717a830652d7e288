//! Structured readers: tools' machine-readable output read as data, not as lines. cargo/rustc
//! `--message-format=json` (JSON lines, read as they stream) and a linter's TAP report (its YAML
//! blocks read as data as they stream); whole documents, spooled to a temporary file and read at
//! the end: ESLint `-f json`; stylelint's, markdownlint's, biome's, ruff's, pylint's, bandit's,
//! ShellCheck's, hadolint's, gcc's and pyright's JSON; mypy's and jest's (and vitest's) JSON; SARIF 2.1.0, JUnit
//! XML, and the formats many tools share: Checkstyle XML, Code Climate JSON (GitLab Code
//! Quality) and reviewdog's rdjson.

mod bandit_json;
mod biome_json;
mod cargo_json;
mod checkstyle;
mod codeclimate;
mod eslint_json;
mod gcc_json;
mod jest_json;
mod junit;
mod lint_tap;
pub(crate) use lint_tap::yaml;
mod markdownlint_json;
mod mypy_json;
mod pylint_json;
mod pyright_json;
mod rdjson;
mod ruff_json;
mod sarif;
mod shellcheck_json;
mod stylelint_json;

use std::io::{BufRead, Seek, Write};
use std::sync::{LazyLock, OnceLock};

pub use super::Found;
use super::{Findings, LineOutcome, ParseContext, ParseSession, Parser, RuleHelp};

/// The largest document read (spooled to a temporary file, not held in memory); a larger one is
/// not read, and says so.
const MAX_DOCUMENT_BYTES: u64 = 1 << 30;

/// The built-in structured readers: the two that read as the output streams, and one per
/// [`DOCUMENTS`] entry.
pub fn readers() -> Vec<Box<dyn Parser>> {
    let streaming: [Box<dyn Parser>; 2] =
        [Box::new(cargo_json::CargoJson), Box::new(lint_tap::LintTap)];
    streaming
        .into_iter()
        .chain(DOCUMENTS.iter().map(|document| {
            Box::new(DocumentParser {
                document,
                rule_help: OnceLock::new(),
            }) as Box<dyn Parser>
        }))
        .collect()
}

/// A kind of document a structured reader reads whole.
struct Document {
    name: &'static str,
    category: Option<&'static str>,
    description: &'static str,
    command: &'static str,
    reader: &'static dyn DocumentReader,
    /// The built-in definition (`gate-parsers/<name>.toml`) whose rule links the tool's codes
    /// share.
    rule_help_of: Option<&'static str>,
}

/// The documents read whole, in the order the catalogue lists them.
const DOCUMENTS: &[Document] = &[
    Document {
        name: "eslint-json",
        category: Some("lint"),
        description: "ESLint -f json (structured)",
        command: "npx eslint -f json .",
        reader: &eslint_json::EslintJson,
        rule_help_of: Some("eslint"),
    },
    Document {
        name: "stylelint-json",
        category: Some("lint"),
        description: "stylelint -f json (structured)",
        command: "stylelint -f json '**/*.css' 2>&1",
        reader: &stylelint_json::StylelintJson,
        rule_help_of: Some("stylelint"),
    },
    Document {
        name: "markdownlint-json",
        category: Some("lint"),
        description: "markdownlint --json, markdownlint-cli2's JSON formatter (structured)",
        command: "markdownlint --json . 2>&1",
        reader: &markdownlint_json::MarkdownlintJson,
        rule_help_of: None,
    },
    Document {
        name: "biome-json",
        category: Some("lint"),
        description: "biome --reporter=json or json-pretty (structured)",
        command: "biome check --reporter=json . 2>/dev/null",
        reader: &biome_json::BiomeJson,
        rule_help_of: None,
    },
    Document {
        name: "jest-json",
        category: Some("tests"),
        description: "jest --json, vitest run --reporter=json (structured)",
        command: "npx jest --json 2>/dev/null",
        reader: &jest_json::JestJson,
        rule_help_of: None,
    },
    Document {
        name: "junit",
        category: Some("tests"),
        description: "JUnit XML (structured)",
        command: "python -m pytest --junitxml=report.xml >/dev/null; cat report.xml",
        reader: &junit::Junit,
        rule_help_of: None,
    },
    Document {
        name: "ruff-json",
        category: Some("lint"),
        description: "ruff --output-format=json or json-lines (structured)",
        command: "ruff check --output-format=json .",
        reader: &ruff_json::RuffJson,
        rule_help_of: Some("ruff"),
    },
    Document {
        name: "shellcheck-json",
        category: Some("lint"),
        description: "ShellCheck -f json / json1, and hadolint -f json (structured)",
        command: "shellcheck -f json1 *.sh",
        reader: &shellcheck_json::ShellcheckJson,
        rule_help_of: None,
    },
    Document {
        name: "bandit-json",
        category: Some("security"),
        description: "bandit -f json (structured)",
        command: "bandit -f json -r .",
        reader: &bandit_json::BanditJson,
        rule_help_of: None,
    },
    Document {
        name: "mypy-json",
        category: Some("types"),
        description: "mypy -O json (structured, one object a line)",
        command: "mypy -O json .",
        reader: &mypy_json::MypyJson,
        rule_help_of: Some("mypy"),
    },
    Document {
        name: "pylint-json",
        category: Some("lint"),
        description: "pylint --output-format=json or json2 (structured)",
        command: "pylint --output-format=json2 .",
        reader: &pylint_json::PylintJson,
        rule_help_of: None,
    },
    Document {
        name: "gcc-json",
        category: Some("build"),
        description: "gcc -fdiagnostics-format=json (structured, an array a translation unit)",
        command: "gcc -fdiagnostics-format=json -Wall -c src/*.c",
        reader: &gcc_json::GccJson,
        rule_help_of: None,
    },
    Document {
        name: "pyright-json",
        category: Some("types"),
        description: "pyright --outputjson (structured)",
        command: "pyright --outputjson",
        reader: &pyright_json::PyrightJson,
        rule_help_of: None,
    },
    Document {
        name: "checkstyle",
        category: None,
        description: "Checkstyle XML (structured; eslint, shellcheck, hadolint, stylelint…)",
        command: "shellcheck -f checkstyle *.sh",
        reader: &checkstyle::Checkstyle,
        rule_help_of: None,
    },
    Document {
        name: "codeclimate",
        category: None,
        description: "Code Climate JSON / GitLab Code Quality (structured)",
        command: "ruff check --output-format=gitlab .",
        reader: &codeclimate::CodeClimate,
        rule_help_of: None,
    },
    Document {
        name: "rdjson",
        category: None,
        description: "reviewdog rdjson / rdjsonl (structured)",
        command: "ruff check --output-format=rdjson .",
        reader: &rdjson::Rdjson,
        rule_help_of: None,
    },
    Document {
        name: "sarif",
        category: None,
        description: "SARIF 2.1.0 (structured)",
        command: "ruff check --output-format=sarif .",
        reader: &sarif::Sarif,
        rule_help_of: None,
    },
];

/// A parser that reads the whole output as one document.
struct DocumentParser {
    document: &'static Document,
    /// The rule documentation of the tool whose output it reads, compiled when first asked.
    rule_help: OnceLock<RuleHelp>,
}

impl std::fmt::Debug for DocumentParser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DocumentParser")
            .field("name", &self.document.name)
            .finish()
    }
}

impl Parser for DocumentParser {
    fn name(&self) -> &str {
        self.document.name
    }

    fn category(&self) -> Option<&str> {
        self.document.category
    }

    fn description(&self) -> &str {
        self.document.description
    }

    fn command(&self) -> &str {
        self.document.command
    }

    fn reads_documents(&self) -> bool {
        true
    }

    fn rule_help(&self) -> Option<&RuleHelp> {
        let of = self.document.rule_help_of?;
        Some(
            self.rule_help
                .get_or_init(|| super::built_in::built_in_rule_help(of)),
        )
    }

    fn session<'a>(&'a self, context: &'a ParseContext) -> Box<dyn ParseSession + 'a> {
        Box::new(DocumentSession::new(
            self.document.name,
            self.document.reader,
            context,
        ))
    }
}

/// A whole document, read when the output ends.
trait DocumentReader: Send + Sync {
    /// Reads the document into the sink; false when it is not this reader's kind of document.
    fn read(&self, document: &mut dyn BufRead, sink: &mut Sink<'_>) -> bool;
}

/// What a reader emits into: paths are resolved against the target here.
pub struct Sink<'a> {
    tool: &'a str,
    context: &'a ParseContext,
    findings: &'a mut Findings,
}

impl Sink<'_> {
    /// Keeps `found`, its message cut to its first line.
    pub fn push(&mut self, mut found: Found) {
        found.message = what_it_says(&found.message);
        self.findings.add(self.tool, self.context, found);
    }

    pub fn findings(&mut self) -> &mut Findings {
        self.findings
    }
}

/// A session that spools the output to a temporary file and reads it as one document at the
/// end, streaming: memory follows what is found, not the document's size.
struct DocumentSession<'a> {
    tool: &'a str,
    reader: &'a dyn DocumentReader,
    context: &'a ParseContext,
    state: Spool,
}

#[derive(Debug)]
enum Spool {
    /// Only whitespace (or a BOM) so far.
    Waiting,
    Writing {
        file: std::fs::File,
        written: u64,
    },
    /// Not a document: it did not start with `{`, `[` or `<`.
    NotADocument,
    TooLarge,
    Failed(String),
    /// Read at the end; whether it was this reader's kind of document.
    Read(bool),
}

impl<'a> DocumentSession<'a> {
    fn new(tool: &'a str, reader: &'a dyn DocumentReader, context: &'a ParseContext) -> Self {
        Self {
            tool,
            reader,
            context,
            state: Spool::Waiting,
        }
    }

    fn push(&mut self, mut chunk: &[u8]) {
        if let Spool::Waiting = self.state {
            let start = chunk
                .iter()
                .position(|b| !b.is_ascii_whitespace() && !matches!(b, 0xEF | 0xBB | 0xBF));
            let Some(start) = start else {
                return;
            };
            chunk = &chunk[start..];
            self.state = if matches!(chunk[0], b'{' | b'[' | b'<') {
                match tempfile::tempfile() {
                    Ok(file) => Spool::Writing { file, written: 0 },
                    Err(error) => Spool::Failed(error.to_string()),
                }
            } else {
                Spool::NotADocument
            };
        }
        if let Spool::Writing { file, written } = &mut self.state {
            *written += chunk.len() as u64;
            if *written > MAX_DOCUMENT_BYTES {
                self.state = Spool::TooLarge;
            } else if let Err(error) = file.write_all(chunk) {
                self.state = Spool::Failed(error.to_string());
            }
        }
    }
}

impl ParseSession for DocumentSession<'_> {
    fn line(&mut self, line: &str, _findings: &mut Findings) -> LineOutcome {
        self.push(line.as_bytes());
        self.push(b"\n");
        LineOutcome::Unmatched
    }

    fn bytes(&mut self, chunk: &[u8], _findings: &mut Findings) {
        self.push(chunk);
    }

    fn finish(&mut self, findings: &mut Findings) {
        let state = std::mem::replace(&mut self.state, Spool::Read(false));
        let mut file = match state {
            Spool::Writing { file, .. } => file,
            Spool::TooLarge => {
                tracing::warn!(
                    reader = self.tool,
                    "the document is larger than {MAX_DOCUMENT_BYTES} bytes and was not read"
                );
                return;
            }
            Spool::Failed(error) => {
                tracing::warn!(reader = self.tool, %error, "could not spool the document");
                return;
            }
            _ => return,
        };
        if file.rewind().is_err() {
            return;
        }
        let mut sink = Sink {
            tool: self.tool,
            context: self.context,
            findings,
        };
        let recognized = self
            .reader
            .read(&mut std::io::BufReader::new(&mut file), &mut sink);
        self.state = Spool::Read(recognized);
    }

    fn explained_lines(&self, lines: u64) -> u64 {
        if matches!(self.state, Spool::Read(true)) {
            lines
        } else {
            0
        }
    }
}

/// A message's first line that says something. A parse error's message may start with its
/// location and a code frame before the words (hadolint's `file:5:30:`, `  |`, `5 | RUN …`,
/// `  |   ^`, `missing whitespace`); XML attributes hold it with its newlines made spaces.
pub fn what_it_says(text: &str) -> String {
    static FRAMED: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r"^\S[^\n]*?:\d+(?::\d+)?:\s+\|.*[\^~]+[ \t]*\n?\s*(?P<words>\S.*)$")
            .expect("a valid regex")
    });
    let text = text.trim_start();
    let flat = text.replace('\n', " ");
    if let Some(captures) = FRAMED.captures(&flat) {
        return captures["words"].trim().to_string();
    }
    text.lines().next().unwrap_or("").trim().to_string()
}

/// A number from JSON as a line or column.
fn position(value: &serde_json::Value) -> Option<u32> {
    value.as_u64().and_then(|n| u32::try_from(n).ok())
}
