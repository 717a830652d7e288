//! A `Write` adapter that redacts a stream on its way through, across write boundaries, in
//! bounded memory: for raw output logs of any size.

use std::fmt;
use std::io::{self, Write};

use super::shapes::{MAX_END_MARKER_LEN, MAX_SHAPE_LEN};
use super::{Redactor, Span};

/// A write of more bytes than this is taken in parts (`write` says how many it took).
const MAX_TAKE: usize = 64 * 1024;

/// A pass is made once this many bytes wait, so that writes of single lines are not scanned one
/// by one.
pub(super) const PASS_AT: usize = 16 * 1024;

/// A secret that starts further than this before the settled limit (a run of overlapping
/// secrets) is not held back whole; see [`RedactingWriter`].
const MAX_HOLD: usize = 64 * 1024;

/// Redacts everything written through it with a [`Redactor`], then writes it to `W`.
///
/// A secret can straddle two writes, so the writer holds bytes back. The rule, for each pass over
/// the bytes received and not yet passed on:
///
/// 1. Inside a private key block (its marker has been written) bytes are dropped, through the
///    block's end marker. While there is none, bytes are dropped up to where an end marker could
///    still be arriving: the last line (an end marker is one line) or its last
///    `MAX_END_MARKER_LEN` bytes, whichever is shorter.
/// 2. Otherwise the secrets are found, and the settled limit computed: every secret starting
///    before it is complete and found exactly as in the whole stream. A shape is at most
///    `MAX_SHAPE_LEN` (512) bytes and never crosses a line break; an environment value of `n`
///    bytes needs `n` bytes, and crosses a line break only if it has one. So after a line break
///    only the last line is held back, at most 512 bytes of it, or the longest environment value
///    if that is longer (all of it when that value spans lines). Bytes before the limit are
///    written redacted, except that:
///    - a secret starting before the limit and ending after it is held back whole: the pass ends
///      at its start. If it starts more than `MAX_HOLD` (64 KiB) before the limit, which only a
///      run of overlapping secrets can, it is written as one marker through its end, and the
///      next pass searches again from the longest secret's length back, so that whatever reaches
///      past that end is redacted too, as a marker of its own;
///    - at a private key block whose end marker has not arrived, the bytes before it and its
///      marker are written, then rule 1 applies.
///
/// `write` makes a pass once `PASS_AT` (16 KiB) bytes wait, so a short write may not reach `W`
/// before a flush. `flush` makes a pass, then flushes `W`:
/// every settled byte is written, and what could still be the start of a secret is held back.
/// [`Self::finish`] (and `Drop`, ignoring errors) makes the last pass as at the end of the
/// stream: what is held back is written redacted, and a private key block with no end marker is
/// redacted to the end.
///
/// The output equals [`Redactor::redact`] of the whole stream, however it was split into writes,
/// except after a cut inside a run of overlapping secrets longer than `MAX_HOLD`, where it has
/// more markers. Memory stays below `MAX_HOLD` + `MAX_TAKE` + `PASS_AT` plus twice the longest
/// secret (512 bytes, or the longest environment value).
pub struct RedactingWriter<'r, W: Write> {
    redactor: &'r Redactor,
    /// `None` once finished.
    inner: Option<W>,
    stream: Stream,
}

/// The bytes of a stream that a [`RedactingWriter`] has received and not yet written, and where
/// it is in them.
#[derive(Default)]
pub(super) struct Stream {
    /// The bytes not yet passed on, after a few that were, kept for context.
    pub(super) buffer: Vec<u8>,
    /// How many bytes at the front of `buffer` have been passed on: written redacted, or dropped
    /// inside a private key block.
    passed: usize,
    in_private_key: bool,
    /// How far before `passed` the next pass searches: 0, or the longest secret after a cut
    /// inside one.
    lookback: usize,
    /// The secrets passed on so far, by kind (the redactor's index): counted for a scan.
    pub(super) found: Vec<usize>,
}

