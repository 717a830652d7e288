//! Where a run may keep its files: never in a folder the repository tracks, and never through a
//! symbolic link inside the work tree (a committed `.refine-loop -> ../elsewhere` would have the
//! loop write, and clean up, outside the repository).

use std::path::{Component, Path, PathBuf};

/// Why `state_dir` cannot be the state dir of a run on the repository at `target`; `None` when
/// it can (or when `target` is not in a git repository, which the run reports on its own).
pub fn refuse_state_dir(target: &Path, state_dir: &Path) -> Option<String> {
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

    fn git(dir: &Path, args: &[&str]) {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
            .args(args)
            .current_dir(dir)
            .status()
            .unwrap();
        assert!(status.success());
    }

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
        let cases: [(PathBuf, Option<&str>); 8] = [
            (root.join("docs"), Some("tracks (docs/a.md)")),
            (root.join("docs/sub"), None),
            (root.join(".refine-loop"), Some("symbolic link")),
            (root.join("linked/state"), Some("symbolic link")),
            (root.join("docs/../linked"), Some("symbolic link")),
            (root.to_path_buf(), Some("the work tree itself")),
            (root.join(".state"), None),
            (outside.path().join("state"), None),
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
