//! A state dir that a cache restored corrupt or partial (`--continue=auto`): its campaign files
//! are set aside whole, never used and never deleted, and a new segment starts.

use std::path::{Path, PathBuf};

use super::{BACKLOG_FILE, CampaignError, GOAL_FILE, WORKLOG_FILE};
use crate::campaign::history::HISTORY_DIR;

/// The folder under the state dir where unusable state goes, one subfolder per time.
pub const SET_ASIDE_DIR: &str = "set-aside";

/// What became of an unusable state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restart {
    /// Where its files are now.
    pub set_aside: PathBuf,
    /// Why it could not be used.
    pub reason: String,
    /// The segment that starts: after the last one its worklog or goal names, else 1.
    pub segment: u32,
}

impl Restart {
    /// The worklog entry, and the report's note.
    pub fn entry(&self) -> String {
        format!(
            "- the restored state could not be used ({}); it was set aside in {}, and segment {} starts afresh (the earlier counters and records are in the set-aside files)",
            self.reason,
            self.set_aside.display(),
            self.segment
        )
    }
}

/// Whether `error` is one a new segment may start after: the state is corrupt or partial (not
/// of another repository, another format, or unsafe to read).
pub(super) fn applies(error: &CampaignError) -> bool {
    matches!(
        error,
        CampaignError::Corrupt { .. } | CampaignError::PartialSet { .. }
    )
}

/// Moves the campaign's files in `dir` (and its history) into `set-aside/<time>/`.
pub(super) fn set_aside(dir: &Path, error: &CampaignError) -> Result<Restart, CampaignError> {
    let segment = last_segment(dir).map_or(1, |segment| segment.saturating_add(1));
    let aside = dir.join(SET_ASIDE_DIR).join(crate::clock::new_run_id());
    let io = |path: &Path, action| {
        let path = path.to_path_buf();
        move |source| CampaignError::Io {
            path,
            action,
            source,
        }
    };
    let parent = dir.join(SET_ASIDE_DIR);
    if std::fs::symlink_metadata(&parent).is_ok_and(|metadata| !metadata.is_dir()) {
        // Never moved into what a link leads to.
        return Err(io(&parent, "set aside into")(std::io::Error::other(
            "it is not a folder (a symbolic link?)",
        )));
    }
    std::fs::create_dir_all(&aside).map_err(io(&aside, "create"))?;
    for name in [GOAL_FILE, WORKLOG_FILE, BACKLOG_FILE, HISTORY_DIR] {
        let from = dir.join(name);
        // Moved as it is, whatever it is (a rename never follows a symbolic link).
        if std::fs::symlink_metadata(&from).is_ok() {
            std::fs::rename(&from, aside.join(name)).map_err(io(&from, "set aside"))?;
        }
    }
    tracing::warn!(set_aside = %aside.display(), %error, "the restored campaign state is unusable");
    Ok(Restart {
        set_aside: aside,
        reason: error.to_string(),
        segment,
    })
}

/// The highest segment the worklog (`- Segment N, round …`) or the goal (`## Segment N (…`)
/// names.
fn last_segment(dir: &Path) -> Option<u32> {
    let read = |name| {
        crate::state::read_own(&dir.join(name), crate::state::OWN_FILE_LIMIT)
            .ok()
            .flatten()
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default()
    };
    let text = read(WORKLOG_FILE) + &read(GOAL_FILE);
    text.lines()
        .filter_map(|line| {
            let rest = line
                .strip_prefix("- Segment ")
                .or_else(|| line.strip_prefix("## Segment "))?;
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<u32>().ok()
        })
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_segment_is_read_from_what_is_left() {
        let table: [(&str, &str, Option<u32>); 4] = [
            ("", "", None),
            ("- Segment 1, round 0\n- Segment 3, round 2\n", "", Some(3)),
            (
                "- Segment 2, round\n",
                "## Segment 4 (2026-12-01, continued)\n",
                Some(4),
            ),
            ("- Segment x, round 1\n", "## Segment\n", None),
        ];
        for (worklog, goal, expected) in table {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join(WORKLOG_FILE), worklog).unwrap();
            std::fs::write(dir.path().join(GOAL_FILE), goal).unwrap();
            assert_eq!(last_segment(dir.path()), expected, "{worklog:?} {goal:?}");
        }
    }
}
