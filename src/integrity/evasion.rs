//! Evasion: the findings go because the gate no longer sees the code. A file that had findings
//! deleted, replaced by a link or a folder, or moved where the tools do not read it (another
//! kind of file, a folder they leave out) while its findings vanish with it; lines of code
//! that reappear commented out.

use std::collections::{HashMap, HashSet};

use super::definition::Comment;
use super::lines::{LineDiff, shown, trimmed_lines};
use super::{Catalogue, Class, FilePair, GateView, Move, State, Subject};

/// Non-blank characters a commented-out line must have to count (`}` or `else:` alone does
/// not).
const CODE_LINE: usize = 4;

/// Files with findings before the change that are gone from where the gate reads.
pub fn vanished_files(
    catalogue: &Catalogue,
    subjects: &[Subject],
    emptied: &HashSet<&str>,
    before: &GateView<'_>,
    after: &GateView<'_>,
) -> Vec<Move> {
    let unread = |path: &str| {
        (catalogue.entries().iter())
            .filter_map(|e| e.unread.as_ref())
            .any(|globs| globs.is_match(path))
    };
    let mut moves = Vec::new();
    for subject in subjects {
        let had = before.findings.get(&subject.path).copied().unwrap_or(0);
        if had == 0 || !matches!(subject.before, State::File { .. }) {
            continue;
        }
        let (what, text) = match &subject.after {
            State::File { .. }
                if emptied.contains(subject.path.as_str())
                    && !after.findings.contains_key(&subject.path) =>
            {
                (
                    format!("emptied, and its {had} findings with it"),
                    subject.path.clone(),
                )
            }
            State::File { .. } => continue,
            State::Other { what } => (
                format!("replaced by a {what}, and its {had} findings went with it"),
                subject.path.clone(),
            ),
            State::Absent => {
                let created =
                    |s: &&Subject| s.before.sha256().is_none() && s.after.sha256().is_some();
                let went = (subject.before.sha256()).and_then(|sha| {
                    subjects
                        .iter()
                        .filter(created)
                        .find(|s| s.after.sha256() == Some(sha))
                });
                // Renamed where it was, as a person renames a module (N999): the gate still
                // reads the folder and the kind of file, even with an edit on the way.
                let renamed_in_place = |to: &Subject| {
                    folder(&to.path) == folder(&subject.path)
                        && extension(&to.path) == extension(&subject.path)
                        && !unread(&to.path)
                };
                match went {
                    None if subjects.iter().filter(created).any(&renamed_in_place) => {
                        continue;
                    }
                    None => (
                        format!("deleted, and its {had} findings with it"),
                        subject.path.clone(),
                    ),
                    Some(to) => {
                        let found_there = after.findings.get(&to.path).copied().unwrap_or(0);
                        // The gate still finds them all there; or some, so it reads the file
                        // there and the move itself fixed the rest (a module's name).
                        let same_kind = extension(&to.path) == extension(&subject.path);
                        if found_there >= had
                            || (found_there > 0 && same_kind && !unread(&to.path))
                            || renamed_in_place(to)
                        {
                            continue;
                        }
                        (
                            format!(
                                "moved where the gate does not read it, and its {had} findings went with it"
                            ),
                            format!("{} → {}", subject.path, to.path),
                        )
                    }
                }
            }
        };
        moves.push(Move {
            class: Class::Evasion,
            rule: "files/out-of-reach".into(),
            path: Some(subject.path.clone()),
            line: None,
            what,
            text,
            allowed_by: None,
        });
    }
    moves
}

/// Whether the change left a file that had code (three lines or more) with none to speak of
/// (one line at most).
pub fn emptied(before: &[u8], after: &[u8]) -> bool {
    let lines = |text: &[u8]| {
        trimmed_lines(text)
            .filter(|(_, line)| !line.is_empty())
            .count()
    };
    lines(before) >= 3 && lines(after) <= 1
}

/// The folder of a path (empty at the top).
fn folder(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(folder, _)| folder)
}

/// The extension of a path's file name (`py` of `a/b.py`; empty without one).
fn extension(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((stem, extension)) if !stem.is_empty() => extension,
        _ => "",
    }
}

