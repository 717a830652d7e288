//! Files a delegate hides behind ignore rules it wrote: a `.gitignore` it added or changed (even
//! one that ignores itself, `hidden/.gitignore` holding `*`). What git newly ignores beneath
//! such a file is part of the delegate's change, so a rollback removes it like any new file.
//! What pre-existing rules ignore elsewhere (build output) is left alone, as before; beneath a
//! changed ignore file, what the delegate made that git newly ignores is all its change (its
//! build output too: which rule ignores a file is not told apart).

use std::collections::BTreeSet;

use super::{Change, Incident, RepoPath, Workspace, WorkspaceError, ignored};

const IGNORE_FILE: &[u8] = b".gitignore";

impl Workspace {
    /// The files git ignores now that it did not at the last look and that lie beneath an
    /// ignore file `changes` touch or that is itself newly ignored (the state dir and the
    /// skipped build folders left out). The listing becomes the last look.
    pub(super) fn hidden_by_new_rules(
        &mut self,
        changes: &[Change],
    ) -> Result<BTreeSet<RepoPath>, WorkspaceError> {
        let now: BTreeSet<Vec<u8>> = ignored::ignored_entries(&self.repo)?
            .into_iter()
            .filter(|path| !self.is_excluded(path))
            .collect();
        let new: Vec<&Vec<u8>> = now.difference(&self.ignored_seen).collect();
        let mut rule_folders: Vec<Vec<u8>> = changes
            .iter()
            .map(|change| change.path.as_bytes())
            .chain(new.iter().map(|path| path.as_slice()))
            .filter_map(folder_of_ignore_file)
            .collect();
        rule_folders.sort();
        rule_folders.dedup();
        let mut hidden = BTreeSet::new();
        if !rule_folders.is_empty() {
            let skip = self.ignored.skip().to_vec();
            let skipped = |path: &[u8]| {
                self.is_excluded(path)
                    || path
                        .split(|byte| *byte == b'/')
                        .any(|name| skip.iter().any(|skip| skip.as_bytes() == name))
            };
            for entry in new {
                let under_rule = rule_folders.iter().any(|folder| {
                    folder.is_empty() || RepoPath::new(entry.clone()).is_within(folder)
                });
                if under_rule && !skipped(entry) {
                    let mut files = Vec::new();
                    ignored::collect(
                        &self.root,
                        RepoPath::new(entry.clone()),
                        &skipped,
                        &mut files,
                    );
                    // Only what changed since the turn began: what the gate wrote in earlier
                    // cycles (not looked at while the watch told every change) is not the
                    // delegate's.
                    hidden.extend(
                        files
                            .into_iter()
                            .filter(|(_, metadata)| {
                                self.watching.turn_started.is_none_or(|since| {
                                    !super::listing::StatKey::of(metadata).changed_before(since)
                                })
                            })
                            .map(|(path, _)| path),
                    );
                }
            }
        }
        self.ignored_seen = now;
        Ok(hidden)
    }

    /// The folders git ignored at the baseline (its status does not enter them), in the tree,
    /// and the ignored links to folders (a `node_modules` shared between checkouts).
    pub fn ignored_folders(&self) -> Vec<std::path::PathBuf> {
        let under = |path: &[u8]| {
            self.root
                .join(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(path))
        };
        self.ignored_seen
            .iter()
            .filter_map(|path| match path.strip_suffix(b"/") {
                Some(folder) => Some(under(folder)),
                None => Some(under(path)).filter(|link| {
                    link.is_symlink() && std::fs::metadata(link).is_ok_and(|meta| meta.is_dir())
                }),
            })
            .collect()
    }

    /// The folders git ignored after the last gate run (its status does not enter them).
    pub fn ignored_folders_after_gate(&self) -> Vec<std::path::PathBuf> {
        self.ignored_after_gate
            .iter()
            .flatten()
            .filter_map(|path| path.strip_suffix(b"/"))
            .map(|folder| RepoPath::new(folder.to_vec()).under(&self.root))
            .filter(|folder| !folder.is_symlink())
            .collect()
    }

