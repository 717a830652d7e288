//! Where a `regex` parser's location lines place the findings it read: by the code a location
//! line names (a test's panic site), or by the test a heading named before it (pytest's
//! traceback: `___ TestCart.test_total ___`, then `tests/test_cart.py:12: AssertionError`).

use std::collections::HashMap;

use super::{CompiledPattern, PatternKind};
use crate::model::Diagnostic;

/// Locations remembered; beyond this they are not kept.
const MAX_LOCATIONS: usize = 10_000;
/// A location's code, heading or path longer than this is not remembered.
pub const MAX_KEY: usize = 1_000;

/// The index of a location pattern without a `code` group, when no heading pattern names the
/// code for it.
pub fn unnamed_location(patterns: &[CompiledPattern]) -> Option<usize> {
    if patterns.iter().any(|p| p.kind == PatternKind::Heading) {
        return None;
    }
    patterns.iter().position(|p| {
        p.kind == PatternKind::Location && !p.regex.capture_names().flatten().any(|n| n == "code")
    })
}

#[derive(Debug, Clone)]
pub struct Location {
    pub file: String,
    pub line: Option<u32>,
    pub column: Option<u32>,
}

/// What a location line is for: the code it names, the test the heading before it named, or,
/// with neither, the message it prints (pytest's `--tb=line`: `path.py:12: assert 6 == 7`, the
/// message the summary's `FAILED path.py::test - assert 6 == 7` repeats).
pub enum Key {
    Code(String),
    Heading(String),
    Message(String),
}

#[derive(Debug, Default)]
pub struct Locations {
    by_code: HashMap<String, Location>,
    /// By (the location's file, the heading's name).
    by_heading: HashMap<(String, String), Location>,
    /// By the heading's name alone, for findings that have no file (cargo test's
    /// `---- tests::adds stdout ----`, whose panic may be on a thread of another name).
    by_name: HashMap<String, Location>,
    /// By the location's file: the messages its lines printed, in order.
    by_message: HashMap<String, Vec<(String, Location)>>,
}

impl Locations {
    pub fn is_empty(&self) -> bool {
        self.by_code.is_empty() && self.by_heading.is_empty() && self.by_message.is_empty()
    }

    fn len(&self) -> usize {
        self.by_code.len() + self.by_heading.len() + self.by_message.len()
    }

    /// Keeps `location` for `key`; the first location for a key wins.
    pub fn remember(&mut self, key: Key, location: Location) {
        if self.len() >= MAX_LOCATIONS {
            return;
        }
        match key {
            Key::Code(code) if code.len() <= MAX_KEY => {
                self.by_code.entry(code).or_insert(location);
            }
            Key::Heading(name) if name.len() <= MAX_KEY => {
                self.by_name
                    .entry(name.clone())
                    .or_insert_with(|| location.clone());
                self.by_heading
                    .entry((location.file.clone(), name))
                    .or_insert(location);
            }
            Key::Message(message) if message.len() <= MAX_KEY => {
                let lines = self.by_message.entry(location.file.clone()).or_default();
                lines.push((message, location));
            }
            _ => {}
        }
    }

    /// Places `diagnostic` (of the parser `parser`): a finding with a file but no line gets the
    /// line a heading gave for it in that file; a finding without a file gets the place of its
    /// code, and a fingerprint for that file.
    pub fn place(&mut self, diagnostic: &mut Diagnostic, parser: &str) {
        let Some(code) = &diagnostic.code else {
            return;
        };
        if let Some(file) = &diagnostic.file {
            if diagnostic.line.is_some() {
                return;
            }
            let placed = match self.under_heading(code, file) {
                Some(location) => Some(location.clone()),
                None => self.take_by_message(file, &diagnostic.message),
            };
            if let Some(location) = placed {
                diagnostic.line = location.line;
                diagnostic.column = location.column;
            } else if let Some(location) = self.elsewhere(code) {
                // A setup or teardown error: its heading's first frame in the user's code is
                // the fixture's own line, in another file (a conftest.py).
                diagnostic.file = Some(location.file.clone());
                diagnostic.line = location.line;
                diagnostic.column = location.column;
                diagnostic.fingerprint = Diagnostic::compute_fingerprint(
                    parser,
                    diagnostic.code.as_deref(),
                    diagnostic.file.as_deref(),
                    &diagnostic.message,
                );
            }
            return;
        }
        // The first panic in the test's own output block, else the one on the test's thread.
        if let Some(location) = self.by_name.get(code).or_else(|| self.by_code.get(code)) {
            diagnostic.file = Some(location.file.clone());
            diagnostic.line = location.line;
            diagnostic.column = location.column;
            diagnostic.fingerprint = Diagnostic::compute_fingerprint(
                parser,
                diagnostic.code.as_deref(),
                diagnostic.file.as_deref(),
                &diagnostic.message,
            );
        }
    }

    /// The location a heading gave for the finding with `code` in `file`: a heading names the
    /// code's tail after a `::`, with `.` for each further `::` (pytest's `TestCart.test_total`
    /// for `tests/test_cart.py::TestCart::test_total`), or the whole code (a module that failed
    /// to load: `tests/test_broken.py`).
    fn under_heading(&self, code: &str, file: &str) -> Option<&Location> {
        if self.by_heading.is_empty() {
            return None;
        }
        heading_names(code).find_map(|name| self.by_heading.get(&(file.to_string(), name)))
    }

    /// The location a heading naming the finding with `code` gave in whatever file: for a
    /// finding none gave one in its own file.
    fn elsewhere(&self, code: &str) -> Option<&Location> {
        if !code.contains("::") {
            return None;
        }
        heading_names(code).find_map(|name| self.by_name.get(&name))
    }

    /// The first line in `file` not yet taken that printed the finding's message (the summary
    /// cuts a long one with `...`), taken: the lines and the summary come in the same order.
    fn take_by_message(&mut self, file: &str, message: &str) -> Option<Location> {
        let message = message.strip_suffix("...").unwrap_or(message).trim();
        if message.is_empty() {
            return None;
        }
        let lines = self.by_message.get_mut(file)?;
        let at = lines
            .iter()
            .position(|(printed, _)| printed.trim().starts_with(message))?;
        Some(lines.remove(at).1)
    }
}

/// The names a heading may give the finding with `code`: its tail after each `::`, with `.` for
/// each further `::`, then the whole code.
fn heading_names(code: &str) -> impl Iterator<Item = String> + '_ {
    code.match_indices("::")
        .map(|(at, _)| code[at + 2..].replace("::", "."))
        .chain(std::iter::once(code.to_string()))
}
