//! The delegate's own mount namespace, where the sealed folders (the git dirs, the state dir, the
//! store) are bound read-only over themselves, and the delegate's own files in them read-write
//! again. With that seal in place Landlock can grant the whole work tree, its top included: a
//! delegate may create, rename and delete there (`sed -i`, write-then-rename, a new
//! `conftest.py`), while the kernel refuses every write to `.git` (`EROFS`, also `chmod` and
//! `chattr`), and a mount point can be neither removed nor renamed (`EBUSY`). Outside the tree and
//! the folders the delegate may write, every mount is made read-only too: Landlock governs
//! writes, not a file's mode, owner, times or attributes. Landlock, taken on
//! after the binds, forbids every later mount, unmount or remount, so the delegate cannot lift
//! them.
//!
//! Two ways to make it, found by [`super::probe`] once per run:
//! - [`Namespace::Thread`]: with `CAP_SYS_ADMIN` (root on a machine or VM, a privileged
//!   container), the thread that starts the delegate makes a mount namespace for itself
//!   (`unshare` of a mount namespace reaches only the calling thread), so the loop's other
//!   threads keep the real one.
//! - [`Namespace::User`]: without it (a CI runner's user, a container's unprivileged user), a
//!   user namespace gives the same power over a mount namespace of its own. A process with
//!   threads cannot make one, so the loop's own binary is started as the launcher
//!   ([`super::launcher`]), single-threaded: it makes the user namespace (the user's own uid
//!   and gid mapped to themselves, so files keep their owner and git its `safe.directory`), the
//!   binds, the capabilities and the ruleset, and then becomes the delegate. That takes
//!   unprivileged user namespaces (Debian, Fedora, GitHub's runners; not where AppArmor or
//!   seccomp refuse them).
//!
//! Without either, the walls fall back to granting each entry beneath the tree's top but the
//! sealed ones (see [`super::walls`]).

use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, unshare};

/// How a delegate gets its mount namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Namespace {
    /// The thread that starts it makes one (the loop has `CAP_SYS_ADMIN`).
    Thread,
    /// The launcher makes a user namespace and one in it (see [`super::launcher`]).
    User,
}

/// Whether a throwaway thread can make the namespace and its binds.
pub(super) fn probe_thread(folder: &Path, sealed: &Path) -> bool {
    let plan = MountPlan::new(folder, &[sealed.to_path_buf()], &[]);
    let probe = std::thread::spawn(move || {
        plan.enter(Namespace::Thread).is_ok()
            && std::fs::write(plan.sealed[0].0.join("x"), "x").is_err()
    });
    let made = probe.join().unwrap_or(false);
    // The thread's namespace went with it: here the folder is as writable as ever.
    made && std::fs::write(sealed.join("x"), "x").is_ok()
        && std::fs::remove_file(sealed.join("x")).is_ok()
}

/// Whether a throwaway thread can make `cache` (in `folder`, holding `x`) private: it must
/// write `x` and read back what it wrote, and `x` must be as it was here.
pub(super) fn probe_private_thread(folder: &Path, cache: &Path, scratch: &Path) -> bool {
    let before = std::fs::read(cache.join("x")).ok();
    let plan = MountPlan::new(folder, &[], &[]).private(&[cache.to_path_buf()], scratch);
    let x = cache.join("x");
    let probe = std::thread::spawn(move || {
        plan.enter(Namespace::Thread).is_ok()
            && std::fs::write(&x, "private").is_ok()
            && std::fs::read(&x).is_ok_and(|read| read == b"private")
    });
    probe.join().unwrap_or(false)
        && before.is_some()
        && std::fs::read(cache.join("x")).ok() == before
}

/// Where shared memory is: each run that gets private layers gets a fresh one.
const SHARED_MEMORY: &str = "/dev/shm";

/// Where the terminals are: each namespace gets a fresh instance, so a delegate reaches only the
/// terminals it makes itself (through [`NEW_TERMINAL`], bound to the instance's own), never the
/// one of the person who started the loop, nor another's.
pub(super) const TERMINALS: &str = "/dev/pts";
pub(super) const NEW_TERMINAL: &str = "/dev/ptmx";

