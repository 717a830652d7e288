//! The series: each iteration's commit as an mbox message that `git am` applies, written the way
//! `git format-patch --binary` writes one, and named like it (`NNNN-<slug>.patch`).

use std::path::Path;

use super::patch::{PatchFile, Transport, diff_trees, patch_text};
use super::{DeliverError, RecordedIteration, git};

/// The longest slug in a patch file name, in characters.
const SLUG_LENGTH: usize = 52;

/// The date `git format-patch` puts on the mbox separator line.
const MBOX_DATE: &str = "Mon Sep 17 00:00:00 2001";

const WEEKDAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Iteration `number` of `count` as an mbox message: headers (UTF-8 declared, so the subject's
/// em dash survives), the ledger, a diffstat, the patch, a signature.
pub(super) fn email(
    repo: &git2::Repository,
    iteration: &RecordedIteration,
    number: usize,
    count: usize,
) -> Result<PatchFile, DeliverError> {
    let id = iteration.commit;
    let commit = repo
        .find_commit(id)
        .map_err(git(format!("find commit {id}")))?;
    let parent = commit
        .parent(0)
        .map_err(git(format!("find the parent of {id}")))?;
    let parent_tree = parent
        .tree()
        .map_err(git(format!("read the tree of {}", parent.id())))?;
    let tree = commit
        .tree()
        .map_err(git(format!("read the tree of {id}")))?;
    let (patch, blobs) = patch_text(repo, &parent_tree, &tree, Transport::Mail)?;
    let statistics = diff_trees(repo, &parent_tree, &tree, false)?
        .stats()
        .and_then(|stats| {
            stats.to_buf(
                git2::DiffStatsFormat::FULL | git2::DiffStatsFormat::INCLUDE_SUMMARY,
                72,
            )
        })
        .map_err(git(format!("count the changes of {id}")))?;
    let not_utf8 = || DeliverError::MessageNotUtf8 { commit: id };
    let summary = commit
        .summary()
        .map_err(|_| not_utf8())?
        .unwrap_or_default();
    let body = commit.body().map_err(|_| not_utf8())?.unwrap_or_default();
    let author = commit.author();
    let prefix = if count > 1 {
        format!("[PATCH {number}/{count}]")
    } else {
        "[PATCH]".to_string()
    };

    let mut contents = format!(
        "From {id} {MBOX_DATE}\n\
         From: {} <{}>\n\
         Date: {}\n\
         Subject: {prefix} {summary}\n\
         MIME-Version: 1.0\n\
         Content-Type: text/plain; charset=UTF-8\n\
         Content-Transfer-Encoding: 8bit\n\n",
        String::from_utf8_lossy(author.name_bytes()),
        String::from_utf8_lossy(author.email_bytes()),
        rfc2822(author.when()),
    )
    .into_bytes();
    if !body.is_empty() {
        contents.extend_from_slice(body.as_bytes());
        if !body.ends_with('\n') {
            contents.push(b'\n');
        }
    }
    contents.extend_from_slice(b"---\n");
    contents.extend_from_slice(&statistics);
    contents.push(b'\n');
    contents.extend_from_slice(&patch);
    contents.extend_from_slice(
        format!("-- \nrefine-loop {}\n\n", env!("CARGO_PKG_VERSION")).as_bytes(),
    );
    Ok(PatchFile {
        name: format!("{number:04}-{}.patch", slug(&iteration.subject)),
        contents,
        blobs,
    })
}

/// `Tue, 14 Nov 2023 23:13:20 +0100`: the time in its own offset.
fn rfc2822(time: git2::Time) -> String {
    let offset = i64::from(time.offset_minutes());
    let local = time.seconds() + offset * 60;
    let days = local.div_euclid(86_400);
    let second_of_day = local.rem_euclid(86_400);
    let (year, month, day) = crate::clock::civil_from_days(days);
    let weekday = WEEKDAYS[(days + 4).rem_euclid(7) as usize];
    let sign = if offset < 0 { '-' } else { '+' };
    format!(
        "{weekday}, {day} {} {year} {:02}:{:02}:{:02} {sign}{:02}{:02}",
        MONTHS[month - 1],
        second_of_day / 3600,
        second_of_day / 60 % 60,
        second_of_day % 60,
        offset.abs() / 60,
        offset.abs() % 60,
    )
}

/// A file name part from a subject, like `git format-patch`: lowercase ASCII letters and digits,
/// anything else one dash, at most [`SLUG_LENGTH`] characters.
fn slug(subject: &str) -> String {
    let mut slug = String::with_capacity(SLUG_LENGTH);
    for character in subject.chars() {
        if slug.len() == SLUG_LENGTH {
            break;
        }
        if character.is_ascii_alphanumeric() {
            slug.push(character.to_ascii_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug.trim_end_matches('-');
    if slug.is_empty() {
        "iteration".to_string()
    } else {
        slug.to_string()
    }
}

/// Removes the `NNNN-*.patch` files in `dir` that `plan` does not write: a shorter series must not
/// leave the tail of a longer one behind for `git am patches/*.patch`.
pub(super) fn remove_stale_series(dir: &Path, plan: &[PatchFile]) -> Result<(), DeliverError> {
    let io_error = |path: &Path| {
        let path = path.to_path_buf();
        move |source| DeliverError::Io { path, source }
    };
    for entry in std::fs::read_dir(dir).map_err(io_error(dir))? {
        let entry = entry.map_err(io_error(dir))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        if is_series_name(name) && !plan.iter().any(|file| file.name == name) {
            std::fs::remove_file(entry.path()).map_err(io_error(&entry.path()))?;
        }
    }
    Ok(())
}

/// `NNNN-<anything>.patch` with four or more digits.
fn is_series_name(name: &str) -> bool {
    let digits = name.bytes().take_while(u8::is_ascii_digit).count();
    digits >= 4 && name[digits..].starts_with('-') && name.ends_with(".patch")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_read_like_format_patch_names() {
        assert_eq!(
            slug("refine-loop: iteration 2 \u{2014} failed 12\u{2192}7 (lint 5\u{2192}0)"),
            "refine-loop-iteration-2-failed-12-7-lint-5-0"
        );
        assert_eq!(slug("\u{2014}\u{2014}"), "iteration");
        let long = slug(&"word ".repeat(40));
        assert!(long.len() <= SLUG_LENGTH && !long.ends_with('-'), "{long}");
    }

    #[test]
    fn series_names_are_recognised() {
        assert!(is_series_name("0001-refine-loop-iteration-1.patch"));
        assert!(is_series_name("12345-x.patch"));
        assert!(!is_series_name("refine-loop.patch"));
        assert!(!is_series_name("001-x.patch"));
        assert!(!is_series_name("0001-x.txt"));
    }

    #[test]
    fn dates_are_written_as_mail_dates() {
        let date = |seconds, offset| rfc2822(git2::Time::new(seconds, offset));
        assert_eq!(date(0, 0), "Thu, 1 Jan 1970 00:00:00 +0000");
        assert_eq!(date(1_700_000_000, 60), "Tue, 14 Nov 2023 23:13:20 +0100");
        assert_eq!(date(951_782_400, 0), "Tue, 29 Feb 2000 00:00:00 +0000");
        assert_eq!(date(951_782_400, -330), "Mon, 28 Feb 2000 18:30:00 -0530");
        assert_eq!(date(-86_400, 0), "Wed, 31 Dec 1969 00:00:00 +0000");
    }
}
