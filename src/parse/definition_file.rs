//! The TOML tables of a `regex` parser definition, as serde reads them (unknown keys are
//! errors); `super` compiles them.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::parse::regex_parser::PatternKind;
use crate::parse::rule_help::RuleHelpFile;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ParserFile {
    pub(super) name: String,
    #[serde(default)]
    pub(super) description: String,
    /// The category of this tool's findings when the check does not name one.
    pub(super) category: Option<String>,
    /// The command line this parser expects the tool to be run with.
    #[serde(default)]
    pub(super) command: String,
    #[serde(default)]
    pub(super) pattern: Vec<PatternFile>,
    #[serde(default)]
    pub(super) skip: Vec<RegexFile>,
    #[serde(default)]
    pub(super) summary: Vec<RegexFile>,
    /// The tool's own words for severities: `E = "error"`, `C = "warning"`.
    #[serde(default)]
    pub(super) severity: BTreeMap<String, String>,
    /// Categories by code: `{ code = 'TS\d+', category = "types" }`; first match wins.
    #[serde(default)]
    pub(super) category_rule: Vec<CategoryRuleFile>,
    /// Where the tool documents its codes: `{ code = 'SC\d{4}', uri = "https://…/{code}" }`;
    /// first match wins.
    #[serde(default)]
    pub(super) rule_help: Vec<RuleHelpFile>,
    /// A parser of shapes many tools share (`generic`): `auto` ranks it below the others.
    #[serde(default)]
    pub(super) fallback: bool,
    /// A finding printed again (same file, line, column, severity, code and message) counts
    /// once, and the tool's own counts are taken to include the repeats (cargo's).
    #[serde(default)]
    pub(super) deduplicate: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CategoryRuleFile {
    /// A regex matched against the whole code.
    pub(super) code: String,
    pub(super) category: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ContinuationFile {
    pub(super) regex: String,
    /// Prepended to a captured `code` (`clippy::` before a lint name read from a URL).
    #[serde(default)]
    pub(super) code_prefix: String,
    /// Only a line naming the entry's own file and line belongs to it (mypy's notes).
    #[serde(default)]
    pub(super) same_place: bool,
    /// Its message continues the entry's message, after a space (a message wrapped by the tool).
    #[serde(default)]
    pub(super) wraps: bool,
    /// A line it takes makes the entry no finding (node's TAP `type: 'suite'`: the "not ok" of a
    /// suite whose tests failed, each a finding of its own).
    #[serde(default)]
    pub(super) drops: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PatternFile {
    pub(super) regex: String,
    #[serde(default)]
    pub(super) kind: PatternKind,
    /// Severity when the pattern has no `severity` group.
    pub(super) severity: Option<String>,
    /// Category for the findings of this pattern.
    pub(super) category: Option<String>,
    /// Message when the pattern has no `message` group.
    pub(super) message: Option<String>,
    /// Code when the pattern has no `code` group (`would-reformat`).
    pub(super) code: Option<String>,
    /// Lines that continue a multi-line entry started by this pattern.
    #[serde(default)]
    pub(super) continuation: Vec<ContinuationFile>,
    /// The line that ends a multi-line entry (it belongs to the entry).
    pub(super) end: Option<String>,
    /// Frames outside the user's code (installed packages, standard libraries, the runtime) give
    /// no place: the next frame inside the repository does.
    #[serde(default)]
    pub(super) user_frames: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RegexFile {
    pub(super) regex: String,
}
