//! The run's confinement, decided once before the baseline: the setting and the kernel's
//! Landlock make the decision (`required` that cannot be met ends the run before any delegate),
//! and the work tree, the git dirs, the state dir and the store make the walls.

use std::path::{Path, PathBuf};

use super::RunError;
use crate::campaign::history::{self, WorkFile};
use crate::config::Settings;
use crate::confine::{self, ConfineMode, Confiner, DEFAULT_WRITABLE, Decision, Walls};
use crate::model::{ConfinementNote, SignalBoundary};
use crate::workspace::Workspace;

/// Decides how the run's command delegates are confined, and their walls: what `run.json` says
/// of it, and the confiner (none when delegates are not confined).
pub fn decide(
    settings: &Settings,
    workspace: &Workspace,
) -> Result<(ConfinementNote, Option<Confiner>), RunError> {
    let mode = settings.run.confine;
    let abi = if mode == ConfineMode::Off {
        None
    } else {
        confine::kernel_abi().map(|abi| abi.min(abi_at_most()))
    };
    let decision = confine::decide(mode, abi).map_err(RunError::Confine)?;
    match &decision {
        Decision::Unavailable => tracing::warn!(
            "this kernel cannot confine delegates (no Landlock): only the watch holds them"
        ),
        Decision::Confine { abi, missing } if !missing.is_empty() => tracing::warn!(
            abi,
            missing = %missing.join(", "),
            "delegates are confined in part: the kernel's Landlock lacks some rights"
        ),
        _ => {}
    }
    let confined = matches!(decision, Decision::Confine { .. });
    let bound = match decision {
        Decision::Confine { abi, .. } => confine::probe(abi),
        _ => None,
    };
    if confined && bound.is_none() {
        tracing::warn!(
            "no mount namespace can be made here: a confined delegate cannot create, remove or \
             rename entries at the top of the work tree"
        );
    }
    let walls = walls(settings, workspace);
    let mut note = decision.note();
    note.whole_tree = bound.is_some();
    note.signals = match decision {
        Decision::Confine { abi, .. } if abi >= confine::SIGNAL_SCOPE => SignalBoundary::Landlock,
        Decision::Confine { .. } if bound.is_some() => SignalBoundary::PidNamespace,
        _ => SignalBoundary::None,
    };
    if confined && note.signals == SignalBoundary::None {
        tracing::warn!(
            "neither Landlock's signal scoping (Linux 6.12) nor a PID namespace is to be had \
             here: a delegate could signal the loop's processes"
        );
    }
    if confined {
        note.tools = walls
            .tools
            .iter()
            .map(
                |tool| match tool.strip_prefix(walls.tree.canonicalize().unwrap_or_default()) {
                    Ok(inside) => inside.display().to_string(),
                    Err(_) => tool.display().to_string(),
                },
            )
            .collect();
    }
    let private = private_caches(bound, &decision, &walls);
    let mut walls = walls;
    if private && settings.run.writable.is_none() {
        // The build tools' homes, which they write on every build (Gradle's locks): writable
        // only in a layer of each run's own, so a gate that builds keeps working after the
        // baseline, and no delegate changes them.
        let lookup = |name: &str| std::env::var(name).ok();
        let homes: Vec<PathBuf> = confine::BUILD_HOMES
            .iter()
            .filter_map(|entry| confine::expand(entry, &walls.tree, &lookup))
            .collect();
        walls.writable.extend(homes.iter().cloned());
        walls.private.extend(homes);
    }
    let confiner = Confiner::new(&decision, walls, (bound, private));
    if let Some(confiner) = &confiner {
        note.private = confiner
            .private_folders()
            .iter()
            .map(|folder| folder.display().to_string())
            .collect();
    }
    Ok((note, confiner))
}

