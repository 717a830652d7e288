//! What a delegate says of its own work, in `REFINE_LOOP_VERDICT_FILE`: `fixed`, `partial`,
//! `no-change`, or `needs-fix` followed by one finding a line. The loop trusts git, not this, for
//! what changed; the verdict is recorded, and `needs-fix` findings go to a person.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// The most of a verdict the loop reads.
pub const MAX_VERDICT: u64 = 64 * 1024;

/// The bytes of a delegate's verdict file (`None` when there is none), when it is a regular
/// file of at most [`MAX_VERDICT`] bytes (empty, as the loop made it for a confined delegate, is
/// none); a symlink, a FIFO or a device there is not read, and the error says why.
pub(crate) fn read_verdict(path: &Path) -> Result<Option<Vec<u8>>, String> {
    crate::state::read_own(path, MAX_VERDICT)
        .map(|bytes| bytes.filter(|bytes| !bytes.is_empty()))
        .map_err(|error| {
            tracing::warn!(%error, "the delegate's verdict is not read");
            error.to_string()
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
            // Longer than a verdict may be: refused, not cut.
            ("large", None),
        ];
        for (name, expected) in table {
            assert_eq!(
                read_verdict(&path(name)).ok().flatten().map(|b| b.len()),
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
