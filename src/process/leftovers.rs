//! What a command left running when it ended. The loop is a child subreaper, so a process that
//! left the command's group (`setsid`, a double fork) is still one of its descendants: after
//! every command each one still alive is found in `/proc`, stopped (SIGSTOP first, so that none
//! forks away while the others are killed), killed, reaped and named.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::{Signal, kill};
use nix::sys::wait::{WaitPidFlag, waitpid};
use nix::unistd::Pid;

/// Set once the process is a subreaper: only then are descendants swept.
static CONTAINING: AtomicBool = AtomicBool::new(false);

/// How long descendants that keep appearing (or will not die) are chased before the loop gives
/// up on them and says so.
const GIVE_UP_AFTER: Duration = Duration::from_secs(10);
/// A pause between looks when nothing new appeared but something has yet to die.
const LOOK_AGAIN: Duration = Duration::from_millis(2);
/// Characters of a command line kept in a report.
const COMMAND_LINE: usize = 200;
/// Leftovers named one by one (their command lines read); the rest are counted.
pub const NAMED_LEFTOVERS: usize = 10;

/// A process a command left running after it ended; killed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leftover {
    pub pid: i32,
    /// Its command line, redacted and cut to 200 characters.
    pub command: String,
}

impl Leftover {
    /// One line for reports.
    pub fn describe(&self) -> String {
        format!("pid {} (`{}`)", self.pid, self.command)
    }
}

/// The first [`NAMED_LEFTOVERS`] of `leftovers` by pid and command line, and how many more.
pub fn name_leftovers(leftovers: &[Leftover]) -> String {
    let mut named: Vec<String> = leftovers
        .iter()
        .take(NAMED_LEFTOVERS)
        .map(Leftover::describe)
        .collect();
    if leftovers.len() > NAMED_LEFTOVERS {
        named.push(format!("and {} more", leftovers.len() - NAMED_LEFTOVERS));
    }
    named.join(", ")
}

/// Makes this process the reaper of every process its commands start, however they detach,
/// and turns on the sweep after each command. For the binary's commands only: the sweep kills
/// every descendant, which is right only where one command runs at a time (the loop's gate
/// checks and delegates run one after another).
pub fn contain_descendants() -> std::io::Result<()> {
    nix::sys::prctl::set_child_subreaper(true)?;
    CONTAINING.store(true, Ordering::SeqCst);
    Ok(())
}

/// What `/proc/<pid>/stat` says of a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    parent: i32,
    group: i32,
    state: char,
}

impl Entry {
    fn is_dead(self) -> bool {
        matches!(self.state, 'Z' | 'X' | 'x')
    }
}

/// Parses `pid (comm) state ppid pgrp …`; the name may hold spaces and parentheses.
fn parse_stat(stat: &str) -> Option<Entry> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    let mut fields = after_name.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let parent = fields.next()?.parse().ok()?;
    let group = fields.next()?.parse().ok()?;
    Some(Entry {
        parent,
        group,
        state,
    })
}

/// Every process in `/proc`, by pid.
fn process_table() -> BTreeMap<i32, Entry> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return BTreeMap::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            Some((pid, parse_stat(&stat)?))
        })
        .collect()
}

/// Every process whose chain of parents leads to `ancestor`.
fn descendants(ancestor: i32, table: &BTreeMap<i32, Entry>) -> BTreeSet<i32> {
    let mut children: BTreeMap<i32, Vec<i32>> = BTreeMap::new();
    for (pid, entry) in table {
        children.entry(entry.parent).or_default().push(*pid);
    }
    let mut found = BTreeSet::new();
    let mut stack = vec![ancestor];
    while let Some(parent) = stack.pop() {
        for child in children.get(&parent).into_iter().flatten() {
            if found.insert(*child) {
                stack.push(*child);
            }
        }
    }
    found
}

/// The command line of `pid`, redacted, or its name when it has none.
fn command_line(pid: i32) -> String {
    let mut bytes = Vec::new();
    let proc_dir = std::path::PathBuf::from(format!("/proc/{pid}"));
    if let Ok(file) = std::fs::File::open(proc_dir.join("cmdline")) {
        let _ = file.take(4096).read_to_end(&mut bytes);
    }
    for byte in &mut bytes {
        if *byte == 0 {
            *byte = b' ';
        }
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        bytes = std::fs::read(proc_dir.join("comm")).unwrap_or_default();
    }
    let text = String::from_utf8_lossy(&crate::secrets::redacted(&bytes))
        .trim()
        .to_string();
    match text.char_indices().nth(COMMAND_LINE) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// Stops, kills and reaps every descendant of this process (when [`contain_descendants`] made
/// it their reaper); returns those that were alive, but for members of `group` (the command's
/// own group, killed with it).
pub(super) fn stop_leftovers(group: Option<Pid>) -> Vec<Leftover> {
    if !CONTAINING.load(Ordering::SeqCst) {
        return Vec::new();
    }
    let me = i32::try_from(std::process::id()).unwrap_or(i32::MAX);
    let group = group.map(Pid::as_raw);
    let mut stopped = BTreeSet::new();
    let mut leftovers = Vec::new();
    let give_up = Instant::now() + GIVE_UP_AFTER;
    loop {
        let table = process_table();
        let found = descendants(me, &table);
        if found.is_empty() {
            break;
        }
        if Instant::now() >= give_up {
            tracing::warn!(
                ?found,
                "processes left behind would not die: given up on them"
            );
            break;
        }
        // Stop every new one, then look again: a stopped process forks no more, so the set
        // stops growing before anything is killed.
        let mut new = false;
        for pid in &found {
            let entry = table[pid];
            if entry.is_dead() || !stopped.insert(*pid) {
                continue;
            }
            new = true;
            let _ = kill(Pid::from_raw(*pid), Signal::SIGSTOP);
            if Some(entry.group) != group {
                // Only those named are read: a fork bomb leaves thousands.
                let command = if leftovers.len() < NAMED_LEFTOVERS {
                    command_line(*pid)
                } else {
                    String::new()
                };
                let leftover = Leftover { pid: *pid, command };
                tracing::debug!(leftover = %leftover.describe(), "a process was left running: killing it");
                leftovers.push(leftover);
            }
        }
        if new {
            continue;
        }
        for pid in &found {
            let _ = kill(Pid::from_raw(*pid), Signal::SIGKILL);
        }
        reap(me);
        std::thread::sleep(LOOK_AGAIN);
    }
    if !leftovers.is_empty() {
        tracing::warn!(
            "{} process(es) were left running: killed: {}",
            leftovers.len(),
            name_leftovers(&leftovers)
        );
    }
    leftovers
}

/// Reaps the dead among this process's children (orphans handed to it as their reaper).
fn reap(me: i32) {
    for (pid, entry) in process_table() {
        if entry.parent == me && entry.is_dead() {
            match waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG)) {
                Ok(_) | Err(Errno::ECHILD) => {}
                Err(error) => tracing::debug!(pid, %error, "could not reap a process"),
            }
        }
    }
}

#[cfg(test)]
#[path = "leftovers_tests.rs"]
mod tests;
