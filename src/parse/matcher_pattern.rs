//! One pattern of a GitHub problem matcher: its JSON form, and its compilation into a regex and
//! the group numbers of the properties it sets.

use regex::Regex;
use serde::Deserialize;

use super::ecmascript::translate_ecmascript;
use super::error::{DefinitionError, invalid, one_line};

/// One entry of a matcher's `pattern` list, as the file has it.
#[derive(Debug, Deserialize)]
pub struct PatternFile {
    #[serde(default)]
    regexp: String,
    file: Option<i64>,
    line: Option<i64>,
    column: Option<i64>,
    severity: Option<i64>,
    code: Option<i64>,
    message: Option<i64>,
    #[serde(rename = "fromPath")]
    from_path: Option<i64>,
    #[serde(default, rename = "loop")]
    looping: bool,
}

/// Patterns of one matcher (the setup actions' matchers have at most two).
const MAX_PATTERNS: usize = 16;

/// The properties a pattern can take from its groups, in the runner's order.
const PROPERTIES: [&str; 7] = [
    "file", "line", "column", "severity", "code", "message", "fromPath",
];

/// A pattern ready to match: its regex, the groups it reads and whether it loops.
#[derive(Debug)]
pub struct CompiledPattern {
    pub regex: Regex,
    /// Group index of each of [`PROPERTIES`], when the pattern sets it.
    pub groups: [Option<usize>; 7],
    pub looping: bool,
}

/// Compiles a matcher's `pattern` list (`key` names it): one to [`MAX_PATTERNS`] patterns, each
/// property set by one of them at most, and `message` by one at least.
pub fn compile_patterns(
    origin: &str,
    key: &str,
    list: &[PatternFile],
) -> Result<Vec<CompiledPattern>, DefinitionError> {
    if list.is_empty() {
        return Err(invalid(origin, key.into(), "has no patterns".into()));
    }
    if list.len() > MAX_PATTERNS {
        return Err(invalid(
            origin,
            key.into(),
            format!(
                "has {} patterns; at most {MAX_PATTERNS} are read",
                list.len()
            ),
        ));
    }
    let count = list.len();
    let mut seen: [bool; 7] = [false; 7];
    let mut patterns = Vec::with_capacity(count);
    for (inner, pattern) in list.iter().enumerate() {
        let at = format!("{key}[{inner}]");
        let may_loop = inner > 0 && inner + 1 == count;
        patterns.push(compile_pattern(origin, &at, pattern, may_loop, &mut seen)?);
    }
    if !seen[5] {
        return Err(invalid(
            origin,
            key.into(),
            "at least one pattern must set `message`".into(),
        ));
    }
    Ok(patterns)
}

/// Compiles one pattern (`at` names it): its `loop`, which `may_loop` allows only on the last of
/// several patterns, its regex, and the groups of its properties (`seen`: those set so far).
fn compile_pattern(
    origin: &str,
    at: &str,
    pattern: &PatternFile,
    may_loop: bool,
    seen: &mut [bool; 7],
) -> Result<CompiledPattern, DefinitionError> {
    if pattern.looping && !may_loop {
        return Err(invalid(
            origin,
            at.into(),
            "only the last pattern of a multi-line matcher may set `loop`".into(),
        ));
    }
    if pattern.looping && pattern.message.is_none() {
        return Err(invalid(
            origin,
            at.into(),
            "the `loop` pattern must set `message`".into(),
        ));
    }
    let regex = Regex::new(&translate_ecmascript(&pattern.regexp)).map_err(|error| {
        invalid(
            origin,
            format!("{at}.regexp"),
            format!(
                "the regex crate cannot compile /{}/ (lookaround and backreferences are not supported): {}",
                pattern.regexp,
                one_line(&error.to_string())
            ),
        )
    })?;
    let groups = property_groups(origin, at, pattern, &regex, seen)?;
    Ok(CompiledPattern {
        regex,
        groups,
        looping: pattern.looping,
    })
}

/// The group number of each of [`PROPERTIES`] the pattern (`at` names it) sets, and marks it in
/// `seen`; a property an earlier pattern set is an error, a group `regex` lacks only a warning.
fn property_groups(
    origin: &str,
    at: &str,
    pattern: &PatternFile,
    regex: &Regex,
    seen: &mut [bool; 7],
) -> Result<[Option<usize>; 7], DefinitionError> {
    let values = [
        pattern.file,
        pattern.line,
        pattern.column,
        pattern.severity,
        pattern.code,
        pattern.message,
        pattern.from_path,
    ];
    let mut groups = [None; 7];
    for (slot, (name, value)) in PROPERTIES.iter().zip(values).enumerate() {
        let Some(value) = value else { continue };
        if seen[slot] {
            return Err(invalid(
                origin,
                at.into(),
                format!("the property `{name}` is set twice"),
            ));
        }
        seen[slot] = true;
        let Ok(group) = usize::try_from(value) else {
            return Err(invalid(
                origin,
                at.into(),
                format!("`{name}` must be a group number, not {value}"),
            ));
        };
        if group >= regex.captures_len() {
            tracing::warn!(
                "{origin}: {at}.{name}: group {group} does not exist (the pattern has {} groups); it reads as empty, as in the Actions runner",
                regex.captures_len() - 1
            );
        }
        groups[slot] = Some(group);
    }
    Ok(groups)
}
