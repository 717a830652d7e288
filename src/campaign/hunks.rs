//! A patch's hunks as text images, found in a file wherever they are. libgit2 applies a hunk
//! only at the line its header names; a campaign's earlier patch meets a HEAD that moved on
//! (lines added above it, a squash merge with other work), so its hunks are looked for as `git
//! apply` looks for them: the exact context and changed lines, in order, at any offset, the
//! nearest to the line its header names (moved by the offset the hunk before it was found at).

use std::path::Path;

/// What a patch does to one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePatch {
    /// The path (the new one; the old one for a deletion), as the patch has it.
    pub path: Vec<u8>,
    pub change: Change,
    /// Its hunks are not text (a binary patch): only whole-file digests can judge it.
    pub binary: bool,
    pub hunks: Vec<Hunk>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Added,
    Deleted,
    Modified,
}

/// One hunk: the lines before (context and removed) and after (context and added), each with
/// its line ending, and where its header puts each side (0-based: the index of its first line,
/// or of the line it goes before when the side is empty).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hunk {
    pub before: Vec<Vec<u8>>,
    pub after: Vec<Vec<u8>>,
    pub before_at: usize,
    pub after_at: usize,
}

/// Which side of the hunks to look for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Before,
    After,
}

/// The files of `patch`, or `None` when it does not parse.
pub fn parse(patch: &[u8]) -> Option<Vec<FilePatch>> {
    let diff = git2::Diff::from_buffer(patch).ok()?;
    let mut files = Vec::new();
    for index in 0..diff.deltas().len() {
        let patch = git2::Patch::from_diff(&diff, index).ok()??;
        let delta = patch.delta();
        let (change, side) = match delta.status() {
            git2::Delta::Added => (Change::Added, delta.new_file()),
            git2::Delta::Deleted => (Change::Deleted, delta.old_file()),
            _ => (Change::Modified, delta.new_file()),
        };
        let mut hunks = Vec::new();
        for hunk_index in 0..patch.num_hunks() {
            let (header, lines) = patch.hunk(hunk_index).ok()?;
            // `@@ -3,2 +3,0 @@`: a side with lines starts at its line; an empty side (`-0,0`,
            // `+5,0`) names the line it goes after.
            let at = |start: u32, count: u32| {
                let start = start as usize;
                if count == 0 {
                    start
                } else {
                    start.saturating_sub(1)
                }
            };
            let mut hunk = Hunk {
                before_at: at(header.old_start(), header.old_lines()),
                after_at: at(header.new_start(), header.new_lines()),
                ..Hunk::default()
            };
            for line_index in 0..lines {
                let line = patch.line_in_hunk(hunk_index, line_index).ok()?;
                let content = line.content().to_vec();
                match line.origin() {
                    ' ' => {
                        hunk.before.push(content.clone());
                        hunk.after.push(content);
                    }
                    '-' => hunk.before.push(content),
                    '+' => hunk.after.push(content),
                    // The "no newline at end of file" markers: the content already says so.
                    _ => {}
                }
            }
            hunks.push(hunk);
        }
        files.push(FilePatch {
            path: side.path_bytes()?.to_vec(),
            change,
            binary: delta.flags().is_binary() || (hunks.is_empty() && change == Change::Modified),
            hunks,
        });
    }
    Some(files)
}

impl FilePatch {
    /// The path as a lossy string (how the manifest names it).
    pub fn path_text(&self) -> String {
        String::from_utf8_lossy(&self.path).into_owned()
    }

    pub fn path(&self) -> &Path {
        use std::os::unix::ffi::OsStrExt;
        Path::new(std::ffi::OsStr::from_bytes(&self.path))
    }

    /// Where each hunk's `side` is in `content`, in order, not overlapping; `None` when one is
    /// not there. Each is looked for outward from the line its header names, moved by the
    /// offset the hunk before it was found at: the nearest copy wins, the later one on a tie.
    pub fn locate(&self, content: &[u8], side: Side) -> Option<Vec<usize>> {
        let lines: Vec<&[u8]> = content.split_inclusive(|b| *b == b'\n').collect();
        // Each start is tried by a hash of its window, in constant time; only a window whose
        // hash is the image's is compared line by line. A file of one line repeated and a long
        // hunk that is not there cost a pass over the file, not one per line.
        // Keyed anew for every search: lines made to collide would bring back a comparison
        // per start.
        let key = WindowKey::new();
        let windows = Windows::of(&lines, &key);
        let mut from = 0;
        let mut offset: isize = 0;
        let mut found = Vec::with_capacity(self.hunks.len());
        for hunk in &self.hunks {
            let (image, header) = match side {
                Side::Before => (&hunk.before, hunk.before_at),
                Side::After => (&hunk.after, hunk.after_at),
            };
            let last = lines.len().checked_sub(image.len())?;
            if from > last {
                return None;
            }
            let want = Windows::of(image, &key).hash(0, image.len());
            let matches = |start: usize| {
                windows.hash(start, image.len()) == want
                    && image
                        .iter()
                        .zip(&lines[start..])
                        .all(|(want, have)| want.as_slice() == *have)
            };
            let expected = header.saturating_add_signed(offset).clamp(from, last);
            let at = (0..=last - from).find_map(|distance| {
                let later = expected + distance;
                let earlier = expected.checked_sub(distance).filter(|&e| e >= from);
                [Some(later).filter(|&l| l <= last), earlier]
                    .into_iter()
                    .flatten()
                    .find(|&start| matches(start))
            })?;
            found.push(at);
            offset = at as isize - header as isize;
            from = at + image.len();
        }
        Some(found)
    }

