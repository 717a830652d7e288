//! Markers: text whose addition makes a tool see less (a suppression pragma, a skip or focus
//! marker, code switched off) or whose removal does (`#![deny(warnings)]`). Counted per file
//! on both sides of the change, per rule a pragma names: only occurrences the change added
//! count, so a pragma that was there, one moved with its line, or one narrowed from every rule
//! to some (`# noqa` to `# noqa: E501`) is no move. Files the change created or deleted are
//! counted together (a rename carries its pragmas along).

use std::collections::{BTreeMap, HashMap};

use super::definition::{Marker, Side};
use super::lines::{LineDiff, LineIndex, shown};
use super::{Applicable, Catalogue, Class, FilePair, Move};

/// A blanket pragma: every rule of its tool.
const EVERY_RULE: &str = "*";

/// One occurrence of a marker.
#[derive(Debug, Clone)]
pub struct Hit {
    entry: usize,
    marker: usize,
    /// The rule it names, or [`EVERY_RULE`].
    code: String,
    path: String,
    line: u64,
    /// The marker as written.
    text: String,
    /// Its whole line, trimmed: an occurrence on a line the other side also has is not new.
    line_text: Vec<u8>,
}

impl Hit {
    fn key(&self) -> (usize, usize, &str) {
        (self.entry, self.marker, &self.code)
    }
}

/// The occurrences in one file (or in several, pooled), before and after the change.
#[derive(Debug, Default)]
pub struct Readings {
    before: Vec<Hit>,
    after: Vec<Hit>,
}

/// Reads both sides of `pair`.
pub fn read_pair(catalogue: &Catalogue, applicable: &Applicable, pair: &FilePair<'_>) -> Readings {
    let side = |text: Option<&[u8]>| {
        text.map(|text| read(catalogue, applicable, pair.path, text))
            .unwrap_or_default()
    };
    Readings {
        before: side(pair.before),
        after: side(pair.after),
    }
}

/// The occurrences in the lines a change removed from a file and added to it. A marker lies
/// within one line, so these differ between the sides by as much as the whole files do.
pub fn read_diff(
    catalogue: &Catalogue,
    applicable: &Applicable,
    path: &str,
    diff: &LineDiff<'_>,
) -> Readings {
    let side = |lines: &[(u64, &[u8])]| {
        let joined = lines
            .iter()
            .map(|(_, line)| *line)
            .collect::<Vec<_>>()
            .join(&b'\n');
        let mut hits = read(catalogue, applicable, path, &joined);
        for hit in &mut hits {
            // The joined text's line k is lines[k - 1].
            hit.line = usize::try_from(hit.line - 1)
                .ok()
                .and_then(|index| lines.get(index))
                .map_or(hit.line, |(number, _)| *number);
        }
        hits
    };
    Readings {
        before: side(&diff.removed),
        after: side(&diff.added),
    }
}

/// Every occurrence in `text` of the markers that apply (to the file at `path`).
fn read(catalogue: &Catalogue, applicable: &Applicable, path: &str, text: &[u8]) -> Vec<Hit> {
    let mut hits = Vec::new();
    let mut index = None;
    let mut rules = applicable.markers.iter().peekable();
    while let Some(&&(entry_index, _)) = rules.peek() {
        // The rules of one entry are together: its set says which of them `text` holds.
        let mut of_entry = Vec::new();
        while let Some(&&(e, m)) = rules.peek()
            && e == entry_index
        {
            of_entry.push(m);
            rules.next();
        }
        let entry = &catalogue.entries()[entry_index];
        for marker_index in entry.marker_set.matches(text).iter() {
            if !of_entry.contains(&marker_index) {
                continue;
            }
            let marker = &entry.markers[marker_index];
            let index = index.get_or_insert_with(|| LineIndex::new(text));
            for (start, named) in occurrences(marker, text) {
                let line = index.line_of(start);
                let line_text = index.line_at(text, start).to_vec();
                for (code, text) in named {
                    hits.push(Hit {
                        entry: entry_index,
                        marker: marker_index,
                        code,
                        path: path.to_string(),
                        line,
                        text,
                        line_text: line_text.clone(),
                    });
                }
            }
        }
    }
    hits
}

