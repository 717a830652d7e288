//! The change between two commits as pull-request mode needs it: each file added or modified,
//! with the lines of its new side the change added or modified (a diff without context), renames
//! followed.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A file the change added or modified.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangedFile {
    /// The file is new (not at the base, nor renamed from a file there).
    pub added: bool,
    /// The new side's lines the change added or modified: first and last, inclusive, in order.
    pub lines: Vec<(u32, u32)>,
}

/// The files changed from `base` to `head` in the repository, by their path at `head` relative
/// to `target` (files outside it are left out), and the files renamed (path at the base to path
/// at `head`). Deleted files are not changed files: nothing is left in them to fix.
#[expect(
    clippy::type_complexity,
    reason = "the two maps are named where they are taken apart"
)]
pub fn changed_since(
    repo: &git2::Repository,
    target: &Path,
    base: git2::Oid,
    head: git2::Oid,
) -> Result<(BTreeMap<String, ChangedFile>, BTreeMap<String, String>), git2::Error> {
    let prefix = target_prefix(repo, target);
    let relative = |path: Option<&Path>| -> Option<String> {
        let path = path?.strip_prefix(&prefix).ok()?;
        Some(path.to_string_lossy().into_owned())
    };
    let base_tree = repo.find_commit(base)?.tree()?;
    let head_tree = repo.find_commit(head)?.tree()?;
    let mut options = git2::DiffOptions::new();
    options.context_lines(0);
    let mut diff =
        repo.diff_tree_to_tree(Some(&base_tree), Some(&head_tree), Some(&mut options))?;
    let mut find = git2::DiffFindOptions::new();
    find.renames(true);
    diff.find_similar(Some(&mut find))?;
    let files = RefCell::new(BTreeMap::<String, ChangedFile>::new());
    let mut renames = BTreeMap::new();
    for delta in diff.deltas() {
        let Some(new_path) = relative(delta.new_file().path()) else {
            continue;
        };
        match delta.status() {
            git2::Delta::Added | git2::Delta::Copied | git2::Delta::Untracked => {
                files.borrow_mut().insert(
                    new_path,
                    ChangedFile {
                        added: true,
                        lines: Vec::new(),
                    },
                );
            }
            git2::Delta::Renamed => {
                if let Some(old_path) = relative(delta.old_file().path()) {
                    renames.insert(old_path, new_path.clone());
                }
                files.borrow_mut().entry(new_path).or_default();
            }
            git2::Delta::Modified | git2::Delta::Typechange => {
                files.borrow_mut().entry(new_path).or_default();
            }
            _ => {}
        }
    }
    diff.foreach(
        &mut |_, _| true,
        None,
        Some(&mut |delta, hunk| {
            if hunk.new_lines() > 0
                && let Some(path) = relative(delta.new_file().path())
                && let Some(file) = files.borrow_mut().get_mut(&path)
            {
                let first = hunk.new_start();
                file.lines.push((first, first + hunk.new_lines() - 1));
            }
            true
        }),
        None,
    )?;
    let mut files = files.into_inner();
    // A rename without edits changed no line: it is no changed file.
    files.retain(|_, file| file.added || !file.lines.is_empty());
    Ok((files, renames))
}

/// The target relative to the repository's work tree (empty when they are the same).
fn target_prefix(repo: &git2::Repository, target: &Path) -> PathBuf {
    let root = repo.workdir().and_then(|root| root.canonicalize().ok());
    match (root, target.canonicalize()) {
        (Some(root), Ok(target)) => target
            .strip_prefix(root)
            .map(Path::to_path_buf)
            .unwrap_or_default(),
        _ => PathBuf::new(),
    }
}
