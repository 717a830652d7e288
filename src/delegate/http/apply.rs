//! A model's diff, applied to the work tree only when it parses, every path stays inside the
//! repository (off `.git`, off symlinks, off the user's protected work) and the whole of it
//! applies cleanly; otherwise nothing is written and the reason comes back.

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use git2::{ApplyLocation, ApplyOptions, Delta, Diff, FileMode, Repository};

use crate::workspace::{PathState, RepoPath};

/// Applies `text` (a unified diff with paths relative to the repository root) to the work tree
/// of the repository at `root`. Returns the paths it wrote, or why it wrote nothing.
pub fn apply_diff(
    root: &Path,
    text: &str,
    protected: &BTreeMap<RepoPath, PathState>,
) -> Result<Vec<String>, String> {
    let diff = Diff::from_buffer(with_git_headers(text)?.as_bytes())
        .map_err(|error| format!("the diff does not parse: {}", error.message()))?;
    if diff.deltas().len() == 0 {
        return Err("the diff changes no file".to_string());
    }
    let mut paths = Vec::new();
    for delta in diff.deltas() {
        if matches!(delta.new_file().mode(), FileMode::Link | FileMode::Commit)
            || matches!(delta.old_file().mode(), FileMode::Link | FileMode::Commit)
        {
            return Err(format!(
                "the diff changes a symbolic link or a submodule ({})",
                display(delta.new_file().path_bytes().unwrap_or_default())
            ));
        }
        let sides = match delta.status() {
            Delta::Added => vec![delta.new_file().path_bytes()],
            Delta::Deleted => vec![delta.old_file().path_bytes()],
            _ => vec![delta.old_file().path_bytes(), delta.new_file().path_bytes()],
        };
        for path in sides {
            let path = path.ok_or("the diff has a file without a path")?;
            check_path(root, path, protected)?;
            let shown = display(path);
            if !paths.contains(&shown) {
                paths.push(shown);
            }
        }
    }
    let repository = Repository::open(root)
        .map_err(|error| format!("cannot open the repository: {}", error.message()))?;
    let mut check = ApplyOptions::new();
    check.check(true);
    repository
        .apply(&diff, ApplyLocation::WorkDir, Some(&mut check))
        .map_err(|error| format!("the diff does not apply cleanly: {}", error.message()))?;
    repository
        .apply(&diff, ApplyLocation::WorkDir, None)
        .map_err(|error| format!("the diff could not be applied: {}", error.message()))?;
    Ok(paths)
}

/// A path of the diff must be a plain relative path inside the repository, outside `.git`,
/// through no symlink, and not the user's own work.
fn check_path(
    root: &Path,
    path: &[u8],
    protected: &BTreeMap<RepoPath, PathState>,
) -> Result<(), String> {
    let shown = display(path);
    if path.is_empty() || path.starts_with(b"/") || path.contains(&0) {
        return Err(format!(
            "the diff names a path outside the repository: {shown:?}"
        ));
    }
    let parts: Vec<&[u8]> = path.split(|&byte| byte == b'/').collect();
    if parts
        .iter()
        .any(|part| part.is_empty() || *part == b"." || *part == b"..")
    {
        return Err(format!(
            "the diff names a path outside the repository: {shown:?}"
        ));
    }
    if parts.iter().any(|part| part.eq_ignore_ascii_case(b".git")) {
        return Err(format!("the diff writes into .git: {shown:?}"));
    }
    let repo_path = RepoPath::new(path.to_vec());
    if protected.contains_key(&repo_path)
        || repo_path
            .ancestors()
            .any(|folder| protected.contains_key(&folder))
    {
        return Err(format!(
            "the diff changes the user's own work (dirty before the run): {shown}"
        ));
    }
    let mut on_disk = root.to_path_buf();
    for part in &parts {
        on_disk.push(std::ffi::OsStr::from_bytes(part));
        match std::fs::symlink_metadata(&on_disk) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                return Err(format!(
                    "the diff goes through a symbolic link: {}",
                    on_disk.strip_prefix(root).unwrap_or(&on_disk).display()
                ));
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    Ok(())
}

/// libgit2 reads only git's patch form: a plain unified diff (`--- a/x`, `+++ b/x`, hunks) gets
/// the `diff --git` header (and the new or deleted file mode) git would have written.
/// A path written as absolute or climbing out (`/x`, `a/../x`) is refused here, before libgit2
/// would quietly make it relative.
fn with_git_headers(text: &str) -> Result<String, String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = String::with_capacity(text.len() + 256);
    let mut header_open = false;
    let (mut old_left, mut new_left) = (0_u64, 0_u64);
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index];
        index += 1;
        if old_left > 0 || new_left > 0 {
            match line.as_bytes().first() {
                Some(b' ') | Some(b'\n') => {
                    old_left = old_left.saturating_sub(1);
                    new_left = new_left.saturating_sub(1);
                }
                Some(b'-') => old_left = old_left.saturating_sub(1),
                Some(b'+') => new_left = new_left.saturating_sub(1),
                _ => {}
            }
            out.push_str(line);
            continue;
        }
        if line.starts_with("diff --git ") {
            header_open = true;
        } else if let Some((old, new)) = hunk_lengths(line) {
            header_open = false;
            (old_left, new_left) = (old, new);
        } else if !header_open
            && line.starts_with("--- ")
            && let Some(next) = lines.get(index).filter(|next| next.starts_with("+++ "))
        {
            let (old, new) = (side(&line[4..], "a/"), side(&next[4..], "b/"));
            for path in [old, new].into_iter().flatten() {
                if path.starts_with('/') || path.split('/').any(|part| part == "..") {
                    return Err(format!(
                        "the diff names a path outside the repository: {path:?}"
                    ));
                }
            }
            let (a, b) = (
                old.or(new).unwrap_or_default(),
                new.or(old).unwrap_or_default(),
            );
            out.push_str(&format!("diff --git a/{a} b/{b}\n"));
            if old.is_none() {
                out.push_str("new file mode 100644\n");
            }
            if new.is_none() {
                out.push_str("deleted file mode 100644\n");
            }
            out.push_str(&old.map_or("--- /dev/null\n".into(), |p| format!("--- a/{p}\n")));
            out.push_str(&new.map_or("+++ /dev/null\n".into(), |p| format!("+++ b/{p}\n")));
            index += 1;
            continue;
        }
        out.push_str(line);
    }
    Ok(out)
}

/// The old and new line counts of a hunk header `@@ -a[,b] +c[,d] @@`.
fn hunk_lengths(line: &str) -> Option<(u64, u64)> {
    let ranges = line.strip_prefix("@@ -")?.split(" @@").next()?;
    let (old, new) = ranges.split_once(" +")?;
    let count = |range: &str| match range.split_once(',') {
        Some((_, count)) => count.trim().parse().ok(),
        None => range.trim().parse::<u64>().ok().map(|_| 1),
    };
    Some((count(old)?, count(new)?))
}

/// One side's path of a `---`/`+++` line: without its `a/`/`b/` prefix and any timestamp;
/// `None` for `/dev/null`.
fn side<'a>(raw: &'a str, prefix: &str) -> Option<&'a str> {
    let path = raw.trim_end_matches(['\n', '\r']);
    let path = path.split('\t').next().unwrap_or(path).trim_end();
    (path != "/dev/null").then(|| path.strip_prefix(prefix).unwrap_or(path))
}

fn display(path: &[u8]) -> String {
    String::from_utf8_lossy(path).into_owned()
}
