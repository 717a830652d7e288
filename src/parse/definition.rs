//! The TOML form of a `regex` parser in `gate-parsers/`, and its compilation. Every regex is
//! compiled and every group name checked here, so a bad definition fails before anything runs.

use regex::Regex;
use serde::Deserialize;

use super::regex_parser::{CompiledPattern, PatternKind, RegexParser};
use crate::config::ConfigError;
use crate::model::Severity;

/// Groups a finding pattern may capture.
const FINDING_GROUPS: &[&str] = &[
    "file",
    "line",
    "column",
    "end_line",
    "end_column",
    "severity",
    "code",
    "message",
    "category",
];

/// Groups a summary pattern may capture.
const SUMMARY_GROUPS: &[&str] = &[
    "errors",
    "warnings",
    "duplicates",
    "passed",
    "failed",
    "skipped",
];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ParserFile {
    name: String,
    #[serde(default)]
    description: String,
    /// The category of this tool's findings when the check does not name one.
    category: Option<String>,
    /// The command line this parser expects the tool to be run with.
    #[serde(default)]
    command: String,
    #[serde(default)]
    pattern: Vec<PatternFile>,
    #[serde(default)]
    skip: Vec<RegexFile>,
    #[serde(default)]
    summary: Vec<RegexFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PatternFile {
    regex: String,
    #[serde(default)]
    kind: PatternKind,
    /// Severity when the pattern has no `severity` group.
    severity: Option<String>,
    /// Category for the findings of this pattern.
    category: Option<String>,
    /// Message when the pattern has no `message` group.
    message: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RegexFile {
    regex: String,
}

/// Reads and compiles one parser definition. `origin` names the file in errors.
pub fn compile(origin: &str, text: &str) -> Result<RegexParser, ConfigError> {
    let deserializer = toml::de::Deserializer::parse(text)
        .map_err(|e| ConfigError::invalid_at(origin, text, e.span(), "(syntax)", e.message()))?;
    let file: ParserFile = serde_path_to_error::deserialize(deserializer).map_err(|error| {
        let key = error.path().to_string();
        let inner = error.into_inner();
        ConfigError::invalid_at(origin, text, inner.span(), key, inner.message())
    })?;
    let invalid =
        |key: String, reason: String| ConfigError::invalid_at(origin, "", None, key, reason);

    if file.name.trim().is_empty() {
        return Err(invalid("name".into(), "must not be empty".into()));
    }
    let patterns = file
        .pattern
        .iter()
        .enumerate()
        .map(|(index, pattern)| {
            let key = format!("pattern[{index}].regex");
            let regex = compile_regex(&pattern.regex, FINDING_GROUPS)
                .map_err(|reason| invalid(key.clone(), reason))?;
            let has = |group: &str| regex.capture_names().flatten().any(|name| name == group);
            match pattern.kind {
                PatternKind::Finding if !has("message") && pattern.message.is_none() => {
                    return Err(invalid(
                        key,
                        "needs a (?P<message>…) group or a fixed `message`".into(),
                    ));
                }
                PatternKind::Location if !(has("code") && has("file")) => {
                    return Err(invalid(
                        key,
                        "a location pattern needs (?P<code>…) and (?P<file>…) groups".into(),
                    ));
                }
                _ => {}
            }
            Ok(CompiledPattern {
                regex,
                kind: pattern.kind,
                severity: pattern.severity.as_deref().map(Severity::from_label),
                category: pattern.category.clone(),
                message: pattern.message.clone(),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let compile_list = |list: &[RegexFile], table: &str, groups: &[&str]| {
        list.iter()
            .enumerate()
            .map(|(index, entry)| {
                compile_regex(&entry.regex, groups)
                    .map_err(|reason| invalid(format!("{table}[{index}].regex"), reason))
            })
            .collect::<Result<Vec<_>, _>>()
    };
    let skips = compile_list(&file.skip, "skip", &[])?;
    let summaries = compile_list(&file.summary, "summary", SUMMARY_GROUPS)?;
    if !summaries.is_empty() && summaries.iter().all(|r| r.captures_len() == 1) {
        return Err(invalid(
            "summary".into(),
            format!(
                "summary patterns must capture at least one of: {}",
                SUMMARY_GROUPS.join(", ")
            ),
        ));
    }
    Ok(RegexParser {
        name: file.name,
        description: file.description,
        category: file.category,
        command: file.command,
        patterns,
        skips,
        summaries,
    })
}

fn compile_regex(pattern: &str, allowed_groups: &[&str]) -> Result<Regex, String> {
    let regex = Regex::new(pattern).map_err(|error| {
        format!(
            "invalid regex /{pattern}/: {}",
            crate::config::one_line(&error.to_string())
        )
    })?;
    if let Some(unknown) = regex
        .capture_names()
        .flatten()
        .find(|name| !allowed_groups.contains(name))
    {
        return Err(if allowed_groups.is_empty() {
            format!("unknown group name \"{unknown}\": a skip pattern takes no named groups")
        } else {
            format!(
                "unknown group name \"{unknown}\"; expected one of: {}",
                allowed_groups.join(", ")
            )
        });
    }
    Ok(regex)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_definitions_name_the_key() {
        let table = [
            (
                "name = \"x\"\n[[pattern]]\nregex = '('\n",
                "pattern[0].regex",
                "invalid regex",
            ),
            (
                "name = \"x\"\n[[pattern]]\nregex = '(?P<filename>.*)'\n",
                "pattern[0].regex",
                "unknown group name \"filename\"",
            ),
            (
                "name = \"x\"\n[[pattern]]\nregex = '(?P<file>.*)'\n",
                "pattern[0].regex",
                "message",
            ),
            (
                "name = \"x\"\n[[pattern]]\nregex = '(?P<file>.*)'\nkind = \"location\"\n",
                "pattern[0].regex",
                "(?P<code>",
            ),
            (
                "name = \"x\"\n[[skip]]\nregex = '(?P<file>a)'\n",
                "skip[0].regex",
                "takes no named",
            ),
            (
                "name = \"x\"\n[[summary]]\nregex = 'Found'\n",
                "summary",
                "at least one",
            ),
            ("name = \"x\"\nbogus = 1\n", "bogus", "unknown field"),
            ("name = \"\"\n", "name", "must not be empty"),
            ("name = \n", "(syntax)", ""),
        ];
        for (text, key, reason) in table {
            let error = compile("p.toml", text).unwrap_err().to_string();
            assert!(error.starts_with("p.toml"), "{error}");
            assert!(error.contains(&format!("{key}:")), "{key} not in {error}");
            assert!(error.contains(reason), "{reason} not in {error}");
        }
    }
}