/// The files of the work tree that hold what an earlier run's delegates left there, while HEAD
/// holds something else: code no person committed. They are the last run's (`manifest.json`,
/// while it is at the top of the state dir) and those of `earlier` (a campaign's records in
/// `history/`, or the last run's files once they are set aside under `runs/<id>/`). The baseline's gate run runs
/// that code, so when there is any it is confined as the runs after it are.
pub fn earlier_runs_work(
    settings: &Settings,
    workspace: &Workspace,
    earlier: &[WorkFile],
) -> Vec<String> {
    let manifest = crate::state::read_own(
        &crate::state::Layout::new(&settings.state_dir).manifest(),
        crate::state::OWN_FILE_LIMIT,
    )
    .ok()
    .flatten()
    .and_then(|bytes| serde_json::from_slice::<crate::deliver::Manifest>(&bytes).ok());
    let last = manifest.iter().flat_map(super::earlier_runs::work_files);
    let repository = workspace.repository();
    let head = repository.head().and_then(|head| head.peel_to_tree()).ok();
    let mut paths: Vec<String> = last
        .chain(earlier.iter().cloned())
        .filter(|file| file.after.is_some() && history::inside(Path::new(&file.path)))
        .filter(|file| {
            history::file_digest(&workspace.root().join(&file.path)) == file.after
                && head.as_ref().is_none_or(|head| {
                    history::blob_bytes(repository, head, Path::new(&file.path))
                        .map(|bytes| history::digest(&bytes))
                        != file.after
                })
        })
        .map(|file| file.path)
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

/// The confiner of the baseline's gate run: the gate's (see [`for_gate`]) when the work tree
/// holds code an earlier run's delegates wrote and nobody committed ([`earlier_runs_work`],
/// which `note` then names), none otherwise: the baseline runs the user's own code, and what it
/// writes (downloads, builds) stays for the runs after it.
pub fn for_baseline<'c>(
    (settings, workspace): (&Settings, &Workspace),
    earlier: &[WorkFile],
    (note, gate): (&mut ConfinementNote, Option<&'c Confiner>),
) -> Option<&'c Confiner> {
    let work = earlier_runs_work(settings, workspace, earlier);
    if work.is_empty() {
        return None;
    }
    let shown = work.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
    if gate.is_none() {
        tracing::warn!(
            files = work.len(),
            first = %shown,
            "the work tree holds an earlier run's uncommitted changes, and the baseline's gate \
             run cannot be confined here: it runs them as the user's own"
        );
        return None;
    }
    tracing::info!(
        files = work.len(),
        first = %shown,
        "the work tree holds an earlier run's uncommitted changes: the baseline's gate run is \
         confined as the runs after it are"
    );
    note.earlier_work = work;
    gate
}

/// Whether each delegate can keep its writes in the walls' private caches to itself: it has a
/// mount namespace, and an overlay can be made in it.
fn private_caches(
    bound: Option<confine::namespace::Namespace>,
    decision: &Decision,
    walls: &Walls,
) -> bool {
    let (Some(namespace), Decision::Confine { abi, .. }) = (bound, decision) else {
        return false;
    };
    if walls.private.is_empty() && walls.results.is_empty() && walls.ignored.is_empty() {
        return false;
    }
    let private = confine::probe_private(namespace, *abi);
    if !private {
        tracing::warn!(
            "no overlay can be made in a delegate's namespace here: what a delegate writes in \
             the caches (cargo's, the XDG cache, npm's) stays after it"
        );
    }
    private
}

/// The newest Landlock ABI the loop uses: the kernel's, unless `REFINE_LOOP_LANDLOCK_ABI_MAX`
/// asks for an older one (to try what a run on an older kernel does, the fallbacks included).
fn abi_at_most() -> u32 {
    const NAME: &str = "REFINE_LOOP_LANDLOCK_ABI_MAX";
    let Some(value) = std::env::var(NAME).ok().filter(|value| !value.is_empty()) else {
        return u32::MAX;
    };
    value.trim().parse().unwrap_or_else(|_| {
        tracing::warn!(%value, "{NAME} is no ABI number: the kernel's own is used");
        u32::MAX
    })
}

