//! The gate's tools: the programs it runs and the code they load, where they lie inside a folder
//! a delegate may write. A delegate that rewrote `node_modules/.bin/eslint`, a virtualenv's
//! `ruff` or `~/.cargo/bin/cargo-clippy` to print nothing would lower the count without fixing a
//! line, and leave the rewrite behind; so these folders are read-only to every delegate, as
//! `.git` is. An installed dependency is not a change the run's patch could carry either.
//!
//! They are found once per run: the folders git ignores in the tree that hold installed
//! dependencies or an environment, the folders on `PATH` (and the search paths of Python and
//! node) that lie in a writable folder, and the toolchains of rustup, npx and pre-commit. A
//! folder the config lists in `[loop] writable` itself (or one that holds such a folder) stays
//! writable: that is how a user lets delegates install.

use std::path::{Path, PathBuf};

/// Names of folders that hold a project's installed dependencies and their programs.
const DEPENDENCY_FOLDERS: &[&str] = &[
    "node_modules",
    "bower_components",
    "vendor",
    "__pypackages__",
    ".tox",
    ".nox",
];

/// Dependency folders that the tool which made them writes into on every run (tox and nox
/// install the project into their environments and log there): where the kernel can make an
/// overlay, each delegate and each gate run after the baseline writes them in a layer of its
/// own; elsewhere they are read-only like the others.
const WRITTEN_AS_THEY_RUN: &[&str] = &[".tox", ".nox"];

/// Entries that mark a folder as an installed environment (a virtualenv, a conda environment).
const ENVIRONMENT_MARKS: &[&str] = &["pyvenv.cfg", "conda-meta"];

/// At most this many entries of an ignored folder are looked at for an environment in them.
const LOOK_INTO: usize = 64;

/// Variables whose folders the gate's programs are found in, or load code from.
const SEARCH_PATHS: &[&str] = &["PATH", "PYTHONPATH", "NODE_PATH"];

/// Caches inside a dependency folder that tools write as they run (prettier's, eslint
/// plugins', babel's in `.cache`; vite's and vitest's in `.vite`): they stay writable. Listed
/// whether they exist or not: each delegate's walls (and each gate run's) take those that exist
/// when it starts, so one the baseline's run made is writable after it.
const CACHES_INSIDE: &[&str] = &["node_modules/.cache", "node_modules/.vite"];

/// What the gate runs, read-only to delegates, and the caches inside it that stay writable.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Tools {
    pub read_only: Vec<PathBuf>,
    pub caches: Vec<PathBuf>,
    /// Those of `read_only` that are written in a layer of each run's own where it can be
    /// made ([`WRITTEN_AS_THEY_RUN`]).
    pub private: Vec<PathBuf>,
}

/// Where the tools are looked for.
pub struct Places<'a> {
    /// The work tree.
    pub tree: &'a Path,
    /// The folders git ignores in it (at the baseline, as its status lists them).
    pub ignored: &'a [PathBuf],
    /// The folders delegates may write, as the config names them.
    pub writable: &'a [PathBuf],
    /// The environment's variables.
    pub lookup: &'a dyn Fn(&str) -> Option<String>,
    /// Whether git ignores a path of the tree (a search path inside it is a tool only then:
    /// a tracked `bin/` is the project's own code, judged like the rest).
    pub is_ignored: &'a dyn Fn(&Path) -> bool,
    /// The gate's commands run pre-commit (its hook environments are then its tools).
    pub pre_commit: bool,
}

/// The gate's tools in `places`: each resolved, existing, strictly inside a writable folder,
/// and holding none; sorted, without one inside another.
pub fn find(places: &Places<'_>) -> Tools {
    let resolve = |paths: &[PathBuf]| -> Vec<PathBuf> {
        paths.iter().filter_map(|p| p.canonicalize().ok()).collect()
    };
    let writable = resolve(places.writable);
    let tree = places.tree.canonicalize().ok();
    let mut candidates: Vec<PathBuf> = places
        .ignored
        .iter()
        .filter(|folder| is_installed(folder))
        .cloned()
        .collect();
    for name in SEARCH_PATHS {
        let Some(value) = (places.lookup)(name).filter(|value| !value.is_empty()) else {
            continue;
        };
        for folder in std::env::split_paths(&value).filter(|p| p.is_absolute()) {
            let Ok(folder) = folder.canonicalize() else {
                continue;
            };
            let in_tree = tree.as_ref().is_some_and(|tree| folder.starts_with(tree));
            if !in_tree || (places.is_ignored)(&folder) {
                candidates.push(folder);
            }
        }
    }
    candidates.extend(toolchains(places.lookup, places.pre_commit));
    let mut read_only: Vec<PathBuf> = resolve(&candidates)
        .into_iter()
        .filter(|tool| tool.is_dir())
        .filter(|tool| {
            writable
                .iter()
                .any(|open| tool.starts_with(open) && tool != open)
                && !writable.iter().any(|open| open.starts_with(tool))
        })
        .collect();
    read_only.sort();
    read_only.dedup();
    let mut outermost: Vec<PathBuf> = Vec::new();
    for tool in read_only {
        if !outermost.iter().any(|outer| tool.starts_with(outer)) {
            outermost.push(tool);
        }
    }
    let caches = outermost
        .iter()
        .flat_map(|tool| {
            CACHES_INSIDE.iter().filter_map(|cache| {
                let (folder, inside) = cache.split_once('/')?;
                let named = tool.file_name().is_some_and(|name| name == folder);
                named.then(|| tool.join(inside))
            })
        })
        .collect();
    let private = outermost
        .iter()
        .filter(|tool| {
            tool.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| WRITTEN_AS_THEY_RUN.contains(&name))
        })
        .cloned()
        .collect();
    Tools {
        read_only: outermost,
        caches,
        private,
    }
}

