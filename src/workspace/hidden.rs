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

    /// The entries git ignores that hold installed dependencies or an environment (see
    /// [`crate::confine::is_installed`]): folders as git lists them (`web/node_modules/`),
    /// and links.
    pub(super) fn installed_folders(&self) -> Result<BTreeSet<Vec<u8>>, WorkspaceError> {
        Ok(ignored::ignored_entries(&self.repo)?
            .into_iter()
            .filter(|path| !self.is_excluded(path))
            .filter(|path| {
                let full = RepoPath::new(path.strip_suffix(b"/").unwrap_or(path).to_vec())
                    .under(&self.root);
                (path.ends_with(b"/") || full.is_symlink()) && crate::confine::is_installed(&full)
            })
            .collect())
    }

    /// Sets aside each folder of installed dependencies (or environment) git ignores that was
    /// not there after the baseline's gate run: a delegate's install, which would change what
    /// the gate runs and is no part of its change (a link is removed); an incident for each.
    pub(super) fn set_aside_new_installs(&self) -> Result<Vec<Incident>, WorkspaceError> {
        let Some(before) = &self.installed_at_baseline else {
            return Ok(Vec::new());
        };
        let mut aside = super::rollback::SetAside {
            dir: &self.set_aside_dir,
            moved: Vec::new(),
        };
        let mut incidents = Vec::new();
        // What git cannot list (a chain of folders too deep for it) holds no install it sees.
        let now = self.installed_folders().unwrap_or_else(|error| {
            tracing::debug!(%error, "the installed folders could not be listed");
            before.clone()
        });
        for path in now.difference(before) {
            let path = RepoPath::new(path.strip_suffix(b"/").unwrap_or(path).to_vec());
            let full = path.under(&self.root);
            let moved = if full.is_symlink() {
                std::fs::remove_file(&full)
            } else {
                aside.put(&full)
            };
            moved.map_err(|source| WorkspaceError::Io {
                path: full.clone(),
                source,
            })?;
            incidents.push(Incident::MadeInstall { path });
        }
        self.record_set_aside(aside);
        Ok(incidents)
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
