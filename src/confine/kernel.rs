//! The Landlock side: the kernel's ABI, and a ruleset built from the grants that a fresh thread
//! takes on before it starts the delegate. Landlock restricts the calling thread, and every
//! process it starts inherits the restriction and can never shed it; the loop's own threads stay
//! free. So no code runs between fork and exec, and every path is opened before. When the
//! delegate gets a mount namespace, the same thread makes it and its binds first (Landlock
//! forbids mounting afterwards). Where the launcher makes them ([`super::launcher`]), it takes
//! the same [`Confinement`] on, and the loop only starts it.

use std::ffi::OsString;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::{Child, Command};

use landlock::{
    ABI, AccessFs, BitFlags, LandlockStatus, PathBeneath, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, RulesetStatus, Scope,
};
use nix::libc;

use super::namespace::{MountPlan, NEW_TERMINAL, Namespace, TERMINALS};
use super::walls::Grant;

/// The first ABI that scopes signals: a delegate cannot signal a process outside its domain
/// (the loop, the gate, the user's shell).
pub const SIGNAL_SCOPE: u32 = 6;

/// The capabilities a delegate started by root never has: what would let it make a file the
/// rollback cannot put back (`chattr +i`, `+a`), write a disk through a device node it made, or
/// reach past the file system's rules (mounts, raw I/O, file handles, modules, BPF, ptrace), or
/// change the host's network (routes, addresses, raw packets), another's shared memory or the
/// terminal. Dropped from the bounding set of the thread that starts it, so its programs never gain them.
const DROPPED: [caps::Capability; 21] = [
    caps::Capability::CAP_NET_ADMIN,
    caps::Capability::CAP_NET_RAW,
    caps::Capability::CAP_IPC_OWNER,
    caps::Capability::CAP_SYS_TTY_CONFIG,
    caps::Capability::CAP_SYSLOG,
    caps::Capability::CAP_SYS_PACCT,
    caps::Capability::CAP_SETFCAP,
    caps::Capability::CAP_LINUX_IMMUTABLE,
    caps::Capability::CAP_MKNOD,
    caps::Capability::CAP_SYS_ADMIN,
    caps::Capability::CAP_SYS_RAWIO,
    caps::Capability::CAP_DAC_READ_SEARCH,
    caps::Capability::CAP_SYS_MODULE,
    caps::Capability::CAP_SYS_PTRACE,
    caps::Capability::CAP_SYS_BOOT,
    caps::Capability::CAP_SYS_TIME,
    caps::Capability::CAP_MAC_ADMIN,
    caps::Capability::CAP_MAC_OVERRIDE,
    caps::Capability::CAP_BPF,
    caps::Capability::CAP_PERFMON,
    caps::Capability::CAP_AUDIT_CONTROL,
];

/// The newest ABI whose write rights the loop asks for (`ioctl_dev` came with 5; later ones add
/// no write right).
const WANTED: ABI = ABI::V5;

/// The write rights a delegate is held to; reads, execution and the rest stay free.
fn handled() -> BitFlags<AccessFs> {
    AccessFs::from_write(WANTED)
}

/// The rights on a single file: write in place.
fn file_rights() -> BitFlags<AccessFs> {
    AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev
}

/// The controlling terminal, by the name that always reaches it: written, but no device
/// `ioctl` on it, so that a delegate started from a person's terminal cannot type into the
/// shell there (`TIOCSTI`) nor change its settings. (Its own terminals, made through
/// `/dev/ptmx`, are its to drive.)
const CONTROLLING_TERMINAL: &str = "/dev/tty";

/// The kernel's Landlock ABI, `None` without Landlock. Found by restricting a throwaway thread
/// (no write anywhere), which also shows that restricting works.
pub fn kernel_abi() -> Option<u32> {
    let probe = std::thread::spawn(|| -> Option<u32> {
        let status = Ruleset::default()
            .handle_access(AccessFs::WriteFile)
            .ok()?
            .create()
            .ok()?
            .restrict_self()
            .ok()?;
        if status.ruleset == RulesetStatus::NotEnforced {
            return None;
        }
        match status.landlock {
            LandlockStatus::Available {
                effective_abi,
                kernel_abi,
            } => kernel_abi
                .and_then(|abi| u32::try_from(abi).ok())
                .or_else(|| u32::try_from(effective_abi as i32).ok()),
            _ => None,
        }
    });
    probe.join().ok().flatten()
}

