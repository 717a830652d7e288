//! The TOML form of a `regex` parser in `gate-parsers/`, and its compilation. Every regex is
//! compiled and every group name checked here, so a bad definition fails before anything runs.

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use super::error::{DefinitionError, invalid};
use super::first_rule::Head;
use super::lazy_regex::LazyRegex;
use super::regex_parser::draft::Groups;
use super::regex_parser::locations::unnamed_location;
use super::regex_parser::{CompiledPattern, Continuation, PatternKind, RegexParser};
use super::rule_help::RuleHelp;
use crate::model::Severity;
use file::{CategoryRuleFile, ContinuationFile, ParserFile, PatternFile, RegexFile};

#[path = "definition_file.rs"]
mod file;

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
    "remaining",
    "warnings",
    "duplicates",
    "passed",
    "failed",
    "skipped",
    "xfailed",
    "deselected",
    "todo",
    "ran",
];

/// Reads and compiles one parser definition. `origin` names the file in errors.
pub fn compile(origin: &str, text: &str) -> Result<RegexParser, DefinitionError> {
    let file = super::error::from_toml::<ParserFile>(origin, text)?;
    if file.name.trim().is_empty() {
        return Err(invalid(origin, "name".into(), "must not be empty".into()));
    }
    let patterns = file
        .pattern
        .iter()
        .enumerate()
        .map(|(index, pattern)| compile_pattern(origin, index, pattern))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(index) = unnamed_location(&patterns) {
        return Err(invalid(
            origin,
            format!("pattern[{index}].regex"),
            "a location pattern without a (?P<code>…) group needs a heading pattern that names \
             the code"
                .into(),
        ));
    }
    let skips = compile_list(origin, &file.skip, "skip", &[])?;
    let summaries = compile_list(origin, &file.summary, "summary", SUMMARY_GROUPS)?;
    check_summaries_capture(origin, &summaries)?;
    let severity_aliases = severity_aliases(origin, &file.severity)?;
    let code_categories = code_categories(origin, &file.category_rule)?;
    let rule_help = RuleHelp::from_definition(&file.rule_help)
        .map_err(|(key, reason)| invalid(origin, key, reason))?;
    Ok(RegexParser {
        rules: OnceLock::new(),
        severity_aliases,
        code_categories,
        rule_help,
        name: file.name,
        description: file.description,
        fallback: file.fallback,
        deduplicate: file.deduplicate,
        category: file.category,
        command: file.command,
        patterns,
        skips,
        summaries,
    })
}

/// Compiles the `[[pattern]]` at `index`: its regex, what its kind needs, its continuation
/// lines and its end line.
fn compile_pattern(
    origin: &str,
    index: usize,
    pattern: &PatternFile,
) -> Result<CompiledPattern, DefinitionError> {
    let regex = compile_regex(&pattern.regex, FINDING_GROUPS)
        .map_err(|reason| invalid(origin, format!("pattern[{index}].regex"), reason))?;
    check_kind(origin, index, pattern, &regex)?;
    let continuations = compile_continuations(origin, index, &pattern.continuation)?;
    let end = pattern
        .end
        .as_deref()
        .map(|end| compile_regex(end, FINDING_GROUPS))
        .transpose()
        .map_err(|reason| invalid(origin, format!("pattern[{index}].end"), reason))?;
    Ok(CompiledPattern {
        groups: Groups::of(&regex),
        regex,
        head: Head::default(),
        end_head: Head::default(),
        kind: pattern.kind,
        severity: pattern.severity.as_deref().map(Severity::from_label),
        category: pattern.category.clone(),
        message: pattern.message.clone(),
        code: pattern.code.clone(),
        continuations,
        end,
        user_frames: pattern.user_frames,
        entry: OnceLock::new(),
    })
}