/// Where a pass ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// Before this position; the rest waits.
    At(usize),
    /// After the span with this index, cut inside a run of overlapping secrets.
    InsideRun(usize),
    /// At the start of the span with this index, an open private key block.
    PrivateKey(usize),
}

impl<'r, W: Write> RedactingWriter<'r, W> {
    pub fn new(redactor: &'r Redactor, inner: W) -> Self {
        Self {
            redactor,
            inner: Some(inner),
            stream: Stream::default(),
        }
    }

    /// Writes what is held back, redacted, flushes the inner writer and returns it.
    pub fn finish(mut self) -> io::Result<W> {
        let mut inner = self.inner.take().ok_or_else(finished)?;
        self.stream.pass_on(self.redactor, &mut inner, true)?;
        inner.flush()?;
        Ok(inner)
    }
}

fn finished() -> io::Error {
    io::Error::other("the redacting writer has already finished")
}

impl<W: Write> Write for RedactingWriter<'_, W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let inner = self.inner.as_mut().ok_or_else(finished)?;
        let taken = data.len().min(MAX_TAKE);
        self.stream.buffer.extend_from_slice(&data[..taken]);
        if self.stream.waiting() >= PASS_AT {
            self.stream.pass_on(self.redactor, inner, false)?;
        }
        Ok(taken)
    }

    fn flush(&mut self) -> io::Result<()> {
        let inner = self.inner.as_mut().ok_or_else(finished)?;
        self.stream.pass_on(self.redactor, inner, false)?;
        inner.flush()
    }
}

impl<W: Write> Drop for RedactingWriter<'_, W> {
    /// Writes what is held back, redacted, as [`RedactingWriter::finish`] does; errors are lost.
    fn drop(&mut self) {
        if let Some(inner) = self.inner.as_mut() {
            let _ = self.stream.pass_on(self.redactor, inner, true);
            let _ = inner.flush();
        }
    }
}

impl<W: Write> fmt::Debug for RedactingWriter<'_, W> {
    /// Sizes only: the bytes held back may be a secret.
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("RedactingWriter")
            .field("held_back", &self.stream.waiting())
            .field("in_private_key", &self.stream.in_private_key)
            .field("finished", &self.inner.is_none())
            .finish_non_exhaustive()
    }
}

/// What the stream needs to know of the secrets it looks for.
impl Redactor {
    /// The first position of `buffer` (at or after `from`) where a secret could start and not be
    /// complete yet, because its end, or the byte after it, has not arrived. Every secret starting
    /// before it is found exactly as it would be in the whole stream:
    /// - a shape spans at most [`MAX_SHAPE_LEN`] bytes and never a line break, so a start before
    ///   the last line break, or more than `MAX_SHAPE_LEN` bytes before the end, is settled;
    /// - an environment value of `n` bytes is settled when it starts `n` bytes before the end or
    ///   more; before the last line break too, if the value has no line break in it.
    fn settled_limit(&self, buffer: &[u8], from: usize) -> usize {
        let length = buffer.len();
        let after_last_line =
            memchr::memrchr(b'\n', &buffer[from..]).map_or(from, |at| from + at + 1);
        let before_end = |longest: usize| (length + 1).saturating_sub(longest);
        let mut limit = after_last_line.max(length.saturating_sub(MAX_SHAPE_LEN));
        if self.longest_single_line > 0 {
            limit = limit.min(after_last_line.max(before_end(self.longest_single_line)));
        }
        if self.longest_multi_line > 0 {
            limit = limit.min(before_end(self.longest_multi_line));
        }
        limit.max(from)
    }

    /// The longest secret that is not a private key block: how far back a search must start to
    /// see every secret that may reach a given position.
    fn longest_match(&self) -> usize {
        MAX_SHAPE_LEN
            .max(self.longest_single_line)
            .max(self.longest_multi_line)
    }
}