/// The search paths ([`SEARCH_PATHS`]) as confined commands are to see them: each absolute
/// entry as the folder it resolves to now, and one that does not exist now and lies outside
/// `tree` in a `writable` folder left out. Only the variables whose value changes are returned.
/// A link on a search path (`/tmp/tools/bin` → `/tmp/tools/1.2/bin`), or a folder not made
/// yet, in a folder delegates may write is a place a delegate could put a program of its own in
/// the gate's way, and the gate looks the program up afresh on every run. Settled once the
/// baseline has run (its installs made what they make), the gate's runs after it look where it
/// looked. A relative entry is the tree's own, judged with the change; a value that is not
/// UTF-8 is left as it is.
pub fn settle_search_paths(
    tree: &Path,
    writable: &[PathBuf],
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Vec<(String, String)> {
    let tree = tree.canonicalize().unwrap_or_else(|_| tree.to_path_buf());
    let writable: Vec<PathBuf> = writable
        .iter()
        .filter_map(|p| p.canonicalize().ok())
        .collect();
    let reachable = |folder: &Path| {
        !folder.starts_with(&tree) && writable.iter().any(|open| folder.starts_with(open))
    };
    let mut settled = Vec::new();
    for name in SEARCH_PATHS {
        let Some(value) = lookup(name).filter(|value| !value.is_empty()) else {
            continue;
        };
        let entries: Vec<PathBuf> = std::env::split_paths(&value)
            .filter_map(|entry| {
                if !entry.is_absolute() {
                    return Some(entry);
                }
                match entry.canonicalize() {
                    Ok(resolved) => Some(resolved),
                    Err(_) if reachable(&resolved_above(&entry)) => None,
                    Err(_) => Some(entry),
                }
            })
            .collect();
        let Some(joined) = std::env::join_paths(entries)
            .ok()
            .and_then(|joined| joined.into_string().ok())
        else {
            continue;
        };
        if joined != value {
            settled.push((name.to_string(), joined));
        }
    }
    settled
}

/// `path` (which does not exist) with its deepest existing folder resolved.
fn resolved_above(path: &Path) -> PathBuf {
    path.ancestors()
        .skip(1)
        .find_map(|folder| {
            let resolved = folder.canonicalize().ok()?;
            Some(resolved.join(path.strip_prefix(folder).ok()?))
        })
        .unwrap_or_else(|| path.to_path_buf())
}

/// Whether a folder git ignores holds installed tools: a dependency folder by its name, or an
/// environment (in it, or in one of its first entries: `envs/py311/pyvenv.cfg`).
pub fn is_installed(folder: &Path) -> bool {
    let named = folder
        .file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| DEPENDENCY_FOLDERS.contains(&name));
    let marked = |folder: &Path| {
        ENVIRONMENT_MARKS
            .iter()
            .any(|mark| folder.join(mark).symlink_metadata().is_ok())
    };
    named
        || marked(folder)
        || std::fs::read_dir(folder).is_ok_and(|entries| {
            entries
                .flatten()
                .take(LOOK_INTO)
                .any(|entry| entry.file_type().is_ok_and(|t| t.is_dir()) && marked(&entry.path()))
        })
}

/// The toolchain folders: rustup's toolchains and cargo's programs, the packages npx runs, and
/// pre-commit's hook environments when the gate runs it.
fn toolchains(lookup: &dyn Fn(&str) -> Option<String>, pre_commit: bool) -> Vec<PathBuf> {
    let home = lookup("HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from);
    let from = |variable: &str, default: &str| -> Option<PathBuf> {
        lookup(variable)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|home| home.join(default)))
    };
    let mut folders = vec![
        from("CARGO_HOME", ".cargo").map(|cargo| cargo.join("bin")),
        from("RUSTUP_HOME", ".rustup").map(|rustup| rustup.join("toolchains")),
        from("npm_config_cache", ".npm").map(|npm| npm.join("_npx")),
    ];
    if pre_commit {
        let own = lookup("PRE_COMMIT_HOME").filter(|value| !value.is_empty());
        folders
            .push(own.map(PathBuf::from).or_else(|| {
                from("XDG_CACHE_HOME", ".cache").map(|cache| cache.join("pre-commit"))
            }));
    }
    folders.into_iter().flatten().collect()
}

#[cfg(test)]
#[path = "tools_tests.rs"]
mod tests;