/// At most this many folders get a private layer in one namespace (each is a mount).
const MAX_PRIVATE: usize = 256;

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
    /// With [`Self::read_only_outside`]: the work tree and the folders and files outside it the
    /// delegate may write, each bound over itself, so that every other mount can be made
    /// read-only.
    open: Option<Vec<PathBuf>>,
    /// Read-only though inside an open folder (the user's tree in worktree mode, in `/tmp`),
    /// but for the open folders inside them.
    fenced: Vec<PathBuf>,
    /// The folders between an open folder outside the tree and a fenced one in it
    /// (`/tmp/tools` for the gate's `/tmp/tools/bin`), bound over themselves like
    /// [`Self::pinned`] ones: `mv /tmp/tools /tmp/old` and a `bin` of the delegate's own would
    /// leave the read-only bind where the gate no longer looks.
    held: Vec<PathBuf>,
    /// Writable to the delegate, but only in a layer of its own: each is the lower layer of an
    /// overlay whose upper layer is on a tmpfs at [`Self::scratch`], gone with the namespace.
    private: Vec<PathBuf>,
    /// Where the tmpfs for the private layers is mounted (a folder of the delegate's own).
    scratch: Option<PathBuf>,
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
            open: None,
            fenced: Vec::new(),
            held: Vec::new(),
            private: Vec::new(),
            scratch: None,
        }
    }

    /// Makes the `folders` (caches outside the tree: cargo's, the XDG cache, npm's) private to
    /// the delegate: it reads them as they are and writes them as it likes, but what it writes
    /// goes to a layer of its own on a tmpfs mounted at `scratch` (an empty folder), which the
    /// namespace takes with it. A tool, a config (`$CARGO_HOME/config.toml`), an environment or
    /// a file linked from the tree in them is never changed for the gate. A folder whose path
    /// an overlay's options cannot carry (`,`, `:`, `\`) or that holds the tree stays as it is.
    pub fn private(mut self, folders: &[PathBuf], scratch: &Path) -> Self {
        let tree = self.pinned.first().cloned();
        self.private = folders
            .iter()
            .filter_map(|path| path.canonicalize().ok())
            .filter(|path| path.is_dir())
            .filter(|path| {
                !path
                    .as_os_str()
                    .as_bytes()
                    .iter()
                    .any(|b| b",:\\".contains(b))
            })
            .filter(|path| tree.as_ref().is_none_or(|tree| !tree.starts_with(path)))
            .filter(|path| !self.sealed.iter().any(|(seal, _)| seal.starts_with(path)))
            .filter(|path| !self.own.iter().any(|own| own.starts_with(path)))
            .collect();
        self.private.sort();
        // One inside another is in its layer already.
        self.private
            .dedup_by(|inner, outer| inner.starts_with(&*outer));
        if self.private.len() > MAX_PRIVATE {
            tracing::debug!(
                folders = self.private.len(),
                "more folders to make private than overlays: the shallowest are"
            );
            self.private.sort_by_key(|path| path.components().count());
            self.private.truncate(MAX_PRIVATE);
        }
        // One in the tree is pinned like a sealed one: its layer is a mount, which cannot be
        // moved, and neither can a folder that holds it (`mv web web.old` and a
        // `web/node_modules` of the delegate's own would leave the layer where the gate no
        // longer looks).
        self.pin_ancestors_of(self.private.clone());
        self.scratch = Some(scratch.to_path_buf());
        self
    }

    /// The folders written in a layer of their own (see [`Self::private`]), and the fresh
    /// `/dev/shm`.
    pub(super) fn private_folders(&self) -> Vec<PathBuf> {
        match &self.scratch {
            Some(_) if !self.private.is_empty() => {
                let mut folders = self.private.clone();
                folders.push(PathBuf::from(SHARED_MEMORY));
                folders
            }
            _ => Vec::new(),
        }
    }

    /// Pins the folders between the tree's top and each of `paths` in it (see
    /// [`Self::pinned`]).
    fn pin_ancestors_of(&mut self, paths: Vec<PathBuf>) {
        let Some(tree) = self.pinned.first().cloned() else {
            return;
        };
        let mut pinned: std::collections::BTreeSet<PathBuf> = self.pinned.drain(..).collect();
        for path in paths.iter().filter(|path| path.starts_with(&tree)) {
            pinned.extend(
                path.ancestors()
                    .skip(1)
                    .take_while(|folder| folder.starts_with(&tree))
                    .map(Path::to_path_buf),
            );
        }
        self.pinned = pinned.into_iter().collect();
    }

    /// Makes every mount read-only but the kernel's own (`/proc`, `/sys`, `/dev`) and those
    /// holding the tree and the `writable` folders (each bound over itself first). Landlock
    /// governs writes, not a file's metadata: without this, a delegate run by root could
    /// `chmod`, `chown`, `touch` or set flags and attributes on any file outside the tree. The
    /// folders are the walls' (`/tmp`), not the grants split from them (each entry of `/tmp`
    /// but the user's tree, in worktree mode): a mount for each would cost a run its minutes.
    /// `fenced` folders (the user's tree, in worktree mode) are read-only even inside a
    /// writable one, but for the writable folders inside them (the folders a worktree shares).
    pub fn read_only_outside(mut self, writable: &[PathBuf], fenced: &[PathBuf]) -> Self {
        self.fenced = fenced
            .iter()
            .filter_map(|path| path.canonicalize().ok())
            .collect();
        // A fenced folder in the tree (the gate's tools: `web/node_modules`) is pinned like a
        // sealed one: `mv web web.old` and a `web/node_modules` of the delegate's own would
        // leave the read-only bind where the gate no longer looks.
        self.pin_ancestors_of(self.fenced.clone());
        let mut open: Vec<PathBuf> = writable
            .iter()
            .filter_map(|path| path.canonicalize().ok())
            .filter(|path| !kernels_own(path))
            .filter(|path| !self.sealed.iter().any(|(seal, _)| path.starts_with(seal)))
            .collect();
        open.extend(self.pinned.first().cloned());
        open.sort();
        // An open path inside another is bound with it, unless a fenced folder between them
        // is made read-only (a shared folder in the user's tree).
        let fenced = &self.fenced;
        open.dedup_by(|inner, outer| {
            inner.starts_with(&*outer) && !fenced.iter().any(|fence| inner.starts_with(fence))
        });
        let tree = self.pinned.first();
        let mut held = std::collections::BTreeSet::new();
        for fence in fenced {
            if tree.is_some_and(|tree| fence.starts_with(tree)) {
                continue;
            }
            for root in open.iter().filter(|root| fence.starts_with(root)) {
                held.extend(
                    fence
                        .ancestors()
                        .skip(1)
                        .take_while(|folder| folder.starts_with(root) && folder != root)
                        .map(Path::to_path_buf),
                );
            }
        }
        self.held = held.into_iter().collect();
        self.open = Some(open);
        self
    }

    /// Gives the calling thread a mount namespace of its own, in a user namespace of its own
    /// for [`Namespace::User`] (the caller is then a process with one thread), and makes the
    /// binds in it. Every process the thread starts from now on is in that namespace; the loop's
    /// other threads are not. The first process it starts is the first of a PID namespace of
    /// its own, too: there the loop's processes have no id, so no signal reaches them whatever
    /// the kernel's Landlock (see [`super::launcher`]). When that first process ends, the
    /// kernel ends every other in its namespace.
    pub fn enter(&self, namespace: Namespace) -> io::Result<()> {
        let none: Option<&str> = None;
        match namespace {
            Namespace::Thread => unshare(CloneFlags::CLONE_NEWNS | CloneFlags::CLONE_NEWPID)?,
            Namespace::User => enter_user_namespace()?,
        }
        // Nothing done here may reach the loop's namespace.
        mount(none, "/", none, MsFlags::MS_REC | MsFlags::MS_PRIVATE, none)?;
        if let Err(error) = fresh_terminals() {
            tracing::debug!(%error, "no terminals of its own: the host's stay reachable");
        }
        for path in &self.pinned {
            bind(path, MsFlags::MS_REC)?;
        }
        for path in &self.held {
            match bind(path, MsFlags::MS_REC) {
                Ok(()) | Err(nix::errno::Errno::ENOENT | nix::errno::Errno::ENOTDIR) => {}
                Err(error) => return Err(error.into()),
            }
        }
        // A folder the delegate may write that is gone meanwhile (another process's temp
        // folder, in a split grant) needs no bind; one that cannot be bound leaves every mount
        // as it was (Landlock still holds the writes), so that no honest write meets EROFS.
        let mut open_bound = true;
        for path in self.open.iter().flatten() {
            if self.pinned.contains(path) {
                continue;
            }
            match bind(path, MsFlags::MS_REC) {
                Ok(()) | Err(nix::errno::Errno::ENOENT | nix::errno::Errno::ENOTDIR) => {}
                Err(_) => open_bound = false,
            }
        }
        if let Some(scratch) = self.scratch.as_ref().filter(|_| !self.private.is_empty()) {
            make_private(&self.private, scratch, namespace)?;
            // Shared memory is each run's own too: a fresh `/dev/shm`, gone with it. Where it
            // cannot be made, the shared one stays (a delegate may write it, as before).
            let fresh = mount(
                Some("tmpfs"),
                SHARED_MEMORY,
                Some("tmpfs"),
                MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
                Some("mode=1777"),
            );
            if let Err(error) = fresh {
                tracing::debug!(%error, "no /dev/shm of its own");
            }
        }
        // A fenced folder bound over itself with what is bound inside it (the open folders it
        // holds), then made read-only: its mount alone, those inside stay writable.
        for path in self.fenced.iter().filter(|_| self.open.is_some()) {
            let fenced = bind(path, MsFlags::MS_REC).and_then(|()| {
                let keep = nix::sys::statvfs::statvfs(path).map_or(MsFlags::empty(), kept_flags);
                remount_read_only(path, keep)
            });
            if fenced.is_err() {
                tracing::warn!(folder = %path.display(), "the user's tree could not be made read-only");
            }
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
            remount_read_only(path, *keep)?;
        }
        // A remount reaches only its own mount: a mount below a sealed folder (a submodule's
        // git dir on a file system of its own) is made read-only in turn, but for the own files.
        // (The calling thread's own view: `/proc/self` is the process's first thread's.)
        let mounted = mount_points(&std::fs::read("/proc/thread-self/mountinfo")?);
        for point in mounted.iter().filter(|point| {
            self.sealed
                .iter()
                .any(|(seal, _)| point.starts_with(seal) && *point != seal)
                && !self.own.contains(point)
        }) {
            let keep = nix::sys::statvfs::statvfs(point).map_or(MsFlags::empty(), kept_flags);
            remount_read_only(point, keep)?;
        }
        if !open_bound {
            tracing::warn!(
                "a folder delegates may write could not be bound: the mounts outside the tree \
                 stay writable (Landlock still holds the writes)"
            );
        }
        if let Some(open) = self.open.as_ref().filter(|_| open_bound) {
            // The own files' binds (a verdict in a state dir outside the tree) stay writable.
            let open: Vec<PathBuf> = open.iter().chain(&self.own).cloned().collect();
            close_outside(
                &open,
                &mount_points(&std::fs::read("/proc/thread-self/mountinfo")?),
            );
        }
        // The working folder was found before the binds were made, so it is still the folder
        // beneath them: from there `sealed/x` would reach the folder the seal covers. Found
        // again by its path, it is the folder on top.
        let here = std::env::current_dir()?;
        std::env::set_current_dir(here)?;
        Ok(())
    }
}

