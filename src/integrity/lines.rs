//! Lines of a file as the inspection reads them: where a byte's line is, a line's text
//! trimmed, and text shortened for a report.

/// Where each line of a text starts.
#[derive(Debug)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &[u8]) -> Self {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text).map(|at| at + 1));
        Self { starts }
    }

    /// The 1-based line of the byte at `offset`.
    pub fn line_of(&self, offset: usize) -> u64 {
        self.starts.partition_point(|&start| start <= offset) as u64
    }

    /// The line holding the byte at `offset`, without its line break, trimmed.
    pub fn line_at<'t>(&self, text: &'t [u8], offset: usize) -> &'t [u8] {
        let index = self.starts.partition_point(|&start| start <= offset) - 1;
        let start = self.starts[index];
        let end = self.starts.get(index + 1).map_or(text.len(), |&next| next);
        trim(&text[start..end])
    }
}

/// `bytes` without ASCII whitespace at either end.
pub fn trim(bytes: &[u8]) -> &[u8] {
    bytes.trim_ascii()
}

/// The lines of `text`, each trimmed, with their 1-based numbers.
pub fn trimmed_lines(text: &[u8]) -> impl Iterator<Item = (u64, &[u8])> {
    text.split(|&byte| byte == b'\n')
        .enumerate()
        .map(|(index, line)| (index as u64 + 1, trim(line)))
}

/// The lines one side of a file has more of than the other (trimmed, counted): what a change
/// added and removed, with their numbers. Lines both sides hold as often are in neither.
#[derive(Debug, Default)]
pub struct LineDiff<'t> {
    pub added: Vec<(u64, &'t [u8])>,
    pub removed: Vec<(u64, &'t [u8])>,
}

impl<'t> LineDiff<'t> {
    pub fn of(before: &'t [u8], after: &'t [u8]) -> Self {
        let mut balance: foldhash::HashMap<&[u8], i64> = foldhash::HashMap::default();
        for (_, line) in trimmed_lines(after) {
            *balance.entry(line).or_default() += 1;
        }
        for (_, line) in trimmed_lines(before) {
            *balance.entry(line).or_default() -= 1;
        }
        // The last occurrences of a line are the ones taken for added (or removed).
        let pick = |text: &'t [u8], sign: i64, balance: &mut foldhash::HashMap<&[u8], i64>| {
            let mut lines: Vec<(u64, &'t [u8])> = trimmed_lines(text).collect();
            lines.reverse();
            let mut picked = Vec::new();
            for (number, line) in lines {
                if let Some(left) = balance.get_mut(line).filter(|left| **left * sign > 0) {
                    *left -= sign;
                    picked.push((number, line));
                }
            }
            picked.reverse();
            picked
        };
        let added = pick(after, 1, &mut balance);
        let removed = pick(before, -1, &mut balance);
        Self { added, removed }
    }
}

/// Text from a file for a report: lossy UTF-8 on one line, at most [`SHOWN`] characters.
pub fn shown(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(trim(bytes)).replace(['\r', '\n', '\t'], " ");
    if text.chars().count() <= SHOWN {
        return text;
    }
    let mut cut: String = text.chars().take(SHOWN - 1).collect();
    cut.push('…');
    cut
}

/// Characters of a file's text a report shows.
pub const SHOWN: usize = 120;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_offsets() {
        let text = b"a\nbb\n\nccc";
        let index = LineIndex::new(text);
        let table = [
            (0, 1, "a"),
            (1, 1, "a"),
            (2, 2, "bb"),
            (5, 3, ""),
            (6, 4, "ccc"),
            (8, 4, "ccc"),
        ];
        for (offset, line, content) in table {
            assert_eq!(index.line_of(offset), line, "{offset}");
            assert_eq!(index.line_at(text, offset), content.as_bytes(), "{offset}");
        }
    }

    #[test]
    fn a_line_diff_counts_lines_and_keeps_their_numbers() {
        let diff = LineDiff::of(b"a\nb\nb\nc\n", b"b\n  a\nd\nb\nb\n");
        assert_eq!(diff.added, vec![(3, &b"d"[..]), (5, &b"b"[..])]);
        assert_eq!(diff.removed, vec![(4, &b"c"[..])]);
        let same = LineDiff::of(b"x\n  y\n", b"  y\nx\n");
        assert!(same.added.is_empty() && same.removed.is_empty());
    }

    #[test]
    fn shown_text_is_one_short_line() {
        assert_eq!(shown(b"  x = 1  # noqa\r\n"), "x = 1  # noqa");
        let long = "y".repeat(300);
        let cut = shown(long.as_bytes());
        assert_eq!(cut.chars().count(), SHOWN);
        assert!(cut.ends_with('…'));
        assert_eq!(shown(b"\xff\xfeok"), "\u{fffd}\u{fffd}ok");
    }
}
