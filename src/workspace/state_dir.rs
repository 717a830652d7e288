//! Where a run may keep its files: never in a folder the repository tracks, never through a
//! symbolic link inside the work tree (a committed `.refine-loop -> ../elsewhere` would have the
//! loop write, and clean up, outside the repository), and never a folder that already holds a
//! symbolic link or a special file anywhere inside (a state dir restored from a CI cache with
//! `cycle-1 -> /elsewhere` would lead the run's writes and clean-ups out of it).

use std::path::{Component, Path, PathBuf};

/// Entries of an existing state dir looked at, at most; one that holds more is refused.
const MAX_ENTRIES: usize = 200_000;

/// Why `state_dir` cannot be the state dir of a run on the repository at `target`; `None` when
/// it can (or when `target` is not in a git repository, which the run reports on its own).
pub fn refuse_state_dir(target: &Path, state_dir: &Path) -> Option<String> {
    placed_wrong(target, state_dir)
        .or_else(|| resolves_wrong(target, state_dir))
        .or_else(|| holds_what_leads_out(state_dir))
}

/// Where `state_dir` is once every link on its way is followed: a link itself, one that holds
/// the work tree (its files would be the loop's own, and sealed from every delegate), or one in
/// a git folder.
fn resolves_wrong(target: &Path, state_dir: &Path) -> Option<String> {
    if std::fs::symlink_metadata(state_dir).is_ok_and(|meta| meta.file_type().is_symlink()) {
        return Some(format!(
            "the state dir {} is a symbolic link: the run's writes would go where it leads; \
             choose a real folder (--state-dir)",
            state_dir.display()
        ));
    }
    // A bare repository is refused for what it is, later.
    let repo = git2::Repository::discover(target).ok()?;
    let tree = repo.workdir()?.canonicalize().ok()?;
    let resolved = resolved(state_dir)?;
    if tree.starts_with(&resolved) {
        return Some(format!(
            "the state dir {} holds the work tree ({}): every file in it would be the run's own \
             and no delegate could write it; choose a folder inside the tree or beside it \
             (--state-dir)",
            state_dir.display(),
            tree.display()
        ));
    }
    let git_dirs = [repo.path(), repo.commondir()];
    git_dirs
        .iter()
        .filter_map(|git_dir| git_dir.canonicalize().ok())
        .find(|git_dir| resolved.starts_with(git_dir))
        .map(|git_dir| {
            format!(
                "the state dir {} is inside the git folder ({}): choose another folder \
                 (--state-dir)",
                state_dir.display(),
                git_dir.display()
            )
        })
}

/// `path` with its longest existing part resolved as the kernel does (links followed, then `..`),
/// the rest by name.
fn resolved(path: &Path) -> Option<PathBuf> {
    let path = std::path::absolute(path).ok()?;
    let mut existing = path.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(canonical) = existing.canonicalize() {
            let whole = rest
                .iter()
                .rev()
                .fold(canonical, |path, part| path.join(part));
            return Some(lexical(&whole));
        }
        rest.push(existing.file_name()?.to_os_string());
        existing = existing.parent()?;
    }
}

/// What in `state_dir`, as it is before the run, is not the loop's to keep: a symbolic link or a
/// special file anywhere inside, a folder it cannot list, or more entries than a run leaves.
fn holds_what_leads_out(state_dir: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(state_dir).ok()?;
    if !meta.is_dir() {
        return (!meta.file_type().is_symlink()).then(|| {
            format!(
                "the state dir {} is not a folder: choose another (--state-dir)",
                state_dir.display()
            )
        });
    }
    let mut folders = vec![state_dir.to_path_buf()];
    let mut seen = 0;
    while let Some(folder) = folders.pop() {
        let entries = match std::fs::read_dir(&folder) {
            Ok(entries) => entries,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
            // One it may pass through but not list could hide a link where the run writes.
            Err(error) => {
                return Some(format!(
                    "the state dir {} holds a folder the run cannot list ({}: {error}): what is \
                     in it cannot be checked; remove it or choose another folder (--state-dir)",
                    state_dir.display(),
                    folder.display()
                ));
            }
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return Some(format!(
                    "the state dir {} holds more than {MAX_ENTRIES} entries, more than a run \
                     leaves: clear it or choose another (--state-dir)",
                    state_dir.display()
                ));
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                folders.push(entry.path());
            } else if !kind.is_file() {
                let what = if kind.is_symlink() {
                    "a symbolic link"
                } else {
                    "a special file (a FIFO, a socket or a device)"
                };
                return Some(format!(
                    "the state dir {} holds {what} ({}), which no run leaves (a restored cache?): \
                     the run's writes could go through it; remove it or choose another folder \
                     (--state-dir)",
                    state_dir.display(),
                    entry.path().display()
                ));
            }
        }
    }
    None
}

