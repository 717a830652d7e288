//! Which paths differ from the index, found with libgit2's status on every core.
//!
//! libgit2 walks the working tree on one thread, and the walk is almost all `lstat`. So the tree
//! is split into literal path lists of about equal weight (index entries beneath), and each list
//! is scanned on its own repository handle at the same time; the results are joined. git's rules
//! (ignores, filters, submodules) stay libgit2's: only the walk is shared out.
//!
//! The lists always cover the whole tree. The plan names the folders that are split (listed
//! entry by entry instead of scanned whole); at every scan each split folder contributes both
//! what is in it now and what the index has in it, so new, deleted and renamed entries all fall
//! in some list. A split folder that is no longer a plain folder (a file or a symlink now) makes
//! the scan fall back to one whole-tree walk.

use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// A tree with fewer index entries than this is scanned whole: threads would not pay.
const MIN_ENTRIES_TO_SPLIT: usize = 2048;
/// At most this many folders are split.
const MAX_SPLIT_FOLDERS: usize = 256;
/// At most this many lanes (threads), whatever the machine has.
const MAX_LANES: usize = 4;

/// Scans the working tree for paths that differ from the index.
pub struct Scanner {
    root: PathBuf,
    /// The git folder: a handle per lane beyond the caller's own is opened for each scan and
    /// dropped after it (each holds a copy of the index).
    git_dir: PathBuf,
    plan: Option<Plan>,
}

/// How the tree is split: folders listed entry by entry, with what the index has in them.
#[derive(Debug, Default, PartialEq, Eq)]
struct Plan {
    /// Split folders (relative, `/`-separated; empty for the root) and, for each, its indexed
    /// children (relative paths) with their weight.
    split: BTreeMap<Vec<u8>, Vec<(Vec<u8>, usize)>>,
    lanes: usize,
}

impl std::fmt::Debug for Scanner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scanner")
            .field("root", &self.root)
            .field("plan", &self.plan)
            .finish_non_exhaustive()
    }
}

impl Scanner {
    /// A scanner for `repo`, using as many lanes as the machine has cores (up to four).
    pub fn new(repo: &git2::Repository, root: &Path) -> Result<Self, git2::Error> {
        let lanes = std::thread::available_parallelism()
            .map_or(1, std::num::NonZero::get)
            .min(MAX_LANES);
        Self::with_lanes(repo, root, lanes, MIN_ENTRIES_TO_SPLIT)
    }

    /// A scanner with `lanes` lanes, splitting trees of at least `min_entries` index entries.
    pub fn with_lanes(
        repo: &git2::Repository,
        root: &Path,
        lanes: usize,
        min_entries: usize,
    ) -> Result<Self, git2::Error> {
        let index = repo.index()?;
        let plan = (lanes >= 2 && index.len() >= min_entries.max(1))
            .then(|| Plan::from_index(&index, lanes));
        Ok(Self {
            root: root.to_path_buf(),
            git_dir: repo.path().to_path_buf(),
            plan,
        })
    }

    /// Every path (relative, `/`-separated bytes) that is modified, deleted or untracked and
    /// not ignored, as `repo` (the caller's handle on the same repository) sees it.
    pub fn dirty_paths(&self, repo: &git2::Repository) -> Result<BTreeSet<Vec<u8>>, git2::Error> {
        let lists = self
            .plan
            .as_ref()
            .and_then(|plan| plan.lists(&self.root))
            .filter(|lists| lists.len() > 1);
        let Some(lists) = lists else {
            return statuses(repo, &[]);
        };
        let mut spare = (1..lists.len())
            .map(|_| git2::Repository::open(&self.git_dir))
            .collect::<Result<Vec<_>, _>>()?;
        let (first, rest) = lists.split_first().expect("more than one list");
        std::thread::scope(|scope| {
            let workers: Vec<_> = rest
                .iter()
                .zip(spare.iter_mut())
                .map(|(list, handle)| scope.spawn(move || statuses(handle, list)))
                .collect();
            let mut all = statuses(repo, first)?;
            for worker in workers {
                let found = worker.join().unwrap_or_else(|panic| {
                    std::panic::resume_unwind(panic);
                })?;
                all.extend(found);
            }
            Ok(all)
        })
    }
}