/// Mounts a tmpfs at `scratch` and, over each of `folders`, an overlay whose lower layer is the
/// folder and whose upper layer is on that tmpfs. In a user namespace the overlay keeps its own
/// attributes in `user.` ones (`userxattr`).
fn make_private(folders: &[PathBuf], scratch: &Path, namespace: Namespace) -> io::Result<()> {
    mount(
        Some("tmpfs"),
        scratch,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some("mode=0700"),
    )?;
    for (index, folder) in folders.iter().enumerate() {
        let upper = scratch.join(format!("upper-{index}"));
        let work = scratch.join(format!("work-{index}"));
        std::fs::create_dir(&upper)?;
        std::fs::create_dir(&work)?;
        let mut options = std::ffi::OsString::from("lowerdir=");
        options.push(folder);
        options.push(",upperdir=");
        options.push(&upper);
        options.push(",workdir=");
        options.push(&work);
        if namespace == Namespace::User {
            options.push(",userxattr");
        }
        mount(
            Some("overlay"),
            folder,
            Some("overlay"),
            MsFlags::empty(),
            Some(options.as_os_str()),
        )?;
    }
    Ok(())
}

/// Makes every mount in `mounted` read-only, but those at or beneath an `open` path and the
/// kernel's own. Each is tried: a mount the kernel will not remount (one hidden beneath
/// another) stays as it was, and the delegate still starts (Landlock holds its writes).
fn close_outside(open: &[PathBuf], mounted: &[PathBuf]) {
    for point in mounted {
        if kernels_own(point) || open.iter().any(|path| point.starts_with(path)) {
            continue;
        }
        let keep = nix::sys::statvfs::statvfs(point).map_or(MsFlags::empty(), kept_flags);
        let _ = remount_read_only(point, keep);
    }
}

