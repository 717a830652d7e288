//! Turns a raw byte stream into clean text lines: split on `\n`, accept CRLF, keep the last
//! `\r` overwrite of a progress line, strip ANSI/ECMA-48 escapes, drop a BOM, decode invalid UTF-8
//! lossily, and cut absurdly long lines with a marker; then strip the CI framing around them
//! ([`framing`]), so that every reader of output (`parse`, `auto`, the gate's checks) gets
//! the same lines. Memory is bounded by the longest line kept (and the framing's look-ahead).

mod framing;

use std::borrow::Cow;

use framing::Framer;
pub use framing::{FrameReport, Framing};

/// Lines longer than this are cut, the rest of the line dropped and counted.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// Collects chunks of output into lines, holding at most one (bounded) partial line, and passes
/// them through the CI framing stage.
#[derive(Debug)]
pub struct LineAssembler {
    pending: Vec<u8>,
    dropped_from_pending: u64,
    max_line: usize,
    lines_cut: u64,
    framer: Framer,
}

impl Default for LineAssembler {
    fn default() -> Self {
        Self::new(MAX_LINE_BYTES)
    }
}

impl LineAssembler {
    pub fn new(max_line: usize) -> Self {
        Self {
            pending: Vec::new(),
            dropped_from_pending: 0,
            max_line,
            lines_cut: 0,
            framer: Framer::new(max_line),
        }
    }

    /// The CI framing recognised, and what stripping it did so far.
    pub fn framing(&self) -> &FrameReport {
        self.framer.report()
    }

    /// How many lines were cut so far.
    pub fn lines_cut(&self) -> u64 {
        self.lines_cut
    }

    /// Feeds a chunk; calls `on_line` for every line it completes.
    pub fn push(&mut self, mut chunk: &[u8], on_line: &mut dyn FnMut(&str)) {
        // The partial line held from the last chunk first.
        if !self.pending.is_empty() || self.dropped_from_pending > 0 {
            let Some(newline) = memchr::memchr(b'\n', chunk) else {
                self.append(chunk);
                return;
            };
            self.append(&chunk[..newline]);
            self.emit(on_line);
            chunk = &chunk[newline + 1..];
        }
        if let Some(last) = memchr::memrchr(b'\n', chunk) {
            let whole = &chunk[..last];
            // The chunk's whole lines are checked for UTF-8 together (most output is valid), not
            // one by one; a chunk with an invalid byte is read line by line.
            let text = simdutf8::basic::from_utf8(whole).ok();
            let mut start = 0;
            for end in memchr::memchr_iter(b'\n', whole).chain([whole.len()]) {
                // A newline is a whole character: `text` is cut where the line ends.
                let line = text.and_then(|text| text.get(start..end));
                self.whole_line(&whole[start..end], line, on_line);
                start = end + 1;
            }
            chunk = &chunk[last + 1..];
        }
        self.append(chunk);
    }

    /// A line read whole from one chunk: `text` when it is known to be UTF-8.
    fn whole_line(&mut self, part: &[u8], text: Option<&str>, on_line: &mut dyn FnMut(&str)) {
        if part.len() > self.max_line {
            self.append(part);
            self.emit(on_line);
        } else {
            self.framer.line(part, text, 0, on_line);
        }
    }

    /// Emits the last line if the stream did not end with a newline, and what the framing stage
    /// still holds.
    pub fn finish(&mut self, on_line: &mut dyn FnMut(&str)) {
        if !self.pending.is_empty() || self.dropped_from_pending > 0 {
            self.emit(on_line);
        }
        self.framer.finish(on_line);
    }

    fn append(&mut self, part: &[u8]) {
        let room = self.max_line.saturating_sub(self.pending.len());
        if part.len() <= room {
            self.pending.extend_from_slice(part);
        } else {
            self.pending.extend_from_slice(&part[..room]);
            self.dropped_from_pending += (part.len() - room) as u64;
        }
    }

    fn emit(&mut self, on_line: &mut dyn FnMut(&str)) {
        if self.dropped_from_pending > 0 {
            self.lines_cut += 1;
        }
        self.framer
            .line(&self.pending, None, self.dropped_from_pending, on_line);
        self.pending.clear();
        self.dropped_from_pending = 0;
    }
}