/// Each match of `marker` in `text`: where it starts, and each rule it names (one
/// [`EVERY_RULE`] when it names none) with the marker as it reads for that rule alone (`#
/// type: ignore[a, b]` is `# type: ignore[a]` and `# type: ignore[b]`), so that an allow entry
/// for one rule lets no other through.
fn occurrences(marker: &Marker, text: &[u8]) -> Vec<(usize, Vec<(String, String)>)> {
    let every = |matched: &[u8]| vec![(EVERY_RULE.to_string(), shown(matched))];
    if !marker.has_codes {
        return (marker.regex.find_iter(text))
            .map(|m| (m.start(), every(m.as_bytes())))
            .collect();
    }
    marker
        .regex
        .captures_iter(text)
        .map(|captures| {
            let whole = captures.get(0).expect("group 0 is the match");
            let Some(codes) = captures.name("codes") else {
                return (whole.start(), every(whole.as_bytes()));
            };
            let split = split_codes(codes.as_bytes());
            if split.is_empty() {
                return (whole.start(), every(whole.as_bytes()));
            }
            let (head, tail) = (
                &text[whole.start()..codes.start()],
                &text[codes.end()..whole.end()],
            );
            let named = split
                .into_iter()
                .map(|(code, written)| {
                    let alone = [head, written.as_bytes(), tail].concat();
                    (code, shown(&alone))
                })
                .collect();
            (whole.start(), named)
        })
        .collect()
}

/// The rules a pragma names, split at commas and spaces: each as counted (quotes and braces
/// off; `all` means every rule) and as written.
fn split_codes(codes: &[u8]) -> Vec<(String, String)> {
    let mut split: Vec<(String, String)> = String::from_utf8_lossy(codes)
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter_map(|written| {
            let code = written.trim_matches(|c| matches!(c, '"' | '\'' | '{' | '}'));
            if code.is_empty() {
                return None;
            }
            let key = if code.eq_ignore_ascii_case("all") {
                EVERY_RULE.to_string()
            } else {
                code.to_string()
            };
            Some((key, written.to_string()))
        })
        .collect();
    split.sort();
    split.dedup_by(|a, b| a.0 == b.0);
    split
}

/// A marker and a rule it names: what is counted.
type Key = (usize, usize, String);

/// Occurrences of `added` markers that modified files gave up, by key: pragmas that may have
/// moved into a created file with the code they sit on.
pub type Released = HashMap<Key, usize>;

/// The markers of created and deleted files, in groups: a created file with the deleted file it
/// was moved from (the same content, or the same name), or alone.
#[derive(Debug, Default)]
pub struct Pool {
    groups: BTreeMap<String, Readings>,
}

impl Pool {
    /// Adds the readings of a created or deleted file to the group `group`.
    pub fn add(&mut self, group: &str, readings: Readings) {
        let into = self.groups.entry(group.to_string()).or_default();
        into.before.extend(readings.before);
        into.after.extend(readings.after);
    }

    /// The moves of each group; occurrences modified files gave up (`released`) make up for
    /// as many added here.
    pub fn compare(&self, catalogue: &Catalogue, released: &mut Released) -> Vec<Move> {
        let mut moves = Vec::new();
        for readings in self.groups.values() {
            moves.extend(compare(catalogue, readings, Counting::Moved(released)));
        }
        moves
    }
}

