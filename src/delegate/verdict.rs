//! What a delegate says of its own work, in `REFINE_LOOP_VERDICT_FILE`: `fixed`, `partial`,
//! `no-change`, or `needs-fix` followed by one finding a line. The loop trusts git, not this, for
//! what changed; the verdict is recorded, and `needs-fix` findings go to a person.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The most of a verdict the loop reads.
pub const MAX_VERDICT: u64 = 64 * 1024;

/// Reads a file the delegate writes in the state dir (its verdict, its candidates): never
/// through a link, only a regular file (a FIFO is not waited on), at most `max` bytes. `None`
/// when it is missing, empty (as the loop made it), or anything but a regular file.
pub fn read_own_file(path: &Path, max: u64) -> Option<Vec<u8>> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(max).read_to_end(&mut bytes).ok()?;
    (!bytes.is_empty()).then_some(bytes)
}

/// Reads the verdict a command delegate wrote (see [`read_own_file`]) and leaves its file without
/// the secrets it may hold.
pub fn take(path: &Path) -> Option<Verdict> {
    read_own_file(path, MAX_VERDICT).and_then(|bytes| {
        let clean = crate::secrets::redacted(&bytes);
        if let std::borrow::Cow::Owned(clean) = &clean {
            let _ = crate::state::write_atomic(path, clean);
        }
        Verdict::parse(&String::from_utf8_lossy(&clean))
    })
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "verdict", content = "findings")]
pub enum Verdict {
    Fixed,
    Partial,
    NoChange,
    NeedsFix(Vec<String>),
}

impl Verdict {
    /// Reads a verdict file; `None` when its first word is none of the four.
    pub fn parse(text: &str) -> Option<Self> {
        let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
        let first = lines.next()?;
        let (word, rest) = first.split_once(char::is_whitespace).unwrap_or((first, ""));
        match word.to_ascii_lowercase().as_str() {
            "fixed" => Some(Self::Fixed),
            "partial" => Some(Self::Partial),
            "no-change" | "nochange" | "no_change" => Some(Self::NoChange),
            "needs-fix" | "needs_fix" => {
                let findings = std::iter::once(rest.trim())
                    .chain(lines)
                    .filter(|l| !l.is_empty())
                    .take(100)
                    .map(str::to_string)
                    .collect();
                Some(Self::NeedsFix(findings))
            }
            _ => None,
        }
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Fixed => "fixed",
            Self::Partial => "partial",
            Self::NoChange => "no-change",
            Self::NeedsFix(_) => "needs-fix",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_files_are_read_only_when_regular_and_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = |name: &str| dir.path().join(name);
        std::fs::write(path("verdict"), "fixed\n").unwrap();
        std::fs::write(path("empty"), "").unwrap();
        std::fs::write(path("outside"), "fixed\n").unwrap();
        std::os::unix::fs::symlink(path("outside"), path("link")).unwrap();
        nix::unistd::mkfifo(&path("fifo"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        std::fs::create_dir(path("folder")).unwrap();
        std::fs::write(path("large"), vec![b'x'; 100_000]).unwrap();
        let table: [(&str, Option<usize>); 7] = [
            ("verdict", Some(6)),
            ("empty", None),
            ("absent", None),
            ("link", None),
            ("fifo", None),
            ("folder", None),
            ("large", Some(64 * 1024)),
        ];
        for (name, expected) in table {
            assert_eq!(
                read_own_file(&path(name), MAX_VERDICT).map(|b| b.len()),
                expected,
                "{name}"
            );
        }
    }

    #[test]
    fn verdicts() {
        let table = [
            ("fixed\n", Some(Verdict::Fixed)),
            ("  Partial  ", Some(Verdict::Partial)),
            ("no-change", Some(Verdict::NoChange)),
            (
                "needs-fix src/a.rs:3 changes behaviour\nsrc/b.rs:9 too\n",
                Some(Verdict::NeedsFix(vec![
                    "src/a.rs:3 changes behaviour".into(),
                    "src/b.rs:9 too".into(),
                ])),
            ),
            ("needs-fix", Some(Verdict::NeedsFix(vec![]))),
            ("done!", None),
            ("", None),
        ];
        for (text, expected) in table {
            assert_eq!(Verdict::parse(text), expected, "{text:?}");
        }
    }
}
