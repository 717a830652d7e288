//! GitHub problem-matcher JSON (`{"problemMatcher": [...]}`), read as it is and run with the
//! Actions runner's semantics: patterns match consecutive lines, the last one may `loop`, a value
//! found by an earlier pattern wins over a later one, the matcher's `severity` is the default, and
//! `fromPath` anchors a relative `file`. Each matcher becomes a parser named by its `owner`.
//!
//! The runner uses .NET regexes in ECMAScript mode; patterns are compiled with the `regex` crate
//! after translating the escapes whose meaning differs (`\d`, `\<`, `\>`). A pattern the crate
//! cannot compile (lookaround, backreferences) is an error naming the pattern.

use std::collections::BTreeSet;
use std::path::Path;

use regex::Captures;
use serde::Deserialize;

use super::error::invalid;
use super::error::{DefinitionError, one_line};
use super::matcher_pattern::{CompiledPattern, PatternFile, compile_patterns};
use super::{Findings, Found, LineOutcome, ParseContext, ParseSession, Parser};
use crate::model::Severity;

#[derive(Debug, Deserialize)]
struct MatchersFile {
    #[serde(rename = "problemMatcher")]
    problem_matcher: Vec<MatcherFile>,
}

#[derive(Debug, Deserialize)]
struct MatcherFile {
    #[serde(default)]
    owner: String,
    #[serde(default)]
    severity: Option<String>,
    #[serde(default)]
    pattern: Vec<PatternFile>,
}

/// One matcher of a problem-matcher file.
#[derive(Debug)]
pub struct ProblemMatcher {
    owner: String,
    default_severity: Option<String>,
    patterns: Vec<CompiledPattern>,
    description: String,
}

/// Reads a problem-matcher file; `origin` names it in errors.
pub fn compile_matchers(origin: &str, text: &str) -> Result<Vec<ProblemMatcher>, DefinitionError> {
    let file: MatchersFile = serde_json::from_str(text).map_err(|error| {
        invalid(
            origin,
            format!("(json, line {} column {})", error.line(), error.column()),
            one_line(&error.to_string()),
        )
    })?;
    let mut owners = BTreeSet::new();
    let mut matchers = Vec::new();
    for (index, matcher) in file.problem_matcher.into_iter().enumerate() {
        matchers.push(compile_matcher(origin, index, matcher, &mut owners)?);
    }
    Ok(matchers)
}

/// Compiles the matcher at `index`: its owner (not empty, and not one of the lowercased `owners`
/// read before it, which it joins), its default severity and its patterns.
fn compile_matcher(
    origin: &str,
    index: usize,
    matcher: MatcherFile,
    owners: &mut BTreeSet<String>,
) -> Result<ProblemMatcher, DefinitionError> {
    let key = |rest: &str| format!("problemMatcher[{index}]{rest}");
    if matcher.owner.is_empty() {
        return Err(invalid(origin, key(".owner"), "must not be empty".into()));
    }
    if !owners.insert(matcher.owner.to_ascii_lowercase()) {
        return Err(invalid(
            origin,
            key(".owner"),
            format!("duplicate owner \"{}\"", matcher.owner),
        ));
    }
    let severity = matcher.severity.filter(|s| !s.is_empty());
    if let Some(word) = &severity
        && !["error", "warning", "notice"].contains(&word.to_ascii_lowercase().as_str())
    {
        return Err(invalid(
            origin,
            key(".severity"),
            format!("\"{word}\" is not a severity; expected error, warning or notice"),
        ));
    }
    let patterns = compile_patterns(origin, &key(".pattern"), &matcher.pattern)?;
    Ok(ProblemMatcher {
        description: format!("GitHub problem matcher \"{}\"", matcher.owner),
        owner: matcher.owner,
        default_severity: severity,
        patterns,
    })
}

