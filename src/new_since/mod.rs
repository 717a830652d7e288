//! Pull-request mode (`--new-since REF`): the change since a base commit (the files and the
//! lines it added or modified), and which findings are new in it. Findings that were there
//! before the change are pre-existing: never worked, never counted by the verdict, reported
//! apart. Two ways to decide ([`Mode`]): by the change's lines, or by the gate's own findings at
//! the base.

mod diff;
mod preexisting;

use std::collections::BTreeMap;

pub use diff::{ChangedFile, changed_since};
pub use preexisting::{Preexisting, finding_key};

use crate::model::Diagnostic;

/// How a finding is judged new (`[loop] new_since`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Mode {
    /// New when it lies on a line the change added or modified (reviewdog's way): cheap, but
    /// blind to a finding the change causes on a line it did not touch.
    #[default]
    Lines,
    /// New when the gate, run once on the base in a temporary worktree, did not report it.
    Gate,
}

impl Mode {
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "lines" => Some(Self::Lines),
            "gate" => Some(Self::Gate),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Lines => "lines",
            Self::Gate => "gate",
        }
    }
}

/// Where the base came from, as `run.json` records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaseSource {
    /// The user named it (`--new-since REF`).
    Given,
    GitHub,
    GitLab,
    Jenkins,
}

impl BaseSource {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Given => "given",
            Self::GitHub => "github",
            Self::GitLab => "gitlab",
            Self::Jenkins => "jenkins",
        }
    }
}

/// What names the base: a commit taken as it is, or the merge-base of HEAD with the first of
/// some refs the clone holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BaseSpec {
    Commit(String),
    MergeBaseWith(Vec<String>),
}

/// A base asked for: by the user, or by the CI system's variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AskedBase {
    pub source: BaseSource,
    pub spec: BaseSpec,
    /// The branch a CI system names, for an error that says what to fetch.
    pub branch: Option<String>,
}

impl AskedBase {
    /// `--new-since REF`: the merge-base of HEAD and REF, as a pull request's diff is taken.
    pub fn given(reference: &str) -> Self {
        Self {
            source: BaseSource::Given,
            spec: BaseSpec::MergeBaseWith(vec![reference.to_string()]),
            branch: None,
        }
    }
}

/// What resolving the base can fail on: both are usage errors (exit 2), said with the fix.
#[derive(Debug, thiserror::Error)]
pub enum SinceError {
    #[error(
        "--new-since {given}: {reason}; nothing is fetched: the clone must hold the base ({hint})"
    )]
    Unresolved {
        given: String,
        reason: String,
        hint: String,
    },
    #[error("--new-since {given}: cannot read the change since {base}: {source}")]
    Diff {
        given: String,
        base: String,
        #[source]
        source: git2::Error,
    },
}

/// The change since the base, resolved once at the start of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Since {
    /// What the user gave (`auto`, a branch, a commit).
    pub given: String,
    /// The base commit, in full.
    pub base: String,
    pub source: BaseSource,
    pub mode: Mode,
    /// The files the change added or modified, relative to the target, by their path now.
    pub files: BTreeMap<String, ChangedFile>,
    /// Files the change renamed: their path at the base to their path now (target-relative).
    pub renames: BTreeMap<String, String>,
    /// [`Mode::Gate`]: the findings of the gate run on the base, and its summary.
    pub at_base: Option<Preexisting>,
    pub base_summary: Option<crate::model::GateSummary>,
}

