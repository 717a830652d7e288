//! Appends the run's Markdown to `$GITHUB_STEP_SUMMARY`, within GitHub's 1 MiB.

use std::borrow::Cow;
use std::path::Path;

use super::append::{append_text, size_of};
use crate::ci::CiError;
use crate::secrets::Redactor;

/// Appends `text` (redacted) to the step summary at `path`, creating the file when missing,
/// cut with [`fit_summary`] so that the file stays within [`MAX_SUMMARY_BYTES`] with what an
/// earlier command of the step wrote. When there is no room left even for the truncation note,
/// nothing is written.
pub fn append_step_summary(path: &Path, text: &str, redactor: &Redactor) -> Result<(), CiError> {
    let text = redactor.redact_str(text);
    let existing = usize::try_from(size_of(path)?).unwrap_or(usize::MAX);
    // Two bytes for the line breaks `append_text` may add before and after.
    let room = MAX_SUMMARY_BYTES.saturating_sub(existing.saturating_add(2));
    let text = fit_summary(&text, room);
    if text.is_empty() {
        tracing::warn!(
            path = %path.display(),
            "the step summary is full; the run's summary is not added"
        );
        return Ok(());
    }
    append_text(path, &text).map(drop)
}

/// GitHub refuses a step summary larger than this (1 MiB).
pub const MAX_SUMMARY_BYTES: usize = 1_048_576;

/// `text` when it is at most `limit` bytes long; otherwise its longest run of whole lines that
/// fits with a closing code fence (when the cut falls inside a code block) and a note saying how
/// much was left out. Lines are cut at a line break, so the result is valid UTF-8. Empty when
/// `limit` cannot hold the note. It does not redact: give it redacted text.
pub fn fit_summary(text: &str, limit: usize) -> Cow<'_, str> {
    if text.len() <= limit {
        return Cow::Borrowed(text);
    }
    // The note never grows with a smaller count, so room for the largest is room enough.
    let reserved = truncation_note(text.len()).len() + CLOSING_FENCE.len();
    let Some(budget) = limit.checked_sub(reserved) else {
        return Cow::Borrowed("");
    };
    let cut = memchr::memrchr(b'\n', &text.as_bytes()[..budget]).map_or(0, |at| at + 1);
    let kept = &text[..cut];
    let mut out = String::with_capacity(limit);
    out.push_str(kept);
    let fences = kept
        .lines()
        .filter(|line| line.trim_start().starts_with("```"))
        .count();
    if fences % 2 == 1 {
        out.push_str(CLOSING_FENCE);
    }
    out.push_str(&truncation_note(text.len() - cut));
    Cow::Owned(out)
}

pub(crate) const CLOSING_FENCE: &str = "```\n";

pub(crate) fn truncation_note(left_out: usize) -> String {
    format!(
        "\n> **Truncated:** {left_out} bytes of this summary were left out to keep it under \
         GitHub's 1 MiB limit; the report in the state dir has everything.\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "s3cr3t-value-1";

    fn redactor() -> Redactor {
        Redactor::new([("GITHUB_TOKEN".to_string(), SECRET.to_string())]).unwrap()
    }

    fn assert_cut_at_a_line(original: &str, fitted: &str, limit: usize) {
        assert!(fitted.len() <= limit, "{} > {limit}", fitted.len());
        let (kept, note) = fitted
            .split_once("\n> **Truncated:** ")
            .unwrap_or_else(|| panic!("no truncation note in {fitted:?}"));
        assert!(original.starts_with(kept));
        assert!(kept.is_empty() || kept.ends_with('\n'));
        let left_out = original.len() - kept.len();
        assert!(note.starts_with(&format!("{left_out} bytes of this summary were left out")));
    }

    #[test]
    fn appending_to_the_step_summary() {
        let redactor = redactor();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("summary.md");
        append_step_summary(&path, "first\n", &redactor).unwrap();
        append_step_summary(&path, &format!("second {SECRET}"), &redactor).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "first\nsecond [REDACTED:GITHUB_TOKEN]\n"
        );
    }

    #[test]
    fn appending_keeps_the_file_under_the_limit() {
        let redactor = redactor();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("summary.md");
        let earlier = format!("{}\n", "e".repeat(MAX_SUMMARY_BYTES - 2_000));
        std::fs::write(&path, &earlier).unwrap();
        let ours = "a line of ours\n".repeat(500);
        append_step_summary(&path, &ours, &redactor).unwrap();
        let written = std::fs::read_to_string(&path).unwrap();
        assert!(written.len() <= MAX_SUMMARY_BYTES, "{}", written.len());
        let appended = written.strip_prefix(&earlier).unwrap();
        assert_cut_at_a_line(&ours, appended, 2_000);
        // A full file gets nothing more.
        std::fs::write(&path, "f".repeat(MAX_SUMMARY_BYTES)).unwrap();
        append_step_summary(&path, &ours, &redactor).unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            MAX_SUMMARY_BYTES as u64
        );
    }
}
