//! What changed since a snapshot: the paths git reports dirty now or then, each compared with
//! what it held before (a clean path's earlier state is the index's, checked out as git would).

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::{Change, PathState, RepoPath, Snapshot, Workspace, WorkspaceError};

impl Workspace {
    /// What changed since `before`: paths dirty then or now whose state differs. A path that was
    /// clean then is compared with the index.
    pub fn changes_since(&mut self, before: &Snapshot) -> Result<Vec<Change>, WorkspaceError> {
        let now = self.dirty_paths()?;
        let candidates: BTreeSet<&RepoPath> = before
            .paths
            .keys()
            .chain(now.iter())
            .filter(|path| !self.artifacts.contains(*path))
            .collect();
        let clean: Vec<&RepoPath> = candidates
            .iter()
            .copied()
            .filter(|path| !before.paths.contains_key(*path))
            .collect();
        let indexed = self.indexed_states(&clean)?;
        let mut changes = Vec::new();
        for path in candidates {
            let was = match before.paths.get(path) {
                Some(state) => state.clone(),
                None => indexed.get(path).cloned().unwrap_or(PathState::Absent),
            };
            // Kept in the store too: a later change may have to be rolled back to this state.
            let is = PathState::read_at(&self.root, path, Some(&self.store))?;
            if was != is {
                changes.push(Change {
                    path: path.clone(),
                    before: was,
                    after: is,
                });
            }
        }
        self.dirty = now;
        Ok(changes)
    }

    /// What clean `paths` held: the index's entries as git writes them into the work tree (its
    /// filters, line endings and file modes applied), by checking them out into a scratch
    /// folder, never into the tree. Paths the index lacks are absent.
    fn indexed_states(
        &self,
        paths: &[&RepoPath],
    ) -> Result<BTreeMap<RepoPath, PathState>, WorkspaceError> {
        let mut states = BTreeMap::new();
        if paths.is_empty() {
            return Ok(states);
        }
        let io_error = |source| WorkspaceError::Io {
            path: self.store.dir().to_path_buf(),
            source,
        };
        let scratch = self.store.scratch().map_err(io_error)?;
        let mut index = self.repo.index()?;
        let mut checkout = git2::build::CheckoutBuilder::new();
        checkout
            .target_dir(scratch.path())
            .update_index(false)
            .force()
            .disable_pathspec_match(true);
        let mut listed = 0;
        for path in paths {
            let relative = Path::new(std::ffi::OsStr::from_bytes(path.as_bytes()));
            if index.get_path(relative, 0).is_some() {
                checkout.path(relative);
                listed += 1;
            }
        }
        if listed > 0 {
            self.repo
                .checkout_index(Some(&mut index), Some(&mut checkout))?;
        }
        for path in paths {
            let state = PathState::read_at(scratch.path(), path, Some(&self.store))?;
            states.insert((*path).clone(), state);
        }
        Ok(states)
    }
}
