//! One delegate's turn: run under watch, find from git what it changed, undo at once what it
//! must not have done (the user's work, a hostile act, a secret written into a file).

use std::collections::HashMap;
use std::path::Path;
use std::time::SystemTime;

use super::RunError;
use crate::cancel::Cancel;
use crate::config::Settings;
use crate::delegate::{Assignment, DelegateFiles, DelegateRun, DelegateSpec, Limits, run_delegate};
use crate::process::NAMED_LEFTOVERS;
use crate::scope::Scope;
use crate::workspace::{
    Breach, Change, Incident, Journal, PathState, Seal, Snapshot, SnapshotStore, Workspace,
};

/// One delegate's turn in a cycle.
#[derive(Debug)]
pub struct Attempt {
    pub delegate: usize,
    pub category: String,
    pub run: DelegateRun,
    pub changes: Vec<Change>,
    /// What it did that it must not.
    pub incidents: Vec<Incident>,
    /// When it started, by the clock file times are stamped with.
    pub started: SystemTime,
    /// How long its process ran.
    pub ran_for: std::time::Duration,
    pub kept: bool,
    /// Decided on its own already (undone for acting against the repository, or verified alone).
    pub settled: bool,
    pub rejected_because: Vec<String>,
    /// Kept: the new findings its change brought to light outside the files it touched.
    pub unmasked: Vec<String>,
    /// What its change did that makes the gate see less.
    pub integrity: Vec<crate::integrity::Move>,
}

/// Who takes a turn, and on what.
#[derive(Debug, Clone, Copy)]
pub struct Turn<'a> {
    /// Its index among the configured delegates.
    pub delegate: usize,
    pub spec: &'a DelegateSpec,
    pub assignment: &'a Assignment<'a>,
    /// What it may spend before it passes a cap.
    pub allowance: crate::spending::Allowance,
}

/// Runs one delegate under watch and finds what it did. Its changes to the user's own work are
/// undone at once; when it acted against the repository, all of its changes are undone and the
/// attempt comes back settled.
pub(super) fn take_turn(
    settings: &Settings,
    workspace: &mut Workspace,
    snapshot: &Snapshot,
    turn: &Turn<'_>,
    confiner: Option<&crate::confine::Confiner>,
    cancel: &Cancel,
    pending: &mut Option<Journal>,
) -> Result<Attempt, RunError> {
    let Turn {
        delegate,
        spec,
        assignment,
        allowance,
    } = *turn;
    let files = DelegateFiles::for_category(assignment.reports_dir, assignment.category);
    let own = [
        files.prompt,
        files.findings,
        files.verdict,
        files.report,
        files.candidates,
    ];
    let mut watch = workspace.watch(snapshot, &own)?;
    open_journal(workspace, &mut watch, snapshot, turn, pending)?;
    let seal = workspace.seal()?;
    let private = settings.private_variables();
    let limits = Limits {
        kill_grace: settings.gate.kill_grace,
        protected: workspace.protected(),
        private: &private,
        confiner,
        allowance,
    };
    let started = std::time::Instant::now();
    let run = run_delegate(spec, assignment, limits, cancel)?;
    let ran_for = started.elapsed();
    let mut effects = workspace.after_delegate(&watch, snapshot)?;
    if let Some(journal) = pending.as_ref()
        && effects
            .incidents
            .iter()
            .any(|i| matches!(i, Incident::StoreDamaged { .. }))
    {
        // The delegate removed or changed it: written again, for a kill that may follow.
        workspace.rewrite_journal(journal)?;
    }
    effects
        .incidents
        .extend(beyond_the_watch(workspace, &seal, &run)?);
    effects
        .incidents
        .extend(secrets_written(&effects.changes, workspace.store()));
    undo_out_of_scope(settings, workspace, &mut effects, watch.started(), spec)?;
    let hostile = effects.hostile();
    let vetoed = effects.incidents.iter().any(Incident::is_veto);
    // Stopped half-way at its spending cap: what it wrote is no finished change.
    let stopped_at_cap = run.end.stopped == Some(crate::process::Interruption::SpendingCap);
    let mut attempt = Attempt {
        delegate,
        category: assignment.category.to_string(),
        run,
        changes: effects.changes,
        incidents: effects.incidents,
        started: watch.started(),
        ran_for,
        kept: false,
        settled: false,
        rejected_because: Vec::new(),
        unmasked: Vec::new(),
        integrity: Vec::new(),
    };
    if hostile || vetoed || stopped_at_cap {
        workspace.roll_back_attempts(&attempt.changes, attempt.started)?;
        attempt.settled = true;
        attempt.rejected_because = attempt
            .incidents
            .iter()
            .filter(|i| i.is_hostile() || i.is_veto())
            .map(Incident::describe)
            .collect();
        if stopped_at_cap {
            attempt.rejected_because.push(
                "it was stopped at its spending cap: its unfinished change is undone, not judged"
                    .to_string(),
            );
        }
    }
    Ok(attempt)
}

/// A change outside the scope is undone at once (unless the whole change goes anyway): a scope
/// violation, or, of a fixer whose tool cannot be given paths, a change left out. The rest of
/// the change is judged as usual.
fn undo_out_of_scope(
    settings: &Settings,
    workspace: &Workspace,
    effects: &mut crate::workspace::Effects,
    started: SystemTime,
    spec: &DelegateSpec,
) -> Result<(), RunError> {
    if settings.run.scope.is_everything() || effects.hostile() {
        return Ok(());
    }
    let changes = std::mem::take(&mut effects.changes);
    let (outside_scope, inside) = split_by_scope(&settings.run.scope, changes);
    if !outside_scope.is_empty() {
        workspace.roll_back(&outside_scope, started)?;
        effects.incidents.extend(outside_scope.iter().map(|change| {
            let path = change.path.clone();
            if spec.whole_tree {
                Incident::LeftOutOfScope { path }
            } else {
                Incident::OutOfScope { path }
            }
        }));
    }
    effects.changes = inside;
    Ok(())
}