    /// The folders git ignores now that were not there after the last gate run.
    pub fn ignored_folders_made_since_gate(&self) -> Vec<RepoPath> {
        let (Some(before), Ok(now)) = (&self.ignored_after_gate, self.ignored_now()) else {
            return Vec::new();
        };
        now.difference(before)
            .filter_map(|path| path.strip_suffix(b"/"))
            .map(|folder| RepoPath::new(folder.to_vec()))
            .collect()
    }

    /// Removes each of `folders` (in the tree) made since `since`, or sets it aside.
    pub fn clear_made_folders(
        &self,
        folders: &[RepoPath],
        since: std::time::SystemTime,
    ) -> Result<(), WorkspaceError> {
        let mut aside = super::rollback::SetAside {
            dir: &self.set_aside_dir,
            moved: Vec::new(),
        };
        for folder in folders {
            let full = folder.under(&self.root);
            super::rollback::clear_made(&full, since, &mut aside)
                .map_err(|source| WorkspaceError::Io { path: full, source })?;
        }
        self.record_set_aside(aside);
        Ok(())
    }

    /// What git ignores now, as its status lists it (the state dir left out).
    pub(super) fn ignored_now(&self) -> Result<BTreeSet<Vec<u8>>, WorkspaceError> {
        Ok(ignored::ignored_entries(&self.repo)?
            .into_iter()
            .filter(|path| !self.is_excluded(path))
            .collect())
    }

    /// Clears what a delegate made that git ignores and that was not there after the last gate
    /// run: a `node_modules` of its own, whose `.bin/eslint` the gate would run before the
    /// project's, a doctored `__pycache__` or `.eslintcache`, a build folder. None is part of
    /// its change (the patch cannot carry it), and the gate would read it. What was made during
    /// its turn is removed; anything else (moved in from elsewhere) is set aside, never deleted.
    /// One incident names them. What holds one of its `changes` (a file it hid behind a rule
    /// it wrote, a FIFO) is left to be judged and rolled back with them.
    pub(super) fn clear_new_ignored(
        &self,
        turn_started: std::time::SystemTime,
        changes: &[Change],
    ) -> Result<Vec<Incident>, WorkspaceError> {
        let Some(before) = &self.ignored_after_gate else {
            return Ok(Vec::new());
        };
        // What git cannot list (a chain of folders too deep for it) is left to the scan.
        let now = self.ignored_now().unwrap_or_else(|error| {
            tracing::debug!(%error, "what git ignores could not be listed");
            before.clone()
        });
        let mut aside = super::rollback::SetAside {
            dir: &self.set_aside_dir,
            moved: Vec::new(),
        };
        let mut cleared = Vec::new();
        for path in now.difference(before) {
            let path = RepoPath::new(path.strip_suffix(b"/").unwrap_or(path).to_vec());
            if changes
                .iter()
                .any(|change| change.path == path || change.path.is_within(path.as_bytes()))
            {
                continue;
            }
            let full = path.under(&self.root);
            super::rollback::clear_made(&full, turn_started, &mut aside).map_err(|source| {
                WorkspaceError::Io {
                    path: full.clone(),
                    source,
                }
            })?;
            cleared.push(path);
        }
        self.record_set_aside(aside);
        Ok(if cleared.is_empty() {
            Vec::new()
        } else {
            vec![Incident::MadeIgnored { paths: cleared }]
        })
    }

    /// Whether git ignores `path` (absolute, in the tree).
    pub fn is_ignored(&self, path: &std::path::Path) -> bool {
        let Ok(relative) = path.strip_prefix(&self.root) else {
            return false;
        };
        self.repo.is_path_ignored(relative).unwrap_or(false)
    }

    /// Remembers what git ignores now (the first look).
    pub(super) fn look_at_ignored(&mut self) -> Result<(), WorkspaceError> {
        self.ignored_seen = ignored::ignored_entries(&self.repo)?
            .into_iter()
            .filter(|path| !self.is_excluded(path))
            .collect();
        Ok(())
    }
}

/// The folder an ignore file at `path` rules over (empty for the root), when it is one.
fn folder_of_ignore_file(path: &[u8]) -> Option<Vec<u8>> {
    match path.iter().rposition(|byte| *byte == b'/') {
        Some(at) => (&path[at + 1..] == IGNORE_FILE).then(|| path[..at].to_vec()),
        None => (path == IGNORE_FILE).then(Vec::new),
    }
}