    /// `content` with every hunk applied where it is found; `None` when one is not there.
    pub fn apply(&self, content: &[u8]) -> Option<Vec<u8>> {
        let at = self.locate(content, Side::Before)?;
        let lines: Vec<&[u8]> = content.split_inclusive(|b| *b == b'\n').collect();
        let mut out = Vec::with_capacity(content.len());
        let mut cursor = 0;
        for (hunk, start) in self.hunks.iter().zip(at) {
            lines[cursor..start]
                .iter()
                .for_each(|line| out.extend_from_slice(line));
            hunk.after
                .iter()
                .for_each(|line| out.extend_from_slice(line));
            cursor = start + hunk.before.len();
        }
        lines[cursor..]
            .iter()
            .for_each(|line| out.extend_from_slice(line));
        Some(out)
    }
}

/// The secret a search's window hashes are keyed with: a random key for each line's hash
/// (SipHash) and a random odd base, so that no patch can be made to collide.
struct WindowKey {
    lines: std::hash::RandomState,
    base: u64,
}

impl WindowKey {
    fn new() -> Self {
        use std::hash::BuildHasher;
        let lines = std::hash::RandomState::new();
        let base = std::hash::RandomState::new().hash_one(0u8) | 1;
        Self { lines, base }
    }
}

/// Polynomial hashes of every run of lines, from prefix sums: the hash of any window in
/// constant time.
struct Windows {
    /// `prefix[i]`: the hash of the first `i` lines.
    prefix: Vec<u64>,
    /// `powers[n]`: the base to the `n`th.
    powers: Vec<u64>,
}

impl Windows {
    fn of<L: AsRef<[u8]>>(lines: &[L], key: &WindowKey) -> Self {
        use std::hash::{BuildHasher, Hasher};
        let mut prefix = Vec::with_capacity(lines.len() + 1);
        let mut powers = Vec::with_capacity(lines.len() + 1);
        prefix.push(0u64);
        powers.push(1u64);
        for line in lines {
            let mut hasher = key.lines.build_hasher();
            hasher.write(line.as_ref());
            let line = hasher.finish();
            let last = prefix[prefix.len() - 1];
            prefix.push(last.wrapping_mul(key.base).wrapping_add(line));
            powers.push(powers[powers.len() - 1].wrapping_mul(key.base));
        }
        Self { prefix, powers }
    }

    /// The hash of the `len` lines from `start`.
    fn hash(&self, start: usize, len: usize) -> u64 {
        self.prefix[start + len].wrapping_sub(self.prefix[start].wrapping_mul(self.powers[len]))
    }
}

/// `patch` made exact for the files as they are now (`read` gives a path's bytes, `None` when
/// absent): each changed text file's hunks found where they are now and written as a fresh
/// diff of the whole file; added, deleted and binary files as the patch has them. Libgit2 then
/// applies the result as it stands. Why not, when a hunk is not there.
pub fn rebase(patch: &[u8], read: impl Fn(&Path) -> Option<Vec<u8>>) -> Result<String, String> {
    let diff = git2::Diff::from_buffer(patch)
        .map_err(|error| format!("the patch does not parse: {}", error.message()))?;
    let files = parse(patch).ok_or("the patch does not parse")?;
    let mut out = String::new();
    for (index, file) in files.iter().enumerate() {
        let text = if file.change == Change::Modified && !file.binary {
            let now = read(file.path()).ok_or_else(|| format!("{} is gone", file.path_text()))?;
            let next = file
                .apply(&now)
                .ok_or_else(|| format!("{}: a hunk is not there any more", file.path_text()))?;
            let mut fresh =
                git2::Patch::from_buffers(&now, Some(file.path()), &next, Some(file.path()), None)
                    .map_err(|error| error.message().to_owned())?;
            fresh.to_buf().map_err(|error| error.message().to_owned())?
        } else {
            let mut original = git2::Patch::from_diff(&diff, index)
                .map_err(|error| error.message().to_owned())?
                .ok_or("the patch has an empty file")?;
            original
                .to_buf()
                .map_err(|error| error.message().to_owned())?
        };
        out.push_str(
            text.as_str()
                .map_err(|_| format!("{}: the diff is not UTF-8", file.path_text()))?,
        );
    }
    Ok(out)
}

#[cfg(test)]
#[path = "hunks_tests.rs"]
mod tests;
