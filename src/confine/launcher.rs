//! The launcher: the loop's own binary, started as `refine-loop __confine <walls> -- <command>`,
//! confines itself and then starts the delegate's command, the first process of a PID namespace
//! of its own, and ends as it ends. The loop needs it when it cannot make a mount namespace
//! itself (it is not root): only a process with one thread may make a user namespace, and the
//! loop has several, while the launcher has one. It makes the user and mount namespaces and the binds, drops the capabilities and
//! takes the ruleset on (see [`super::kernel`]), in that order; when any step fails it says why
//! and exits with [`FAILED`], and the delegate never runs.
//!
//! It is started as `/proc/self/exe`: the very file the loop runs from, even if what is at its
//! path was replaced since (a delegate that rewrote a binary in the tree does not reach here).

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

use super::kernel::Confinement;
use super::namespace::{MountPlan, Namespace};
use super::walls::Grant;

/// The hidden subcommand that runs the launcher.
pub const SUBCOMMAND: &str = "__confine";
/// The launcher's exit code when it could not confine itself, as a shell's for a command it
/// cannot run.
pub const FAILED: i32 = 126;
/// The program that is the loop's own binary, in the process that starts it.
const SELF: &str = "/proc/self/exe";

/// What the launcher is told: where the delegate may write and what is sealed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Launch {
    pub abi: u32,
    /// Every right the loop asks for is in the kernel.
    pub full: bool,
    pub tree: PathBuf,
    pub sealed: Vec<PathBuf>,
    pub own: Vec<PathBuf>,
    /// The folders the delegate may write outside the tree, whose mounts stay writable.
    pub open: Vec<PathBuf>,
    /// Read-only even inside those (the user's tree, in worktree mode).
    pub fenced: Vec<PathBuf>,
    /// Written in a layer of the delegate's own (see [`MountPlan::private`]), on a tmpfs at
    /// `scratch`.
    pub private: Vec<PathBuf>,
    pub scratch: Option<PathBuf>,
    pub grants: Vec<Grant>,
}

/// The program and arguments that start a delegate as `launch` says: put the delegate's command
/// after them.
pub fn arguments(launch: &Launch) -> Vec<OsString> {
    let mut arguments: Vec<OsString> = vec![SELF.into(), SUBCOMMAND.into()];
    let mut add = |flag: &str, value: &OsStr| {
        arguments.push(flag.into());
        arguments.push(value.to_owned());
    };
    add("--abi", OsStr::new(&launch.abi.to_string()));
    add("--tree", launch.tree.as_os_str());
    let listed = [
        ("--seal", &launch.sealed),
        ("--own", &launch.own),
        ("--open", &launch.open),
        ("--fence", &launch.fenced),
        ("--private", &launch.private),
    ];
    for (flag, paths) in listed {
        for path in paths {
            add(flag, path.as_os_str());
        }
    }
    if let Some(scratch) = &launch.scratch {
        add("--scratch", scratch.as_os_str());
    }
    for grant in &launch.grants {
        match grant {
            Grant::Beneath(path) => add("--dir", path.as_os_str()),
            Grant::File(path) => add("--file", path.as_os_str()),
        }
    }
    if launch.full {
        arguments.push("--full".into());
    }
    arguments.push("--".into());
    arguments
}

/// Runs the launcher on the arguments after [`SUBCOMMAND`]: the delegate's exit status, or why
/// it could not be started. The delegate is the first process of the launcher's PID namespace
/// (see [`super::namespace`]), so the launcher waits for it rather than becoming it.
pub fn main(mut arguments: impl Iterator<Item = OsString>) -> io::Result<ExitStatus> {
    let launch = parse(&mut arguments)?;
    let command: Vec<OsString> = arguments.collect();
    let Some((program, rest)) = command.split_first() else {
        return Err(io::Error::other("no command to start after `--`"));
    };
    let mut plan = MountPlan::new(&launch.tree, &launch.sealed, &launch.own)
        .read_only_outside(&launch.open, &launch.fenced);
    if let Some(scratch) = &launch.scratch {
        plan = plan.private(&launch.private, scratch);
    }
    let confined = Confinement::new(
        &launch.grants,
        launch.full,
        launch.abi,
        Some((plan, Namespace::User)),
    )
    .and_then(Confinement::take_on);
    confined?;
    Command::new(program).args(rest).status()
}

