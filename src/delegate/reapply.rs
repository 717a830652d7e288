//! A campaign's earlier accepted work applied again by the loop itself (`[campaign] pending =
//! "reapply"`). It runs no process, but is a delegate in every other way: what it writes is
//! watched, verified by the gate, kept or rolled back, and recorded like any fix.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::{Assignment, DelegateFiles, DelegateRun, Limits, Verdict};
use crate::process::{HeadTail, ProcessEnd};

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
    let started = Instant::now();
    let mut transcript = String::new();
    let refused = match root_of(assignment.target) {
        Some(root) => apply_all(patches, &root, assignment, limits, &mut transcript),
        None => Some("the target is not in a repository with a work tree".to_owned()),
    };
    if let Some(reason) = &refused {
        let _ = writeln!(transcript, "not applied: {reason}");
    }
    let mut output = HeadTail::default();
    output.push(transcript.as_bytes());
    DelegateRun {
        end: ProcessEnd {
            exit_code: Some(i32::from(refused.is_some())),
            signal: None,
            duration: started.elapsed(),
            stopped: None,
            output_abandoned: false,
            leftovers: Vec::new(),
        },
        spawn_error: None,
        output,
        verdict: Some(if refused.is_some() {
            Verdict::NoChange
        } else {
            Verdict::Fixed
        }),
        verdict_refused: None,
        files,
        usage: None,
        note: refused,
    }
}

fn apply_all(
    patches: &[PathBuf],
    root: &Path,
    assignment: &Assignment<'_>,
    limits: &Limits<'_>,
    transcript: &mut String,
) -> Option<String> {
    for patch in patches {
        let bytes = match crate::state::read_own(patch, crate::state::OWN_FILE_LIMIT) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Some(format!("{} is missing", patch.display())),
            Err(error) => return Some(format!("cannot read {}: {error}", patch.display())),
        };
        // Its hunks found where they are now (HEAD may have moved on above them), then applied
        // as an exact diff, with the bounds every applied diff has.
        let read = |path: &Path| crate::files::read_regular(&root.join(path), u64::MAX).ok()?;
        let text = match crate::campaign::hunks::rebase(&bytes, read) {
            Ok(text) => text,
            Err(reason) => return Some(format!("{}: {reason}", patch.display())),
        };
        match super::http::apply_diff(root, &text, limits.protected, assignment.state_dir) {
            Ok(paths) => {
                let _ = writeln!(
                    transcript,
                    "applied {}: {}",
                    patch.display(),
                    paths.join(", ")
                );
            }
            Err(reason) => return Some(format!("{}: {reason}", patch.display())),
        }
    }
    None
}

/// The work tree's root for a target inside it.
fn root_of(target: &Path) -> Option<PathBuf> {
    let repository = git2::Repository::discover(target).ok()?;
    repository.workdir().map(Path::to_path_buf)
}
