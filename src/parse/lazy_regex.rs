//! A parser's regex, checked when its definition is compiled and built when it is first used.
//!
//! `auto` ranks every parser of the catalogue, and most of them never match a line of a given
//! output: building each one's regexes (their automata, with Unicode classes) was most of what
//! choosing cost. A definition's regexes are parsed when it is compiled (a bad one fails then,
//! with the regex crate's own message) and their group names read from the parse; the regex is
//! built the first time a line asks it for a match. The list a parser searches first
//! ([`super::first_rule`]) is built from the sources alone.

use std::ops::Deref;
use std::sync::OnceLock;

use regex::Regex;
use regex_syntax::hir::{Hir, HirKind};

/// A regex built on first use.
pub struct LazyRegex {
    source: String,
    /// The group names by index (0: the whole match, unnamed), as `Regex::capture_names`.
    names: Vec<Option<String>>,
    built: OnceLock<Regex>,
}

impl LazyRegex {
    /// Checks `source`; the error is the regex crate's message for it.
    pub fn new(source: &str) -> Result<Self, String> {
        let hir = regex_automata::util::syntax::parse(source).map_err(|error| error.to_string())?;
        let mut names = vec![None; hir.properties().explicit_captures_len() + 1];
        collect_names(&hir, &mut names);
        Ok(Self {
            source: source.to_string(),
            names,
            built: OnceLock::new(),
        })
    }

    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The group names, as `Regex::capture_names` gives them, without building the regex.
    pub fn capture_names(&self) -> impl Iterator<Item = Option<&str>> {
        self.names.iter().map(Option::as_deref)
    }

    /// As `Regex::captures_len`, without building the regex.
    pub fn captures_len(&self) -> usize {
        self.names.len()
    }

    /// The regex, built now if it was not yet.
    pub fn get(&self) -> &Regex {
        self.built.get_or_init(|| {
            Regex::new(&self.source).unwrap_or_else(|error| {
                // Parsed when the definition was compiled; only a size limit is left to fail.
                tracing::warn!(regex = %self.source, %error, "a parser's regex could not be built: it matches nothing");
                Regex::new(r"[^\s\S]").expect("a regex that matches nothing")
            })
        })
    }
}

impl Deref for LazyRegex {
    type Target = Regex;

    fn deref(&self) -> &Regex {
        self.get()
    }
}

impl Clone for LazyRegex {
    fn clone(&self) -> Self {
        let built = OnceLock::new();
        if let Some(regex) = self.built.get() {
            let _ = built.set(regex.clone());
        }
        Self {
            source: self.source.clone(),
            names: self.names.clone(),
            built,
        }
    }
}

impl std::fmt::Debug for LazyRegex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("LazyRegex").field(&self.source).finish()
    }
}

fn collect_names(hir: &Hir, names: &mut [Option<String>]) {
    match hir.kind() {
        HirKind::Capture(capture) => {
            if let (Some(name), Some(slot)) = (&capture.name, names.get_mut(capture.index as usize))
            {
                *slot = Some(name.to_string());
            }
            collect_names(&capture.sub, names);
        }
        HirKind::Repetition(repetition) => collect_names(&repetition.sub, names),
        HirKind::Concat(subs) | HirKind::Alternation(subs) => {
            for sub in subs {
                collect_names(sub, names);
            }
        }
        HirKind::Empty | HirKind::Literal(_) | HirKind::Class(_) | HirKind::Look(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_errors_are_the_regex_crates_own() {
        for source in [
            r"^(?P<file>[^:]+):(?P<line>\d+)(?::(?P<column>\d+))?: (?P<message>.+)$",
            r"(a)(?P<x>b(?P<y>c))|(?P<z>d)",
            r"no groups",
        ] {
            let lazy = LazyRegex::new(source).unwrap();
            let regex = Regex::new(source).unwrap();
            assert!(lazy.built.get().is_none(), "not built by reading its names");
            assert_eq!(
                lazy.capture_names().collect::<Vec<_>>(),
                regex.capture_names().collect::<Vec<_>>()
            );
            assert_eq!(lazy.captures_len(), regex.captures_len());
            assert!(lazy.is_match("x") == regex.is_match("x"));
        }
        for bad in [r"(unclosed", r"a{2,1}", r"\p{NoSuchClass}"] {
            let lazy = LazyRegex::new(bad).unwrap_err();
            let Err(regex::Error::Syntax(message)) = Regex::new(bad) else {
                panic!("{bad} is a syntax error");
            };
            assert_eq!(lazy, message, "{bad}");
        }
    }
}