impl Since {
    /// Resolves `asked` in the repository of `target` and reads the change from the base to
    /// HEAD (what the branch committed; the user's uncommitted edits are not part of it).
    pub fn resolve(
        target: &std::path::Path,
        given: &str,
        mode: Mode,
        asked: &AskedBase,
    ) -> Result<Self, SinceError> {
        let unresolved = |reason: String| SinceError::Unresolved {
            given: given.to_string(),
            reason,
            hint: match &asked.branch {
                Some(branch) => format!(
                    "check out with `fetch-depth: 0`, or run `git fetch origin {branch}` first"
                ),
                None => "check out with `fetch-depth: 0`, or fetch the ref first".to_string(),
            },
        };
        let repo = git2::Repository::discover(target)
            .map_err(|error| unresolved(format!("no git repository: {}", error.message())))?;
        let head = repo
            .head()
            .and_then(|head| head.peel_to_commit())
            .map_err(|error| unresolved(format!("HEAD has no commit: {}", error.message())))?;
        let commit_of = |name: &str| {
            repo.revparse_single(name)
                .and_then(|object| object.peel_to_commit())
        };
        let base = match &asked.spec {
            BaseSpec::Commit(sha) => commit_of(sha)
                .map_err(|_| unresolved(format!("the commit {sha} is not in the clone")))?
                .id(),
            BaseSpec::MergeBaseWith(names) => {
                let other = names
                    .iter()
                    .find_map(|name| commit_of(name).ok())
                    .ok_or_else(|| {
                        unresolved(format!("git cannot resolve {}", names.join(" nor ")))
                    })?;
                repo.merge_base(head.id(), other.id()).map_err(|_| {
                    unresolved(format!(
                        "HEAD and {} have no common ancestor in the clone (a shallow clone?)",
                        other.id()
                    ))
                })?
            }
        };
        let (files, renames) =
            changed_since(&repo, target, base, head.id()).map_err(|source| SinceError::Diff {
                given: given.to_string(),
                base: base.to_string(),
                source,
            })?;
        Ok(Self {
            given: given.to_string(),
            base: base.to_string(),
            source: asked.source,
            mode,
            files,
            renames,
            at_base: None,
            base_summary: None,
        })
    }

    /// The files the change added or modified, relative to the target.
    pub fn changed_files(&self) -> Vec<String> {
        self.files.keys().cloned().collect()
    }

