//! Looking at the tree in O(changes): with the tree watch on, what is dirty now is what was
//! dirty at the last look, with the paths the kernel reported since looked at again; the clean
//! files a change may have written are those it reported. Without the watch, or when it lost
//! track, the whole tree is scanned, and the reason is kept for the report.

use std::collections::BTreeSet;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;

use super::tree_watch::{Mark, Since, TreeWatch};
use super::{Workspace, WorkspaceError, scan};

/// What a look found: the paths that differ from the index, as of the watch's mark.
#[derive(Debug, Default)]
pub(super) struct Looked {
    pub(super) mark: Option<Mark>,
    pub(super) dirty: BTreeSet<Vec<u8>>,
}

/// The kernel's watch on the tree and what the looks found, as the workspace keeps them.
#[derive(Debug)]
pub(super) struct Watching {
    /// The kernel's account of what changes in the tree (`None`: every look scans it).
    pub(super) tree_watch: std::cell::RefCell<Option<TreeWatch>>,
    /// What the last look found, and the watch's mark then.
    pub(super) looked: std::cell::RefCell<Looked>,
    /// Where the clean files were last looked at again.
    pub(super) clean_mark: std::cell::Cell<Option<Mark>>,
    /// Files with more than one name at the baseline: looked at again at every look.
    pub(super) linked_at_baseline: BTreeSet<Vec<u8>>,
    /// The watch is started with the baseline (unless the run turned it off).
    pub(super) watch_wanted: bool,
    /// Why looks scanned the whole tree.
    pub(super) full_scans: std::cell::RefCell<Vec<String>>,
    /// When the delegate whose changes are being found began (its clock tick).
    pub(super) turn_started: Option<std::time::SystemTime>,
    /// What the watch saw change during the last delegate's turn (`None`: it could not tell).
    pub(super) changed_in_turn: Option<BTreeSet<Vec<u8>>>,
    /// Where the watch stood when the gate run on a change began (see
    /// [`Workspace::written_in_gate`]).
    pub(super) gate_mark: std::cell::Cell<Option<Mark>>,
}

impl Default for Watching {
    fn default() -> Self {
        Self {
            tree_watch: std::cell::RefCell::default(),
            looked: std::cell::RefCell::default(),
            clean_mark: std::cell::Cell::new(None),
            linked_at_baseline: BTreeSet::new(),
            full_scans: std::cell::RefCell::default(),
            watch_wanted: true,
            changed_in_turn: None,
            turn_started: None,
            gate_mark: std::cell::Cell::new(None),
        }
    }
}

impl Workspace {
    /// Whether the tree is watched (the default), or scanned whole at every look: the fallback,
    /// forced (for a test, or a file system inotify cannot follow). Set before the baseline.
    pub fn watch_tree(&mut self, watch: bool) {
        self.watching.watch_wanted = watch;
    }

    /// Starts the watch on the tree (before the baseline is listed: nothing after is missed).
    /// When it cannot start, every look scans the tree, and the reason is reported.
    pub(super) fn start_tree_watch(&mut self) {
        if !self.watching.watch_wanted {
            self.note_full_scan("the watch is off (REFINE_LOOP_WATCH=off)".to_string());
            return;
        }
        let skip = |path: &[u8]| self.unwatched_folder(path);
        let started = TreeWatch::start(&self.root, &skip);
        match started {
            Ok(watch) => {
                tracing::debug!(folders = watch.folders(), "watching the work tree");
                *self.watching.tree_watch.borrow_mut() = Some(watch);
            }
            Err(why) => self.note_full_scan(why),
        }
    }

    /// Folders the watch leaves out: git folders, repositories inside the tree, the state dir,
    /// and what git ignores (build output: what a gate writes there is not the loop's to see).
    fn unwatched_folder(&self, path: &[u8]) -> bool {
        let name = path.rsplit(|byte| *byte == b'/').next().unwrap_or(path);
        if name == b".git" || self.is_excluded(path) {
            return true;
        }
        let full = std::path::Path::new(std::ffi::OsStr::from_bytes(path));
        if self.root.join(full).join(".git").exists() {
            return true;
        }
        let mut folder = path.to_vec();
        folder.push(b'/');
        let ignored = self
            .repo
            .is_path_ignored(std::path::Path::new(std::ffi::OsStr::from_bytes(&folder)))
            .unwrap_or(false);
        // Files git tracks in an ignored folder (added with --force) are watched like any.
        ignored
            && self
                .repo
                .index()
                .is_ok_and(|index| index.find_prefix(folder.as_slice()).is_err())
    }

