//! The delegate's own mount namespace, where the sealed folders (the git dirs, the state dir, the
//! store) are bound read-only over themselves, and the delegate's own files in them read-write
//! again. With that seal in place Landlock can grant the whole work tree, its top included: a
//! delegate may create, rename and delete there (`sed -i`, write-then-rename, a new
//! `conftest.py`), while the kernel refuses every write to `.git` (`EROFS`, also `chmod` and
//! `chattr`), and a mount point can be neither removed nor renamed (`EBUSY`). Landlock, taken on
//! after the binds, forbids every later mount, unmount or remount, so the delegate cannot lift
//! them.
//!
//! The thread that starts the delegate makes the namespace for itself (`unshare` of a mount
//! namespace reaches only the calling thread), so the loop's other threads keep the real one.
//! That takes `CAP_SYS_ADMIN`: the loop runs as root on a machine or VM, or in a privileged
//! container (a default container's root lacks it, and its seccomp profile refuses `unshare`).
//! [`probe`] finds out once per run; without it, the walls fall back to granting each entry
//! beneath the tree's top but the sealed ones (see [`super::walls`]).

use std::io;
use std::path::{Path, PathBuf};

use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, unshare};

/// Whether a delegate can get its own mount namespace here, found by making one in a throwaway
/// thread that binds a temporary folder read-only over itself and checks that it cannot write
/// there.
pub fn probe() -> bool {
    let Ok(folder) = tempfile::Builder::new()
        .prefix("refine-loop-probe-")
        .tempdir()
    else {
        return false;
    };
    let sealed = folder.path().join("sealed");
    if std::fs::create_dir(&sealed).is_err() {
        return false;
    }
    let plan = MountPlan::new(folder.path(), std::slice::from_ref(&sealed), &[]);
    let probe = std::thread::spawn(move || {
        plan.enter().is_ok() && std::fs::write(plan.sealed[0].0.join("x"), "x").is_err()
    });
    let made = probe.join().unwrap_or(false);
    // The thread's namespace went with it: here the folder is as writable as ever.
    made && std::fs::write(sealed.join("x"), "x").is_ok()
}

/// The binds a delegate's mount namespace gets, prepared before its thread makes them.
#[derive(Debug)]
pub struct MountPlan {
    /// The tree's top and every folder between it and a sealed path, bound over themselves
    /// (writable) so that none can be renamed or removed: a renamed folder would let a
    /// delegate put a `.git` or a state dir of its own where the loop looks for the real one.
    pinned: Vec<PathBuf>,
    /// Bound read-only over themselves, each with the flags its mount must keep.
    sealed: Vec<(PathBuf, MsFlags)>,
    /// Bound read-write over themselves again (the delegate's own files in the state dir).
    own: Vec<PathBuf>,
}

impl MountPlan {
    /// The plan for the work tree `tree`, `sealed` (paths that do not exist are left out) and
    /// the `own` files in them (files elsewhere need no bind).
    pub fn new(tree: &Path, sealed: &[PathBuf], own: &[PathBuf]) -> Self {
        let mut sealed: Vec<(PathBuf, MsFlags)> = sealed
            .iter()
            .filter_map(|path| path.canonicalize().ok())
            .map(|path| {
                let keep = nix::sys::statvfs::statvfs(&path).map_or(MsFlags::empty(), kept_flags);
                (path, keep)
            })
            .collect();
        sealed.sort();
        sealed.dedup_by(|a, b| a.0 == b.0);
        let own = own
            .iter()
            .filter_map(|path| path.canonicalize().ok())
            .filter(|path| sealed.iter().any(|(seal, _)| path.starts_with(seal)))
            .collect();
        let mut pinned = std::collections::BTreeSet::new();
        if let Ok(tree) = tree.canonicalize() {
            for (seal, _) in sealed.iter().filter(|(seal, _)| seal.starts_with(&tree)) {
                let between = seal.ancestors().skip(1);
                pinned.extend(
                    between
                        .take_while(|folder| folder.starts_with(&tree))
                        .map(Path::to_path_buf),
                );
            }
            pinned.insert(tree);
        }
        Self {
            // Shallow first: a deeper bind goes on top of the one that holds it.
            pinned: pinned.into_iter().collect(),
            sealed,
            own,
        }
    }

    /// Gives the calling thread a mount namespace of its own and makes the binds in it. Every
    /// process the thread starts from now on is in that namespace; the loop's other threads are
    /// not.
    pub fn enter(&self) -> io::Result<()> {
        let none: Option<&str> = None;
        unshare(CloneFlags::CLONE_NEWNS)?;
        // Nothing done here may reach the loop's namespace.
        mount(none, "/", none, MsFlags::MS_REC | MsFlags::MS_PRIVATE, none)?;
        for path in &self.pinned {
            bind(path, MsFlags::MS_REC)?;
        }
        for (path, _) in &self.sealed {
            bind(path, MsFlags::MS_REC)?;
        }
        // The own files' binds come from the writable mount, before the seal's are made
        // read-only (a bind copies its source mount's flags); a remount reaches only its mount.
        for path in &self.own {
            bind(path, MsFlags::empty())?;
        }
        for (path, keep) in &self.sealed {
            let read_only = MsFlags::MS_REMOUNT | MsFlags::MS_BIND | MsFlags::MS_RDONLY;
            mount(none, path.as_path(), none, read_only | *keep, none)?;
        }
        Ok(())
    }
}

/// Binds `path` over itself.
fn bind(path: &Path, flags: MsFlags) -> nix::Result<()> {
    mount(
        Some(path),
        path,
        None::<&str>,
        MsFlags::MS_BIND | flags,
        None::<&str>,
    )
}

/// The flags of a mount that a read-only remount keeps (a remount sets them all anew).
fn kept_flags(stat: nix::sys::statvfs::Statvfs) -> MsFlags {
    use nix::sys::statvfs::FsFlags;
    [
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ]
    .into_iter()
    .filter(|(flag, _)| stat.flags().contains(*flag))
    .fold(MsFlags::empty(), |all, (_, kept)| all | kept)
}

#[cfg(test)]
#[path = "namespace_tests.rs"]
mod tests;
