//! What changed since a snapshot: the paths git reports dirty now or then and the clean files
//! whose identity changed, each compared with what it held before (a clean file's earlier state
//! is the bytes it had on disk, never the index's checked out again).

use std::collections::BTreeSet;

use super::{Change, Incident, PathState, RepoPath, Snapshot, Workspace, WorkspaceError};

impl Workspace {
    /// What changed since `before`: paths dirty then or now, and clean files whose identity
    /// changed (an edit git does not show is still an edit), whose state differs. A path that
    /// was clean then is compared with what it held when last seen clean.
    pub fn changes_since(&mut self, before: &Snapshot) -> Result<Vec<Change>, WorkspaceError> {
        let now = self.dirty_paths()?;
        if self.clean.is_none() {
            self.look_at_clean_files(&crate::cancel::Cancel::default())?;
        }
        // What the watch saw change since `before` (`None`: it cannot tell, all is looked at).
        let among = self.changed_since(before.mark).map(|(paths, _)| paths);
        // Every clean file is looked at, whatever the watch saw: a file is written through any
        // of its names, and a name in an ignored folder (a hard link made and removed in one
        // turn) has no event where the watch listens. Its change time moves all the same.
        let touched = self
            .clean
            .as_ref()
            .map(|clean| clean.touched(&self.root, None))
            .unwrap_or_default();
        let candidates: BTreeSet<RepoPath> = before
            .paths
            .keys()
            .chain(now.iter())
            .chain(touched.iter())
            .filter(|path| !self.artifacts.contains(*path))
            .cloned()
            .collect();
        let mut changes = Vec::new();
        for path in candidates {
            changes.extend(self.change_of(path, before)?);
        }
        // Files the delegate hid behind ignore rules it wrote are its change too (an ignore
        // file that changed makes the watch give up: with its account, none did).
        let hidden = match among {
            Some(_) => BTreeSet::new(),
            None => self.hidden_by_new_rules(&changes)?,
        };
        self.watching.changed_in_turn = among;
        for path in hidden {
            if !changes.iter().any(|change| change.path == path) {
                changes.extend(self.change_of(path, before)?);
            }
        }
        self.dirty = now;
        Ok(changes)
    }

    /// Removes, unread, each file among `paths` (dirty now, not the user's) larger than
    /// [`super::MAX_CHANGED_FILE`]: reading it would cost the run its disk and its time, and no
    /// fixer makes such a change. A tracked file comes back with the rollback of the change.
    pub(super) fn remove_too_large(
        &self,
        paths: &BTreeSet<RepoPath>,
    ) -> Result<Vec<Incident>, WorkspaceError> {
        let mut incidents = Vec::new();
        for path in paths
            .iter()
            .filter(|path| !self.protected.contains_key(*path))
        {
            let full = path.under(&self.root);
            let Ok(metadata) = std::fs::symlink_metadata(&full) else {
                continue;
            };
            if metadata.is_file() && metadata.len() > super::MAX_CHANGED_FILE {
                std::fs::remove_file(&full)
                    .map_err(|source| WorkspaceError::Io { path: full, source })?;
                incidents.push(Incident::TooLarge {
                    path: path.clone(),
                    size: metadata.len(),
                });
            }
        }
        Ok(incidents)
    }

    /// What the gate run just ended made in the tree: the paths that became dirty while it ran,
    /// but the user's work and the gate's earlier output. After a gate run on a change, code that
    /// change planted (a new test) may have written them: they are judged with the change, and
    /// go when it goes. The bytes are kept in the store like a delegate's.
    /// A file too large to read is removed unread, and named in the incidents returned.
    pub fn made_by_gate(&mut self) -> Result<(Vec<Change>, Vec<Incident>), WorkspaceError> {
        let now = self.dirty_paths()?;
        let made: BTreeSet<RepoPath> = now
            .difference(&self.dirty)
            .filter(|path| !self.protected.contains_key(*path) && !self.artifacts.contains(*path))
            .cloned()
            .collect();
        let incidents = self.remove_too_large(&made)?;
        let mut changes = Vec::new();
        for path in made {
            changes.extend(self.change_of(path, &Snapshot::default())?);
        }
        Ok((changes, incidents))
    }

    /// How `path` changed since `before`, if it did.
    fn change_of(
        &mut self,
        path: RepoPath,
        before: &Snapshot,
    ) -> Result<Option<Change>, WorkspaceError> {
        let was = match before.paths.get(&path) {
            Some(state) => state.clone(),
            None => match self.clean_state(&path)? {
                Some(state) => state,
                // An ignored file the delegate made visible is not its own.
                None => self.ignored.state_of(&path).unwrap_or(PathState::Absent),
            },
        };
        // Kept in the store too: a later change may have to be rolled back to this state (but
        // not while the tree is put back from a journal: nothing after that goes back to it).
        let store = (!self.restoring).then_some(&self.store);
        let is = PathState::read_at(&self.root, &path, store)?;
        Ok((was != is).then_some(Change {
            path,
            before: was,
            after: is,
        }))
    }

    /// What a clean tracked file held when last seen, exactly as it was on disk.
    fn clean_state(&mut self, path: &RepoPath) -> Result<Option<PathState>, WorkspaceError> {
        match &mut self.clean {
            Some(clean) => clean.state_of(path, &self.repo, &self.store),
            None => Ok(None),
        }
    }
}