/// A ruleset ready to be taken on by one delegate, and the binds of its mount namespace; or,
/// where the launcher makes them, the command line that starts it.
#[derive(Debug)]
pub struct Prepared {
    how: How,
}

#[derive(Debug)]
enum How {
    /// The thread that starts the delegate takes these on.
    Thread(Box<Confinement>),
    /// The delegate's command is started by the launcher, with these arguments before it.
    Launcher(Vec<OsString>),
}

/// What one process takes on before it starts (or becomes) the delegate.
#[derive(Debug)]
pub(super) struct Confinement {
    ruleset: RulesetCreated,
    /// Every right the loop asks for is in the kernel.
    full: bool,
    mount: Option<(MountPlan, Namespace)>,
}

impl Prepared {
    /// Opens every granted path and adds its rule (see [`Confinement::new`]); the delegate's
    /// thread makes the mount namespace of `mount` first, when there is one.
    pub fn new(
        grants: &[Grant],
        full: bool,
        abi: u32,
        mount: Option<MountPlan>,
    ) -> io::Result<Self> {
        let mount = mount.map(|plan| (plan, Namespace::Thread));
        let confinement = Confinement::new(grants, full, abi, mount)?;
        Ok(Self {
            how: How::Thread(Box::new(confinement)),
        })
    }

    /// The delegate is started by the launcher, as `arguments` (see [`super::launcher`]) say.
    pub fn launched(arguments: Vec<OsString>) -> Self {
        Self {
            how: How::Launcher(arguments),
        }
    }

    /// The program and arguments to put before the delegate's own command: none when the
    /// starting thread confines it.
    pub fn launcher(&self) -> &[OsString] {
        match &self.how {
            How::Thread(_) => &[],
            How::Launcher(arguments) => arguments,
        }
    }

    /// Starts `command` from a fresh thread that makes the mount namespace when there is a plan
    /// for one, then takes the ruleset on; refuses to start it when the kernel enforced less
    /// than it was found able to. With the launcher, `command` (which starts with
    /// [`Self::launcher`]) is started as it is.
    pub fn spawn(self, command: &mut Command) -> io::Result<Child> {
        let confinement = match self.how {
            How::Thread(confinement) => *confinement,
            How::Launcher(arguments) => {
                let given = std::iter::once(command.get_program()).chain(command.get_args());
                if !given
                    .zip(&arguments)
                    .all(|(given, launcher)| given == launcher)
                    || command.get_args().len() < arguments.len()
                {
                    return Err(io::Error::other(
                        "the delegate's command does not start with the launcher; it was not \
                         started",
                    ));
                }
                return command.spawn();
            }
        };
        std::thread::scope(|scope| {
            scope
                .spawn(move || {
                    confinement.take_on()?;
                    command.spawn()
                })
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("the confining thread panicked")))
        })
    }
}

impl Confinement {
    /// Opens every granted path (without following a link at its end) and adds its rule. A path
    /// that is gone, or changed kind since it was planned, is left out: fewer rights, never more.
    /// From ABI 6 on, the delegate's signals and abstract unix sockets stay within its own
    /// processes.
    pub(super) fn new(
        grants: &[Grant],
        full: bool,
        abi: u32,
        mount: Option<(MountPlan, Namespace)>,
    ) -> io::Result<Self> {
        let mut ruleset = Ruleset::default()
            .handle_access(handled())
            .map_err(io::Error::other)?;
        if abi >= SIGNAL_SCOPE {
            // Nor does it reach a daemon outside listening on an abstract socket (one on a
            // socket file is not the kernel's to scope yet: see the book's safety chapter).
            ruleset = ruleset
                .scope(Scope::Signal | Scope::AbstractUnixSocket)
                .map_err(io::Error::other)?;
        }
        let mut ruleset = ruleset.create().map_err(io::Error::other)?;
        for grant in grants {
            let (path, folder) = match grant {
                Grant::Beneath(path) => (path, true),
                Grant::File(path) => (path, false),
            };
            let Ok(opened) = open_path(path) else {
                continue;
            };
            let Ok(meta) = opened.metadata() else {
                continue;
            };
            let rights = if folder && meta.is_dir() {
                handled()
            } else if !folder && path == Path::new(CONTROLLING_TERMINAL) {
                AccessFs::WriteFile | AccessFs::Truncate
            } else if !folder && (meta.is_file() || is_char_device(&meta)) {
                file_rights()
            } else {
                continue;
            };
            ruleset = ruleset
                .add_rule(PathBeneath::new(opened, rights))
                .map_err(io::Error::other)?;
        }
        Ok(Self {
            ruleset,
            full,
            mount,
        })
    }

