//! Verification: the gate run after changes, judged by the accept rule.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::accept::{Side, judge};
use super::{Kept, RunError};
use crate::cancel::Cancel;
use crate::config::Settings;
use crate::gate::{self, Flaky, SUMMARY_FILE};
use crate::model::Diagnostic;
use crate::state;
use crate::workspace::Incident;

/// A gate run after changes, and what the accept rule says of it.
#[derive(Debug)]
pub struct Verified {
    pub run: gate::GateRun,
    pub reasons: Vec<String>,
    /// New findings it brought to light outside what the change touched (kept changes only).
    pub unmasked: Vec<Diagnostic>,
    /// What the run changed that it must not (put back already): held against the change.
    pub incidents: Vec<Incident>,
    /// What the change did that makes the gate see less.
    pub integrity: Vec<crate::integrity::Move>,
    /// What the gate run made in the tree (see [`crate::workspace::Workspace::made_by_gate`]):
    /// judged with the change, rolled back with it, the gate's own output when it is kept.
    pub made: Vec<crate::workspace::Change>,
}

impl Verified {
    /// The changes may stay: nothing got worse and the gate ran to its end.
    pub fn keeps(&self) -> bool {
        self.reasons.is_empty() && self.incidents.is_empty() && !self.run.cancelled
    }
}

/// What the accept rule says of `run`, the gate after the changes made since `kept`; `changed`
/// says whether a file (relative to the target) is one they touched.
pub fn judged(
    settings: &Settings,
    kept: &Kept,
    run: gate::GateRun,
    changed: &dyn Fn(&str) -> bool,
) -> Verified {
    let (findings, checks) = diagnostics_of(&run);
    let verdict = judge(
        settings.run.accept,
        Side {
            summary: &kept.summary,
            findings: &kept.diagnostics,
            checks: &kept.origins,
        },
        Side {
            summary: &run.summary,
            findings: &findings,
            checks: &checks,
        },
        changed,
    );
    let mut reasons = verdict.reasons;
    // Pull-request mode: a pre-existing finding that gets worse is a regression, even when a
    // fix elsewhere keeps the count.
    if let Some(preexisting) = &run.flaky.preexisting {
        reasons.extend(
            preexisting.worse(
                kept.origins
                    .iter()
                    .map(String::as_str)
                    .zip(&kept.diagnostics),
                checks.iter().map(String::as_str).zip(&findings),
            ),
        );
    }
    Verified {
        run,
        reasons,
        unmasked: verdict.unmasked,
        incidents: Vec::new(),
        integrity: Vec::new(),
        made: Vec::new(),
    }
}

/// Runs the gate for `cycle` and writes its summary; confined by `confiner` when given.
pub fn measure(
    settings: &Settings,
    flaky: &Flaky,
    cycle: u32,
    cancel: &Cancel,
    (tracked, confiner): (
        Option<&dyn gate::TrackedList>,
        Option<&crate::confine::Confiner>,
    ),
) -> Result<gate::GateRun, RunError> {
    let dir = state::cycle_dir(&settings.state_dir, cycle)?;
    let run = gate::run_gate(settings, flaky, (cycle, &dir), cancel, tracked, confiner)?;
    state::write_json(&dir.join(SUMMARY_FILE), &run.summary)?;
    Ok(run)
}

/// Every kept diagnostic of a gate run, with its category settled, and beside it the name of
/// the check it comes from; not those the baseline excused as flaky, nor (pull-request mode)
/// those that were there before the change.
pub fn diagnostics_of(run: &gate::GateRun) -> (Vec<Diagnostic>, Vec<String>) {
    run.checks
        .iter()
        .flat_map(|check| {
            let name = &check.check.name;
            let diagnostics = check.findings.diagnostics();
            let before = run.flaky.preexisting(name, diagnostics);
            (diagnostics.iter().zip(before))
                .filter(move |(d, before)| !before && !run.flaky.excuses(name, d))
                .map(|(d, _)| {
                    let mut d = d.clone();
                    d.category = d.category.or_else(|| Some(check.check.category.clone()));
                    (d, name.clone())
                })
        })
        .unzip()
}

/// The target relative to the repository's top.
pub(super) fn target_prefix(root: &Path, target: &Path) -> PathBuf {
    match (root.canonicalize(), target.canonicalize()) {
        (Ok(root), Ok(target)) => target
            .strip_prefix(root)
            .map(Path::to_path_buf)
            .unwrap_or_default(),
        _ => PathBuf::new(),
    }
}

/// `paths` (relative to the repository at `root`) relative to the target; those outside it are
/// left out.
pub fn target_relative<'a>(
    root: &Path,
    target: &Path,
    paths: impl Iterator<Item = &'a crate::workspace::RepoPath>,
) -> HashSet<String> {
    let prefix = target_prefix(root, target);
    paths
        .filter_map(|repo_path| {
            let path = Path::new(OsStr::from_bytes(repo_path.as_bytes()));
            let relative = path.strip_prefix(&prefix).ok()?;
            Some(relative.to_string_lossy().into_owned())
        })
        .collect()
}

/// The gate asks the workspace which tracked files differ, when its checks may have written.
impl gate::TrackedList for crate::workspace::Workspace {
    fn tracked_differing(&self) -> Option<Vec<Vec<u8>>> {
        crate::workspace::Workspace::tracked_differing(self)
    }

    fn users_own(&self) -> Option<Vec<Vec<u8>>> {
        let protected = self.protected().keys();
        Some(protected.map(|path| path.as_bytes().to_vec()).collect())
    }

    fn held(&self) -> Vec<Vec<u8>> {
        self.held_caches()
    }
}