/// Why `state_dir`'s place is wrong: inside a tracked folder, behind a link, the tree itself.
fn placed_wrong(target: &Path, state_dir: &Path) -> Option<String> {
    let repo = git2::Repository::discover(target).ok()?;
    let workdir = repo.workdir()?;
    let workdir = std::path::absolute(workdir).ok()?;
    let state_dir = std::path::absolute(state_dir).ok()?;
    let inside = lexical(&state_dir)
        .strip_prefix(lexical(&workdir))
        .ok()
        .map(Path::to_path_buf)?;
    // Every folder from the work tree's root down to the state dir, the state dir included.
    let mut path = workdir.clone();
    for part in inside.components() {
        path.push(part);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            return Some(format!(
                "the state dir {} is reached through a symbolic link ({}): choose a real folder \
                 (--state-dir)",
                state_dir.display(),
                path.display()
            ));
        }
    }
    let relative = inside.to_string_lossy().replace('\\', "/");
    if relative.is_empty() {
        return Some(format!(
            "the state dir {} is the work tree itself: choose a folder inside it or elsewhere \
             (--state-dir)",
            state_dir.display()
        ));
    }
    let prefix = format!("{relative}/");
    let index = repo.index().ok()?;
    let tracked = index.iter().find(|entry| {
        entry.path.starts_with(prefix.as_bytes()) || entry.path == relative.as_bytes()
    });
    tracked.map(|entry| {
        format!(
            "the state dir {} holds files the repository tracks ({}): the run would overwrite \
             them; choose another folder (--state-dir)",
            state_dir.display(),
            String::from_utf8_lossy(&entry.path)
        )
    })
}

/// `path` with `.` and `..` resolved by name (the path need not exist).
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_git::git;

    #[test]
    fn a_tracked_linked_or_root_state_dir_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::write(root.join("docs/a.md"), "a\n").unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("linked")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join(".refine-loop")).unwrap();
        git(root, &["add", "-A"]);
        git(root, &["commit", "-qm", "base"]);
        // (state dir, refused because …)
        // A state dir a cache restored, with a link inside; and one with a FIFO.
        std::fs::create_dir_all(root.join(".restored/cycle-2")).unwrap();
        std::fs::write(root.join(".restored/run.json"), "{}\n").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join(".restored/cycle-1")).unwrap();
        std::fs::create_dir_all(root.join(".piped/cycle-1")).unwrap();
        nix::unistd::mkfifo(
            &root.join(".piped/cycle-1/fifo"),
            nix::sys::stat::Mode::S_IRWXU,
        )
        .unwrap();
        std::fs::create_dir_all(outside.path().join("cached/patches")).unwrap();
        std::os::unix::fs::symlink("/", outside.path().join("cached/patches/root")).unwrap();
        std::fs::write(root.join(".a-file"), "x").unwrap();
        std::os::unix::fs::symlink(root.join(".git"), outside.path().join("into-git")).unwrap();
        std::os::unix::fs::symlink(root, outside.path().join("the-tree")).unwrap();
        let parent = root.parent().unwrap().to_path_buf();
        let cases: [(PathBuf, Option<&str>); 18] = [
            // A link outside the tree, to anywhere; a path through one into `.git`.
            (outside.path().join("into-git"), Some("is a symbolic link")),
            (
                outside.path().join("into-git/state"),
                Some("inside the git folder"),
            ),
            (
                root.join(".git/refine-loop-state"),
                Some("inside the git folder"),
            ),
            // A folder that holds the work tree, reached by name or through a link.
            (parent.clone(), Some("holds the work tree")),
            (
                outside.path().join("the-tree/.."),
                Some("holds the work tree"),
            ),
            (outside.path().join("the-tree/.state"), None),
            (root.join("docs"), Some("tracks (docs/a.md)")),
            (root.join("docs/sub"), None),
            (root.join(".refine-loop"), Some("symbolic link")),
            (root.join("linked/state"), Some("symbolic link")),
            (root.join("docs/../linked"), Some("symbolic link")),
            (root.to_path_buf(), Some("the work tree itself")),
            (root.join(".state"), None),
            (outside.path().join("state"), None),
            (root.join(".restored"), Some("holds a symbolic link")),
            (root.join(".piped"), Some("holds a special file")),
            (outside.path().join("cached"), Some("holds a symbolic link")),
            (root.join(".a-file"), Some("is not a folder")),
        ];
        for (state_dir, expected) in cases {
            let refused = refuse_state_dir(root, &state_dir);
            match expected {
                Some(reason) => {
                    let refused = refused.unwrap_or_else(|| panic!("{state_dir:?} accepted"));
                    assert!(refused.contains(reason), "{state_dir:?}: {refused}");
                }
                None => assert_eq!(refused, None, "{state_dir:?}"),
            }
        }
    }
}
