//! Makes the paths tools print relative to the target, with `/` separators.

use std::path::Path;

/// A path made relative to the target, or kept as given when it points outside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NormalizedPath {
    pub path: String,
    pub outside_target: bool,
}

/// Normalises a path and says whether it leaves the target (absolute elsewhere, or `..` past
/// the target's root).
pub fn normalize_path_marked(raw: &str, target: &Path, cwd_relative: &str) -> NormalizedPath {
    let path = normalize_path(raw, target, cwd_relative);
    let outside_target = path.starts_with('/')
        || is_windows_absolute(&path)
        || path == ".."
        || path.starts_with("../");
    NormalizedPath {
        path,
        outside_target,
    }
}

/// Normalises a path a tool printed, as [`normalize_path_marked`] does; when the check ran in a
/// subfolder and the path does not exist from there but does from the target's root (cargo prints
/// paths relative to the workspace root), the root's reading wins.
pub fn resolve_path(raw: &str, target: &Path, cwd_relative: &str) -> NormalizedPath {
    let from_cwd = normalize_path_marked(raw, target, cwd_relative);
    if cwd_relative.is_empty() || from_cwd.outside_target || target.join(&from_cwd.path).exists() {
        return from_cwd;
    }
    let from_root = normalize_path_marked(raw, target, "");
    if !from_root.outside_target && target.join(&from_root.path).exists() {
        from_root
    } else {
        from_cwd
    }
}

/// Normalises a path printed by a tool that ran in `cwd_relative` (relative to `target`, `/`
/// separated, empty for the target itself). Absolute paths under the target become relative;
/// other absolute paths are kept as given.
pub fn normalize_path(raw: &str, target: &Path, cwd_relative: &str) -> String {
    let path = from_file_url(raw.trim()).replace('\\', "/");
    let target_text = target.to_string_lossy().replace('\\', "/");
    let target_text = target_text.trim_end_matches('/');
    if let Some(rest) = path.strip_prefix(target_text)
        && let Some(rest) = rest.strip_prefix('/')
    {
        return resolve_dots(rest);
    }
    if path.starts_with('/') || is_windows_absolute(&path) {
        return path;
    }
    if cwd_relative.is_empty() {
        resolve_dots(&path)
    } else {
        resolve_dots(&format!("{cwd_relative}/{path}"))
    }
}

/// The path a `file:` URL names (node's ES module frames: `file:///repo/prix%20%C3%A9t%C3%A9/a.js`
/// is `/repo/prix été/a.js`; `file:///C:/x` is `C:/x`), percent-decoded; any other text as it is.
fn from_file_url(raw: &str) -> std::borrow::Cow<'_, str> {
    let Some(rest) = raw.strip_prefix("file://") else {
        return raw.into();
    };
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    let bytes = rest.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[at] == b'%'
            && let (Some(high), Some(low)) = (
                bytes.get(at + 1).copied().and_then(hex),
                bytes.get(at + 2).copied().and_then(hex),
            )
        {
            decoded.push((high * 16 + low) as u8);
            at += 3;
        } else {
            decoded.push(bytes[at]);
            at += 1;
        }
    }
    let path = String::from_utf8_lossy(&decoded).into_owned();
    // `file:///C:/x`: a Windows drive after the URL's own slash.
    match path.strip_prefix('/') {
        Some(windows) if is_windows_absolute(&windows.replace('\\', "/")) => {
            windows.to_string().into()
        }
        _ => path.into(),
    }
}

fn is_windows_absolute(path: &str) -> bool {
    let bytes = path.as_bytes();
    bytes.len() >= 3 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' && bytes[2] == b'/'
}

/// Drops `.` parts and folds `dir/..`, keeping leading `..` that leave the target.
fn resolve_dots(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|last| *last != "..") => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        let target = Path::new("/work/repo");
        let table = [
            ("src/a.rs", "", "src/a.rs"),
            ("./src/a.rs", "", "src/a.rs"),
            ("src\\a.rs", "", "src/a.rs"),
            ("/work/repo/src/a.rs", "", "src/a.rs"),
            ("/work/repo/src/a.rs", "sub", "src/a.rs"),
            ("/work/repository/a.rs", "", "/work/repository/a.rs"),
            ("/usr/lib/x.rs", "", "/usr/lib/x.rs"),
            ("src/a.rs", "crates/core", "crates/core/src/a.rs"),
            ("../b/x.rs", "crates/a", "crates/b/x.rs"),
            ("../../../x.rs", "a", "../../x.rs"),
            ("C:\\x\\y.rs", "", "C:/x/y.rs"),
            // file: URLs (node's ES module frames), percent-decoded.
            (
                "file:///work/repo/src/prix%20%C3%A9t%C3%A9/calcul.mjs",
                "",
                "src/prix été/calcul.mjs",
            ),
            ("file://localhost/work/repo/a%5Bb%5D.js", "", "a[b].js"),
            ("file:///usr/lib/node/x.js", "", "/usr/lib/node/x.js"),
            ("file:///C:/repo/x%25.js", "", "C:/repo/x%.js"),
            // A bad escape is kept; a plain path's % is never decoded.
            ("file:///work/repo/100%zz.js", "", "100%zz.js"),
            ("src/50%20off.js", "", "src/50%20off.js"),
        ];
        for (raw, cwd, expected) in table {
            assert_eq!(
                normalize_path(raw, target, cwd),
                expected,
                "{raw} in {cwd:?}"
            );
        }
    }

    #[test]
    fn workspace_relative_paths_from_a_member_folder() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path();
        std::fs::create_dir_all(target.join("crates/core/src")).unwrap();
        std::fs::write(target.join("crates/core/src/lib.rs"), "").unwrap();
        std::fs::create_dir_all(target.join("crates/core/tests")).unwrap();
        std::fs::write(target.join("crates/core/tests/t.rs"), "").unwrap();
        let table = [
            ("crates/core/src/lib.rs", "crates/core/src/lib.rs"),
            ("src/lib.rs", "crates/core/src/lib.rs"),
            ("tests/t.rs", "crates/core/tests/t.rs"),
            ("src/gone.rs", "crates/core/src/gone.rs"),
        ];
        for (raw, expected) in table {
            assert_eq!(
                resolve_path(raw, target, "crates/core").path,
                expected,
                "{raw}"
            );
        }
    }

    #[test]
    fn outside_paths_are_marked() {
        let target = Path::new("/work/repo");
        let table = [
            ("src/a.rs", false),
            ("/work/repo/a.rs", false),
            ("/usr/lib/x.rs", true),
            ("../x.rs", true),
            ("C:\\x.rs", true),
        ];
        for (raw, outside) in table {
            assert_eq!(
                normalize_path_marked(raw, target, "").outside_target,
                outside,
                "{raw}"
            );
        }
    }
}
