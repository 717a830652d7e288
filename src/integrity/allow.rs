//! `[[integrity.allow]]`: what a project means to allow (a pragma it accepts, a file whose
//! configuration a fixer may change). An allowed move does not refuse its change; it is still
//! listed.

use globset::GlobSet;

use super::config_files::wildcard;
use super::definition::compile_globs;
use super::{Class, Move};

/// One allow entry: a move is allowed when it meets every condition the entry sets.
#[derive(Debug, Clone)]
pub struct Allow {
    /// 1-based, as the config lists them.
    pub number: usize,
    pub class: Option<Class>,
    /// A rule's name (`python/type-ignore`); `*` matches any run of characters.
    pub rule: Option<String>,
    /// Searched in what was found (the pragma, the line, the key and its values).
    pub pattern: Option<regex::Regex>,
    pub paths: Option<GlobSet>,
    pub reason: Option<String>,
}

/// An allow entry as the config writes it.
#[derive(Debug, Clone, Default)]
pub struct AllowSpec<'a> {
    pub class: Option<&'a str>,
    pub rule: Option<&'a str>,
    pub pattern: Option<&'a str>,
    pub paths: Option<&'a [String]>,
    pub reason: Option<&'a str>,
}

impl Allow {
    /// Compiles entry `number`; an error names the key and why.
    pub fn new(number: usize, spec: &AllowSpec<'_>) -> Result<Self, (&'static str, String)> {
        if spec.class.is_none()
            && spec.rule.is_none()
            && spec.pattern.is_none()
            && spec.paths.is_none()
        {
            return Err((
                "class",
                "an allow entry needs at least one of class, rule, pattern and paths".into(),
            ));
        }
        let class = match spec.class {
            None => None,
            Some(name) => Some(Class::parse(name).ok_or_else(|| {
                (
                    "class",
                    format!("\"{name}\" is not one of suppression, tests, config, evasion"),
                )
            })?),
        };
        let pattern = spec
            .pattern
            .map(|p| {
                regex::Regex::new(p)
                    .map_err(|e| ("pattern", crate::parse::one_line(&e.to_string())))
            })
            .transpose()?;
        let paths = spec
            .paths
            .map(|globs| compile_globs(globs).map_err(|e| ("paths", e)))
            .transpose()?;
        Ok(Self {
            number,
            class,
            rule: spec.rule.map(str::to_string),
            pattern,
            paths,
            reason: spec.reason.map(str::to_string),
        })
    }

    pub fn allows(&self, found: &Move) -> bool {
        self.class.is_none_or(|class| class == found.class)
            && self
                .rule
                .as_deref()
                .is_none_or(|rule| wildcard(rule, &found.rule))
            && self
                .pattern
                .as_ref()
                .is_none_or(|p| p.is_match(&found.text))
            && self.paths.as_ref().is_none_or(|globs| {
                found
                    .path
                    .as_deref()
                    .is_some_and(|path| globs.is_match(path))
            })
    }

    /// `[[integrity.allow]] #2 ("stubs are missing upstream")`.
    pub fn describe(&self) -> String {
        match &self.reason {
            Some(reason) => format!("[[integrity.allow]] #{} ({reason})", self.number),
            None => format!("[[integrity.allow]] #{}", self.number),
        }
    }
}

/// Marks each of `moves` that an entry of `allows` lets through, with the first such entry.
pub fn apply(allows: &[Allow], moves: &mut [Move]) {
    for found in moves {
        if let Some(allow) = allows.iter().find(|a| a.allows(found)) {
            found.allowed_by = Some(allow.describe());
        }
    }
}