    /// The reason a look scanned the whole tree, for the report (each distinct one once).
    fn note_full_scan(&self, why: String) {
        let mut notes = self.watching.full_scans.borrow_mut();
        if !notes.contains(&why) {
            tracing::info!(reason = %why, "scanning the whole tree");
            notes.push(why);
        }
    }

    /// Why looks scanned the whole tree in this run (empty: the watch told every change).
    pub fn full_scan_reasons(&self) -> Vec<String> {
        self.watching.full_scans.borrow().clone()
    }

    /// The paths changed since `mark` as the watch tells them; `None` when it cannot (no watch,
    /// no mark, events lost, a hard-linked file among them): the caller scans.
    pub(super) fn changed_since(&self, mark: Option<Mark>) -> Option<(BTreeSet<Vec<u8>>, Mark)> {
        let mark = mark?;
        let mut guard = self.watching.tree_watch.borrow_mut();
        let watch = guard.as_mut()?;
        let skip = |path: &[u8]| self.unwatched_folder(path);
        let (since, now) = watch.since(mark, &skip);
        drop(guard);
        match since {
            Since::Exact(mut paths) => {
                // Files with a second name since the baseline: written through the other name,
                // they have no event of their own.
                paths.extend(self.watching.linked_at_baseline.iter().cloned());
                // A file with another name may have been written through that name, which the
                // watch does not see.
                if let Some(linked) = paths.iter().find(|path| self.hard_linked(path)) {
                    self.note_full_scan(format!(
                        "`{}` has more than one name (a hard link): a write through another \
                         name has no event",
                        String::from_utf8_lossy(linked)
                    ));
                    return None;
                }
                Some((paths, now))
            }
            Since::Lost(why) => {
                self.note_full_scan(why);
                None
            }
        }
    }

    /// The paths changed since `*mark` as the watch tells them; `None` when it cannot (the
    /// caller looks at everything). Either way `*mark` moves to now.
    pub(super) fn changed_after(
        &self,
        mark: &std::cell::Cell<Option<Mark>>,
    ) -> Option<BTreeSet<Vec<u8>>> {
        match self.changed_since(mark.get()) {
            Some((paths, now)) => {
                mark.set(Some(now));
                Some(paths)
            }
            None => {
                mark.set(self.watch_mark());
                None
            }
        }
    }

    /// Marks where the watch stands as a gate run on a change begins.
    pub fn begin_gate(&self) {
        self.watching.gate_mark.set(self.watch_mark());
    }

    /// The files in the tree before the gate run began (neither among `made`, what it made, nor
    /// the gate's own output of earlier runs, nor what git ignores) that the watch saw written
    /// while it ran, whether or not they held their
    /// old bytes by its end: code the change planted that rewrites the code under test while
    /// the tests run, and writes it back after, would have the gate judge code the tree does
    /// not hold. Empty when the watch cannot tell (see [`Self::begin_gate`]).
    pub fn written_in_gate(&self, made: &[super::Change]) -> Vec<super::RepoPath> {
        let Some(mark) = self.watching.gate_mark.take() else {
            return Vec::new();
        };
        let mut guard = self.watching.tree_watch.borrow_mut();
        let Some(watch) = guard.as_mut() else {
            return Vec::new();
        };
        let skip = |path: &[u8]| self.unwatched_folder(path);
        let (since, _) = watch.since(mark, &skip);
        drop(guard);
        let Since::Exact(paths) = since else {
            return Vec::new();
        };
        paths
            .into_iter()
            .filter(|path| !self.is_excluded(path))
            .map(super::RepoPath::new)
            .filter(|path| {
                !made.iter().any(|change| change.path == *path) && !self.artifacts.contains(path)
            })
            .filter(|path| {
                let full = path.under(&self.root);
                std::fs::symlink_metadata(&full).is_ok_and(|m| m.is_file())
                    && !self.is_ignored(&full)
            })
            .collect()
    }