/// Cleans one raw line (without its `\n`) into text.
pub fn clean_line(raw: &[u8]) -> Cow<'_, str> {
    match clean_line_with(raw, None, &mut Vec::new()) {
        Cleaned::Raw(text) => text,
        Cleaned::Scratch(text) => Cow::Owned(text.into_owned()),
    }
}

/// [`clean_line`], with `scratch` to hold a line whose escapes are removed (the caller keeps it
/// from line to line, so that no line costs an allocation), and the line as `text` when it is
/// already known to be UTF-8.
pub(super) fn clean_line_with<'r, 's>(
    raw: &'r [u8],
    text: Option<&'r str>,
    scratch: &'s mut Vec<u8>,
) -> Cleaned<'r, 's> {
    let (mut start, mut end) = (0, raw.len());
    // Most lines have no carriage return and no escape: one search tells.
    let special = memchr::memchr2(b'\r', 0x1b, raw).is_some();
    if special {
        while end > 0 && raw[end - 1] == b'\r' {
            end -= 1;
        }
        if let Some(last_cr) = memchr::memrchr(b'\r', &raw[..end]) {
            start = last_cr + 1;
        }
    }
    if raw[start..end].starts_with(&[0xEF, 0xBB, 0xBF]) {
        start += 3;
    }
    let line = &raw[start..end];
    if special && memchr::memchr(0x1b, line).is_some() {
        strip_escapes(line, scratch);
        return Cleaned::Scratch(decode(scratch));
    }
    // A carriage return and a byte order mark are whole characters: `text` is cut where they end.
    match text.and_then(|text| text.get(start..end)) {
        Some(text) => Cleaned::Raw(Cow::Borrowed(text)),
        None => Cleaned::Raw(decode(line)),
    }
}

