//! Findings placed on the commit CI checked out. A run leaves its changes uncommitted, so the
//! lines of the remaining findings are lines of the changed tree; GitHub pins annotations (and
//! code scanning its results) to the commit, HEAD. Each finding in a file that differs from
//! HEAD is moved to HEAD's line through the file's diff; one on a line the run added (or
//! changed) goes to the nearest line HEAD has, and says so.

use std::collections::HashMap;
use std::path::Path;

use crate::model::Diagnostic;

/// What a finding on a line HEAD does not have says.
const NOT_IN_HEAD: &str =
    "(on a line this run added or changed; shown at the nearest line of the checked-out commit)";

/// One hunk of a file's diff from HEAD to the tree, as git numbers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Hunk {
    old_start: u32,
    old_lines: u32,
    new_start: u32,
    new_lines: u32,
}

impl Hunk {
    /// The first line after the hunk, on each side (git numbers an empty side by the line
    /// before it).
    fn next(start: u32, lines: u32) -> u32 {
        if lines == 0 { start + 1 } else { start + lines }
    }
}

/// A file's line numbers in the tree, mapped to HEAD's.
#[derive(Debug, Default)]
struct LineMap {
    hunks: Vec<Hunk>,
}

impl LineMap {
    /// HEAD's line for the tree's `line`, and whether HEAD has that line's content there.
    fn to_head(&self, line: u32) -> (u32, bool) {
        let mut offset: i64 = 0;
        for hunk in &self.hunks {
            // Where the hunk begins in the tree: a pure deletion sits after its `new_start`.
            let first = if hunk.new_lines == 0 {
                hunk.new_start + 1
            } else {
                hunk.new_start
            };
            if line < first {
                break;
            }
            if hunk.new_lines > 0 && line < hunk.new_start + hunk.new_lines {
                let placed = if hunk.old_lines > 0 {
                    hunk.old_start + (line - hunk.new_start).min(hunk.old_lines - 1)
                } else {
                    hunk.old_start
                };
                return (placed.max(1), false);
            }
            offset = i64::from(Hunk::next(hunk.old_start, hunk.old_lines))
                - i64::from(Hunk::next(hunk.new_start, hunk.new_lines));
        }
        let mapped = (i64::from(line) + offset).max(1);
        (u32::try_from(mapped).unwrap_or(line), true)
    }
}

/// Moves the lines of `findings` (paths relative to `target`) to HEAD's lines, where the file
/// differs from HEAD. Files HEAD lacks, and findings without a line, stay as they are.
/// `repo` is the run's own handle (a handle of its own would load another copy of the index).
pub(super) fn place_on_head(repo: &git2::Repository, target: &Path, findings: &mut [Diagnostic]) {
    let Some(root) = repo.workdir().and_then(|root| root.canonicalize().ok()) else {
        return;
    };
    let Ok(target) = target.canonicalize() else {
        return;
    };
    let Ok(head) = repo.head().and_then(|head| head.peel_to_tree()) else {
        return;
    };
    let mut maps: HashMap<String, Option<LineMap>> = HashMap::new();
    for finding in findings.iter_mut() {
        let (Some(file), Some(line)) = (finding.file.clone(), finding.line) else {
            continue;
        };
        if finding.outside_target || file.starts_with('/') {
            continue;
        }
        let map = maps
            .entry(file.clone())
            .or_insert_with(|| line_map(repo, &head, &root, &target.join(&file)));
        let Some(map) = map else {
            continue;
        };
        let (placed, same) = map.to_head(line);
        finding.line = Some(placed);
        finding.end_line = finding.end_line.map(|end| map.to_head(end).0.max(placed));
        if !same {
            finding.column = None;
            finding.end_column = None;
            finding.message = format!("{} {NOT_IN_HEAD}", finding.message);
        }
    }
}