    /// The watch's mark for now (`None`: no watch).
    pub(super) fn watch_mark(&self) -> Option<Mark> {
        let mut guard = self.watching.tree_watch.borrow_mut();
        let watch = guard.as_mut()?;
        let skip = |path: &[u8]| self.unwatched_folder(path);
        Some(watch.mark(&skip))
    }

    fn hard_linked(&self, path: &[u8]) -> bool {
        std::fs::symlink_metadata(self.root.join(std::ffi::OsStr::from_bytes(path)))
            .is_ok_and(|metadata| metadata.is_file() && metadata.nlink() > 1)
    }

    /// The paths that differ from the index now (unfiltered): those of the last look, with the
    /// paths changed since looked at again; the whole tree when the watch cannot tell.
    pub(super) fn look(&self) -> Result<Looked, WorkspaceError> {
        let last_mark = self.watching.looked.borrow().mark;
        if let Some((changed, now)) = self.changed_since(last_mark) {
            let mut looked = self.watching.looked.borrow_mut();
            if !changed.is_empty() {
                let list: Vec<Vec<u8>> = changed.iter().cloned().collect();
                let found = scan::statuses(&self.repo, &list)?;
                for top in &changed {
                    let beneath: Vec<Vec<u8>> = looked
                        .dirty
                        .range(top.clone()..)
                        .take_while(|path| path.starts_with(top))
                        .filter(|path| is_at_or_beneath(path, top))
                        .cloned()
                        .collect();
                    for path in beneath {
                        looked.dirty.remove(&path);
                    }
                }
                looked.dirty.extend(found);
            }
            looked.mark = Some(now);
            return Ok(Looked {
                mark: looked.mark,
                dirty: looked.dirty.clone(),
            });
        }
        // A folder beyond the git library's reach fails its listing, or hides what is in it.
        // None is there at the baseline; one found later was made during the run. The watch
        // meets every such folder as it watches the tree: without it, the tree is walked.
        let walk = self
            .watching
            .tree_watch
            .borrow_mut()
            .as_mut()
            .is_none_or(TreeWatch::take_beyond_reach);
        if walk && self.clean.is_some() {
            self.set_aside_beyond_reach()?;
        } else if let Some(folder) = walk
            .then(|| self.beyond_reach())
            .and_then(|found| found.into_iter().next())
        {
            return Err(self.too_deep(&folder));
        }
        let mark = self.watch_mark();
        // With the watch on, a scan is rare (the baseline, a fallback): one lane, for each
        // lane's handle holds a copy of the index (10 MB at 100,000 files) and its scan's
        // allocations stay with its thread.
        let dirty = if mark.is_some() {
            scan::statuses(&self.repo, &[])?
        } else {
            self.scanner.dirty_paths(&self.repo)?
        };
        *self.watching.looked.borrow_mut() = Looked {
            mark,
            dirty: dirty.clone(),
        };
        Ok(Looked { mark, dirty })
    }
}

/// Whether `path` is `top` or lies beneath it (a status path of a repository inside the tree
/// ends in `/`).
pub(super) fn is_at_or_beneath(path: &[u8], top: &[u8]) -> bool {
    path.strip_prefix(top)
        .is_some_and(|rest| rest.is_empty() || rest == b"/" || rest[0] == b'/')
}

impl Workspace {
    /// From the last look and the paths changed since: the dirty paths git has in its index
    /// (`None` when the tree is not watched).
    pub fn tracked_differing(&self) -> Option<Vec<Vec<u8>>> {
        self.watching.tree_watch.borrow().as_ref()?;
        let looked = self.look().ok()?;
        let index = self.repo.index().ok()?;
        Some(
            looked
                .dirty
                .into_iter()
                .filter(|path| {
                    index
                        .get_path(std::path::Path::new(std::ffi::OsStr::from_bytes(path)), 0)
                        .is_some()
                })
                .collect(),
        )
    }
}