/// The kernel's own file systems (`/proc`, `/sys`, `/dev`): what is written there is not a file
/// (a device node is written even on a read-only mount).
fn kernels_own(path: &Path) -> bool {
    ["/proc", "/sys", "/dev"]
        .iter()
        .any(|top| path.starts_with(top))
}

/// Makes a user namespace and a mount namespace in it, with the caller's uid and gid mapped to
/// themselves: it keeps every right it had on files, and gains the power over mounts that the
/// binds need. The supplementary groups stay (their checks are made as before).
fn enter_user_namespace() -> io::Result<()> {
    let (uid, gid) = (nix::unistd::geteuid(), nix::unistd::getegid());
    unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS | CloneFlags::CLONE_NEWPID)?;
    // The kernel takes an unprivileged gid map only once setgroups is denied.
    std::fs::write("/proc/self/setgroups", "deny")?;
    std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1\n"))?;
    std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1\n"))?;
    Ok(())
}

/// The mount points a `mountinfo` lists (its fifth field), with the kernel's octal
/// escapes (`\040` for a space, `\011`, `\012`, `\134`) undone.
pub(crate) fn mount_points(mountinfo: &[u8]) -> Vec<PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    mountinfo
        .split(|&byte| byte == b'\n')
        .filter_map(|line| line.split(|&byte| byte == b' ').nth(4))
        .map(|escaped| {
            let mut point = Vec::with_capacity(escaped.len());
            let mut rest = escaped;
            while let Some((&byte, tail)) = rest.split_first() {
                let octal = tail
                    .get(..3)
                    .filter(|digits| {
                        byte == b'\\' && digits.iter().all(|d| (b'0'..=b'7').contains(d))
                    })
                    .map(|digits| digits.iter().fold(0u32, |n, d| n * 8 + u32::from(d - b'0')))
                    .and_then(|value| u8::try_from(value).ok());
                match octal {
                    Some(value) => {
                        point.push(value);
                        rest = &tail[3..];
                    }
                    None => {
                        point.push(byte);
                        rest = tail;
                    }
                }
            }
            PathBuf::from(std::ffi::OsString::from_vec(point))
        })
        .collect()
}

/// Makes the mount at `path` read-only, keeping the flags `keep` (a remount sets them anew).
fn remount_read_only(path: &Path, keep: MsFlags) -> nix::Result<()> {
    let read_only = MsFlags::MS_REMOUNT | MsFlags::MS_BIND | MsFlags::MS_RDONLY;
    mount(
        None::<&str>,
        path,
        None::<&str>,
        read_only | keep,
        None::<&str>,
    )
}

/// Mounts a fresh instance of the terminals at [`TERMINALS`], and binds its `ptmx` over
/// [`NEW_TERMINAL`].
fn fresh_terminals() -> nix::Result<()> {
    mount(
        Some("devpts"),
        TERMINALS,
        Some("devpts"),
        MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
        Some("newinstance,ptmxmode=0666,mode=0620"),
    )?;
    let own = Path::new(TERMINALS).join("ptmx");
    mount(
        Some(own.as_path()),
        NEW_TERMINAL,
        None::<&str>,
        MsFlags::MS_BIND,
        None::<&str>,
    )
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