/// The map of `path` (absolute, in the tree) from the tree's lines to HEAD's; `None` when the
/// file is as HEAD has it, HEAD has no such file, or it cannot be read. The diff is git's, from
/// HEAD to the work tree with the repository's filters applied (`eol`, `ident`, LFS), so a file
/// checked out with CRLF line endings is not every line changed.
fn line_map(
    repo: &git2::Repository,
    head: &git2::Tree<'_>,
    root: &Path,
    path: &Path,
) -> Option<LineMap> {
    let relative = path.strip_prefix(root).ok()?;
    head.get_path(relative).ok()?;
    let mut options = git2::DiffOptions::new();
    options
        .pathspec(relative)
        .disable_pathspec_match(true)
        .context_lines(0);
    let diff = repo
        .diff_tree_to_workdir(Some(head), Some(&mut options))
        .ok()?;
    if diff.deltas().len() != 1 {
        return None;
    }
    let patch = git2::Patch::from_diff(&diff, 0).ok()??;
    let hunks: Vec<Hunk> = (0..patch.num_hunks())
        .filter_map(|index| patch.hunk(index).ok())
        .map(|(hunk, _)| Hunk {
            old_start: hunk.old_start(),
            old_lines: hunk.old_lines(),
            new_start: hunk.new_start(),
            new_lines: hunk.new_lines(),
        })
        .collect();
    (!hunks.is_empty()).then_some(LineMap { hunks })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(old: &str, new: &str) -> LineMap {
        let mut options = git2::DiffOptions::new();
        options.context_lines(0);
        let patch = git2::Patch::from_buffers(
            old.as_bytes(),
            None,
            new.as_bytes(),
            None,
            Some(&mut options),
        )
        .unwrap();
        LineMap {
            hunks: (0..patch.num_hunks())
                .map(|index| {
                    let (hunk, _) = patch.hunk(index).unwrap();
                    Hunk {
                        old_start: hunk.old_start(),
                        old_lines: hunk.old_lines(),
                        new_start: hunk.new_start(),
                        new_lines: hunk.new_lines(),
                    }
                })
                .collect(),
        }
    }

    #[test]
    fn lines_map_back_through_insertions_deletions_and_changes() {
        let head = "a\nb\nc\nd\ne\nf\n";
        // (the tree, its line, HEAD's line, whether HEAD has that line there)
        let table: [(&str, u32, u32, bool); 9] = [
            // Two lines inserted after b: c moves from 3 to 5.
            ("a\nb\nx\ny\nc\nd\ne\nf\n", 5, 3, true),
            ("a\nb\nx\ny\nc\nd\ne\nf\n", 3, 2, false),
            ("a\nb\nx\ny\nc\nd\ne\nf\n", 2, 2, true),
            // c and d deleted: e moves from 5 to 3.
            ("a\nb\ne\nf\n", 3, 5, true),
            ("a\nb\ne\nf\n", 2, 2, true),
            // c changed: its line stays, and says so.
            ("a\nb\nC\nd\ne\nf\n", 3, 3, false),
            ("a\nb\nC\nd\ne\nf\n", 4, 4, true),
            // A line inserted first, and c changed: d moves from 4 to 5 and back.
            ("z\na\nb\nC\nd\ne\nf\n", 5, 4, true),
            ("z\na\nb\nC\nd\ne\nf\n", 1, 1, false),
        ];
        for (tree, line, expected, same) in table {
            assert_eq!(
                map(head, tree).to_head(line),
                (expected, same),
                "line {line} of {tree:?}"
            );
        }
    }

    /// A repository with `files` committed, then `worktree` written over them.
    fn repository(files: &[(&str, &str)], worktree: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        for (path, text) in files {
            std::fs::write(dir.path().join(path), text).unwrap();
        }
        let mut index = repo.index().unwrap();
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let signature = git2::Signature::now("t", "t@example.invalid").unwrap();
        repo.commit(Some("HEAD"), &signature, &signature, "one", &tree, &[])
            .unwrap();
        for (path, text) in worktree {
            std::fs::write(dir.path().join(path), text).unwrap();
        }
        dir
    }

    fn finding(line: u32) -> Diagnostic {
        Diagnostic {
            file: Some("app.txt".into()),
            line: Some(line),
            column: Some(2),
            end_line: None,
            end_column: None,
            severity: crate::model::Severity::Error,
            code: None,
            message: "bad".into(),
            category: None,
            fingerprint: String::new(),
            outside_target: false,
            body: None,
        }
    }

    #[test]
    fn a_crlf_checkout_of_an_untouched_file_moves_nothing() {
        let dir = repository(
            &[
                (".gitattributes", "*.txt text eol=crlf\n"),
                ("app.txt", "a\nb\nBAD\n"),
            ],
            &[("app.txt", "a\r\nb\r\nBAD\r\n")],
        );
        let mut findings = [finding(3)];
        place_on_head(
            &git2::Repository::open(dir.path()).unwrap(),
            dir.path(),
            &mut findings,
        );
        assert_eq!(findings[0].line, Some(3));
        assert_eq!(findings[0].column, Some(2));
        assert_eq!(findings[0].message, "bad");
    }

    #[test]
    fn a_line_inserted_above_moves_the_finding_back() {
        let dir = repository(
            &[("app.txt", "a\nb\nBAD\n")],
            &[("app.txt", "a\nnew\nb\nBAD\n")],
        );
        let mut findings = [finding(4), finding(2)];
        place_on_head(
            &git2::Repository::open(dir.path()).unwrap(),
            dir.path(),
            &mut findings,
        );
        assert_eq!(findings[0].line, Some(3));
        assert_eq!(findings[0].message, "bad");
        assert_eq!(findings[1].line, Some(1));
        assert!(
            findings[1].message.ends_with(NOT_IN_HEAD),
            "{}",
            findings[1].message
        );
    }
}
