//! Patch text between two trees, as `git apply` and `git am` take it: binary files in full, one
//! file per path (a rename is a deletion and an addition), and the blobs each patch carries.

use super::{DeliverError, git};

/// One patch file, planned: its name, its bytes and the blobs whose content it carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchFile {
    /// The file name: `NNNN-<slug>.patch` in a series, `refine-loop.patch` for the cumulative one.
    pub name: String,
    pub contents: Vec<u8>,
    pub(super) blobs: Vec<CarriedBlob>,
}

/// A blob a patch carries, in text hunks or as a binary literal or delta.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CarriedBlob {
    pub path: Vec<u8>,
    pub side: Side,
    pub id: git2::Oid,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    Before,
    After,
}

impl Side {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Before => "before",
            Self::After => "after",
        }
    }
}

/// How a patch travels, which decides how a text file with carriage returns is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Transport {
    /// `git apply` reads the file as it is.
    Apply,
    /// `git am` (mailsplit) cuts the CR of every CRLF line unless told `--keep-cr`: a text file
    /// holding a CR goes as a binary patch instead, which survives.
    Mail,
}

/// The diff between two trees: binary files shown in full (with `force_binary`, every file), three
/// lines of context, no rename detection (whatever the user's `diff.renames`): every path stands
/// on its own. It is limited to the paths that differ, found first: libgit2 walks every entry of
/// both trees otherwise (at 100,000 files, 60 ms a diff, several per accepted cycle).
pub(super) fn diff_trees<'repo>(
    repo: &'repo git2::Repository,
    old: &git2::Tree<'_>,
    new: &git2::Tree<'_>,
    force_binary: bool,
) -> Result<git2::Diff<'repo>, DeliverError> {
    let failed = || git(format!("diff {} to {}", old.id(), new.id()));
    let mut options = git2::DiffOptions::new();
    options
        .show_binary(true)
        .force_binary(force_binary)
        .context_lines(3);
    let paths = differing_paths(repo, old, new).map_err(failed())?;
    if paths.is_empty() {
        // An empty path list would mean every path.
        return repo
            .diff_tree_to_tree(Some(old), Some(old), Some(&mut options))
            .map_err(failed());
    }
    options.disable_pathspec_match(true);
    for path in paths {
        options.pathspec(path);
    }
    repo.diff_tree_to_tree(Some(old), Some(new), Some(&mut options))
        .map_err(failed())
}

/// The paths of the entries that differ between two trees (in id or mode, or present on one side
/// only), descending only into folders whose ids differ.
fn differing_paths(
    repo: &git2::Repository,
    old: &git2::Tree<'_>,
    new: &git2::Tree<'_>,
) -> Result<Vec<Vec<u8>>, git2::Error> {
    type Entries = std::collections::BTreeMap<Vec<u8>, (git2::Oid, i32, bool)>;
    let entries = |id: Option<git2::Oid>| -> Result<Entries, git2::Error> {
        let Some(id) = id else {
            return Ok(Entries::new());
        };
        Ok(repo
            .find_tree(id)?
            .iter()
            .map(|entry| {
                let folder = entry.kind() == Some(git2::ObjectType::Tree);
                (
                    entry.name_bytes().to_vec(),
                    (entry.id(), entry.filemode(), folder),
                )
            })
            .collect())
    };
    let mut paths = Vec::new();
    let mut stack = vec![(Vec::new(), Some(old.id()), Some(new.id()))];
    while let Some((prefix, old, new)) = stack.pop() {
        let (before, after) = (entries(old)?, entries(new)?);
        let names: std::collections::BTreeSet<&Vec<u8>> =
            before.keys().chain(after.keys()).collect();
        for name in names {
            let (was, is) = (before.get(name), after.get(name));
            if was == is {
                continue;
            }
            let path = match prefix.is_empty() {
                true => name.clone(),
                false => [prefix.as_slice(), b"/", name].concat(),
            };
            let folder = |side: Option<&(git2::Oid, i32, bool)>| {
                side.and_then(|&(id, _, folder)| folder.then_some(id))
            };
            let (old_folder, new_folder) = (folder(was), folder(is));
            if old_folder.is_some() || new_folder.is_some() {
                stack.push((path.clone(), old_folder, new_folder));
            }
            // A file on either side (a folder that became a file is both).
            let file = |side: Option<&(git2::Oid, i32, bool)>| side.is_some_and(|e| !e.2);
            if file(was) || file(is) {
                paths.push(path);
            }
        }
    }
    paths.sort_unstable();
    Ok(paths)
}

