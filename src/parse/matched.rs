//! The groups a regex matched in a line, and the lines already matched: a log repeats its lines
//! (cargo prints a diagnostic again for every target, a test runner the same frames), and a
//! parser that counts a repeated finding once reads the same lines again and again. What a
//! rule's regex matched in a line is remembered by the line's text, so that reading the line
//! again costs a lookup rather than a search.

use std::collections::HashMap;
use std::hash::BuildHasher;

use foldhash::fast::RandomState;

use regex::{Captures, Regex};

/// Lines remembered; past this many, the memory starts again.
const MAX_LINES: usize = 4 * 1024;
/// A longer line is not remembered.
const MAX_LINE_BYTES: usize = 1024;
/// Groups remembered per line (the whole match counts as one); a regex with more is not.
const MAX_GROUPS: usize = 16;

/// Each group's byte range in a line, for a regex with at most [`MAX_GROUPS`] groups.
type Spans = [Option<(u32, u32)>; MAX_GROUPS];

/// What a regex found in a line, owned: its captures, or the spans remembered for the line.
pub enum Found<'h> {
    Captures(Captures<'h>),
    Spans(&'h str, Spans),
}

impl Found<'_> {
    pub fn matched(&self) -> Matched<'_> {
        match self {
            Self::Captures(captures) => Matched::Captures(captures),
            Self::Spans(line, spans) => Matched::Spans { line, spans },
        }
    }
}

/// Matches `regex` against `line`: through `memory` when there is one (a line read before is
/// not searched again; one read now is remembered), else with the regex.
pub fn find<'h>(
    memory: Option<&mut LineMemory>,
    regex: &Regex,
    line: &'h str,
) -> Option<Found<'h>> {
    let Some(memory) = memory else {
        return regex.captures(line).map(Found::Captures);
    };
    if let Some(spans) = memory.recall(regex, line) {
        return Some(Found::Spans(line, spans));
    }
    let captures = regex.captures(line)?;
    memory.remember(regex, line, &captures);
    Some(Found::Captures(captures))
}

/// The groups a regex matched in a line.
#[derive(Clone, Copy)]
pub enum Matched<'h> {
    /// As the regex found them.
    Captures(&'h Captures<'h>),
    /// As it found them in an earlier line with the same text: each group's byte range.
    Spans {
        line: &'h str,
        spans: &'h [Option<(u32, u32)>],
    },
}

impl<'h> Matched<'h> {
    /// The text of group `group`, when it took part in the match.
    #[inline]
    pub fn get(self, group: usize) -> Option<&'h str> {
        match self {
            Self::Captures(captures) => captures.get(group).map(|m| m.as_str()),
            Self::Spans { line, spans } => {
                let (start, end) = (*spans.get(group)?)?;
                line.get(start as usize..end as usize)
            }
        }
    }

    /// The text of the group at `group`, if the regex has one there and it took part.
    #[inline]
    pub fn group(self, group: Option<usize>) -> Option<&'h str> {
        self.get(group?)
    }
}

/// One line a rule matched, and the spans of its groups.
struct Remembered {
    /// The regex, by address: the parser, and so its regexes, outlive the session.
    regex: usize,
    line: Box<str>,
    spans: Spans,
}

/// The lines the rules of one session matched, by text.
#[derive(Default)]
pub struct LineMemory {
    lines: HashMap<u64, Remembered>,
    hasher: RandomState,
}

impl LineMemory {
    fn key(&self, regex: &Regex, line: &str) -> u64 {
        self.hasher
            .hash_one((std::ptr::from_ref(regex) as usize, line))
    }

    /// The spans `regex` matched in a line with the same text as `line`, if one was remembered;
    /// `None` also when `regex` did not match it (a line that does not match is not remembered).
    fn recall(&self, regex: &Regex, line: &str) -> Option<Spans> {
        if line.len() > MAX_LINE_BYTES || self.lines.is_empty() {
            return None;
        }
        let remembered = self.lines.get(&self.key(regex, line))?;
        (remembered.regex == std::ptr::from_ref(regex) as usize && *remembered.line == *line)
            .then_some(remembered.spans)
    }

    /// Remembers what `regex` matched in `line`.
    fn remember(&mut self, regex: &Regex, line: &str, captures: &Captures<'_>) {
        if line.len() > MAX_LINE_BYTES || captures.len() > MAX_GROUPS {
            return;
        }
        if self.lines.len() >= MAX_LINES {
            self.lines.clear();
        }
        let key = self.key(regex, line);
        let mut spans = [None; MAX_GROUPS];
        for (group, span) in spans.iter_mut().enumerate().take(captures.len()) {
            *span = (captures.get(group)).map(|m| (m.start() as u32, m.end() as u32));
        }
        // Another line with the same key (a hash collision) keeps its place.
        self.lines.entry(key).or_insert_with(|| Remembered {
            regex: std::ptr::from_ref(regex) as usize,
            line: line.into(),
            spans,
        });
    }
}

#[cfg(test)]
#[path = "matched_tests.rs"]
mod tests;