impl Stream {
    /// A stream that counts the secrets it passes on, by kind (of `kinds`).
    pub(super) fn counting(kinds: usize) -> Self {
        Self {
            found: vec![0; kinds],
            ..Self::default()
        }
    }

    pub(super) fn waiting(&self) -> usize {
        self.buffer.len() - self.passed
    }

    /// One pass as the rule on [`RedactingWriter`] says; `at_end` when no more bytes will come.
    pub(super) fn pass_on(
        &mut self,
        redactor: &Redactor,
        inner: &mut impl Write,
        at_end: bool,
    ) -> io::Result<()> {
        loop {
            if self.in_private_key && !self.drop_private_key(redactor, at_end) {
                break;
            }
            let search_from = self.passed - self.lookback.min(self.passed);
            let spans = clip(redactor.spans(&self.buffer, search_from), self.passed);
            let limit = if at_end {
                self.buffer.len()
            } else {
                redactor.settled_limit(&self.buffer, self.passed)
            };
            let cut = cut(&spans, limit);
            let (to, written) = match cut {
                Cut::At(to) => (to, spans.partition_point(|span| span.start < to)),
                Cut::InsideRun(index) => (spans[index].end, index + 1),
                Cut::PrivateKey(index) => (spans[index].start + spans[index].shown, index + 1),
            };
            redactor.for_each_piece(&self.buffer, self.passed, to, &spans[..written], |piece| {
                inner.write_all(piece)
            })?;
            for span in &spans[..written] {
                if let Some(count) = self.found.get_mut(span.kind) {
                    *count += 1;
                }
            }
            self.passed = to;
            self.lookback = 0;
            match cut {
                Cut::At(_) => break,
                Cut::InsideRun(_) => self.lookback = redactor.longest_match(),
                Cut::PrivateKey(_) => self.in_private_key = true,
            }
        }
        self.compact();
        Ok(())
    }

    /// Rule 1: drops the bytes of a private key block. True when its end marker was found and
    /// passing on goes on after it.
    fn drop_private_key(&mut self, redactor: &Redactor, at_end: bool) -> bool {
        if let Some(end) = redactor.shapes.end_of_block(&self.buffer, self.passed) {
            self.passed = end;
            self.in_private_key = false;
            return true;
        }
        let length = self.buffer.len();
        self.passed = if at_end {
            length
        } else {
            let after_last_line = memchr::memrchr(b'\n', &self.buffer[self.passed..])
                .map_or(self.passed, |at| self.passed + at + 1);
            after_last_line
                .max(length.saturating_sub(MAX_END_MARKER_LEN))
                .max(self.passed)
        };
        false
    }

    /// Forgets the bytes passed on, but for the context the next pass looks back at.
    fn compact(&mut self) {
        let keep = self.lookback.max(1);
        let forget = self.passed.saturating_sub(keep);
        if forget > 0 {
            self.buffer.drain(..forget);
            self.passed -= forget;
        }
    }
}

/// Drops the spans that end before `passed` and cuts the starts of those reaching past it: they
/// were found by looking back, and their beginning has been written as a marker already.
fn clip(mut spans: Vec<Span>, passed: usize) -> Vec<Span> {
    spans.retain(|span| span.end > passed);
    for span in spans.iter_mut().filter(|span| span.start < passed) {
        span.shown = span.shown.saturating_sub(passed - span.start);
        span.start = passed;
    }
    spans
}

/// Where a pass over `spans` (in order, apart) with this settled limit ends.
fn cut(spans: &[Span], limit: usize) -> Cut {
    for (index, span) in spans.iter().enumerate() {
        if span.start >= limit {
            break;
        }
        if span.open {
            return Cut::PrivateKey(index);
        }
        if span.end > limit {
            return if span.start + MAX_HOLD < limit {
                Cut::InsideRun(index)
            } else {
                Cut::At(span.start)
            };
        }
    }
    Cut::At(limit)
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
