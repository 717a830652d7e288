//! The runs before this one in the same state dir. The last one's files are set aside under
//! `runs/<id>/` before this one writes its own; where the work tree still holds what it (and
//! the runs it built on) accepted, uncommitted, this run says so, builds on it rather than
//! calling it the user's own work, and names each one's patch, newest first, as the way back;
//! and the oldest runs' refs and folders are pruned.

use std::collections::BTreeSet;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::campaign::history::WorkFile;
use crate::deliver::{EntryKind, Manifest, REF_PREFIX};
use crate::report::EarlierRun;
use crate::state::{self, Layout, StateError};

/// Runs looked back through at most, from one to the one it built on.
const MAX_CHAIN: usize = 1000;

/// The run or check before this one, its files set aside.
#[derive(Debug)]
pub struct LastRun {
    /// Its manifest: a run's (a check leaves none).
    pub manifest: Option<Manifest>,
    /// Where its files went; `None` when they were a check's, cleared.
    pub folder: Option<PathBuf>,
}

impl LastRun {
    /// The files its delegates wrote, as they left them: where the work tree still holds them,
    /// the baseline's gate run is confined (see [`super::confinement::earlier_runs_work`]).
    pub fn work_files(&self) -> Vec<WorkFile> {
        self.manifest.iter().flat_map(work_files).collect()
    }
}

/// The files of a run's manifest that it left as files, with their sha256.
pub fn work_files(manifest: &Manifest) -> Vec<WorkFile> {
    manifest
        .files
        .iter()
        .filter_map(|file| {
            let after = file.after.as_ref()?;
            (after.kind == EntryKind::File).then(|| WorkFile {
                path: file.path.clone(),
                before: None,
                after: after.sha256.clone(),
            })
        })
        .collect()
}

/// Reads a run's `manifest.json`; `None` when there is none, or it cannot be read as one.
fn read_manifest(path: &Path) -> Option<Manifest> {
    let bytes = state::read_own(path, state::OWN_FILE_LIMIT).ok()??;
    serde_json::from_slice(&bytes).ok()
}

/// Sets aside what the last run or check left at the top of the state dir (see
/// [`state::set_aside`]), before this one writes anything there. A campaign's state dir is
/// left as it is: its files are its books, which its next segment reads.
pub fn set_aside_last(layout: &Layout) -> Result<LastRun, StateError> {
    let manifest = read_manifest(&layout.manifest());
    if layout.goal().exists() {
        return Ok(LastRun {
            manifest,
            folder: None,
        });
    }
    let folder = state::set_aside(layout, manifest.as_ref().map(|m| m.run_id.as_str()))?;
    Ok(LastRun { manifest, folder })
}

/// The earlier runs whose accepted changes the work tree holds, uncommitted.
#[derive(Debug, Default)]
pub struct Held {
    /// Newest first: the last run, then the one it built on, and so on back to HEAD.
    pub runs: Vec<EarlierRun>,
    /// Their folders under `runs/`, never pruned while the tree holds them.
    pub folders: Vec<PathBuf>,
    /// The last run's final commit: this run's commits go on after it.
    pub tip: Option<git2::Oid>,
    /// The paths they changed, repository-relative: theirs, not the user's own work.
    pub paths: BTreeSet<String>,
}

/// The runs whose accepted changes the work tree holds. The newest of them (the last run, or
/// one before it when a check came between) is a run under `runs/` whose final commit descends
/// from HEAD (its work was built on what is checked out, and not committed on the branch) while
/// every path that differs between HEAD and that commit is in the work tree as the commit has
/// it. The runs it built on follow, by their manifests. Nothing when the user committed the
/// work, changed one of its files again, or dropped it.
pub fn held(repo: &git2::Repository, root: &Path, layout: &Layout, last: &LastRun) -> Held {
    let Some(head) = repo.head().ok().and_then(|h| h.peel_to_commit().ok()) else {
        return Held::default();
    };
    // The last run's folder first, then the others, newest first.
    let mut folders = state::earlier_folders(layout);
    if let Some(last) = &last.folder {
        folders.retain(|folder| folder != last);
        folders.insert(0, last.clone());
    }
    let earlier: Vec<(PathBuf, Manifest)> = folders
        .into_iter()
        .filter_map(|folder| {
            let manifest = read_manifest(&folder.join(state::MANIFEST_FILE))?;
            Some((folder, manifest))
        })
        .collect();
    let Some((newest, tip, paths)) = earlier.iter().find_map(|(folder, manifest)| {
        let tip = (manifest.final_commit.as_deref())
            .and_then(|tip| git2::Oid::from_str(tip).ok())
            .and_then(|tip| repo.find_commit(tip).ok())?;
        if !repo
            .graph_descendant_of(tip.id(), head.id())
            .unwrap_or(false)
        {
            return None;
        }
        let paths = tree_holds(repo, root, &head, &tip)?;
        Some(((folder.clone(), manifest.clone()), tip.id(), paths))
    }) else {
        return Held::default();
    };
    let mut held = Held {
        tip: Some(tip),
        paths,
        ..Held::default()
    };
    let mut next = Some(newest);
    while let Some((folder, manifest)) = next.take() {
        if held.runs.len() >= MAX_CHAIN {
            break;
        }
        held.runs.push(EarlierRun {
            id: manifest.run_id.clone(),
            patch: Some(folder.join(state::PATCH_FILE)).filter(|patch| patch.is_file()),
            reference: manifest.reference.clone(),
        });
        held.folders.push(folder);
        if manifest.base_commit != head.id().to_string() {
            next = earlier
                .iter()
                .find(|(_, m)| m.final_commit.as_deref() == Some(&manifest.base_commit))
                .cloned();
        }
    }
    held
}