/// Lines of code the change commented out in the file of `pair`, by the comment syntax of
/// each entry that reads it: one move for the file.
pub fn commented_out(
    catalogue: &Catalogue,
    entries: &[usize],
    pair: &FilePair<'_>,
    diff: &LineDiff<'_>,
) -> Vec<Move> {
    let (Some(before), Some(after)) = (pair.before, pair.after) else {
        return Vec::new();
    };
    let mut moves = Vec::new();
    for entry in entries.iter().map(|&e| &catalogue.entries()[e]) {
        let Some(comment) = entry.comment.as_ref() else {
            continue;
        };
        if !adds_a_comment(comment, diff) {
            continue;
        }
        let was = Split::of(comment, before);
        let is = Split::of(comment, after);
        let (was_code, was_commented) = (counts(&was.code), counts(&was.commented));
        let (is_code, is_commented) = (counts(&is.code), counts(&is.commented));
        // Per content: how many of its lines went from code to comment.
        let mut room: HashMap<&[u8], usize> = HashMap::new();
        for (&content, &commented) in &is_commented {
            let newly = commented.saturating_sub(was_commented.get(content).copied().unwrap_or(0));
            let gone = (was_code.get(content).copied().unwrap_or(0))
                .saturating_sub(is_code.get(content).copied().unwrap_or(0));
            if newly.min(gone) > 0 {
                room.insert(content, newly.min(gone));
            }
        }
        let mut disabled: Vec<(u64, &[u8])> = Vec::new();
        for &(line, content) in &is.commented {
            if let Some(left) = room.get_mut(content).filter(|left| **left > 0) {
                *left -= 1;
                disabled.push((line, content));
            }
        }
        let Some(&(line, first)) = disabled.first() else {
            continue;
        };
        let lines = disabled.len();
        moves.push(Move {
            class: Class::Evasion,
            rule: format!("{}/commented-out", entry.name),
            path: Some(pair.path.to_string()),
            line: Some(line),
            what: if lines == 1 {
                "code commented out".into()
            } else {
                format!("code commented out ({lines} lines)")
            },
            text: shown(first),
            allowed_by: None,
        });
    }
    moves
}

/// Whether the change may have commented code out: it added a block comment's opening, or a
/// line comment whose text is a line of code it removed.
fn adds_a_comment(comment: &Comment, diff: &LineDiff<'_>) -> bool {
    let removed: HashSet<&[u8]> = diff.removed.iter().map(|(_, l)| *l).collect();
    diff.added.iter().any(|(_, line)| {
        comment.block.iter().any(|(open, _)| line.starts_with(open))
            || (comment.line.iter())
                .filter_map(|mark| line.strip_prefix(mark.as_slice()))
                .any(|content| removed.contains(content.trim_ascii()))
    })
}

fn counts<'t>(lines: &[(u64, &'t [u8])]) -> HashMap<&'t [u8], usize> {
    let mut counts = HashMap::new();
    for &(_, content) in lines {
        *counts.entry(content).or_default() += 1;
    }
    counts
}

/// A file's lines of code and the contents of its comments, each trimmed.
#[derive(Debug, Default)]
struct Split<'t> {
    code: Vec<(u64, &'t [u8])>,
    commented: Vec<(u64, &'t [u8])>,
}

impl<'t> Split<'t> {
    fn of(comment: &Comment, text: &'t [u8]) -> Self {
        let mut split = Self::default();
        let mut open_block: Option<&[u8]> = None;
        for (number, line) in trimmed_lines(text) {
            if let Some(close) = open_block {
                let inside = strip_leading_star(line);
                if let Some(at) = find(line, close) {
                    open_block = None;
                    push_code_like(
                        &mut split.commented,
                        number,
                        strip_leading_star(&line[..at]),
                    );
                } else {
                    push_code_like(&mut split.commented, number, inside);
                }
                continue;
            }
            if let Some(content) = comment
                .line
                .iter()
                .find_map(|mark| line.strip_prefix(mark.as_slice()))
            {
                push_code_like(&mut split.commented, number, content.trim_ascii());
                continue;
            }
            if let Some((open, close)) = comment
                .block
                .iter()
                .find(|(open, _)| line.starts_with(open))
            {
                let rest = &line[open.len()..];
                match find(rest, close) {
                    Some(at) => {
                        push_code_like(&mut split.commented, number, rest[..at].trim_ascii())
                    }
                    None => {
                        open_block = Some(close);
                        push_code_like(&mut split.commented, number, rest.trim_ascii());
                    }
                }
                continue;
            }
            if !line.is_empty() {
                split.code.push((number, line));
            }
        }
        split
    }
}

fn push_code_like<'t>(into: &mut Vec<(u64, &'t [u8])>, number: u64, content: &'t [u8]) {
    let content = content.trim_ascii();
    if content.iter().filter(|b| !b.is_ascii_whitespace()).count() >= CODE_LINE {
        into.push((number, content));
    }
}

fn strip_leading_star(line: &[u8]) -> &[u8] {
    line.strip_prefix(b"*").unwrap_or(line).trim_ascii()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(haystack, needle)
}
