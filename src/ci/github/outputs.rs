//! Step outputs for `$GITHUB_OUTPUT`: `name=value`, or a heredoc with a random delimiter.

use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

use super::append::append_text;
use crate::ci::CiError;
use crate::secrets::Redactor;

/// How many delimiters are drawn for one value before giving up.
const MAX_DELIMITER_DRAWS: usize = 64;

/// The outputs file's lines for `pairs` (name, value), each ended by a line break, values
/// redacted. A value on one line is written `name=value`; a value holding a line break is
/// written `name<<DELIMITER`, the value, then `DELIMITER`, with a random delimiter that occurs
/// nowhere in the value. Names must start with a letter or `_` and hold only letters, digits,
/// `-` and `_` (what a workflow can read back as `steps.<id>.outputs.<name>`).
pub fn outputs(pairs: &[(&str, &str)], redactor: &Redactor) -> Result<String, CiError> {
    outputs_with(pairs, redactor, random_delimiter)
}

/// Appends [`outputs`] of `pairs` to `path` (the file `GITHUB_OUTPUT` names), creating it when
/// missing.
pub fn append_outputs(
    path: &Path,
    pairs: &[(&str, &str)],
    redactor: &Redactor,
) -> Result<(), CiError> {
    let text = outputs(pairs, redactor)?;
    append_text(path, &text).map(drop)
}

/// [`outputs`] with the delimiters drawn from `next_delimiter`, so a test can offer one that
/// occurs in the value first.
fn outputs_with(
    pairs: &[(&str, &str)],
    redactor: &Redactor,
    mut next_delimiter: impl FnMut() -> String,
) -> Result<String, CiError> {
    let mut out = String::new();
    for &(name, value) in pairs {
        if !is_valid_name(name) {
            return Err(CiError::InvalidOutputName {
                name: redactor.redact_str(name).into_owned(),
            });
        }
        let value = redactor.redact_str(value);
        if !value.contains(['\n', '\r']) {
            out.push_str(&redactor.redact_str(&format!("{name}={value}\n")));
            continue;
        }
        // A delimiter in the value would end it early; one the redactor would change could no
        // longer be matched. Random delimiters pass at the first draw but for a freak secret.
        let delimiter = std::iter::repeat_with(&mut next_delimiter)
            .take(MAX_DELIMITER_DRAWS)
            .find(|delimiter| {
                !value.contains(delimiter.as_str())
                    && redactor.findings(delimiter.as_bytes()).is_empty()
            })
            .ok_or_else(|| CiError::NoDelimiter {
                name: name.to_string(),
            })?;
        // The last pass finds nothing unless a secret spans the name and the value.
        let entry = format!("{name}<<{delimiter}\n{value}\n{delimiter}\n");
        out.push_str(&redactor.redact_str(&entry));
    }
    Ok(out)
}

fn is_valid_name(name: &str) -> bool {
    let mut characters = name.chars();
    characters
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && characters.all(|character| {
            character.is_ascii_alphanumeric() || character == '-' || character == '_'
        })
}

