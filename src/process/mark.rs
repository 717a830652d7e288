//! The run's mark: every command the loop starts (a gate check, a delegate) carries it in its
//! environment, and so do the processes those start, wherever they move (`setsid`, a double
//! fork). When the loop itself was killed, `refine-loop recover` finds by it what the run left
//! running, and stops it before it puts anything back. A process can drop the variable, but a
//! confined delegate's cannot leave its mount namespace, where the run's store is a mount point
//! (a read-only bind): that finds them too.

use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// The variable that carries the mark.
pub const MARK_VARIABLE: &str = "REFINE_LOOP_RUN";

/// How many times the processes are looked for again (one may fork while another is stopped).
const ROUNDS: usize = 50;

/// This process's mark: its pid and the time it first asked, unique on the machine.
pub fn run_mark() -> &'static str {
    static MARK: OnceLock<String> = OnceLock::new();
    MARK.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!("{}-{nanos}", std::process::id())
    })
}

/// Stops (SIGKILL) every process whose environment carries `mark`, or in whose mount namespace
/// `store` (the run's store) is a mount point, but this one, until none is left; returns how
/// many were stopped. Processes of other users are not seen.
pub fn kill_marked(mark: &str, store: Option<&Path>) -> usize {
    let needle = format!("{MARK_VARIABLE}={mark}");
    let store = store.and_then(|store| store.canonicalize().ok());
    let own = std::process::id();
    let mut stopped = std::collections::BTreeSet::new();
    for _ in 0..ROUNDS {
        let found: Vec<i32> = marked_processes(needle.as_bytes(), store.as_deref())
            .into_iter()
            .filter(|pid| u32::try_from(*pid).ok() != Some(own))
            .collect();
        if found.is_empty() {
            break;
        }
        // Stopped first, all of them, so none forks again while the others die.
        for pid in &found {
            let _ = kill(Pid::from_raw(*pid), Signal::SIGSTOP);
        }
        for pid in &found {
            let _ = kill(Pid::from_raw(*pid), Signal::SIGKILL);
            stopped.insert(*pid);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    stopped.len()
}

/// The live processes whose environment holds the entry `needle` (a zombie's is empty), or
/// whose mount namespace has a mount at `store`.
fn marked_processes(needle: &[u8], store: Option<&Path>) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|environ| environ.split(|b| *b == 0).any(|item| item == needle))
                || store.is_some_and(|store| {
                    std::fs::read(format!("/proc/{pid}/mountinfo")).is_ok_and(|mountinfo| {
                        crate::confine::namespace::mount_points(&mountinfo)
                            .iter()
                            .any(|point| point == store)
                    })
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marked_process_that_left_its_group_is_found_and_stopped() {
        let mark = format!("test-{}", run_mark());
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg("setsid sleep 30 & wait")
            .env(MARK_VARIABLE, &mark)
            .spawn()
            .unwrap();
        // Both the shell and the sleep it started carry the mark.
        let needle = format!("{MARK_VARIABLE}={mark}");
        for _ in 0..500 {
            if marked_processes(needle.as_bytes(), None).len() >= 2 {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(kill_marked(&mark, None), 2);
        let _ = child.wait();
        assert!(marked_processes(needle.as_bytes(), None).is_empty());
        assert_eq!(kill_marked("no such mark", None), 0);
    }
}
