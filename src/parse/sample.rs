//! What `auto` ranks the parsers on: a long output's sample, not the whole of it. Ranking runs
//! every parser of the catalogue over every line it reads, so it costs forty parsers' time per
//! line; on a sample of a few hundred KiB (the start, evenly spread windows and the end, where
//! tools print their summary) the choice costs a small share of reading the output once with
//! the parser chosen. A short output, and a document (JSON, XML: a reader of whole documents
//! needs all of it), is ranked whole.

use std::io::{self, Read, Seek, SeekFrom};

/// Outputs up to this long are ranked whole.
pub const WHOLE_UP_TO: u64 = 128 * 1024;
/// The start of a longer output ranked.
const HEAD: u64 = 64 * 1024;
/// Windows spread evenly through the middle, and the length of each.
const WINDOWS: u64 = 4;
const WINDOW: u64 = 8 * 1024;
/// The end ranked (the tool's summary).
const TAIL: u64 = 32 * 1024;

/// What [`take`] made of an output.
#[derive(Debug)]
pub enum Sample {
    /// Rank all of it (short, or a document).
    Whole,
    /// Rank these lines of it (whole lines, windows separated by a line break).
    Part(Vec<u8>),
}

/// The sample of `input` (of `length` bytes) to rank; `input` is left rewound.
pub fn take(input: &mut (impl Read + Seek), length: u64) -> io::Result<Sample> {
    if length <= WHOLE_UP_TO {
        return Ok(Sample::Whole);
    }
    let head = read_at(input, 0, HEAD)?;
    if is_a_document(&head) {
        input.rewind()?;
        return Ok(Sample::Whole);
    }
    let mut sample = Vec::with_capacity((HEAD + WINDOWS * WINDOW + TAIL) as usize);
    sample.extend_from_slice(whole_lines(&head, false));
    for window in 1..=WINDOWS {
        let at = length * window / (WINDOWS + 1);
        let bytes = read_at(input, at, WINDOW)?;
        push_piece(&mut sample, whole_lines(&bytes, true));
    }
    let bytes = read_at(input, length.saturating_sub(TAIL), TAIL)?;
    let tail = match bytes.iter().position(|&b| b == b'\n') {
        Some(newline) => &bytes[newline + 1..],
        None => &bytes[..],
    };
    push_piece(&mut sample, tail);
    input.rewind()?;
    Ok(Sample::Part(sample))
}

/// Whether an output that starts with `head` is a JSON or XML document: JSON that parses, or
/// stops only for being cut; `<?xml` or an element. A log line that opens with a bracket
/// (`[ 15%] Building …`, `[INFO] …`) is none.
fn is_a_document(head: &[u8]) -> bool {
    let start = head
        .iter()
        .position(|b| !b.is_ascii_whitespace() && !matches!(b, 0xEF | 0xBB | 0xBF))
        .unwrap_or(head.len());
    let head = &head[start..];
    match head.first() {
        Some(b'{' | b'[') => {
            // The first value only: JSON lines hold many.
            let mut values =
                serde_json::Deserializer::from_slice(head).into_iter::<serde::de::IgnoredAny>();
            match values.next() {
                Some(Ok(_)) => true,
                Some(Err(error)) => error.is_eof(),
                None => false,
            }
        }
        Some(b'<') => {
            head.starts_with(b"<?xml") || head.get(1).is_some_and(u8::is_ascii_alphabetic)
        }
        _ => false,
    }
}

fn push_piece(sample: &mut Vec<u8>, piece: &[u8]) {
    if !sample.is_empty() && !sample.ends_with(b"\n") {
        sample.push(b'\n');
    }
    sample.extend_from_slice(piece);
}

fn read_at(input: &mut (impl Read + Seek), at: u64, length: u64) -> io::Result<Vec<u8>> {
    input.seek(SeekFrom::Start(at))?;
    let mut bytes = Vec::with_capacity(length as usize);
    input.take(length).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The whole lines of `bytes`: up to its last line break, and (`mid_line`: it starts inside a
/// line) from after its first.
fn whole_lines(bytes: &[u8], mid_line: bool) -> &[u8] {
    let start = if mid_line {
        bytes
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |newline| newline + 1)
    } else {
        0
    };
    let end = bytes
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(start, |newline| newline + 1)
        .max(start);
    &bytes[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_output_is_sampled_in_whole_lines_and_a_short_one_is_not() {
        let short = b"a.py:1:1: E1 x\n".repeat(10);
        let sample = take(&mut io::Cursor::new(&short), short.len() as u64).unwrap();
        assert!(matches!(sample, Sample::Whole));

        let line = b"src/lib.rs:10:5: warning: unused variable: `x`\n";
        let long: Vec<u8> = line.repeat((WHOLE_UP_TO as usize * 4) / line.len());
        let mut cursor = io::Cursor::new(&long);
        let Sample::Part(sample) = take(&mut cursor, long.len() as u64).unwrap() else {
            panic!("a long output is sampled");
        };
        assert_eq!(cursor.position(), 0, "left rewound");
        assert!(sample.len() as u64 <= HEAD + WINDOWS * WINDOW + TAIL);
        for piece in sample.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            assert_eq!(piece, &line[..line.len() - 1], "only whole lines");
        }

        let document = [b"[".as_slice(), &b"{\"a\": 1},\n".repeat(60_000), b"{}]"].concat();
        let sample = take(&mut io::Cursor::new(&document), document.len() as u64).unwrap();
        assert!(
            matches!(sample, Sample::Whole),
            "a document is ranked whole"
        );
    }

    #[test]
    fn a_document_is_told_from_a_log_that_opens_with_a_bracket() {
        let log = b"[ 15%] Building C object src/a.c.o\n".repeat(20_000);
        let sample = take(&mut io::Cursor::new(&log), log.len() as u64).unwrap();
        assert!(
            matches!(sample, Sample::Part(_)),
            "a log line is no document"
        );
        for (head, document) in [
            (br#"  [{"a": [1, 2"#.as_slice(), true),
            (b"{\"reason\": \"x\"}\n{\"reason\"", true),
            (b"<?xml version=\"1.0\"?><checkstyle>", true),
            (b"<testsuites>", true),
            (b"[INFO] Scanning for projects...", false),
            (b"[1/3] Compiling", false),
            (b"<== check", false),
        ] {
            assert_eq!(
                is_a_document(head),
                document,
                "{}",
                String::from_utf8_lossy(head)
            );
        }
    }
}