/// The launcher's own exit code for the delegate's `status`: the same code, or a shell's for
/// the signal that ended it (128 + its number).
pub fn exit_code(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|signal| 128 + signal))
        .unwrap_or(FAILED)
}

/// Reads the launcher's own arguments, up to `--`.
fn parse(arguments: &mut impl Iterator<Item = OsString>) -> io::Result<Launch> {
    let mut launch = Launch::default();
    let invalid = |what: String| io::Error::new(io::ErrorKind::InvalidInput, what);
    loop {
        let Some(flag) = arguments.next() else {
            return Err(invalid("the launcher's arguments end without `--`".into()));
        };
        let flag = flag.to_string_lossy().into_owned();
        match flag.as_str() {
            "--" => return Ok(launch),
            "--full" => {
                launch.full = true;
                continue;
            }
            _ => {}
        }
        let value = arguments
            .next()
            .ok_or_else(|| invalid(format!("`{flag}` needs a value")))?;
        let path = PathBuf::from(&value);
        match flag.as_str() {
            "--abi" => {
                launch.abi = value
                    .to_str()
                    .and_then(|abi| abi.parse().ok())
                    .ok_or_else(|| invalid(format!("`--abi {}` is no ABI", path.display())))?;
            }
            "--tree" => launch.tree = path,
            "--seal" => launch.sealed.push(path),
            "--own" => launch.own.push(path),
            "--open" => launch.open.push(path),
            "--fence" => launch.fenced.push(path),
            "--private" => launch.private.push(path),
            "--scratch" => launch.scratch = Some(path),
            "--dir" => launch.grants.push(Grant::Beneath(path)),
            "--file" => launch.grants.push(Grant::File(path)),
            _ => return Err(invalid(format!("`{flag}` is no launcher argument"))),
        }
    }
}

/// Whether the launcher can confine a command here: started on `folder` with `sealed` in it, the
/// command must be able to create an entry at the folder's top and unable to write in `sealed`.
pub fn probe(folder: &Path, sealed: &Path, abi: u32) -> bool {
    let launch = Launch {
        abi,
        tree: folder.to_path_buf(),
        sealed: vec![sealed.to_path_buf()],
        grants: vec![Grant::Beneath(folder.to_path_buf())],
        ..Launch::default()
    };
    ran(
        &launch,
        folder,
        "if (: > sealed/x); then exit 1; fi; : > made",
    ) && folder.join("made").is_file()
        && !sealed.join("x").exists()
}

/// Whether the launcher can make `cache` (in `folder`, holding `x`) private to a command here:
/// the command must write `x` and read back what it wrote, and `x` must be as it was after.
pub fn probe_private(folder: &Path, cache: &Path, scratch: &Path, abi: u32) -> bool {
    let before = std::fs::read(cache.join("x")).ok();
    let launch = Launch {
        abi,
        tree: folder.to_path_buf(),
        private: vec![cache.to_path_buf()],
        scratch: Some(scratch.to_path_buf()),
        grants: vec![Grant::Beneath(folder.to_path_buf())],
        ..Launch::default()
    };
    ran(
        &launch,
        folder,
        "echo private > cache/x && grep -q private cache/x",
    ) && before.is_some()
        && std::fs::read(cache.join("x")).ok() == before
}

/// Whether `script` succeeds, launched as `launch` says in `folder`.
fn ran(launch: &Launch, folder: &Path, script: &str) -> bool {
    let launched = arguments(launch);
    let Some((program, rest)) = launched.split_first() else {
        return false;
    };
    Command::new(program)
        .args(rest)
        .args(["sh", "-c", script])
        .current_dir(folder)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

#[cfg(test)]
#[path = "launcher_tests.rs"]
mod tests;
