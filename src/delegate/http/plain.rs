//! Plain unified diffs (`--- a/x`, `+++ b/x`, hunks), as models write them, given the
//! `diff --git` header libgit2 needs.

/// libgit2 reads only git's patch form: a plain unified diff (`--- a/x`, `+++ b/x`, hunks) gets
/// the `diff --git` header (and the new or deleted file mode) git would have written.
/// A path written as absolute or climbing out (`/x`, `a/../x`) is refused here, before libgit2
/// would quietly make it relative.
pub fn with_git_headers(text: &str) -> Result<String, String> {
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
        check_mode(line)?;
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

/// The file modes git writes (and libgit2 reads back without a panic): a tree, a file, a
/// group-writable file (old repositories), an executable, a symbolic link, a submodule.
const KNOWN_MODES: [&str; 6] = ["040000", "100644", "100664", "100755", "120000", "160000"];

/// Refuses a header line that gives a file mode git does not know (`new mode 104755`).
fn check_mode(line: &str) -> Result<(), String> {
    let mode = [
        "new file mode ",
        "deleted file mode ",
        "old mode ",
        "new mode ",
    ]
    .iter()
    .find_map(|prefix| line.strip_prefix(prefix))
    .or_else(|| {
        // `index <hex>..<hex> <mode>`; anything else starting with "index " is not a header.
        let mut words = line.strip_prefix("index ")?.split_whitespace();
        let (blobs, mode) = (words.next()?, words.next()?);
        let (old, new) = blobs.split_once("..")?;
        let hex = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit());
        (hex(old) && hex(new) && words.next().is_none()).then_some(mode)
    });
    match mode.map(str::trim) {
        Some(mode) if !KNOWN_MODES.contains(&mode) => Err(format!(
            "the diff gives a file mode git does not know: {mode:?} (in {:?})",
            line.trim_end()
        )),
        _ => Ok(()),
    }
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
