//! Keeps a check's output within bounds: the log file gets the first `log_limit` bytes, then a
//! marker and the tail; memory holds only a small head and tail.

use std::io::{self, Write};

use crate::process::HeadTail;

/// The last `count` non-empty lines of `output`, cleaned.
pub fn last_lines(output: &HeadTail, count: usize) -> Vec<String> {
    let tail = output.tail();
    let text = String::from_utf8_lossy(&tail);
    let mut lines: Vec<String> = text
        .lines()
        .map(|line| crate::parse::clean_line(line.as_bytes()).trim().to_string())
        .filter(|line| !line.is_empty())
        .collect();
    let start = lines.len().saturating_sub(count);
    lines.drain(..start);
    lines
}

/// Streams one check's output into the log file up to a limit, keeping the head and tail.
#[derive(Debug)]
pub struct BoundedLog<'a, W: Write> {
    log: &'a mut W,
    limit: u64,
    written: u64,
    ends_with_newline: bool,
    kept: HeadTail,
}

impl<'a, W: Write> BoundedLog<'a, W> {
    pub fn new(log: &'a mut W, limit: u64) -> Self {
        Self {
            log,
            limit,
            written: 0,
            ends_with_newline: true,
            kept: HeadTail::default(),
        }
    }

    pub fn write(&mut self, chunk: &[u8]) -> io::Result<()> {
        if self.written < self.limit {
            let room = usize::try_from(self.limit - self.written).unwrap_or(usize::MAX);
            let part = &chunk[..chunk.len().min(room)];
            self.log.write_all(part)?;
            self.written += part.len() as u64;
            if let Some(&last) = part.last() {
                self.ends_with_newline = last == b'\n';
            }
        }
        self.kept.push(chunk);
        Ok(())
    }

    /// Writes what the limit held back: a marker and the tail. Returns the head and tail kept.
    pub fn finish(self) -> io::Result<HeadTail> {
        let total = self.kept.total();
        if total > self.written {
            let tail = self.kept.tail();
            let tail_start = total - tail.len() as u64;
            let skip = usize::try_from(self.written.saturating_sub(tail_start)).unwrap_or(0);
            let tail = &tail[skip.min(tail.len())..];
            let left_out = total - self.written - tail.len() as u64;
            if !self.ends_with_newline {
                self.log.write_all(b"\n")?;
            }
            writeln!(
                self.log,
                "[refine-loop: {left_out} bytes of output left out here (log limit {} bytes); the last {} bytes follow]",
                self.limit,
                tail.len()
            )?;
            self.log.write_all(tail)?;
            if !tail.ends_with(b"\n") {
                self.log.write_all(b"\n")?;
            }
        } else if !self.ends_with_newline {
            self.log.write_all(b"\n")?;
        }
        Ok(self.kept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_keeps_everything_under_the_limit() {
        let mut log = Vec::new();
        let mut bounded = BoundedLog::new(&mut log, 100);
        bounded.write(b"one\ntwo").unwrap();
        let kept = bounded.finish().unwrap();
        assert_eq!(log, b"one\ntwo\n");
        assert_eq!(last_lines(&kept, 5), ["one", "two"]);
    }

    #[test]
    fn log_cuts_the_middle_and_keeps_the_tail() {
        let mut log = Vec::new();
        let mut bounded = BoundedLog::new(&mut log, 10);
        for _ in 0..10_000 {
            bounded.write(b"0123456789\n").unwrap();
        }
        bounded.write(b"last line\n").unwrap();
        let kept = bounded.finish().unwrap();
        let text = String::from_utf8(log).unwrap();
        assert!(
            text.starts_with("0123456789\n[refine-loop: "),
            "{}",
            &text[..80]
        );
        assert!(text.ends_with("0123456789\nlast line\n"));
        assert!(text.len() < 20_000, "{}", text.len());
        assert_eq!(kept.total(), 110_010);
        assert_eq!(last_lines(&kept, 1), ["last line"]);
    }
}
