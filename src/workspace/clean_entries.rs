//! The clean-file record's storage: every tracked file the baseline found clean, sorted by
//! path in one vector (the run's largest structure, so no map), with stat keys hashed.

use super::RepoPath;
use super::clean_files::Entry;
use super::listing::StatKey;

/// The recorded files, sorted by path.
#[derive(Debug, Default)]
pub(super) struct Entries(Vec<(RepoPath, Entry)>);

impl Entries {
    pub(super) fn new(mut entries: Vec<(RepoPath, Entry)>) -> Self {
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        entries.dedup_by(|a, b| a.0 == b.0);
        entries.shrink_to_fit();
        Self(entries)
    }

    fn position(&self, path: &RepoPath) -> Option<usize> {
        self.0.binary_search_by(|(at, _)| at.cmp(path)).ok()
    }

    pub(super) fn get(&self, path: &RepoPath) -> Option<&Entry> {
        self.position(path).map(|at| &self.0[at].1)
    }

    pub(super) fn get_mut(&mut self, path: &RepoPath) -> Option<&mut Entry> {
        self.position(path).map(|at| &mut self.0[at].1)
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = (&RepoPath, &Entry)> {
        self.0.iter().map(|(path, entry)| (path, entry))
    }

    /// The entries from `path` on.
    pub(super) fn from<'a>(
        &'a self,
        path: &RepoPath,
    ) -> impl Iterator<Item = (&'a RepoPath, &'a Entry)> + use<'a> {
        let at = self.0.partition_point(|(at, _)| at < path);
        self.0[at..].iter().map(|(path, entry)| (path, entry))
    }
}

/// A stat key as the record keeps it.
pub(super) fn stat_digest(key: &StatKey) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::default().hash_one(key)
}
