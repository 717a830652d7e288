//! The user's own work and the files that steer git (hooks, config, index, info), checked after
//! every delegate and every gate run, not only while a delegate runs: a process it left behind,
//! or code it planted that the gate runs, must not change them either. What changed is found by
//! its file-system identity first and hashed only when that differs; it is put back from the
//! store at once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::listing::{StatKey, files_under};
use super::watch::{coarse_now, put_back, same_index_entries};
use super::{Change, PathState, Workspace, WorkspaceError};

/// The files of a git folder that decide what git runs and what it records.
const STEERING_FILES: [&str; 3] = ["config", "config.worktree", "index"];
/// The folders of a git folder whose every file steers git: hooks run, `info/` excludes and
/// attributes.
const STEERING_FOLDERS: [&str; 2] = ["hooks", "info"];

/// What a step must leave as it found it, taken before the step.
#[derive(Debug)]
pub struct Seal {
    started: SystemTime,
    /// The steering files of the git folders, with their state (bytes in the store).
    git_files: BTreeMap<PathBuf, (StatKey, PathState)>,
}

/// One thing a step changed that it must not; each is put back by [`Workspace::restore_seal`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Breach {
    /// A path of the user's own work no longer holds what it held at the baseline.
    Protected(Change),
    /// A steering file of a git folder was changed, made or deleted (`was` is what it held).
    GitFile {
        path: PathBuf,
        was: PathState,
        created: bool,
    },
}

impl Workspace {
    /// Takes the seal before a step: the steering files as they are now (the user's work is
    /// compared with the baseline itself).
    pub fn seal(&self) -> Result<Seal, WorkspaceError> {
        let started = coarse_now();
        let mut git_files = BTreeMap::new();
        let mut known = self.known_git_files.borrow_mut();
        for (path, metadata) in self.steering_files() {
            let key = StatKey::of(&metadata);
            let state = match known.get(&path) {
                Some((known_key, state)) if *known_key == key => state.clone(),
                _ => PathState::read(&path, Some(&self.store))?,
            };
            known.insert(path.clone(), (key, state.clone()));
            git_files.insert(path, (key, state));
        }
        Ok(Seal { started, git_files })
    }

    /// What the step since `seal` changed that it must not: the user's work (against the
    /// baseline) and the steering files (against the seal). Nothing is written.
    pub fn breaches(&self, seal: &Seal) -> Result<Vec<Breach>, WorkspaceError> {
        let mut breaches = self.protected_breaches()?;
        let now: BTreeMap<PathBuf, StatKey> = self
            .steering_files()
            .into_iter()
            .map(|(path, metadata)| (path, StatKey::of(&metadata)))
            .collect();
        for (path, (key, was)) in &seal.git_files {
            if now.get(path) == Some(key) {
                continue;
            }
            let current = PathState::read(path, None)?;
            if current != *was && !same_index_entries(path, was, &self.store) {
                breaches.push(Breach::GitFile {
                    path: path.clone(),
                    was: was.clone(),
                    created: false,
                });
            }
        }
        breaches.extend(
            now.keys()
                .filter(|path| !seal.git_files.contains_key(*path))
                .map(|path| Breach::GitFile {
                    path: path.clone(),
                    was: PathState::Absent,
                    created: true,
                }),
        );
        Ok(breaches)
    }

