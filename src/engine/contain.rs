//! After every gate run, before anything is judged: the processes its checks left running were
//! killed (by the process runner; named here), and what the run changed of the user's work or of
//! the files that steer git is put back at once and named. What comes of it goes to `run.json`
//! (`after_gate`) and, after a delegate's change, to that delegate's account as incidents.

use std::path::Path;

use super::RunError;
use crate::config::Settings;
use crate::gate::GateRun;
use crate::model::BaselineNotes;
use crate::state;
use crate::workspace::{Breach, Incident, Seal, Workspace};

/// What the gate ran on, for the record and for whom to hold to account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum GateOn {
    /// The tree as the run found it: what the gate changes there is its own output.
    Baseline,
    /// A delegate's change, being verified: what changes is that change's doing.
    Change,
    /// The kept state, run again to confirm it.
    Kept,
}

/// Settles the gate run of `cycle` that began at `seal` (`run`, when it ran to its end): names
/// what its checks left running, puts back what it changed that it must not (at the baseline
/// it is taken as the gate's own), records both in `notes` (`run.json`), and returns the
/// incidents to hold against the change it ran on.
pub(super) fn after_gate_run(
    workspace: &mut Workspace,
    notes: &mut BaselineNotes,
    settings: &Settings,
    seal: &Seal,
    run: Option<&GateRun>,
    cycle: u32,
    on: GateOn,
) -> Result<Vec<Incident>, RunError> {
    let mut lines = Vec::new();
    for check in run.map_or(&[][..], |run| &run.checks) {
        let leftovers = &check.end.leftovers;
        if !leftovers.is_empty() {
            lines.push(format!(
                "cycle {cycle}: check `{}` left {} process(es) running after it ended, killed: {}",
                check.check.name,
                leftovers.len(),
                crate::process::name_leftovers(leftovers)
            ));
        }
    }
    let breaches = workspace.breaches(seal)?;
    if on == GateOn::Baseline {
        workspace.yield_to_gate(&breaches);
    } else {
        workspace.restore_seal(seal, &breaches)?;
    }
    let mut incidents: Vec<Incident> = breaches
        .iter()
        .map(|breach| incident_of(breach, workspace.root()))
        .collect();
    // The user's own files a check changed, which the gate put back after it: the change the
    // gate ran on is held to account for them as for those found here.
    if on == GateOn::Change {
        // A folder of installed tools no earlier run made (a `node_modules/.bin/node` a later
        // check ran first): planted code's, since the baseline ran the same commands.
        let tools: Vec<_> = (workspace.ignored_folders_made_since_gate().into_iter())
            .filter(|folder| crate::confine::is_installed(&folder.under(workspace.root())))
            .collect();
        if !tools.is_empty() {
            workspace.clear_made_folders(&tools, seal.started())?;
            incidents.push(Incident::GateMadeTools { paths: tools });
        }
        // A check that tried to write into the seal: what only planted code would do.
        for check in run.map_or(&[][..], |run| &run.checks) {
            incidents.extend(
                check
                    .refused_sealed
                    .iter()
                    .map(|what| Incident::GateRefused {
                        check: check.check.name.clone(),
                        what: what.clone(),
                    }),
            );
        }
        // A check that staged an edit wrote into the git folder, whoever planted it.
        let staged = run.is_some_and(|run| run.checks.iter().any(|check| check.wrote.staged));
        let index = Path::new(".git/index");
        if staged
            && !incidents.iter().any(
                |i| matches!(i, Incident::GateWroteGitDir { path, .. } if path.ends_with("index")),
            )
        {
            incidents.push(Incident::GateWroteGitDir {
                path: index.to_path_buf(),
                created: false,
            });
        }
        let protected = workspace.protected();
        let written = run.map_or(&[][..], |run| &run.checks).iter();
        for path in written.flat_map(|check| &check.wrote.put_back) {
            let known = |i: &Incident| matches!(i, Incident::GateChangedProtected { path: p } if p.to_string() == *path);
            if let Some(repo_path) = protected.keys().find(|p| p.to_string() == *path)
                && !incidents.iter().any(known)
            {
                incidents.push(Incident::GateChangedProtected {
                    path: repo_path.clone(),
                });
            }
        }
    }
    // What git ignores of the user's (`.env`): the baseline's run makes what it rewrites its
    // own output; what a later run rewrites is put back, not held against the change (a cache
    // a check rebuilds when the code changes is no sign of a planted script).
    let ignored = workspace.ignored_after_gate(on == GateOn::Baseline)?;
    if on != GateOn::Baseline {
        lines.extend(ignored.iter().map(|path| {
            format!(
                "cycle {cycle}: the gate rewrote {}, a file git ignores that was there before \
                 the run: put back",
                crate::markdown::code_span(&path.to_string())
            )
        }));
    }
    lines.extend(incidents.iter().map(|incident| {
        let what = incident.describe();
        match on {
            GateOn::Baseline => format!(
                "cycle {cycle}: {what} — at the baseline: taken as the gate's own output, not put back"
            ),
            GateOn::Change => format!("cycle {cycle}: {what}; the change was rolled back"),
            GateOn::Kept => format!("cycle {cycle}: {what} (the gate ran on the kept state)"),
        }
    }));
    if !lines.is_empty() {
        for line in &lines {
            tracing::warn!("{line}");
        }
        notes.after_gate.extend(lines);
        state::write_json(&settings.state_dir.join(state::RUN_FILE), notes)?;
    }
    Ok(incidents)
}

/// The incident a breach found after a gate run is, with git files shown from the tree.
fn incident_of(breach: &Breach, root: &Path) -> Incident {
    match breach {
        Breach::Protected(change) => Incident::GateChangedProtected {
            path: change.path.clone(),
        },
        Breach::GitFile { path, created, .. } => Incident::GateWroteGitDir {
            path: path
                .strip_prefix(root)
                .map_or_else(|_| path.clone(), Path::to_path_buf),
            created: *created,
        },
    }
}

/// A check that changed the repository's files at the baseline (put back already) stops the run: a gate
/// must only read, and its results cannot be trusted.
pub(super) fn refuse_gate_writes(run: &GateRun) -> Result<(), RunError> {
    let Some(check) = run.checks.iter().find(|check| !check.wrote.is_empty()) else {
        return Ok(());
    };
    let wrote = &check.wrote;
    Err(RunError::GateWrites {
        check: check.check.name.clone(),
        files: (wrote.put_back.iter().chain(&wrote.not_put_back))
            .take(20)
            .cloned()
            .collect(),
    })
}
