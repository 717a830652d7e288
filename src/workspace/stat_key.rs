//! A file's identity and version as its metadata tells them (device, inode, size, mode, times):
//! a file whose key is unchanged is not read again.

use std::os::unix::fs::MetadataExt;
use std::time::SystemTime;

/// What identifies a file's version without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StatKey {
    device: u64,
    inode: u64,
    size: u64,
    mode: u32,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl StatKey {
    /// A key no file has (device and inode 0): what it stands for is read again.
    pub(super) const UNKNOWN: Self = Self {
        device: 0,
        inode: 0,
        size: 0,
        mode: 0,
        modified: (0, 0),
        changed: (0, 0),
    };

    /// Whether the file's inode last changed before `moment`: one changed at or after it could
    /// change again and keep these times.
    pub(super) fn changed_before(&self, moment: SystemTime) -> bool {
        let Ok(since_epoch) = moment.duration_since(SystemTime::UNIX_EPOCH) else {
            return false;
        };
        let moment = (
            i64::try_from(since_epoch.as_secs()).unwrap_or(i64::MAX),
            i64::from(since_epoch.subsec_nanos()),
        );
        self.changed < moment
    }

    /// Whether `metadata` is of the same file (device and inode), whatever it holds now.
    pub(super) fn same_file(&self, metadata: &std::fs::Metadata) -> bool {
        self.device == metadata.dev() && self.inode == metadata.ino()
    }

    /// When the file was last modified (`None` for [`Self::UNKNOWN`]).
    pub(super) fn modified(&self) -> Option<SystemTime> {
        if *self == Self::UNKNOWN {
            return None;
        }
        let (seconds, nanos) = self.modified;
        let since =
            std::time::Duration::new(u64::try_from(seconds).ok()?, u32::try_from(nanos).ok()?);
        SystemTime::UNIX_EPOCH.checked_add(since)
    }

    pub(super) fn of(metadata: &std::fs::Metadata) -> Self {
        Self {
            device: metadata.dev(),
            inode: metadata.ino(),
            size: metadata.size(),
            mode: metadata.mode(),
            modified: (metadata.mtime(), metadata.mtime_nsec()),
            changed: (metadata.ctime(), metadata.ctime_nsec()),
        }
    }
}

#[cfg(test)]
#[path = "stat_key_tests.rs"]
mod tests;