    /// Whether `finding` lies on what the change added or modified ([`Mode::Lines`]): in a file
    /// the change added, or on (or spanning) a line it added or modified. A finding without a
    /// file, or without a line in a file that was there before, cannot be placed in the change:
    /// it is pre-existing.
    pub fn on_changed_lines(&self, finding: &Diagnostic) -> bool {
        let Some(file) = &finding.file else {
            return false;
        };
        let Some(changed) = self.files.get(file.trim_start_matches("./")) else {
            return false;
        };
        if changed.added {
            return true;
        }
        let Some(line) = finding.line else {
            return false;
        };
        let end = finding.end_line.unwrap_or(line).max(line);
        changed
            .lines
            .iter()
            .any(|&(first, last)| first <= end && line <= last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Severity;
    use crate::test_git::git;

    fn finding(file: Option<&str>, line: Option<u32>, end_line: Option<u32>) -> Diagnostic {
        Diagnostic {
            file: file.map(str::to_string),
            line,
            column: None,
            end_line,
            end_column: None,
            severity: Severity::Error,
            code: None,
            message: "m".into(),
            category: None,
            fingerprint: String::new(),
            outside_target: false,
            body: None,
        }
    }

    /// A changed file as the tests write it: its path, whether it is new, its changed lines.
    type Changed<'a> = (&'a str, bool, &'a [(u32, u32)]);

    fn since(files: &[Changed<'_>]) -> Since {
        Since {
            given: "main".into(),
            base: "0".repeat(40),
            source: BaseSource::Given,
            mode: Mode::Lines,
            files: files
                .iter()
                .map(|(path, added, lines)| {
                    let file = ChangedFile {
                        added: *added,
                        lines: lines.to_vec(),
                    };
                    ((*path).to_string(), file)
                })
                .collect(),
            renames: BTreeMap::new(),
            at_base: None,
            base_summary: None,
        }
    }

    #[test]
    fn a_finding_is_new_on_the_lines_the_change_added_or_modified() {
        let since = since(&[
            ("new.py", true, &[(1, 3)]),
            ("app.py", false, &[(4, 5), (10, 10)]),
        ]);
        // (file, line, end line, new)
        let cases = [
            (Some("app.py"), Some(4), None, true),
            (Some("app.py"), Some(5), None, true),
            (Some("./app.py"), Some(10), None, true),
            (Some("app.py"), Some(3), None, false),
            (Some("app.py"), Some(6), None, false),
            // Spanning a changed line.
            (Some("app.py"), Some(7), Some(11), true),
            (Some("app.py"), Some(1), Some(3), false),
            // No line in a file that was there before: cannot be placed in the change.
            (Some("app.py"), None, None, false),
            // A new file: all of it is the change's, with or without a line.
            (Some("new.py"), Some(40), None, true),
            (Some("new.py"), None, None, true),
            // A file the change did not touch, and no file at all.
            (Some("old.py"), Some(4), None, false),
            (None, Some(4), None, false),
        ];
        for (file, line, end_line, new) in cases {
            assert_eq!(
                since.on_changed_lines(&finding(file, line, end_line)),
                new,
                "{file:?}:{line:?}-{end_line:?}"
            );
        }
        assert_eq!(since.changed_files(), ["app.py", "new.py"]);
    }

    #[test]
    fn the_change_is_read_from_git_with_renames_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q", "-b", "main"]);
        let numbered =
            |count: u32| -> String { (1..=count).map(|n| format!("line {n}\n")).collect() };
        std::fs::write(root.join("edited.txt"), numbered(10)).unwrap();
        std::fs::write(root.join("trimmed.txt"), numbered(10)).unwrap();
        std::fs::write(root.join("moved.txt"), numbered(20)).unwrap();
        std::fs::write(root.join("moved_edited.txt"), numbered(20)).unwrap();
        std::fs::write(root.join("gone.txt"), "bye\n").unwrap();
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", "base"]);
        // Line 3 modified, a line added after line 7.
        let edited = numbered(10)
            .replace("line 3\n", "line three\n")
            .replace("line 7\n", "line 7\nline 7b\n");
        std::fs::write(root.join("edited.txt"), edited).unwrap();
        // Only deletions: no line of the new side is the change's.
        std::fs::write(
            root.join("trimmed.txt"),
            numbered(10).replace("line 5\n", ""),
        )
        .unwrap();
        git(root, &["mv", "moved.txt", "renamed.txt"]);
        git(root, &["mv", "moved_edited.txt", "renamed_edited.txt"]);
        let renamed_edited = numbered(20).replace("line 20\n", "line twenty\n");
        std::fs::write(root.join("renamed_edited.txt"), renamed_edited).unwrap();
        std::fs::remove_file(root.join("gone.txt")).unwrap();
        std::fs::write(root.join("fresh.txt"), "hello\n").unwrap();
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", "branch"]);
        let since =
            Since::resolve(root, "HEAD~1", Mode::Lines, &AskedBase::given("HEAD~1")).unwrap();
        let lines = |path: &str| {
            since
                .files
                .get(path)
                .map(|file| (file.added, file.lines.clone()))
        };
        assert_eq!(lines("edited.txt"), Some((false, vec![(3, 3), (8, 8)])));
        assert_eq!(lines("trimmed.txt"), None);
        assert_eq!(lines("renamed.txt"), None);
        assert_eq!(lines("renamed_edited.txt"), Some((false, vec![(20, 20)])));
        assert_eq!(lines("fresh.txt"), Some((true, vec![(1, 1)])));
        assert_eq!(lines("gone.txt"), None);
        assert_eq!(
            since.renames.get("moved_edited.txt").map(String::as_str),
            Some("renamed_edited.txt")
        );
        assert_eq!(
            since.renames.get("moved.txt").map(String::as_str),
            Some("renamed.txt")
        );
        assert_eq!(since.base.len(), 40);
        // A ref git cannot resolve is an error that says what to fetch.
        let error = Since::resolve(
            root,
            "origin/main",
            Mode::Lines,
            &AskedBase::given("origin/main"),
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("fetch-depth: 0"), "{error}");
    }
}
