//! Hard links a delegate leaves in the tree to files elsewhere: without the kernel's confinement
//! nothing stops it from writing through one, so each is found and the change undone.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::{Change, Incident, PathState};

/// Files the changes left that are hard links with names beyond the changed paths (a file
/// outside the tree, most likely): writing through one writes there.
pub(super) fn hard_links(changes: &[Change], root: &Path) -> Vec<Incident> {
    let linked: Vec<(&Change, u64, (u64, u64))> = changes
        .iter()
        .filter(|change| matches!(change.after, PathState::File { .. }))
        .filter_map(|change| {
            let metadata = std::fs::symlink_metadata(change.path.under(root)).ok()?;
            (metadata.is_file() && metadata.nlink() > 1)
                .then(|| (change, metadata.nlink(), (metadata.dev(), metadata.ino())))
        })
        .collect();
    linked
        .iter()
        .filter(|(_, links, inode)| {
            let in_changes = linked.iter().filter(|(_, _, other)| other == inode).count();
            u64::try_from(in_changes).unwrap_or(u64::MAX) < *links
        })
        .map(|(change, links, _)| Incident::HardLinked {
            path: change.path.clone(),
            links: *links,
        })
        .collect()
}