/// The work tree (and the folders a worktree shares), the temp folders and caches; sealed: the
/// git dirs, the tree's `.git`, the state dir, the store and the files outside the git dirs
/// that steer what git lists (an excludes file in `~/.cache`); fenced: the user's tree when the
/// run is in a worktree; read-only: the gate's tools (see [`confine::find_tools`]).
fn walls(settings: &Settings, workspace: &Workspace) -> Walls {
    let root = workspace.root();
    let repo = workspace.repository();
    let lookup = |name: &str| std::env::var(name).ok();
    let mut writable = vec![root.to_path_buf()];
    let listed: Vec<&str> = match &settings.run.writable {
        Some(listed) => listed.iter().map(String::as_str).collect(),
        None => DEFAULT_WRITABLE.to_vec(),
    };
    writable.extend(
        listed
            .into_iter()
            .filter_map(|entry| confine::expand(entry, root, &lookup)),
    );
    // The default caches are each delegate's own; a folder the user lists is shared.
    let private = if settings.run.writable.is_none() {
        confine::DEFAULT_PRIVATE
            .iter()
            .filter_map(|entry| confine::expand(entry, root, &lookup))
            .collect()
    } else {
        Vec::new()
    };
    let ignored = workspace.ignored_folders();
    let is_ignored = |path: &Path| workspace.is_ignored(path);
    let pre_commit = settings
        .gate
        .checks
        .iter()
        .any(|check| check.run.contains("pre-commit") || check.run.contains("prek"));
    let tools = confine::find_tools(&confine::Places {
        tree: root,
        ignored: &ignored,
        writable: &writable,
        lookup: &lookup,
        is_ignored: &is_ignored,
        pre_commit,
    });
    writable.extend(tools.caches.iter().cloned());
    let mut private = private;
    private.extend(tools.private);
    let in_tree = |tool: &&PathBuf| root.canonicalize().is_ok_and(|root| tool.starts_with(root));
    // The tree's build folders, tool caches and dependency folders (see [`Walls::results`]):
    // [`RESULTS`] at its top whether they exist yet or not (the baseline's run makes them).
    let mut results: Vec<PathBuf> = (tools.caches.iter())
        .chain(tools.read_only.iter().filter(in_tree))
        .cloned()
        .chain(RESULTS.iter().map(|name| root.join(name)))
        .collect();
    let mut ignored_folders = ignored.clone();
    let mut fenced = Vec::new();
    if repo.is_worktree()
        && let Some(main) = main_tree(repo.commondir())
    {
        let shared: Vec<PathBuf> = settings
            .run
            .share
            .iter()
            .map(|shared| main.join(shared))
            .collect();
        // A folder the user shares with the worktree is the user's: written for real.
        let resolved: Vec<PathBuf> = shared
            .iter()
            .filter_map(|p| p.canonicalize().ok())
            .collect();
        let not_shared = |result: &PathBuf| {
            let result = result.canonicalize().unwrap_or_else(|_| result.clone());
            !resolved.iter().any(|shared| result.starts_with(shared))
        };
        results.retain(not_shared);
        ignored_folders.retain(not_shared);
        writable.extend(shared);
        fenced.push(main);
    }
    Walls {
        tree: root.to_path_buf(),
        writable,
        sealed: git_dirs(workspace)
            .into_iter()
            .chain([
                settings.state_dir.clone(),
                workspace.store().dir().to_path_buf(),
            ])
            .chain(workspace.rule_files().iter().cloned())
            .collect(),
        fenced,
        tools: tools.read_only,
        files: Vec::new(),
        private,
        results,
        ignored: ignored_folders,
    }
}

/// Names of build folders and tool caches whose results a tool replays, at the tree's top.
const RESULTS: &[&str] = &[
    "target",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".gradle",
    ".next",
    ".turbo",
    ".parcel-cache",
];

/// The git dirs: the repository's, its common one, and the tree's `.git`.
fn git_dirs(workspace: &Workspace) -> [PathBuf; 3] {
    let repo = workspace.repository();
    [
        repo.path().to_path_buf(),
        repo.commondir().to_path_buf(),
        workspace.root().join(".git"),
    ]
}

/// The walls of the gate's runs after the baseline, which may run what a delegate planted:
/// the delegates' (see [`decide`]), the git dirs sealed whole; a check that tries to write
/// there is held against the change (see [`super::contain`]). None without a mount namespace:
/// there no entry at the tree's top could be made (`.coverage`, `junit.xml`, a first
/// `.pytest_cache`), and a gate must run as it does for the user.
pub fn for_gate(confiner: &Confiner) -> Option<Confiner> {
    confiner.whole_tree().then(|| confiner.for_gate())
}

/// The user's work tree of a worktree's repository: the folder holding its common `.git`.
fn main_tree(common_dir: &Path) -> Option<PathBuf> {
    let common = common_dir.canonicalize().ok()?;
    (common.file_name()? == ".git").then(|| common.parent().map(Path::to_path_buf))?
}
