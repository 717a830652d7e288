//! A parser's regex, checked when its definition is compiled and built when it is first used.
//!
//! `auto` ranks every parser of the catalogue, and most of them never match a line of a given
//! output: building each one's regexes (their automata, with Unicode classes) was most of what
//! choosing cost. A definition's regexes are parsed when it is compiled (a bad one fails then,
//! with the regex crate's own message) and their group names read from the parse; the regex is
//! built the first time a line asks it for a match. The list a parser searches first
//! ([`super::first_rule`]) is built from the parses, read wide. A source is parsed, and its
//! regex built, once in a process, whichever parsers share it.

use std::collections::HashMap;
use std::ops::Deref;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use regex::Regex;
use regex_syntax::hir::{Hir, HirKind, Look};

/// A regex built on first use.
pub struct LazyRegex {
    source: String,
    parsed: Arc<Parsed>,
    built: OnceLock<Regex>,
}

/// What the parse of a source tells, shared by every regex of that source in a process (the
/// parsers of a catalogue share many rules: a blank line, a `-->` line, a numbered source line).
#[derive(Debug)]
struct Parsed {
    /// The group names by index (0: the whole match, unnamed), as `Regex::capture_names`.
    names: Vec<Option<String>>,
    /// The parse read wide (see [`widen`]), for the lists searched as one: small, where the
    /// exact parse's Unicode classes are not.
    wide: Hir,
    widened: Widened,
}

impl LazyRegex {
    /// Checks `source`; the error is the regex crate's message for it.
    pub fn new(source: &str) -> Result<Self, String> {
        Ok(Self {
            source: source.to_string(),
            parsed: once_per_source(source, |source| {
                let hir = regex_automata::util::syntax::parse(source)
                    .map_err(|error| error.to_string())?;
                let mut names = vec![None; hir.properties().explicit_captures_len() + 1];
                collect_names(&hir, &mut names);
                let (wide, widened) = widen(hir);
                Ok(Arc::new(Parsed {
                    names,
                    wide,
                    widened,
                }))
            })?,
            built: OnceLock::new(),
        })
    }

    /// The regex's parse read wide, and how much wider that made it.
    pub fn wide(&self) -> (&Hir, Widened) {
        (&self.parsed.wide, self.parsed.widened)
    }

    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The group names, as `Regex::capture_names` gives them, without building the regex.
    pub fn capture_names(&self) -> impl Iterator<Item = Option<&str>> {
        self.parsed.names.iter().map(Option::as_deref)
    }

    /// As `Regex::captures_len`, without building the regex.
    pub fn captures_len(&self) -> usize {
        self.parsed.names.len()
    }

    /// The regex, built now if it was not yet.
    pub fn get(&self) -> &Regex {
        self.built.get_or_init(|| {
            build(&self.source).unwrap_or_else(|error| {
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
            parsed: Arc::clone(&self.parsed),
            built,
        }
    }
}

impl std::fmt::Debug for LazyRegex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("LazyRegex").field(&self.source).finish()
    }
}

/// The regex of `source`, built once in a process, as the parse is: a clone shares what was built.
pub fn build(source: &str) -> Result<Regex, regex::Error> {
    static BUILT: OnceLock<Mutex<HashMap<String, Regex>>> = OnceLock::new();
    once_per_source_in(&BUILT, source, Regex::new)
}

fn once_per_source(
    source: &str,
    make: impl FnOnce(&str) -> Result<Arc<Parsed>, String>,
) -> Result<Arc<Parsed>, String> {
    static PARSED: OnceLock<Mutex<HashMap<String, Arc<Parsed>>>> = OnceLock::new();
    once_per_source_in(&PARSED, source, make)
}

/// What `make` makes of `source`, made once in a process (an error is not kept: it is made
/// again, and a definition with it is refused anyway).
fn once_per_source_in<T: Clone, E>(
    made: &OnceLock<Mutex<HashMap<String, T>>>,
    source: &str,
    make: impl FnOnce(&str) -> Result<T, E>,
) -> Result<T, E> {
    let made = made.get_or_init(Mutex::default);
    if let Some(thing) = made
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(source)
    {
        return Ok(thing.clone());
    }
    let thing = make(source)?;
    made.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(source.to_string(), thing.clone());
    Ok(thing)
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

/// How much wider than a rule a wide pattern may match, and so which of its matches are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Widened {
    /// Not wider: no match is checked.
    #[default]
    No,
    /// Wider on a line with a non-ASCII character only (a class's non-ASCII part read as any).
    NonAscii,
    /// Wider on any line (a Unicode word boundary read as no condition, which the automaton
    /// could only decide by giving up on every non-ASCII line).
    Always,
}

/// `hir` read wide: each class's non-ASCII part as any non-ASCII character, and a Unicode word
/// boundary as no condition; with how much wider that made it. A Unicode class (`\w`, `\d`,
/// `[^:]`) is thousands of ranges, which become hundreds of UTF-8 byte sequences to build; its
/// ASCII part and one "any non-ASCII character" are a handful. The result matches at least what
/// `hir` matches, on any line.
fn widen(hir: Hir) -> (Hir, Widened) {
    use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange};
    match hir.kind() {
        HirKind::Class(Class::Unicode(class)) => {
            let mut wide = class.clone();
            wide.intersect(&ClassUnicode::new([ClassUnicodeRange::new('\0', '\u{7f}')]));
            if &wide == class {
                return (hir, Widened::No);
            }
            wide.union(&ClassUnicode::new([ClassUnicodeRange::new(
                '\u{80}',
                char::MAX,
            )]));
            let widened = if &wide == class {
                Widened::No
            } else {
                Widened::NonAscii
            };
            (Hir::class(Class::Unicode(wide)), widened)
        }
        HirKind::Look(
            Look::WordUnicode
            | Look::WordUnicodeNegate
            | Look::WordStartUnicode
            | Look::WordEndUnicode
            | Look::WordStartHalfUnicode
            | Look::WordEndHalfUnicode,
        ) => (Hir::empty(), Widened::Always),
        HirKind::Repetition(_)
        | HirKind::Capture(_)
        | HirKind::Concat(_)
        | HirKind::Alternation(_) => match hir.into_kind() {
            HirKind::Repetition(mut repetition) => {
                let (sub, widened) = widen(*repetition.sub);
                repetition.sub = Box::new(sub);
                (Hir::repetition(repetition), widened)
            }
            HirKind::Capture(mut capture) => {
                let (sub, widened) = widen(*capture.sub);
                capture.sub = Box::new(sub);
                (Hir::capture(capture), widened)
            }
            HirKind::Concat(items) => {
                let (items, widened) = widen_all(items);
                (Hir::concat(items), widened)
            }
            HirKind::Alternation(items) => {
                let (items, widened) = widen_all(items);
                (Hir::alternation(items), widened)
            }
            _ => unreachable!("matched just above"),
        },
        HirKind::Empty | HirKind::Literal(_) | HirKind::Look(_) | HirKind::Class(_) => {
            (hir, Widened::No)
        }
    }
}

fn widen_all(items: Vec<Hir>) -> (Vec<Hir>, Widened) {
    let mut most = Widened::No;
    let items = items
        .into_iter()
        .map(|item| {
            let (item, widened) = widen(item);
            most = most.max(widened);
            item
        })
        .collect();
    (items, most)
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