impl Parser for ProblemMatcher {
    fn name(&self) -> &str {
        &self.owner
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn session<'a>(&'a self, context: &'a ParseContext) -> Box<dyn ParseSession + 'a> {
        Box::new(MatcherSession {
            matcher: self,
            context,
            state: vec![None; self.patterns.len().saturating_sub(1)],
        })
    }
}

/// What the patterns matched so far: the runner's `IssueMatch`.
#[derive(Debug, Clone, Default)]
struct Partial {
    values: [Option<String>; 7],
}

impl Partial {
    /// A running match's values win; this pattern fills the rest (a group that took no part
    /// reads as empty, as in .NET).
    fn new(running: Option<&Partial>, pattern: &CompiledPattern, captures: &Captures<'_>) -> Self {
        let mut values: [Option<String>; 7] = Default::default();
        for (slot, value) in values.iter_mut().enumerate() {
            *value = running.and_then(|r| r.values[slot].clone()).or_else(|| {
                pattern.groups[slot].map(|group| {
                    captures
                        .get(group)
                        .map_or_else(String::new, |m| m.as_str().to_string())
                })
            });
        }
        Self { values }
    }
}

struct MatcherSession<'a> {
    matcher: &'a ProblemMatcher,
    context: &'a ParseContext,
    state: Vec<Option<Partial>>,
}

impl ParseSession for MatcherSession<'_> {
    fn line(&mut self, line: &str, findings: &mut Findings) -> LineOutcome {
        let patterns = &self.matcher.patterns;
        if patterns.len() == 1 {
            return match patterns[0].regex.captures(line) {
                Some(captures) => {
                    let found = Partial::new(None, &patterns[0], &captures);
                    self.emit(found, findings);
                    LineOutcome::Finding(0)
                }
                None => LineOutcome::Unmatched,
            };
        }
        let mut outcome = LineOutcome::Unmatched;
        let last = patterns.len() - 1;
        for index in (0..patterns.len()).rev() {
            let running = if index > 0 {
                self.state[index - 1].clone()
            } else {
                None
            };
            if index > 0 && running.is_none() {
                continue;
            }
            let pattern = &patterns[index];
            match pattern.regex.captures(line) {
                Some(captures) if index == last => {
                    let found = Partial::new(running.as_ref(), pattern, &captures);
                    self.state.iter_mut().for_each(|slot| *slot = None);
                    if pattern.looping {
                        self.state[index - 1] = running;
                    }
                    self.emit(found, findings);
                    return LineOutcome::Finding(index);
                }
                Some(captures) => {
                    self.state[index] = Some(Partial::new(running.as_ref(), pattern, &captures));
                    outcome = LineOutcome::Continued(index);
                }
                None if index == last => self.state[index - 1] = None,
                None => self.state[index] = None,
            }
        }
        outcome
    }

    fn finish(&mut self, _findings: &mut Findings) {}
}

impl MatcherSession<'_> {
    fn emit(&self, found: Partial, findings: &mut Findings) {
        let [file, line, column, severity, code, message, from_path] = found.values;
        // The runner reports nothing without a message, nor with a severity it does not know.
        let Some(message) = message.filter(|m| !m.trim().is_empty()) else {
            return;
        };
        let severity = match severity
            .filter(|s| !s.is_empty())
            .or_else(|| self.matcher.default_severity.clone())
            .map(|s| s.to_ascii_lowercase())
            .as_deref()
        {
            None | Some("error") => Severity::Error,
            Some("warning") => Severity::Warning,
            Some("notice") => Severity::Note,
            Some(_) => return,
        };
        let file =
            file.filter(|f| !f.is_empty())
                .map(|file| match from_path.filter(|p| !p.is_empty()) {
                    Some(from) if !Path::new(&file).is_absolute() => {
                        Path::new(&from).parent().map_or(file.clone(), |dir| {
                            dir.join(&file).to_string_lossy().into_owned()
                        })
                    }
                    _ => file,
                });
        let number = |value: Option<String>| value.and_then(|v| v.trim().parse::<u32>().ok());
        let found = Found {
            file,
            line: number(line),
            column: number(column),
            severity: Some(severity),
            code: code.map(|c| c.trim().to_string()).filter(|c| !c.is_empty()),
            message: message.trim().to_string(),
            ..Found::default()
        };
        findings.add(&self.matcher.owner, self.context, found);
    }
}

#[cfg(test)]
#[path = "problem_matcher_tests.rs"]
mod tests;