/// Checks that the `[[pattern]]` at `index` has what its kind needs: a finding a message, a
/// location a file (and a code, or a heading pattern that names the code), a context a file, a
/// heading a code; and that only a finding spans several lines.
fn check_kind(
    origin: &str,
    index: usize,
    pattern: &PatternFile,
    regex: &LazyRegex,
) -> Result<(), DefinitionError> {
    let key = format!("pattern[{index}].regex");
    let has = |group: &str| regex.capture_names().flatten().any(|name| name == group);
    match pattern.kind {
        PatternKind::Finding if !has("message") && pattern.message.is_none() => Err(invalid(
            origin,
            key,
            "needs a (?P<message>…) group or a fixed `message`".into(),
        )),
        PatternKind::Location if !has("file") => Err(invalid(
            origin,
            key,
            "a location pattern needs a (?P<file>…) group (and a (?P<code>…) group, or a \
             heading pattern before it that names the code)"
                .into(),
        )),
        PatternKind::Heading if !has("code") => Err(invalid(
            origin,
            key,
            "a heading pattern needs a (?P<code>…) group".into(),
        )),
        PatternKind::Context if !has("file") => Err(invalid(
            origin,
            key,
            "a context pattern needs a (?P<file>…) group".into(),
        )),
        PatternKind::Context | PatternKind::Heading if pattern.user_frames => Err(invalid(
            origin,
            format!("pattern[{index}].user_frames"),
            "only finding and location patterns take `user_frames`".into(),
        )),
        PatternKind::Location | PatternKind::Context | PatternKind::Heading
            if !pattern.continuation.is_empty() || pattern.end.is_some() =>
        {
            Err(invalid(
                origin,
                format!("pattern[{index}]"),
                "only finding patterns take `continuation` and `end`".into(),
            ))
        }
        _ => Ok(()),
    }
}

/// Compiles the continuation lines of the `[[pattern]]` at `index`.
fn compile_continuations(
    origin: &str,
    index: usize,
    continuations: &[ContinuationFile],
) -> Result<Vec<Continuation>, DefinitionError> {
    continuations
        .iter()
        .enumerate()
        .map(|(inner, continuation)| {
            let regex = compile_regex(&continuation.regex, FINDING_GROUPS).map_err(|reason| {
                invalid(
                    origin,
                    format!("pattern[{index}].continuation[{inner}].regex"),
                    reason,
                )
            })?;
            Ok(Continuation {
                same_place: continuation.same_place,
                wraps: continuation.wraps,
                drops: continuation.drops,
                ..Continuation::new(regex, continuation.code_prefix.clone())
            })
        })
        .collect()
}

/// Compiles the regexes of the `[[skip]]` or `[[summary]]` list named `table`; `groups` are the
/// group names they may capture.
fn compile_list(
    origin: &str,
    list: &[RegexFile],
    table: &str,
    groups: &[&str],
) -> Result<Vec<LazyRegex>, DefinitionError> {
    list.iter()
        .enumerate()
        .map(|(index, entry)| {
            compile_regex(&entry.regex, groups)
                .map_err(|reason| invalid(origin, format!("{table}[{index}].regex"), reason))
        })
        .collect()
}

/// Checks that the summary patterns, when there are any, capture at least one count between
/// them.
fn check_summaries_capture(origin: &str, summaries: &[LazyRegex]) -> Result<(), DefinitionError> {
    if !summaries.is_empty() && summaries.iter().all(|r| r.captures_len() == 1) {
        return Err(invalid(
            origin,
            "summary".into(),
            format!(
                "summary patterns must capture at least one of: {}",
                SUMMARY_GROUPS.join(", ")
            ),
        ));
    }
    Ok(())
}

/// Reads the `[severity]` table: the tool's words (lowercased) and the severities they stand for.
fn severity_aliases(
    origin: &str,
    table: &BTreeMap<String, String>,
) -> Result<HashMap<String, Severity>, DefinitionError> {
    table
        .iter()
        .map(|(word, severity)| match severity.as_str() {
            "error" => Ok((word.to_ascii_lowercase(), Severity::Error)),
            "warning" => Ok((word.to_ascii_lowercase(), Severity::Warning)),
            "note" => Ok((word.to_ascii_lowercase(), Severity::Note)),
            other => Err(invalid(
                origin,
                format!("severity.{word}"),
                format!(
                    "\"{other}\" is not a severity; expected \"error\", \"warning\" or \"note\""
                ),
            )),
        })
        .collect()
}

/// Compiles the `[[category_rule]]` list: each code regex, anchored to match the whole code, with
/// its category.
fn code_categories(
    origin: &str,
    rules: &[CategoryRuleFile],
) -> Result<Vec<(LazyRegex, String)>, DefinitionError> {
    rules
        .iter()
        .enumerate()
        .map(|(index, rule)| {
            let regex = compile_regex(&format!("^(?:{})$", rule.code), &[]).map_err(|reason| {
                invalid(origin, format!("category_rule[{index}].code"), reason)
            })?;
            Ok((regex, rule.category.clone()))
        })
        .collect()
}

fn compile_regex(pattern: &str, allowed_groups: &[&str]) -> Result<LazyRegex, String> {
    let regex = LazyRegex::new(pattern).map_err(|error| {
        format!(
            "invalid regex /{pattern}/: {}",
            super::error::one_line(&error)
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
#[path = "definition_tests.rs"]
mod tests;
