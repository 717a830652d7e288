//! Counting the secrets in a stream of any size (a file a delegate wrote), in bounded memory: the
//! bytes pass through the same held-back window as [`super::RedactingWriter`]'s, and nothing is
//! written.

use std::collections::HashMap;
use std::io::{self, Read};

use super::Redactor;
use super::writer::{PASS_AT, Stream};

/// How much is read at a time.
const CHUNK: usize = 64 * 1024;

impl Redactor {
    /// The secrets in the bytes `source` yields, counted by what they are (the variable's name
    /// or the shape's), as [`Self::findings`] counts them in all the bytes at once. They are read
    /// `CHUNK` (64 KiB) at a time: memory stays below what a [`super::RedactingWriter`] holds,
    /// whatever the size of the source.
    pub fn count_in(&self, mut source: impl Read) -> io::Result<HashMap<String, usize>> {
        let mut stream = Stream::counting(self.names.len());
        let mut chunk = vec![0u8; CHUNK];
        loop {
            let read = match source.read(&mut chunk) {
                Ok(0) => break,
                Ok(read) => read,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(error),
            };
            stream.buffer.extend_from_slice(&chunk[..read]);
            if stream.waiting() >= PASS_AT {
                stream.pass_on(self, &mut io::sink(), false)?;
            }
        }
        stream.pass_on(self, &mut io::sink(), true)?;
        Ok(stream
            .found
            .iter()
            .enumerate()
            .filter(|(_, count)| **count > 0)
            .map(|(kind, count)| (self.names[kind].clone(), *count))
            .collect())
    }
}

#[cfg(test)]
#[path = "count_tests.rs"]
mod tests;