/// One libgit2 status run over `list` (literal paths; empty means the whole tree).
pub(super) fn statuses(
    repo: &git2::Repository,
    list: &[Vec<u8>],
) -> Result<BTreeSet<Vec<u8>>, git2::Error> {
    let mut options = git2::StatusOptions::new();
    options
        .show(git2::StatusShow::Workdir)
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .exclude_submodules(true)
        .renames_head_to_index(false)
        .renames_index_to_workdir(false);
    if !list.is_empty() {
        options.disable_pathspec_match(true);
        for path in list {
            options.pathspec(std::ffi::OsString::from_vec(path.clone()));
        }
    }
    let statuses = repo.statuses(Some(&mut options))?;
    Ok(statuses
        .iter()
        .map(|entry| entry.path_bytes().to_vec())
        .collect())
}

fn join(dir: &[u8], name: &[u8]) -> Vec<u8> {
    if dir.is_empty() {
        name.to_vec()
    } else {
        [dir, b"/", name].concat()
    }
}

impl Plan {
    /// Splits the heaviest folders until no list item outweighs a quarter of a lane's share.
    fn from_index(index: &git2::Index, lanes: usize) -> Self {
        // Index entries beneath every folder, and every folder's children.
        let mut weight: HashMap<Vec<u8>, usize> = HashMap::new();
        let mut children: HashMap<Vec<u8>, BTreeSet<Vec<u8>>> = HashMap::new();
        for entry in index.iter() {
            let path = entry.path;
            let mut parent: &[u8] = b"";
            for (at, _) in path.iter().enumerate().filter(|(_, byte)| **byte == b'/') {
                let folder = &path[..at];
                *weight.entry(folder.to_vec()).or_default() += 1;
                children
                    .entry(parent.to_vec())
                    .or_default()
                    .insert(folder.to_vec());
                parent = folder;
            }
            weight.insert(path.clone(), 1);
            children.entry(parent.to_vec()).or_default().insert(path);
        }
        let limit = (index.len() / (lanes * 4)).max(1);
        let indexed = |folder: &[u8]| -> Vec<(Vec<u8>, usize)> {
            children
                .get(folder)
                .map(|set| {
                    set.iter()
                        .map(|child| (child.clone(), weight.get(child).copied().unwrap_or(1)))
                        .collect()
                })
                .unwrap_or_default()
        };
        let mut split = BTreeMap::new();
        let mut heap = BinaryHeap::new();
        let root = indexed(b"");
        heap.extend(root.iter().map(|(path, w)| (*w, path.clone())));
        split.insert(Vec::new(), root);
        while let Some((heaviest, folder)) = heap.pop() {
            if heaviest <= limit || split.len() >= MAX_SPLIT_FOLDERS {
                break;
            }
            if !children.contains_key(&folder) {
                continue; // a file (or a submodule): cannot be split
            }
            let inside = indexed(&folder);
            heap.extend(inside.iter().map(|(path, w)| (*w, path.clone())));
            split.insert(folder, inside);
        }
        Self { split, lanes }
    }

    /// The lists for this scan, or `None` when a split folder is no longer a plain folder.
    fn lists(&self, root: &Path) -> Option<Vec<Vec<Vec<u8>>>> {
        let mut items: BTreeMap<Vec<u8>, usize> = BTreeMap::new();
        for (folder, indexed) in &self.split {
            let full = root.join(std::ffi::OsStr::from_bytes(folder));
            match std::fs::symlink_metadata(&full) {
                Ok(metadata) if metadata.is_dir() => {
                    for entry in std::fs::read_dir(&full).ok()? {
                        let name = entry.ok()?.file_name();
                        if folder.is_empty() && name == ".git" {
                            continue;
                        }
                        items.entry(join(folder, name.as_bytes())).or_insert(1);
                    }
                }
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                _ => return None,
            }
            for (child, weight) in indexed {
                items.insert(child.clone(), *weight);
            }
        }
        let mut loads = vec![(0usize, Vec::new()); self.lanes];
        let mut items: Vec<(usize, Vec<u8>)> = items
            .into_iter()
            .filter(|(path, _)| !self.split.contains_key(path))
            .map(|(path, weight)| (weight, path))
            .collect();
        // The heaviest first, each to the lightest lane.
        items.sort_by(|a, b| b.cmp(a));
        for (weight, path) in items {
            let lightest = loads
                .iter_mut()
                .min_by_key(|(load, _)| *load)
                .expect("at least one lane");
            lightest.0 += weight;
            lightest.1.push(path);
        }
        Some(
            loads
                .into_iter()
                .map(|(_, list)| list)
                .filter(|list| !list.is_empty())
                .collect(),
        )
    }
}

#[cfg(test)]
#[path = "scan_tests.rs"]
mod tests;