    /// Confines the calling thread, and every process it starts: the mount namespace and its
    /// binds, the capabilities dropped, the ruleset. An error when the kernel enforced less than
    /// it was found able to: the delegate must then not start.
    pub(super) fn take_on(mut self) -> io::Result<()> {
        if let Some((plan, namespace)) = &self.mount {
            plan.enter(*namespace)?;
            // A private layer is a mount of its own: Landlock goes by the folder that is there
            // now (the overlay's top), not the one it covers, whose rule was added before.
            for folder in plan.private_folders() {
                let Ok(opened) = open_path(&folder) else {
                    continue;
                };
                self.ruleset = self
                    .ruleset
                    .add_rule(PathBeneath::new(opened, handled()))
                    .map_err(io::Error::other)?;
            }
            // So are the terminals of its own (see [`super::namespace::TERMINALS`]).
            let terminals = [(TERMINALS, handled()), (NEW_TERMINAL, file_rights())];
            for (path, rights) in terminals {
                let Ok(opened) = open_path(Path::new(path)) else {
                    continue;
                };
                self.ruleset = self
                    .ruleset
                    .add_rule(PathBeneath::new(opened, rights))
                    .map_err(io::Error::other)?;
            }
        }
        drop_capabilities()?;
        let status = self.ruleset.restrict_self().map_err(io::Error::other)?;
        let enforced = match status.ruleset {
            RulesetStatus::FullyEnforced => true,
            RulesetStatus::PartiallyEnforced => !self.full,
            RulesetStatus::NotEnforced => false,
        };
        if !enforced || !status.no_new_privs {
            return Err(io::Error::other(format!(
                "the kernel did not confine the delegate as it was found able to ({:?}); it was \
                 not started",
                status.ruleset
            )));
        }
        Ok(())
    }
}

/// Drops [`DROPPED`] from the calling thread's bounding and inheritable sets, and clears its
/// ambient set, so that no program the delegate runs gains them back (root gets the bounding
/// and inheritable sets on exec). A thread without `CAP_SETPCAP` (a user's) cannot change its
/// bounding set, and needs not: under `no_new_privs`, which the ruleset sets, a program never
/// gets a capability its starter did not have. An error when one is left that could be used:
/// the delegate is then not started.
fn drop_capabilities() -> io::Result<()> {
    use caps::CapSet;
    let _ = caps::clear(None, CapSet::Ambient);
    let has = |set, capability| caps::has_cap(None, set, capability).unwrap_or(false);
    for capability in DROPPED {
        for set in [CapSet::Bounding, CapSet::Inheritable] {
            if has(set, capability) {
                let _ = caps::drop(None, set, capability);
            }
        }
        let left = [
            CapSet::Permitted,
            CapSet::Bounding,
            CapSet::Inheritable,
            CapSet::Ambient,
        ]
        .map(|set| has(set, capability));
        if usable_after_exec(left) {
            return Err(io::Error::other(format!(
                "{capability} could not be dropped for the delegate; it was not started"
            )));
        }
    }
    Ok(())
}

/// Whether a capability a thread has in its permitted, bounding, inheritable and ambient sets
/// could be had by a program it starts under `no_new_privs`: ambient ones are passed on; the
/// bounding and inheritable sets give only what the thread holds itself.
fn usable_after_exec([permitted, bounding, inheritable, ambient]: [bool; 4]) -> bool {
    ambient || (permitted && (bounding || inheritable))
}

/// `path` opened for a rule: without following a link at its end, and without reading it.
fn open_path(path: &Path) -> io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_NOFOLLOW)
        .open(path)
}

fn is_char_device(meta: &std::fs::Metadata) -> bool {
    std::os::unix::fs::FileTypeExt::is_char_device(&meta.file_type())
}

#[cfg(test)]
#[path = "kernel_tests.rs"]
mod tests;