/// The patch text from `old` to `new` and the blobs it carries: what each file becomes and, for
/// files written as binary (whose patch can be reversed), what it was. Without rename detection
/// libgit2 writes a type change (a file that became a symlink) as the deletion, then the
/// addition: the order `git apply` needs.
pub(super) fn patch_text(
    repo: &git2::Repository,
    old: &git2::Tree<'_>,
    new: &git2::Tree<'_>,
    transport: Transport,
) -> Result<(Vec<u8>, Vec<CarriedBlob>), DeliverError> {
    let diff = diff_trees(repo, old, new, false)?;
    // The same diff with every file binary, made when a file needs it: same trees, same order.
    let mut binary_diff = None;
    let mut text = Vec::new();
    let mut blobs = Vec::new();
    for index in 0..diff.deltas().len() {
        let Some(mut patch) = git2::Patch::from_diff(&diff, index).map_err(git("make a patch"))?
        else {
            continue;
        };
        let (as_binary, same_bytes, carried) = {
            let delta = patch.delta();
            let as_binary = transport == Transport::Mail
                && !delta.flags().is_binary()
                && holds_carriage_return(repo, &delta)?;
            let binary = as_binary || delta.flags().is_binary();
            let same_bytes = delta.old_file().id() == delta.new_file().id();
            (as_binary, same_bytes, carried_blobs(&delta, binary))
        };
        let printed = if as_binary {
            let forced = match &mut binary_diff {
                Some(forced) => forced,
                empty => empty.insert(diff_trees(repo, old, new, true)?),
            };
            git2::Patch::from_diff(forced, index)
                .and_then(|patch| {
                    patch
                        .ok_or_else(|| git2::Error::from_str("the binary diff lacks a file"))?
                        .to_buf()
                })
                .map_err(git("print a patch as binary"))?
        } else {
            patch.to_buf().map_err(git("print a patch"))?
        };
        if same_bytes {
            text.extend_from_slice(without_empty_binary_note(&printed));
        } else {
            text.extend_from_slice(&printed);
        }
        blobs.extend(carried);
    }
    Ok((text, blobs))
}

/// Whether either side of the file holds a carriage return.
fn holds_carriage_return(
    repo: &git2::Repository,
    delta: &git2::DiffDelta<'_>,
) -> Result<bool, DeliverError> {
    for file in [delta.old_file(), delta.new_file()] {
        if file.exists() && carries_content(file.mode()) {
            let blob = repo
                .find_blob(file.id())
                .map_err(git(format!("read blob {}", file.id())))?;
            if blob.content().contains(&b'\r') {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// The blobs a file's patch carries: what it becomes and, when the patch is binary (and can be
/// reversed), what it was.
fn carried_blobs(delta: &git2::DiffDelta<'_>, binary: bool) -> Vec<CarriedBlob> {
    [
        (Side::Before, delta.old_file()),
        (Side::After, delta.new_file()),
    ]
    .into_iter()
    .filter(|(side, file)| {
        file.exists() && carries_content(file.mode()) && (*side == Side::After || binary)
    })
    .map(|(side, file)| CarriedBlob {
        path: file.path_bytes().unwrap_or_default().to_vec(),
        side,
        id: file.id(),
    })
    .collect()
}

/// The patch of a file whose bytes did not change (only its mode did) without its last line when
/// that is `Binary files … differ`: libgit2 writes the note for a binary file, `git apply` reads
/// it as a binary patch without data and refuses it.
fn without_empty_binary_note(text: &[u8]) -> &[u8] {
    let body = text.strip_suffix(b"\n").unwrap_or(text);
    let start = body
        .iter()
        .rposition(|byte| *byte == b'\n')
        .map_or(0, |end| end + 1);
    if body[start..].starts_with(b"Binary files ") {
        &text[..start]
    } else {
        text
    }
}

fn carries_content(mode: git2::FileMode) -> bool {
    matches!(
        mode,
        git2::FileMode::Blob
            | git2::FileMode::BlobExecutable
            | git2::FileMode::BlobGroupWritable
            | git2::FileMode::Link
    )
}

/// The diff from `base`'s tree to `tip`'s; empty when there is no tip.
pub(super) fn cumulative(
    repo: &git2::Repository,
    base: git2::Oid,
    tip: Option<git2::Oid>,
) -> Result<PatchFile, DeliverError> {
    let name = crate::state::PATCH_FILE.to_string();
    let Some(tip) = tip else {
        return Ok(PatchFile {
            name,
            contents: Vec::new(),
            blobs: Vec::new(),
        });
    };
    let tree_of = |id: git2::Oid| {
        repo.find_commit(id)
            .and_then(|commit| commit.tree())
            .map_err(git(format!("read the tree of {id}")))
    };
    let (contents, blobs) = patch_text(repo, &tree_of(base)?, &tree_of(tip)?, Transport::Apply)?;
    Ok(PatchFile {
        name,
        contents,
        blobs,
    })
}
