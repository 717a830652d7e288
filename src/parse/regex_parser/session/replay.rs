//! The lines of an entry read first only for what tells it from another finding, for a parser
//! that counts a repeated finding once: most entries of a big build log are repeats (cargo prints
//! a diagnostic again for each target), and a repeat is read only for its identity. Its lines are
//! kept meanwhile; one that proves new is read again, whole.

use crate::parse::regex_parser::EntryLine;

/// Bytes of an entry's lines kept to read them again; a longer entry is read whole from there on.
const MAX_REPLAY_BYTES: usize = 64 * 1024;

/// The lines of the open entry, while it is read only for its identity.
#[derive(Debug, Default)]
pub(super) struct Replay {
    /// Whether the open entry is read only for its identity, its lines kept here.
    pub(super) active: bool,
    /// The line that opened the entry, then each line it took.
    text: String,
    /// Where the opening line ends in `text`.
    opening_end: usize,
    /// The rule that took each later line, and where the line ends in `text`.
    lines: Vec<(EntryLine, usize)>,
}

impl Replay {
    /// Starts keeping the lines of the entry that `opening` opens (the buffers are reused).
    pub(super) fn start(&mut self, opening: &str) {
        self.active = true;
        self.text.clear();
        self.text.push_str(opening);
        self.opening_end = self.text.len();
        self.lines.clear();
    }

    /// Whether `line` fits with the lines kept; when it does not, the entry is read whole from
    /// there on.
    pub(super) fn fits(&self, line: &str) -> bool {
        self.text.len() + line.len() <= MAX_REPLAY_BYTES
    }

    /// Keeps `line`, which `rule` took.
    pub(super) fn keep(&mut self, line: &str, rule: EntryLine) {
        self.text.push_str(line);
        self.lines.push((rule, self.text.len()));
    }

    /// The line that opened the entry.
    pub(super) fn opening(&self) -> &str {
        &self.text[..self.opening_end]
    }

    /// The lines the entry took after its opening line, with the rule that took each.
    pub(super) fn lines(&self) -> impl Iterator<Item = (EntryLine, &str)> {
        let mut start = self.opening_end;
        self.lines.iter().map(move |&(rule, end)| {
            let line = &self.text[start..end];
            start = end;
            (rule, line)
        })
    }
}
