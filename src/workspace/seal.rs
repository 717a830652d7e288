//! The user's own work and the files that steer git (hooks, config, index, info), checked after
//! every delegate and every gate run, not only while a delegate runs: a process it left behind,
//! or code it planted that the gate runs, must not change them either. What changed is found by
//! its file-system identity first and hashed only when that differs; it is put back from the
//! store at once.

use std::collections::{BTreeMap, BTreeSet};
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

impl Seal {
    /// When the step began (the clock's tick): what was made since is the step's.
    pub fn started(&self) -> SystemTime {
        self.started
    }
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
    // The files each config includes, followed from the file that names them. The repository's
    // own config is in the git folder, sealed already; what it includes may not be.
    let mut configs = files.clone();
    configs.push(repo.commondir().join("config"));
    configs.push(repo.path().join("config.worktree"));
    for config in &configs {
        files.extend(includes_of(config, home.as_deref()));
    }
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

/// How deep git follows includes.
const MAX_INCLUDE_DEPTH: usize = 10;

/// The files `config` includes (`include.path`, `includeIf.<condition>.path`) and those they
/// include, as deep as git follows them: a relative path is relative to the folder of the file
/// that names it, `~/` is the home folder. Every condition counts as met: a file that may steer
/// git is one to seal.
pub(super) fn includes_of(config: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    use std::io::Read;
    use std::os::unix::ffi::OsStrExt;
    let mut found = Vec::new();
    let mut seen = BTreeSet::new();
    let mut stack = vec![(config.to_path_buf(), 0)];
    while let Some((file, depth)) = stack.pop() {
        let key = file.canonicalize().unwrap_or_else(|_| file.clone());
        if depth > MAX_INCLUDE_DEPTH || !seen.insert(key) {
            continue;
        }
        let mut text = Vec::new();
        let read = std::fs::File::open(&file)
            .and_then(|opened| opened.take(1 << 20).read_to_end(&mut text));
        if read.is_err() {
            continue;
        }
        let folder = file.parent().unwrap_or(Path::new("/"));
        for value in include_paths(&text) {
            let path = match (value.strip_prefix(b"~/"), home) {
                (Some(rest), Some(home)) => home.join(std::ffi::OsStr::from_bytes(rest)),
                _ => folder.join(std::ffi::OsStr::from_bytes(&value)),
            };
            found.push(path.clone());
            stack.push((path, depth + 1));
        }
    }
    found
}

/// The values of the `path` keys in the `include` and `includeIf` sections of a config file's
/// text: keys and section names in any case, values quoted or not, comments (`;`, `#`) left out.
fn include_paths(text: &[u8]) -> Vec<Vec<u8>> {
    let mut paths = Vec::new();
    let mut in_include = false;
    for line in text.split(|&byte| byte == b'\n') {
        let mut line = line.trim_ascii();
        if let Some(header) = line.strip_prefix(b"[") {
            let end = header.iter().position(|&byte| byte == b']');
            let name = header[..end.unwrap_or(header.len())]
                .split(|&byte| byte == b' ' || byte == b'\t' || byte == b'"')
                .next()
                .unwrap_or_default();
            in_include =
                name.eq_ignore_ascii_case(b"include") || name.eq_ignore_ascii_case(b"includeif");
            // A key may follow the header on its line.
            line = end.map_or(&[][..], |end| header[end + 1..].trim_ascii());
        }
        if !in_include {
            continue;
        }
        let Some(equals) = line.iter().position(|&byte| byte == b'=') else {
            continue;
        };
        if !line[..equals].trim_ascii().eq_ignore_ascii_case(b"path") {
            continue;
        }
        let value = config_value(line[equals + 1..].trim_ascii());
        if !value.is_empty() {
            paths.push(value);
        }
    }
    paths
}

/// A config value as git reads it: quotes removed, `\"` and `\\` unescaped, a comment outside
/// quotes left out, blanks at its ends trimmed.
fn config_value(raw: &[u8]) -> Vec<u8> {
    let mut value = Vec::new();
    let mut quoted = false;
    let mut bytes = raw.iter();
    while let Some(&byte) = bytes.next() {
        match byte {
            b'"' => quoted = !quoted,
            b'\\' => value.extend(bytes.next()),
            b';' | b'#' if !quoted => break,
            other => value.push(other),
        }
    }
    value.trim_ascii().to_vec()
}

fn is_real_folder(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|metadata| metadata.is_dir())
}

#[cfg(test)]
#[path = "seal_tests.rs"]
mod tests;