/// How a comparison counts.
#[derive(Debug)]
pub enum Counting<'r> {
    /// A modified file: what it gives up of `added` markers is noted.
    Modified(&'r mut Released),
    /// Files moved (created or deleted): `removed` markers do not count (a file deleted takes
    /// its settings with it), nor markers that do not count in new files, and what modified
    /// files gave up makes up for new occurrences.
    Moved(&'r mut Released),
}

/// The moves between the two sides of `readings`: occurrences added of an `added` marker (less
/// those a blanket pragma of the same marker gave up: each covers every rule of one line),
/// occurrences removed of a `removed` one.
pub fn compare(catalogue: &Catalogue, readings: &Readings, counting: Counting<'_>) -> Vec<Move> {
    let (moved, released) = match counting {
        Counting::Modified(released) => (false, released),
        Counting::Moved(released) => (true, released),
    };
    let marker_of = |hit: &Hit| &catalogue.entries()[hit.entry].markers[hit.marker];
    let counts_in = |hit: &Hit, after: bool| {
        let marker = marker_of(hit);
        !moved || (marker.on == Side::Added && (marker.in_new_files || !after))
    };
    let before: Vec<Hit> = (readings.before.iter())
        .filter(|h| counts_in(h, false))
        .cloned()
        .collect();
    let after: Vec<Hit> = (readings.after.iter())
        .filter(|h| counts_in(h, true))
        .cloned()
        .collect();
    let (was_counts, is_counts) = (count(&before), count(&after));
    let mut keys: Vec<(usize, usize, &str)> =
        was_counts.keys().chain(is_counts.keys()).copied().collect();
    keys.sort();
    keys.dedup();
    // Per key, the occurrences that are new (or gone, for a `removed` marker).
    let mut found: Vec<&Hit> = Vec::new();
    // What each marker's blanket pragmas gave up: lines whose rules they still cover.
    let mut blanket_given_up: HashMap<(usize, usize), usize> = HashMap::new();
    for key in keys {
        let (entry, marker_index, code) = key;
        let marker = &catalogue.entries()[entry].markers[marker_index];
        let (was, is) = (
            was_counts.get(&key).copied().unwrap_or(0),
            is_counts.get(&key).copied().unwrap_or(0),
        );
        if marker.on == Side::Added && code == EVERY_RULE && was > is {
            *blanket_given_up.entry((entry, marker_index)).or_default() += was - is;
        }
        let owned: Key = (entry, marker_index, code.to_string());
        let count = match marker.on {
            Side::Added if is >= was => {
                let more = is - was;
                // A pragma a modified file gave up, moved here with its code.
                let made_up = if moved {
                    let spare = released.entry(owned).or_default();
                    let used = more.min(*spare);
                    *spare -= used;
                    used
                } else {
                    0
                };
                more - made_up
            }
            Side::Added => {
                if !moved {
                    *released.entry(owned).or_default() += was - is;
                }
                0
            }
            Side::Removed => was.saturating_sub(is),
        };
        if count > 0 {
            let (from, other) = match marker.on {
                Side::Added => (&after, &before),
                Side::Removed => (&before, &after),
            };
            found.extend(new_occurrences(from, other, key, count));
        }
    }
    // A blanket pragma narrowed covers every rule on one line (`# noqa` to `# noqa: E401, F401`).
    let line_of = |hit: &Hit| (hit.entry, hit.marker, hit.path.clone(), hit.line);
    let mut covered: Vec<(usize, usize, String, u64)> = Vec::new();
    for hit in &found {
        if marker_of(hit).on != Side::Added
            || hit.code == EVERY_RULE
            || covered.contains(&line_of(hit))
        {
            continue;
        }
        if let Some(left) = blanket_given_up
            .get_mut(&(hit.entry, hit.marker))
            .filter(|n| **n > 0)
        {
            *left -= 1;
            covered.push(line_of(hit));
        }
    }
    let mut moves = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for hit in found {
        let marker = marker_of(hit);
        if hit.code != EVERY_RULE && covered.contains(&line_of(hit)) {
            continue;
        }
        let rule = format!("{}/{}", catalogue.entries()[hit.entry].name, marker.name);
        if !seen.insert((rule.clone(), hit.path.clone(), hit.line, hit.text.clone())) {
            continue;
        }
        moves.push(Move {
            class: marker.class,
            rule,
            path: Some(hit.path.clone()),
            line: Some(hit.line),
            what: what(marker.class, marker.on).to_string(),
            text: hit.text.clone(),
            allowed_by: None,
        });
    }
    moves
}

/// How many occurrences of each key `hits` holds.
fn count(hits: &[Hit]) -> BTreeMap<(usize, usize, &str), usize> {
    let mut counts = BTreeMap::new();
    for hit in hits {
        *counts.entry(hit.key()).or_default() += 1;
    }
    counts
}

/// `count` occurrences of `key` in `from` that are new: those on lines `other` has no
/// occurrence of `key` on first, then the last ones.
fn new_occurrences<'h>(
    from: &'h [Hit],
    other: &[Hit],
    key: (usize, usize, &str),
    count: usize,
) -> Vec<&'h Hit> {
    let mut old_lines: HashMap<&[u8], usize> = HashMap::new();
    for hit in other.iter().filter(|h| h.key() == key) {
        *old_lines.entry(&hit.line_text).or_default() += 1;
    }
    let candidates: Vec<&Hit> = from.iter().filter(|h| h.key() == key).collect();
    let mut fresh = Vec::new();
    let mut stale = Vec::new();
    for hit in candidates {
        match old_lines.get_mut(hit.line_text.as_slice()) {
            Some(left) if *left > 0 => {
                *left -= 1;
                stale.push(hit);
            }
            _ => fresh.push(hit),
        }
    }
    fresh.extend(stale.into_iter().rev());
    fresh.truncate(count);
    fresh.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    fresh
}

/// What a tests marker added did, in words.
pub const TEST_MARKER_ADDED: &str = "test skipped, focused or excused";

/// What a change to a marker of `class` did, in words.
fn what(class: Class, on: Side) -> &'static str {
    match (class, on) {
        (Class::Suppression, Side::Added) => "suppression added",
        (Class::Suppression, Side::Removed) => "a stricter level removed",
        (Class::Tests, Side::Added) => TEST_MARKER_ADDED,
        (Class::Tests, Side::Removed) => "test requirement removed",
        (Class::Config, Side::Added) => "tool configured inline",
        (Class::Config, Side::Removed) => "inline configuration removed",
        (Class::Evasion, Side::Added) => "code switched off",
        (Class::Evasion, Side::Removed) => "code switched off (a line removed)",
    }
}
