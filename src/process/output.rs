//! What a process printed, kept within bounds: a small head and tail of the stream, and how
//! much passed between them.

use std::borrow::Cow;

/// Bytes of the head and of the tail kept in memory.
const KEEP: usize = 16 * 1024;

/// The head and tail of a stream, and how much passed between them.
#[derive(Debug, Default, Clone)]
pub struct HeadTail {
    head: Vec<u8>,
    tail: Vec<u8>,
    total: u64,
}

impl HeadTail {
    pub fn push(&mut self, mut chunk: &[u8]) {
        self.total += chunk.len() as u64;
        if self.head.len() < KEEP {
            let take = chunk.len().min(KEEP - self.head.len());
            self.head.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        if chunk.len() >= KEEP {
            self.tail.clear();
            self.tail.extend_from_slice(&chunk[chunk.len() - KEEP..]);
        } else {
            self.tail.extend_from_slice(chunk);
            if self.tail.len() > 2 * KEEP {
                self.tail.drain(..self.tail.len() - KEEP);
            }
        }
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    /// The last bytes of the stream (at most `KEEP`), however long it was.
    pub fn tail(&self) -> Cow<'_, [u8]> {
        if self.tail.len() >= KEEP {
            return Cow::Borrowed(&self.tail[self.tail.len() - KEEP..]);
        }
        let from_head = (KEEP - self.tail.len()).min(self.head.len());
        if self.tail.is_empty() {
            return Cow::Borrowed(&self.head[self.head.len() - from_head..]);
        }
        let mut joined = self.head[self.head.len() - from_head..].to_vec();
        joined.extend_from_slice(&self.tail);
        Cow::Owned(joined)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_tail_memory_is_bounded() {
        let mut kept = HeadTail::default();
        let chunk = vec![b'x'; 5000];
        for _ in 0..1000 {
            kept.push(&chunk);
        }
        assert!(kept.head.len() <= KEEP && kept.tail.len() <= 2 * KEEP);
        assert_eq!(kept.tail().len(), KEEP);
    }
}