/// Writes the journal of the turn about to begin, unless one is open already: the state to return
/// to is the one before the first change not judged yet.
fn open_journal(
    workspace: &Workspace,
    watch: &mut crate::workspace::Watch,
    snapshot: &Snapshot,
    turn: &Turn<'_>,
    pending: &mut Option<Journal>,
) -> Result<(), RunError> {
    if pending.is_none() {
        let what = format!(
            "of delegate[{}] on {} in cycle {}",
            turn.delegate, turn.assignment.category, turn.assignment.cycle
        );
        *pending = Some(workspace.begin_turn(watch, snapshot, what)?);
    }
    Ok(())
}

/// What else a turn did that it must not: the processes it left running (killed already), and
/// what the watch missed of the user's work and git's steering files, checked against the
/// baseline and put back now.
fn beyond_the_watch(
    workspace: &Workspace,
    seal: &Seal,
    run: &DelegateRun,
) -> Result<Vec<Incident>, RunError> {
    let leftovers = &run.end.leftovers;
    // Each distinct command is named before a second of any: of a hundred sleepers and the loop
    // that forked them, the loop is named.
    let mut seen = std::collections::HashSet::new();
    let (first, again): (Vec<_>, Vec<_>) = leftovers
        .iter()
        .partition(|left| seen.insert(left.command.as_str()));
    let mut incidents: Vec<Incident> = first
        .into_iter()
        .chain(again)
        .take(NAMED_LEFTOVERS)
        .map(|left| Incident::LeftProcess {
            pid: left.pid,
            command: left.command.clone(),
        })
        .collect();
    if leftovers.len() > NAMED_LEFTOVERS {
        incidents.push(Incident::LeftMoreProcesses {
            count: leftovers.len() - NAMED_LEFTOVERS,
        });
    }
    let breaches = workspace.breaches(seal)?;
    workspace.restore_seal(seal, &breaches)?;
    let root = workspace.root();
    incidents.extend(breaches.into_iter().map(|breach| {
        match breach {
            Breach::Protected(change) => Incident::TouchedProtected { path: change.path },
            Breach::GitFile { path, created, .. } => Incident::GitDirWritten {
                path: path
                    .strip_prefix(root)
                    .map_or(path.clone(), Path::to_path_buf),
                created,
            },
        }
    }));
    Ok(incidents)
}

/// A delegate's changes, outside the scope and inside it. Beside the paths the scope does not
/// hold, these go outside too (they are undone with them): a change beneath a path outside
/// (a file of a folder that replaced an outside file), and a deletion whose content reappears
/// outside (a move out of the scope).
fn split_by_scope(scope: &Scope, changes: Vec<Change>) -> (Vec<Change>, Vec<Change>) {
    let (mut outside, inside): (Vec<Change>, Vec<Change>) = changes
        .into_iter()
        .partition(|change| !scope.holds_in_repository(change.path.as_bytes()));
    let moved_out: Vec<String> = outside
        .iter()
        .filter_map(|change| match &change.after {
            PathState::File { sha256, .. } => Some(sha256.clone()),
            _ => None,
        })
        .collect();
    let (beneath, inside): (Vec<Change>, Vec<Change>) = inside.into_iter().partition(|change| {
        let under_outside = outside
            .iter()
            .any(|out| change.path.is_within(out.path.as_bytes()));
        let moved = matches!(change.after, PathState::Absent)
            && matches!(&change.before, PathState::File { sha256, .. } if moved_out.contains(sha256));
        under_outside || moved
    });
    outside.extend(beneath);
    (outside, inside)
}

/// Files into which a change brought a secret it did not hold before (a secret variable's value
/// or a credential shape, counted by kind), and changed paths whose name (or link target) holds
/// one.
fn secrets_written(changes: &[Change], store: &SnapshotStore) -> Vec<Incident> {
    let Some(redactor) = crate::secrets::process_redactor() else {
        return Vec::new();
    };
    // Streamed from the kept copy: a file of any size costs the same memory.
    let kinds = |state: &PathState| -> HashMap<String, usize> {
        match state {
            PathState::File { sha256, .. } => crate::files::open_regular(&store.path_of(sha256))
                .and_then(|file| redactor.count_in(file))
                .unwrap_or_default(),
            _ => HashMap::new(),
        }
    };
    let in_paths = changes.iter().filter_map(|change| {
        // A path (or a link's target) with a secret in it would carry the secret into the
        // record's tree and message and into the patches, whatever the file holds.
        let mut named: Vec<String> = redactor
            .findings(change.path.as_bytes())
            .into_iter()
            .chain(match &change.after {
                PathState::Symlink { target } => redactor.findings(target),
                _ => Vec::new(),
            })
            .map(|finding| finding.what)
            .collect();
        named.sort();
        named.dedup();
        (!named.is_empty()).then(|| Incident::SecretInPath {
            path: String::from_utf8_lossy(&redactor.redact(change.path.as_bytes())).into_owned(),
            what: named,
        })
    });
    let in_contents = changes
        .iter()
        .filter_map(|change| {
            let (before, after) = (kinds(&change.before), kinds(&change.after));
            let mut added: Vec<String> = after
                .into_iter()
                .filter(|(what, count)| before.get(what).copied().unwrap_or(0) < *count)
                .map(|(what, _)| what)
                .collect();
            added.sort();
            (!added.is_empty()).then(|| Incident::SecretWritten {
                path: change.path.clone(),
                what: added,
            })
        })
        .collect::<Vec<_>>();
    in_paths.chain(in_contents).collect()
}
