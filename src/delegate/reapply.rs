//! A campaign's earlier accepted work applied again by the loop itself (`[campaign] pending =
//! "reapply"`). It runs no process, but is a delegate in every other way: what it writes is
//! watched, verified by the gate, kept or rolled back, and recorded like any fix.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::{Assignment, DelegateFiles, DelegateRun, Limits, Transcript, Verdict};

/// What the reports call it: the earlier work applied again, by its patches.
pub(super) fn describe(patches: &[PathBuf]) -> String {
    let names: Vec<String> = patches
        .iter()
        .filter_map(|patch| patch.file_name())
        .map(|name| format!("history/{}", name.to_string_lossy()))
        .collect();
    format!(
        "refine-loop: the earlier accepted work applied again ({})",
        names.join(", ")
    )
}

/// Applies `patches` in order to the work tree of the repository that holds the target; stops
/// at the first that does not apply (exit 1, and why).
pub(super) fn reapply(
    patches: &[PathBuf],
    assignment: &Assignment<'_>,
    limits: &Limits<'_>,
    files: DelegateFiles,
) -> DelegateRun {
    let mut transcript = Transcript::new(files);
    let refused = match super::repository_root(assignment.target) {
        Some(root) => apply_all(patches, &root, assignment, limits, &mut transcript.text),
        None => Some("the target is not in a repository with a work tree".to_owned()),
    };
    let verdict = if refused.is_some() {
        Verdict::NoChange
    } else {
        Verdict::Fixed
    };
    transcript.end(
        None,
        i32::from(refused.is_some()),
        Some(verdict),
        None,
        refused,
    )
}

/// All or nothing: every patch is first found, in order, in the files as the ones before it
/// leave them, before anything is written; then each is applied; if one still fails, what the
/// ones before it wrote is put back. Why not, when it does not apply.
fn apply_all(
    patches: &[PathBuf],
    root: &Path,
    assignment: &Assignment<'_>,
    limits: &Limits<'_>,
    transcript: &mut String,
) -> Option<String> {
    let mut texts = Vec::with_capacity(patches.len());
    for patch in patches {
        match crate::state::read_own(patch, crate::state::OWN_FILE_LIMIT) {
            Ok(Some(bytes)) => texts.push(bytes),
            Ok(None) => return Some(format!("{} is missing", patch.display())),
            Err(error) => return Some(format!("cannot read {}: {error}", patch.display())),
        }
    }
    let read = |path: &Path| crate::files::read_regular(&root.join(path), u64::MAX).ok()?;
    let originals = match rehearse(&texts, read) {
        Ok(originals) => originals,
        Err(reason) => return Some(reason),
    };
    for (patch, bytes) in patches.iter().zip(&texts) {
        // Its hunks found where they are now, then applied as an exact diff, with the bounds
        // every applied diff has.
        let applied = crate::campaign::hunks::rebase(bytes, read).and_then(|text| {
            super::http::apply_diff(root, &text, limits.protected, assignment.state_dir)
        });
        match applied {
            Ok(paths) => {
                let _ = writeln!(
                    transcript,
                    "applied {}: {}",
                    patch.display(),
                    paths.join(", ")
                );
            }
            Err(reason) => {
                put_back(root, &originals);
                return Some(format!(
                    "{}: {reason}; what the patches before it wrote was put back",
                    patch.display()
                ));
            }
        }
    }
    None
}

/// Each path a rehearsal touched, with its bytes before (`None`: absent).
type Originals = Vec<(PathBuf, Option<Vec<u8>>)>;

/// Applies `texts` in order in memory, from the files `read` gives; returns each touched
/// path's bytes before (`None`: absent), or why a patch does not apply there.
fn rehearse(
    texts: &[Vec<u8>],
    read: impl Fn(&Path) -> Option<Vec<u8>>,
) -> Result<Originals, String> {
    use crate::campaign::hunks::{Change, parse};
    let mut now: Vec<(PathBuf, Option<Vec<u8>>)> = Vec::new();
    let mut originals = Vec::new();
    for text in texts {
        let files = parse(text).ok_or("a patch does not parse")?;
        for file in files {
            let path = file.path().to_path_buf();
            let index = match now.iter().position(|(known, _)| *known == path) {
                Some(index) => index,
                None => {
                    let bytes = read(&path);
                    originals.push((path.clone(), bytes.clone()));
                    now.push((path, bytes));
                    now.len() - 1
                }
            };
            let current = now[index].1.take();
            // `None`: it does not apply; `Some(None)`: the path is gone after it.
            let next = match (file.change, current) {
                (Change::Added, None) => file.apply(b"").map(Some),
                (Change::Deleted, Some(_)) => Some(None),
                // A binary file is applied as the patch has it: libgit2 checks it exactly.
                (Change::Modified, Some(bytes)) if file.binary => Some(Some(bytes)),
                (Change::Modified, Some(bytes)) => file.apply(&bytes).map(Some),
                _ => None,
            };
            let Some(next) = next else {
                return Err(format!(
                    "{}: it does not apply after the patches before it",
                    file.path_text()
                ));
            };
            now[index].1 = next;
        }
    }
    Ok(originals)
}

/// Writes back what `originals` held (removing what was absent).
fn put_back(root: &Path, originals: &Originals) {
    for (path, bytes) in originals {
        let full = root.join(path);
        let _ = match bytes {
            Some(bytes) => std::fs::write(&full, bytes),
            None => std::fs::remove_file(&full).or_else(|error| {
                if error.kind() == std::io::ErrorKind::NotFound {
                    Ok(())
                } else {
                    Err(error)
                }
            }),
        };
    }
}

#[cfg(test)]
#[path = "reapply_tests.rs"]
mod tests;