/// `refine_loop_eof_` and 32 hex digits from 16 random bytes: from `/dev/urandom`, or, when it
/// cannot be read, a sha256 of the time, the process id and a counter.
fn random_delimiter() -> String {
    let mut bytes = [0u8; 16];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut file| file.read_exact(&mut bytes));
    if read.is_err() {
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let mut hasher = Sha256::new();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos());
        hasher.update(now.to_le_bytes());
        hasher.update(std::process::id().to_le_bytes());
        hasher.update(
            COUNTER
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                .to_le_bytes(),
        );
        bytes.copy_from_slice(&hasher.finalize()[..16]);
    }
    format!("refine_loop_eof_{}", crate::encoding::hex(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redactor() -> Redactor {
        Redactor::new([("GITHUB_TOKEN".to_string(), "s3cr3t-value-1".to_string())]).unwrap()
    }

    /// Hands out `candidates` in turn.
    fn delimiters(candidates: &[&str]) -> impl FnMut() -> String {
        let mut candidates: Vec<String> = candidates.iter().rev().map(|c| c.to_string()).collect();
        move || candidates.pop().expect("enough delimiters")
    }

    #[test]
    fn single_and_multi_line_values() {
        let redactor = redactor();
        let table: [(&[(&str, &str)], &str); 6] = [
            (&[], ""),
            (&[("outcome", "SUCCESS")], "outcome=SUCCESS\n"),
            (&[("patch-path", "")], "patch-path=\n"),
            // `=` and `<<` in a value are data: the name ends at the first `=`.
            (&[("note", "a=b<<c")], "note=a=b<<c\n"),
            (
                &[("stop-reason", "gate-passed"), ("failed-after", "0")],
                "stop-reason=gate-passed\nfailed-after=0\n",
            ),
            (
                &[("report", "line 1\nline 2\n"), ("cycles", "3")],
                "report<<EOF_1\nline 1\nline 2\n\nEOF_1\ncycles=3\n",
            ),
        ];
        for (pairs, expected) in table {
            assert_eq!(
                outputs_with(pairs, &redactor, delimiters(&["EOF_1"])).unwrap(),
                expected,
                "{pairs:?}"
            );
        }
        assert_eq!(
            outputs_with(&[("crlf", "a\r\nb")], &redactor, delimiters(&["EOF_1"])).unwrap(),
            "crlf<<EOF_1\na\r\nb\nEOF_1\n"
        );
    }

    #[test]
    fn a_delimiter_found_in_the_value_is_drawn_again() {
        let redactor = redactor();
        let value = "text\nEOF_1\nmore EOF_2 inside a line\n";
        let text = outputs_with(
            &[("findings", value)],
            &redactor,
            delimiters(&["EOF_1", "EOF_2", "EOF_3"]),
        )
        .unwrap();
        assert_eq!(text, format!("findings<<EOF_3\n{value}\nEOF_3\n"));
    }

    #[test]
    fn a_delimiter_the_redactor_would_change_is_drawn_again() {
        let redactor = redactor();
        let text = outputs_with(
            &[("multi", "a\nb")],
            &redactor,
            delimiters(&["EOF_s3cr3t-value-1", "EOF_2"]),
        )
        .unwrap();
        assert_eq!(text, "multi<<EOF_2\na\nb\nEOF_2\n");
    }

    #[test]
    fn random_delimiters_differ_and_never_occur_in_the_value() {
        let first = random_delimiter();
        assert_eq!(first.len(), "refine_loop_eof_".len() + 32);
        assert_ne!(first, random_delimiter());
        let value = format!("x\n{first}\n");
        let text = outputs(&[("value", &value)], &redactor()).unwrap();
        let delimiter = text
            .lines()
            .next()
            .and_then(|line| line.strip_prefix("value<<"))
            .unwrap();
        assert_ne!(delimiter, first);
        assert!(!value.contains(delimiter));
        assert_eq!(text, format!("value<<{delimiter}\n{value}\n{delimiter}\n"));
    }

    #[test]
    fn drawing_gives_up_when_every_delimiter_is_a_secret() {
        let error = outputs_with(&[("multi", "a\nb")], &redactor(), || {
            "EOF_s3cr3t-value-1".to_string()
        })
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "no delimiter for the multi-line output `multi`: every one drawn was in its value or \
             held a secret"
        );
    }

    #[test]
    fn names_are_checked() {
        let redactor = redactor();
        for name in ["outcome", "stop-reason", "_private", "a1"] {
            assert!(outputs(&[(name, "x")], &redactor).is_ok(), "{name}");
        }
        for name in ["", "1st", "-x", "a=b", "a<<b", "a b", "a\nb", "ü"] {
            let error = outputs(&[(name, "x")], &redactor).unwrap_err();
            assert!(
                matches!(error, CiError::InvalidOutputName { .. }),
                "{name:?}"
            );
        }
    }

    #[test]
    fn secrets_never_reach_the_outputs() {
        let redactor = redactor();
        let text = outputs(
            &[
                ("one", "token s3cr3t-value-1"),
                ("many", "a\ns3cr3t-value-1\nb"),
            ],
            &redactor,
        )
        .unwrap();
        assert!(!text.contains("s3cr3t-value-1"), "{text}");
        assert!(text.starts_with("one=token [REDACTED:GITHUB_TOKEN]\nmany<<"));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("output");
        append_outputs(&path, &[("first", "1")], &redactor).unwrap();
        append_outputs(&path, &[("token", "s3cr3t-value-1")], &redactor).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "first=1\ntoken=[REDACTED:GITHUB_TOKEN]\n"
        );
    }
}