/// A cleaned line: borrowed from the raw line or from the scratch buffer.
pub(super) enum Cleaned<'r, 's> {
    Raw(Cow<'r, str>),
    Scratch(Cow<'s, str>),
}

impl Cleaned<'_, '_> {
    pub(super) fn as_str(&self) -> &str {
        match self {
            Self::Raw(text) => text,
            Self::Scratch(text) => text,
        }
    }
}

/// Valid UTF-8 as it is (validated with SIMD: every line of output goes through here), invalid
/// UTF-8 with replacement characters.
fn decode(bytes: &[u8]) -> Cow<'_, str> {
    match simdutf8::basic::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// `text` without its ECMA-48 escape sequences, for text that did not come through
/// [`clean_line`] (what a structured parser decoded, say).
pub fn without_escapes(text: &str) -> Cow<'_, str> {
    if text.contains('\x1b') {
        let mut out = Vec::new();
        strip_escapes(text.as_bytes(), &mut out);
        Cow::Owned(String::from_utf8_lossy(&out).into_owned())
    } else {
        Cow::Borrowed(text)
    }
}

/// Writes `raw` without its ECMA-48 escape sequences to `out` (cleared first): CSI
/// (`ESC [ … final`), OSC (`ESC ] … BEL|ESC \`), and two-byte escapes.
fn strip_escapes(raw: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut index = 0;
    while index < raw.len() {
        if raw[index] != 0x1b {
            out.push(raw[index]);
            index += 1;
            continue;
        }
        index += 1;
        match raw.get(index) {
            Some(b'[') => {
                index += 1;
                while index < raw.len() && (0x20..=0x3f).contains(&raw[index]) {
                    index += 1;
                }
                index += 1; // the final byte
            }
            Some(b']') => {
                index += 1;
                while index < raw.len() {
                    if raw[index] == 0x07 {
                        index += 1;
                        break;
                    }
                    if raw[index] == 0x1b && raw.get(index + 1) == Some(&b'\\') {
                        index += 2;
                        break;
                    }
                    index += 1;
                }
            }
            Some(byte) if (0x40..=0x5f).contains(byte) => index += 1,
            // nF escapes: intermediates, then a final byte (`ESC ( B` selects a character set).
            Some(byte) if (0x20..=0x2f).contains(byte) => {
                while index < raw.len() && (0x20..=0x2f).contains(&raw[index]) {
                    index += 1;
                }
                index += 1;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(chunks: &[&[u8]], max_line: usize) -> Vec<String> {
        let mut assembler = LineAssembler::new(max_line);
        let mut lines = Vec::new();
        for chunk in chunks {
            assembler.push(chunk, &mut |line| lines.push(line.to_string()));
        }
        assembler.finish(&mut |line| lines.push(line.to_string()));
        lines
    }

    #[test]
    fn escapes_leave_text_of_many_lines_otherwise_alone() {
        assert_eq!(
            without_escapes("\x1b[1;31ma\x1b[0m\n  b\r\nc – ü"),
            "a\n  b\r\nc – ü"
        );
        assert!(matches!(without_escapes("plain"), Cow::Borrowed("plain")));
    }

    #[test]
    fn cleaning() {
        let table: [(&[u8], &str); 10] = [
            (b"plain", "plain"),
            (b"crlf\r", "crlf"),
            (b"10%\r50%\r100% done", "100% done"),
            (b"\xEF\xBB\xBFbom", "bom"),
            (b"\x1b[1m\x1b[31merror\x1b[0m: x", "error: x"),
            (b"\x1b[2K\x1b[1Gcursor", "cursor"),
            (b"\x1b(B\x1b[mDiff in src/a.rs:3:", "Diff in src/a.rs:3:"),
            (
                b"\x1b]8;;https://example.com\x07link\x1b]8;;\x07 text",
                "link text",
            ),
            (b"\x1b]8;;file:///a\x1b\\a.rs\x1b]8;;\x1b\\", "a.rs"),
            (b"bad \xff\xfe utf8", "bad \u{fffd}\u{fffd} utf8"),
        ];
        for (raw, expected) in table {
            assert_eq!(clean_line(raw), expected, "{raw:?}");
        }
    }

    /// A chunk's lines are checked for UTF-8 together when they can be: cut into chunks of any
    /// size (a character cut in two, a line longer than a chunk, an invalid byte in some chunks
    /// only), the output reads the same as line by line.
    #[test]
    fn lines_read_the_same_whatever_the_chunks() {
        let mut output: Vec<u8> = Vec::new();
        for n in 0..40 {
            output.extend_from_slice(format!("été {n} – ünïcode\r\n").as_bytes());
            output.extend_from_slice(b"\x1b[31merror\x1b[0m: x\n10%\r100%\n");
            if n % 7 == 0 {
                output.extend_from_slice(b"bad \xff\xfe byte\n\xEF\xBB\xBFbom\n");
            }
            output.extend_from_slice("long ".repeat(n).as_bytes());
            output.push(b'\n');
        }
        output.extend_from_slice("tail é".as_bytes());
        let expected: Vec<String> = output
            .split(|&byte| byte == b'\n')
            .map(|line| clean_line(line).into_owned())
            .collect();
        for size in [1, 2, 3, 5, 64, 1000, output.len()] {
            let chunks: Vec<&[u8]> = output.chunks(size).collect();
            assert_eq!(lines_of(&chunks, 10_000), expected, "chunks of {size}");
        }
    }

    #[test]
    fn lines_split_across_chunks() {
        assert_eq!(
            lines_of(&[b"ab", b"c\nde", b"f\n\ng"], 100),
            ["abc", "def", "", "g"]
        );
        assert_eq!(lines_of(&[b"x\n"], 100), ["x"]);
        assert!(lines_of(&[b""], 100).is_empty());
    }

    #[test]
    fn long_lines_are_cut_with_a_marker() {
        let mut assembler = LineAssembler::new(4);
        let mut lines = Vec::new();
        assembler.push(b"abcdefgh\nok\n123", &mut |l| lines.push(l.to_string()));
        assembler.push(b"456789", &mut |l| lines.push(l.to_string()));
        assembler.finish(&mut |l| lines.push(l.to_string()));
        assert_eq!(
            lines,
            [
                "abcd [refine-loop: line cut, 4 more bytes left out]",
                "ok",
                "1234 [refine-loop: line cut, 5 more bytes left out]"
            ]
        );
        assert_eq!(assembler.lines_cut(), 2);
    }

    #[test]
    fn unterminated_escapes_do_not_panic() {
        for raw in [
            &b"\x1b"[..],
            b"\x1b[",
            b"\x1b]8;;",
            b"a\x1b[12",
            b"\x1b]\x1b",
        ] {
            // Cut short, they are still escapes: dropped, never printed as control bytes.
            let cleaned = clean_line(raw);
            assert!(!cleaned.contains('\x1b'), "{raw:?} -> {cleaned:?}");
        }
    }
}
