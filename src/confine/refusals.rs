//! When the kernel said no: the writes a confined delegate was refused, read from what it
//! printed. Tools name the path and the error (`sh: cannot create x: Read-only file system`,
//! `sed: couldn't open temporary file ./sedX1: Permission denied`, Python's `PermissionError:
//! [Errno 13] Permission denied: 'x'`, node's `EROFS: read-only file system, open 'x'`); a path
//! counts only when the walls forbid it (in the seal, outside every writable folder, or at the
//! tree's top without a mount namespace), so a file's own permissions are never blamed on the
//! confinement.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use super::Confiner;

/// Longest line looked at; the rest of a longer one is skipped.
const MAX_LINE: usize = 4096;
/// Paths kept at most.
const MAX_PATHS: usize = 32;

/// The errors a refused write ends in, as tools print them, and the name the report gives.
const ERRORS: [(&str, &str); 8] = [
    ("read-only file system", "read-only"),
    ("erofs", "read-only"),
    ("permission denied", "permission denied"),
    ("eacces", "permission denied"),
    ("operation not permitted", "not permitted"),
    ("eperm", "not permitted"),
    ("cross-device link", "cross-device link"),
    ("exdev", "cross-device link"),
];

/// The lines of a delegate's output, read as they stream, and the paths its errors named.
#[derive(Debug, Default)]
pub struct Refusals {
    line: Vec<u8>,
    skipping: bool,
    named: BTreeSet<(String, &'static str)>,
}

impl Refusals {
    pub fn push(&mut self, chunk: &[u8]) {
        for &byte in chunk {
            if byte == b'\n' {
                if !self.skipping {
                    let line = std::mem::take(&mut self.line);
                    self.read_line(&String::from_utf8_lossy(&line));
                }
                self.line.clear();
                self.skipping = false;
            } else if self.line.len() < MAX_LINE {
                self.line.push(byte);
            } else {
                self.skipping = true;
            }
        }
    }

    fn read_line(&mut self, line: &str) {
        if self.named.len() >= MAX_PATHS {
            return;
        }
        let lower = line.to_ascii_lowercase();
        let Some((at, why)) = ERRORS
            .iter()
            .find_map(|(error, why)| lower.find(error).map(|at| (at, *why)))
        else {
            return;
        };
        for path in named_paths(line, at) {
            if self.named.len() >= MAX_PATHS {
                break;
            }
            self.named.insert((path, why));
        }
    }

    /// One line for each path the confinement refused, with how to allow it where it can be;
    /// `cwd` is where the delegate ran.
    pub fn explain(self, confiner: &Confiner, cwd: &Path) -> Vec<String> {
        self.explain_where(confiner, cwd, &|_| true)
    }

    /// [`Self::explain`] for the paths in the seal only (the git dirs, the state dir, the
    /// loop's store): where a gate check, which must only read, has no cause to write.
    pub fn sealed(self, confiner: &Confiner, cwd: &Path) -> Vec<String> {
        self.explain_where(confiner, cwd, &|path| confiner.seals(path))
    }

    fn explain_where(
        mut self,
        confiner: &Confiner,
        cwd: &Path,
        counts: &dyn Fn(&Path) -> bool,
    ) -> Vec<String> {
        if !self.line.is_empty() && !self.skipping {
            let line = std::mem::take(&mut self.line);
            self.read_line(&String::from_utf8_lossy(&line));
        }
        let mut said = Vec::new();
        let mut seen = BTreeSet::new();
        for (named, why) in &self.named {
            let path = absolute(cwd, Path::new(named));
            if !seen.insert(path.clone()) {
                continue;
            }
            if let Some(reason) = confiner.forbids(&path).filter(|_| counts(&path)) {
                // What the delegate printed, shown as code: it can hold any character.
                let shown = crate::markdown::code_span(named);
                said.push(format!("{shown} ({why}): {reason}"));
            }
        }
        said
    }
}

/// The paths a line with an error at byte `at` names: the last word before the error (`x:` in
/// `cannot create x: …`), and every quoted text in the line.
fn named_paths(line: &str, at: usize) -> Vec<String> {
    let mut paths = Vec::new();
    let before = line[..at].trim_end().trim_end_matches(':').trim_end();
    if let Some(word) = before.split_whitespace().last() {
        paths.push(word.to_string());
    }
    for (open, close) in [('\'', '\''), ('"', '"'), ('‘', '’'), ('`', '\'')] {
        let mut rest = line;
        while let Some(start) = rest.find(open) {
            let after = &rest[start + open.len_utf8()..];
            let Some(end) = after.find(close) else {
                break;
            };
            paths.push(after[..end].to_string());
            rest = &after[end + close.len_utf8()..];
        }
    }
    paths
        .into_iter()
        .map(|path| {
            path.trim_matches(|c| matches!(c, '\'' | '"' | '‘' | '’' | '`' | ',' | ':'))
                .to_string()
        })
        .filter(|path| {
            !path.is_empty()
                && !path.contains(char::is_whitespace)
                && (path.contains('/') || path.contains('.'))
        })
        .collect()
}

/// `path` made absolute against `cwd`, `.` and `..` taken lexically; the longest part that
/// exists is resolved (a link never hides where a path is).
fn absolute(cwd: &Path, path: &Path) -> PathBuf {
    let mut joined = PathBuf::new();
    for part in cwd.join(path).components() {
        match part {
            Component::ParentDir => {
                joined.pop();
            }
            Component::CurDir => {}
            other => joined.push(other),
        }
    }
    let mut existing = joined.as_path();
    let mut rest = Vec::new();
    while !existing.exists() {
        let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) else {
            return joined;
        };
        rest.push(name.to_os_string());
        existing = parent;
    }
    let mut resolved = existing
        .canonicalize()
        .unwrap_or_else(|_| existing.to_path_buf());
    resolved.extend(rest.iter().rev());
    resolved
}

#[cfg(test)]
#[path = "refusals_tests.rs"]
mod tests;
