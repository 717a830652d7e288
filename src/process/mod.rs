//! Runs one shell command in its own process group, with stdout and stderr on one pipe (so they
//! interleave in arrival order, as a CI log shows them), a deadline, a grace period between SIGTERM
//! and SIGKILL, and cancellation. When it returns, no process of the group is left, nor (once the
//! loop is their reaper, see [`contain_descendants`]) any process it started that left the group.

use std::ffi::OsString;
use std::io::{self, PipeReader, Read};
use std::os::fd::AsFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{Signal, killpg};
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
use nix::unistd::Pid;

use crate::cancel::Cancel;

pub mod confined;
mod describe;
mod leftovers;
mod mark;
mod output;

pub use describe::{describe_end, humanize};
pub use leftovers::{Leftover, NAMED_LEFTOVERS, contain_descendants, name_leftovers};
pub use mark::{MARK_VARIABLE, kill_marked, run_mark};
pub use output::HeadTail;

/// How long output may stay open after the command itself exited (background processes still
/// writing) before the rest of the group is stopped.
const LINGER_AFTER_EXIT: Duration = Duration::from_secs(2);
/// How long to wait for the pipe to close after SIGKILL before giving up on it (a process that
/// left the group still holds it).
const ABANDON_AFTER_KILL: Duration = Duration::from_secs(2);
/// The longest grace between SIGTERM and SIGKILL when the run is cancelled: CI systems give the
/// whole job only a few seconds after their own SIGTERM.
const CANCEL_GRACE: Duration = Duration::from_secs(3);
/// How often the supervisor looks at the clock, the child and the cancel flag.
const TICK: Duration = Duration::from_millis(50);
const CHUNK: usize = 64 * 1024;

/// What to run.
#[derive(Debug, Clone, Copy)]
pub struct ProcessSpec<'a> {
    pub shell_command: &'a str,
    pub cwd: &'a Path,
    pub env: &'a [(String, String)],
    /// Variables of this process the command must not see (the keys of http delegates).
    pub env_remove: &'a [String],
    pub timeout: Duration,
    pub kill_grace: Duration,
    /// Stop the group when it prints nothing for this long.
    pub idle_timeout: Option<Duration>,
    /// A file given to the command as its stdin (else stdin is empty).
    pub stdin: Option<&'a Path>,
    /// A program and its arguments that start the shell (the confining launcher); empty: none.
    pub launcher: &'a [OsString],
    /// Set (by the output handler) to stop the group at once, without a grace: a delegate that
    /// passed its spending cap.
    pub stop: Option<&'a std::sync::atomic::AtomicBool>,
}

/// Why the supervisor stopped the group before the command ended on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interruption {
    Deadline,
    Cancelled,
    /// The command exited but processes it left behind kept the output open.
    LeftoverProcesses,
    /// Nothing was printed for the idle timeout.
    Idle,
    /// It passed its spending cap (see [`ProcessSpec::stop`]).
    SpendingCap,
}

/// How the process ended (the default: it never started).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessEnd {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub duration: Duration,
    pub stopped: Option<Interruption>,
    /// The pipe was still open after SIGKILL; the rest of the output was not read.
    pub output_abandoned: bool,
    /// Processes it started that were still running outside its group when it ended: killed.
    pub leftovers: Vec<Leftover>,
}