    /// Puts back all that `breaches` name: the user's work as it was at the baseline, the
    /// steering files as they were when the seal was taken.
    pub fn restore_seal(&self, seal: &Seal, breaches: &[Breach]) -> Result<(), WorkspaceError> {
        let changes: Vec<Change> = breaches
            .iter()
            .filter_map(|breach| match breach {
                Breach::Protected(change) => Some(change.clone()),
                Breach::GitFile { .. } => None,
            })
            .collect();
        self.roll_back(&changes, seal.started)?;
        let mut roots = self.git_roots();
        roots.push(self.root.clone());
        let mut files: Vec<(&PathBuf, &PathState, bool)> = breaches
            .iter()
            .filter_map(|breach| match breach {
                Breach::GitFile { path, was, created } => Some((path, was, *created)),
                Breach::Protected(_) => None,
            })
            .collect();
        // What was made goes first, deepest first (a link made where a folder was, before the
        // files that were in it come back), then what was changed or deleted.
        files.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| b.0.cmp(a.0)));
        for (path, was, _) in files {
            put_back(path, was, &roots, &self.store)?;
        }
        Ok(())
    }

    /// Gives the gate what the baseline's own run of it changed: the user's paths it rewrote
    /// are its output from then on (no longer protected, never a delegate's change), and the
    /// steering files stay as it left them. Nothing is put back: the gate is the user's own.
    pub fn yield_to_gate(&mut self, breaches: &[Breach]) {
        for breach in breaches {
            if let Breach::Protected(change) = breach {
                self.protected.remove(&change.path);
                self.artifacts.insert(change.path.clone());
            }
        }
    }

    /// Protected paths that hold something else than at the baseline. A path whose identity
    /// (inode, size, times) is the one last seen holding its baseline state is not read again.
    fn protected_breaches(&self) -> Result<Vec<Breach>, WorkspaceError> {
        let mut seen = self.sealed_work.borrow_mut();
        let mut breaches = Vec::new();
        for (path, expected) in &self.protected {
            let key = std::fs::symlink_metadata(path.under(&self.root))
                .ok()
                .map(|metadata| StatKey::of(&metadata));
            if key.is_some() && seen.get(path) == key.as_ref() {
                continue;
            }
            let read_at = coarse_now();
            let current = PathState::read_at(&self.root, path, None)?;
            if current == *expected {
                // Written within the clock tick of this read, a later write could keep the
                // same times: such a file is read again next time.
                match key {
                    Some(key) if key.changed_before(read_at) => {
                        seen.insert(path.clone(), key);
                    }
                    _ => {
                        seen.remove(path);
                    }
                }
                continue;
            }
            seen.remove(path);
            breaches.push(Breach::Protected(Change {
                path: path.clone(),
                before: expected.clone(),
                after: current,
            }));
        }
        Ok(breaches)
    }

    /// The git folder, and the common one when this is a linked worktree.
    fn git_roots(&self) -> Vec<PathBuf> {
        let mut roots = vec![self.repo.path().to_path_buf()];
        if self.repo.commondir() != self.repo.path() {
            roots.push(self.repo.commondir().to_path_buf());
        }
        roots
    }

    /// The files outside the git folders that steer what git lists (see [`git_rule_files`]).
    pub fn rule_files(&self) -> &[PathBuf] {
        &self.rule_files
    }

    /// Every steering file of the git folders, and the rule files outside them, with its
    /// metadata.
    fn steering_files(&self) -> Vec<(PathBuf, std::fs::Metadata)> {
        let mut files: Vec<(PathBuf, std::fs::Metadata)> = self
            .rule_files
            .iter()
            .filter_map(|path| Some((path.clone(), std::fs::symlink_metadata(path).ok()?)))
            .collect();
        for root in self.git_roots() {
            for name in STEERING_FILES {
                let path = root.join(name);
                if let Ok(metadata) = std::fs::symlink_metadata(&path)
                    && !metadata.is_dir()
                {
                    files.push((path, metadata));
                }
            }
            for name in STEERING_FOLDERS {
                let folder = root.join(name);
                if is_real_folder(&folder) {
                    files.extend(files_under(&folder, &[], usize::MAX));
                } else if let Ok(metadata) = std::fs::symlink_metadata(&folder) {
                    // A file or a link where the folder belongs is watched as a file.
                    files.push((folder, metadata));
                }
            }
        }
        files
    }
}

/// The files outside the git folders that decide what git lists and how it reads files, as the
/// user's config names them: the global, XDG and system config; the files they include; the
/// excludes and attributes files (git's defaults where none is named). A delegate that could
/// write one (`~/.cache/git-ignore` as `core.excludesFile`) would hide what it made from every
/// scan. A symlinked one counts twice: the link and the file it leads to.
pub(super) fn git_rule_files(repo: &git2::Repository) -> Vec<PathBuf> {
    let home = std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from);
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|xdg| !xdg.is_empty())
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|home| home.join(".config")));
    let mut files: Vec<PathBuf> = [
        git2::Config::find_global().ok(),
        git2::Config::find_xdg().ok(),
        git2::Config::find_system().ok(),
        std::env::var_os("GIT_CONFIG_GLOBAL").map(PathBuf::from),
    ]
    .into_iter()
    .flatten()
    .collect();
    if let Ok(config) = repo.config() {
        for (key, default) in [
            ("core.excludesFile", "git/ignore"),
            ("core.attributesFile", "git/attributes"),
        ] {
            match config.get_path(key) {
                Ok(path) => files.push(path),
                Err(_) => files.extend(xdg.as_ref().map(|xdg| xdg.join(default))),
            }
        }
        // An included file's relative path is relative to the file that includes it.
        let folder_of = |level| match level {
            git2::ConfigLevel::Global => home.clone(),
            git2::ConfigLevel::XDG => xdg.as_ref().map(|xdg| xdg.join("git")),
            git2::ConfigLevel::System => Some(PathBuf::from("/etc")),
            _ => Some(repo.commondir().to_path_buf()),
        };
        if let Ok(entries) = config.entries(Some(r"^include(if\..*)?\.path$")) {
            let _ = entries.for_each(|entry| {
                use std::os::unix::ffi::OsStrExt;
                let value = entry.value_bytes();
                let path = match (value.strip_prefix(b"~/"), &home) {
                    (Some(rest), Some(home)) => home.join(std::ffi::OsStr::from_bytes(rest)),
                    _ => PathBuf::from(std::ffi::OsStr::from_bytes(value)),
                };
                let path = if path.is_absolute() {
                    Some(path)
                } else {
                    folder_of(entry.level()).map(|folder| folder.join(path))
                };
                files.extend(path);
            });
        }
    }
    let targets: Vec<PathBuf> = files
        .iter()
        .filter_map(|path| path.canonicalize().ok())
        .collect();
    files.extend(targets);
    files.sort();
    files.dedup();
    files
}

fn is_real_folder(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|metadata| metadata.is_dir())
}

#[cfg(test)]
#[path = "seal_tests.rs"]
mod tests;