/// The paths that differ between `head` and `tip`, when the work tree holds each as `tip`
/// has it (its bytes and whether it is executable, a link's target, or nothing); else none.
fn tree_holds(
    repo: &git2::Repository,
    root: &Path,
    head: &git2::Commit<'_>,
    tip: &git2::Commit<'_>,
) -> Option<BTreeSet<String>> {
    let diff = repo
        .diff_tree_to_tree(Some(&head.tree().ok()?), Some(&tip.tree().ok()?), None)
        .ok()?;
    let mut paths = BTreeSet::new();
    for delta in diff.deltas() {
        let file = delta.new_file();
        let bytes = file.path_bytes().or(delta.old_file().path_bytes())?;
        let path = root.join(std::ffi::OsStr::from_bytes(bytes));
        let holds = if file.exists() {
            entry_matches(&path, file.mode(), file.id())
        } else {
            matches!(std::fs::symlink_metadata(&path), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
        };
        if !holds {
            return None;
        }
        paths.insert(String::from_utf8_lossy(bytes).into_owned());
    }
    Some(paths)
}

/// The work tree's entry at `path` is the tree entry of `mode` and blob `id`.
fn entry_matches(path: &Path, mode: git2::FileMode, id: git2::Oid) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    match mode {
        git2::FileMode::Blob | git2::FileMode::BlobExecutable => {
            let executable = meta.permissions().mode() & 0o111 != 0;
            meta.is_file()
                && executable == (mode == git2::FileMode::BlobExecutable)
                && git2::Oid::hash_file(git2::ObjectType::Blob, path).ok() == Some(id)
        }
        git2::FileMode::Link => {
            meta.file_type().is_symlink()
                && std::fs::read_link(path).ok().is_some_and(|target| {
                    git2::Oid::hash_object(git2::ObjectType::Blob, target.as_os_str().as_bytes())
                        .ok()
                        == Some(id)
                })
        }
        _ => false,
    }
}

/// One line for the start of the run: the work tree holds these runs' changes.
pub fn announcement(held: &Held) -> Option<String> {
    let last = held.runs.first()?;
    let more = match held.runs.len() {
        1 => String::new(),
        n => format!(" (and {} run(s) it built on)", n - 1),
    };
    Some(format!(
        "refine-loop: the tree holds run {}'s accepted changes{more}, not committed: this run \
         builds on them; they stay in {}",
        last.id,
        last.patch
            .as_ref()
            .map_or_else(|| last.reference.clone(), |p| p.display().to_string())
    ))
}

/// Prunes the runs' refs (`refs/refine-loop/*`) and folders (`runs/*`) beyond the last `keep`
/// runs, this one (`current`, its ref) counted and never those the tree holds. What cannot be
/// removed is logged, never an error: the run's own work is done.
pub fn prune(
    repo: &git2::Repository,
    layout: &Layout,
    (keep, current): (usize, &str),
    held: &Held,
) {
    let held_refs: Vec<&str> = held.runs.iter().map(|r| r.reference.as_str()).collect();
    for name in pruned_refs(repo, keep, current, &held_refs) {
        let deleted = repo.find_reference(&name).and_then(|mut r| r.delete());
        if let Err(error) = deleted {
            tracing::warn!(reference = %name, %error, "an old run's ref was not pruned");
        }
    }
    if let Err(error) = state::prune(layout, keep.saturating_sub(1), &held.folders) {
        tracing::warn!(%error, "an old run's folder was not pruned");
    }
}

/// The refs under `refs/refine-loop/` beyond the newest `keep` (by their tip's commit time,
/// then by name), `current` counted first and never pruned, nor one of `held`.
fn pruned_refs(repo: &git2::Repository, keep: usize, current: &str, held: &[&str]) -> Vec<String> {
    let Ok(references) = repo.references_glob(&format!("{REF_PREFIX}*")) else {
        return Vec::new();
    };
    let mut others: Vec<(i64, String)> = references
        .filter_map(|reference| {
            let reference = reference.ok()?;
            let name = reference.name().ok()?.to_string();
            let time = reference.peel_to_commit().ok()?.time().seconds();
            (name != current).then_some((time, name))
        })
        .collect();
    others.sort_by(|a, b| b.cmp(a));
    let room = keep.saturating_sub(1);
    others
        .into_iter()
        .skip(room)
        .map(|(_, name)| name)
        .filter(|name| !held.contains(&name.as_str()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A campaign's state dir is its books: nothing of it is set aside; a run's or a check's is.
    #[test]
    fn a_campaigns_files_are_not_set_aside() {
        for campaign in [false, true] {
            let temp = tempfile::tempdir().unwrap();
            let layout = Layout::new(temp.path());
            std::fs::write(layout.final_report(), "report").unwrap();
            std::fs::write(layout.patch(), "patch").unwrap();
            if campaign {
                std::fs::write(layout.goal(), "goal").unwrap();
            }
            let last = set_aside_last(&layout).unwrap();
            assert_eq!(last.folder.is_some(), !campaign, "campaign {campaign}");
            assert_eq!(
                layout.final_report().exists(),
                campaign,
                "campaign {campaign}"
            );
        }
    }
}