/// Why a process could not be run to its end.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("could not start: {0}")]
    Spawn(#[source] io::Error),
    /// The output handler failed (writing the log); the group was stopped.
    #[error("{0}")]
    Output(#[source] io::Error),
    #[error("lost track of the process: {0}")]
    Supervise(#[source] io::Error),
}

/// Runs `spec` and hands every chunk of its output to `on_output`. An error from `on_output`
/// stops the group and is returned.
pub fn run_in_group(
    spec: ProcessSpec<'_>,
    cancel: &Cancel,
    on_output: &mut dyn FnMut(&[u8]) -> io::Result<()>,
) -> Result<ProcessEnd, ProcessError> {
    run_in_group_with(spec, &mut Command::spawn, cancel, on_output)
}

/// [`run_in_group`], with the command started by `spawn` (from a confined thread, say).
pub fn run_in_group_with(
    spec: ProcessSpec<'_>,
    spawn: &mut dyn FnMut(&mut Command) -> io::Result<Child>,
    cancel: &Cancel,
    on_output: &mut dyn FnMut(&[u8]) -> io::Result<()>,
) -> Result<ProcessEnd, ProcessError> {
    let (reader, writer) = io::pipe().map_err(ProcessError::Spawn)?;
    let mut command = match spec.launcher.split_first() {
        Some((program, arguments)) => {
            let mut command = Command::new(program);
            command.args(arguments).arg("sh");
            command
        }
        None => Command::new("sh"),
    };
    for name in spec.env_remove {
        command.env_remove(name);
    }
    command
        .arg("-c")
        .arg(spec.shell_command)
        .current_dir(spec.cwd)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .env(MARK_VARIABLE, run_mark())
        .stdin(match spec.stdin {
            Some(path) => Stdio::from(std::fs::File::open(path).map_err(ProcessError::Spawn)?),
            None => Stdio::null(),
        })
        .stderr(writer.try_clone().map_err(ProcessError::Spawn)?)
        .stdout(writer)
        .process_group(0);
    let started = Instant::now();
    let mut child = spawn(&mut command).map_err(ProcessError::Spawn)?;
    // The command holds our copies of the pipe's write end: drop it, or the pipe never closes.
    drop(command);
    let pid = Pid::from_raw(
        i32::try_from(child.id()).map_err(|e| ProcessError::Supervise(io::Error::other(e)))?,
    );

    let guard = GroupGuard(pid);
    let supervised = supervise(pid, &reader, spec, started, cancel, on_output);
    // The leader is not reaped yet (its zombie keeps the group id from being reused), so this
    // reaches only what is left of this group.
    drop(guard);
    let status = child.wait().map_err(ProcessError::Supervise);
    // Before anything the command did is looked at: whatever it left running, however it
    // detached, is stopped.
    let leftovers = leftovers::stop_leftovers(Some(pid));
    let status = status?;
    let (stopped, exited_at, output_abandoned) = supervised?;
    Ok(ProcessEnd {
        exit_code: status.code(),
        signal: status.signal(),
        duration: exited_at.unwrap_or_else(Instant::now) - started,
        stopped,
        output_abandoned,
        leftovers,
    })
}

#[derive(Debug, Clone, Copy)]
struct Stopping {
    reason: Interruption,
    since: Instant,
    killed: bool,
}

type Supervised = (Option<Interruption>, Option<Instant>, bool);

fn supervise(
    pid: Pid,
    reader: &PipeReader,
    spec: ProcessSpec<'_>,
    started: Instant,
    cancel: &Cancel,
    on_output: &mut dyn FnMut(&[u8]) -> io::Result<()>,
) -> Result<Supervised, ProcessError> {
    let mut buffer = vec![0u8; CHUNK];
    let mut reader_eof = false;
    let mut exited_at = None;
    let mut last_output = started;
    let mut stopping: Option<Stopping> = None;
    loop {
        if !reader_eof {
            if wait_readable(reader, TICK).map_err(ProcessError::Supervise)? {
                match (&*reader).read(&mut buffer) {
                    Ok(0) => reader_eof = true,
                    Ok(n) => {
                        last_output = Instant::now();
                        on_output(&buffer[..n]).map_err(ProcessError::Output)?;
                    }
                    Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                    Err(error) => return Err(ProcessError::Supervise(error)),
                }
            }
        } else if exited_at.is_none() {
            std::thread::sleep(TICK);
        }
        if exited_at.is_none() && leader_exited(pid).map_err(ProcessError::Supervise)? {
            exited_at = Some(Instant::now());
        }
        if exited_at.is_some() && reader_eof {
            return Ok((stopping.map(|s| s.reason), exited_at, false));
        }
        let now = Instant::now();
        match &mut stopping {
            None => {
                let reason = if spec
                    .stop
                    .is_some_and(|stop| stop.load(std::sync::atomic::Ordering::Relaxed))
                {
                    Some(Interruption::SpendingCap)
                } else if cancel.is_requested() {
                    Some(Interruption::Cancelled)
                } else if now - started >= spec.timeout {
                    Some(Interruption::Deadline)
                } else if exited_at.is_some_and(|at| now - at >= LINGER_AFTER_EXIT) {
                    Some(Interruption::LeftoverProcesses)
                } else if exited_at.is_none()
                    && spec
                        .idle_timeout
                        .is_some_and(|idle| now - last_output >= idle)
                {
                    Some(Interruption::Idle)
                } else {
                    None
                };
                if let Some(reason) = reason {
                    tracing::debug!(?reason, %pid, "stopping process group");
                    signal_group(pid, Signal::SIGTERM);
                    stopping = Some(Stopping {
                        reason,
                        since: now,
                        killed: false,
                    });
                }
            }
            Some(state)
                if !state.killed && now - state.since >= grace(state.reason, spec, cancel) =>
            {
                signal_group(pid, Signal::SIGKILL);
                state.killed = true;
                state.since = now;
            }
            Some(state) if state.killed && now - state.since >= ABANDON_AFTER_KILL => {
                return Ok((Some(state.reason), exited_at, !reader_eof));
            }
            Some(_) => {}
        }
    }
}

/// Kills what is left of the group when dropped: on every way out of [`run_in_group`], a panic
/// included.
struct GroupGuard(Pid);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        let _ = killpg(self.0, Signal::SIGKILL);
    }
}

/// The time between SIGTERM and SIGKILL: the check's own, shortened when the run is cancelled,
/// and none at all when cancelled twice.
fn grace(reason: Interruption, spec: ProcessSpec<'_>, cancel: &Cancel) -> Duration {
    if cancel.is_urgent() || reason == Interruption::SpendingCap {
        Duration::ZERO
    } else if reason == Interruption::Cancelled || cancel.is_requested() {
        spec.kill_grace.min(CANCEL_GRACE)
    } else {
        spec.kill_grace
    }
}

fn signal_group(pid: Pid, signal: Signal) {
    if let Err(error) = killpg(pid, signal)
        && error != Errno::ESRCH
    {
        tracing::warn!(%pid, %error, "could not signal process group");
    }
}

/// Has the group leader exited? Looks without reaping it.
fn leader_exited(pid: Pid) -> io::Result<bool> {
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
    match waitid(Id::Pid(pid), flags) {
        Ok(WaitStatus::StillAlive) => Ok(false),
        Ok(_) | Err(Errno::ECHILD) => Ok(true),
        Err(Errno::EINTR) => Ok(false),
        Err(error) => Err(error.into()),
    }
}

fn wait_readable(reader: &PipeReader, timeout: Duration) -> io::Result<bool> {
    let millis = u16::try_from(timeout.as_millis()).unwrap_or(u16::MAX);
    let mut fds = [PollFd::new(reader.as_fd(), PollFlags::POLLIN)];
    match poll(&mut fds, PollTimeout::from(millis)) {
        Ok(0) | Err(Errno::EINTR) => Ok(false),
        Ok(_) => Ok(true),
        Err(error) => Err(error.into()),
    }
}
