//! What a delegate did, found after it ran: its writes into `.git` put back, its changes to the
//! tree found, its changes to the user's own work undone, and all it must not have done reported.

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::time::SystemTime;

use super::{
    Change, EMPTY_SHA256, Effects, Incident, PathState, RepoPath, Snapshot, Watch, Workspace,
    WorkspaceError, hard_link, special, watch,
};
use crate::files::SpecialKind;

impl Workspace {
    /// After a delegate: puts back what it wrote into `.git`, finds what it changed in the tree
    /// since `before`, undoes its changes to the user's own work, and reports all it did that it
    /// must not.
    pub fn after_delegate(
        &mut self,
        watch: &Watch,
        before: &Snapshot,
    ) -> Result<Effects, WorkspaceError> {
        // The kept copies first, before the loop's own reads add to them; then .git: a delegate
        // that staged its edit would otherwise hide it from the scan.
        let mut incidents = watch.store_writes();
        incidents.extend(watch.restore_git_dir(&self.store)?);
        // Folder modes next: a folder it made unreadable would hide what it did inside.
        incidents.extend(self.restore_empty_folders());
        incidents.extend(self.restore_folder_modes());
        incidents.extend(self.restore_owners());
        // Then what git ignores, before the scan: a file it made visible is compared as it was.
        incidents.extend(
            self.restore_ignored()?
                .into_iter()
                .map(|path| Incident::IgnoredRestored { path }),
        );
        // A tool's cache file is no one's work: an honest fixer rewrites it too (`eslint --fix
        // --cache`). Put back, it is no incident.
        for path in self.restore_caches()? {
            tracing::info!(%path, "a cache file the gate's tool reads was changed: put back");
        }
        // Then the state dir, before the loop's own reads add to its store.
        incidents.extend(watch.state_dir_writes());
        incidents.extend(watch.outside_writes());
        // What is too large to read goes unread, before the look would read it.
        incidents.extend(self.remove_too_large(&self.dirty_paths()?)?);
        self.watching.turn_started = Some(watch.started());
        let changes = self.changes_since(before);
        self.watching.turn_started = None;
        self.note_made_folders(watch.started());
        let mut changes = changes?;
        self.add_special_files(&mut changes, watch.started());
        // And what it made that git ignores: not its change, and the gate would read it
        // (looked for once the scan has set aside what git cannot list, and the special
        // files in it are found).
        incidents.extend(self.clear_new_ignored(watch.started(), &changes)?);
        incidents.extend(hard_link::hard_links(&changes, &self.root));
        let mut effects = Effects::default();
        let mut touched_protected = Vec::new();
        let protected_contents = self.protected_contents();
        for change in changes {
            if let Some(incident) = watch::escape_of(&change, &self.root, self.repo.path()) {
                incidents.push(incident);
            }
            if let PathState::Special { kind } = change.after {
                incidents.push(Incident::SpecialFile {
                    path: change.path.clone(),
                    kind,
                });
            }
            let copied_from = match &change.after {
                PathState::File { sha256, .. } if change.before != change.after => {
                    protected_contents.get(sha256).copied()
                }
                _ => None,
            };
            if self.protected.contains_key(&change.path) {
                incidents.push(Incident::TouchedProtected {
                    path: change.path.clone(),
                });
                touched_protected.push(change);
            } else if let Some(from) = copied_from {
                // The user's work carried to another path (a move, a copy) is not the loop's to
                // keep or record.
                incidents.push(Incident::CopiedProtected {
                    from: from.clone(),
                    to: change.path.clone(),
                });
                touched_protected.push(change);
            } else {
                effects.changes.push(change);
            }
        }
        // What the delegate put where a folder of the user's work was (a file, a link) goes too:
        // nothing could be put back beneath it otherwise.
        let (above, rest): (Vec<Change>, Vec<Change>) = std::mem::take(&mut effects.changes)
            .into_iter()
            .partition(|change| {
                touched_protected.iter().any(|undone| {
                    undone.path != change.path && undone.path.is_within(change.path.as_bytes())
                })
            });
        touched_protected.extend(above);
        effects.changes = rest;
        // The user's work goes back as it was at baseline (which is what `before` holds for it).
        self.roll_back(&touched_protected, watch.started())?;
        effects.incidents = incidents;
        Ok(effects)
    }

    /// The user's files by their contents (but empty ones: an empty file is nobody's work in
    /// particular).
    fn protected_contents(&self) -> BTreeMap<&String, &RepoPath> {
        self.protected
            .iter()
            .filter_map(|(path, state)| match state {
                PathState::File { sha256, .. } if sha256 != EMPTY_SHA256 => Some((sha256, path)),
                _ => None,
            })
            .collect()
    }

    /// Adds the FIFOs, sockets and devices made at new paths since `since`, which git does not
    /// list, to `changes`.
    fn add_special_files(&self, changes: &mut Vec<Change>, since: SystemTime) {
        for (path, kind) in self.special_files(since) {
            if !self.special_at_baseline.contains(&path) && !changes.iter().any(|c| c.path == path)
            {
                changes.push(Change {
                    path,
                    before: PathState::Absent,
                    after: PathState::Special { kind },
                });
            }
        }
    }

    /// FIFOs, sockets and devices in the tree, in folders changed since `since`; the git folder
    /// and the state dir are left out.
    /// When the watch told what the turn changed, only those paths are looked at.
    pub(super) fn special_files(&self, since: SystemTime) -> Vec<(RepoPath, SpecialKind)> {
        if let Some(changed) = &self.watching.changed_in_turn {
            // The watched folders by the kernel's account; the folders it leaves out (build
            // output a gate reads) by the old walk.
            let mut found = special::special_among(&self.root, changed);
            let skip = [self.root.join(".git"), self.state_dir.clone()];
            let unwatched: Vec<Vec<u8>> = self
                .watching
                .tree_watch
                .borrow()
                .as_ref()
                .map(|watch| watch.skipped().map(<[u8]>::to_vec).collect())
                .unwrap_or_default();
            for folder in unwatched {
                let name = folder
                    .rsplit(|byte| *byte == b'/')
                    .next()
                    .unwrap_or(&folder);
                if name == b".git" || self.is_excluded(&folder) {
                    continue;
                }
                let top = self.root.join(std::ffi::OsStr::from_bytes(&folder));
                found.extend(special::special_files(&top, since, &skip).into_iter().map(
                    |(path, kind)| {
                        let mut full = folder.clone();
                        full.push(b'/');
                        full.extend_from_slice(path.as_bytes());
                        (RepoPath::new(full), kind)
                    },
                ));
            }
            return found;
        }
        let skip = [self.root.join(".git"), self.state_dir.clone()];
        special::special_files(&self.root, since, &skip)
    }
}
