//! Helpers shared by the integration tests: a temporary git repository and the real binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary under test.
pub fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_refine-loop")
}

/// Where `scripts/test` installs the pinned tools the tests run.
fn tools_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools")
}

/// The folders holding the installed tools' commands, first on the PATH of every command a test
/// runs (so a plain `cargo test` after `scripts/test` finds them too).
fn tool_bins() -> [PathBuf; 3] {
    let tools = tools_dir();
    [
        tools.join("python/bin"),
        tools.join("node/node_modules/.bin"),
        // bats names its command folder in a way npm does not link into .bin.
        tools.join("node/node_modules/bats/bin"),
    ]
}

/// PATH with the installed tools first.
pub fn path_with_tools() -> std::ffi::OsString {
    let current = std::env::var_os("PATH").unwrap_or_default();
    let mut paths: Vec<PathBuf> = tool_bins().into_iter().collect();
    paths.extend(std::env::split_paths(&current));
    std::env::join_paths(paths).expect("PATH")
}

/// PYTHONPATH with the installed Python tools first (`python3 -m pytest` finds pytest there).
pub fn python_path_with_tools() -> std::ffi::OsString {
    let current = std::env::var_os("PYTHONPATH").unwrap_or_default();
    let mut paths = vec![tools_dir().join("python")];
    paths.extend(std::env::split_paths(&current));
    std::env::join_paths(paths).expect("PYTHONPATH")
}

/// A tool a test runs, by its full path: installed by `scripts/test`, else on PATH. A missing
/// tool fails the test with one line naming it and the script that installs it.
pub fn tool(name: &str) -> String {
    let found = std::env::split_paths(&path_with_tools())
        .map(|dir| dir.join(name))
        .find(|path| path.is_file());
    match found {
        Some(path) => path.display().to_string(),
        None => panic!(
            "{name} is not installed: run scripts/test, which installs the pinned tools into .tools/"
        ),
    }
}

/// Fails the test with one line when `python3` cannot import `module` (installed by
/// `scripts/test` into .tools/python).
pub fn python_module(module: &str) {
    let found = Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .env("PYTHONPATH", python_path_with_tools())
        .output()
        .is_ok_and(|output| output.status.success());
    assert!(
        found,
        "{module} is not installed: run scripts/test, which installs the pinned tools into .tools/"
    );
}

/// Fails the test, with libxml2's errors, unless `file` is valid against junit-10.xsd (the JUnit
/// schema of Jenkins' xunit plugin), checked with lxml; a missing schema or lxml fails it with
/// one line naming the script that installs both into .tools/.
pub fn assert_valid_junit(file: &Path) {
    let xsd = tools_dir().join("xsd/junit-10.xsd");
    assert!(
        xsd.is_file(),
        "{} is missing: run scripts/test, which fetches it into .tools/",
        xsd.display()
    );
    python_module("lxml.etree");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/tools/validate_junit.py");
    let output = Command::new("python3")
        .arg(script)
        .arg(&xsd)
        .arg(file)
        .env("PYTHONPATH", python_path_with_tools())
        .output()
        .expect("run python3");
    assert!(
        output.status.success(),
        "{} is not valid against junit-10.xsd:\n{}{}\n{}",
        file.display(),
        stdout(&output),
        stderr(&output),
        std::fs::read_to_string(file).unwrap_or_default()
    );
}

/// A temporary git repository with one commit.
pub struct Repo {
    dir: tempfile::TempDir,
}

impl Repo {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let repo = Self { dir };
        repo.git(&["init", "-q", "-b", "main"]);
        repo.write("README.md", "test repository\n");
        repo.commit("initial");
        repo
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn join(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    pub fn write(&self, relative: &str, contents: &str) {
        let path = self.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create parent");
        }
        std::fs::write(path, contents).expect("write file");
    }

    pub fn git(&self, args: &[&str]) {
        let status = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
            .args(args)
            .current_dir(self.path())
            .status()
            .expect("run git");
        assert!(status.success(), "git {args:?}");
    }

    pub fn commit(&self, message: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", message]);
    }

    /// A `Command` for the binary in this repository, with no `REFINE_LOOP_*` from outside.
    pub fn command(&self, args: &[&str]) -> Command {
        self.command_through(binary(), args)
    }

    /// [`Repo::command`] run by `program` (a wrapper that starts the binary) with `args`.
    pub fn command_through(&self, program: &str, args: &[&str]) -> Command {
        command_in(self.path(), program, args)
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run refine-loop")
    }

    pub fn summary(&self) -> serde_json::Value {
        let text = std::fs::read_to_string(self.join(".refine-loop/cycle-0/gate-summary.json"))
            .expect("gate-summary.json");
        serde_json::from_str(&text).expect("summary is JSON")
    }

    pub fn gate_output(&self) -> Vec<u8> {
        std::fs::read(self.join(".refine-loop/cycle-0/gate-output.txt")).expect("gate-output.txt")
    }
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Waits (bounded: a minute) until `path` exists; fails the test saying `what` never happened.
pub fn wait_for(path: &Path, what: &str) {
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !path.exists() {
        assert!(std::time::Instant::now() < give_up, "{what}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Waits (bounded: a minute) until `path` holds a whole line (the writer's `echo` is done), and
/// returns what it holds; fails the test saying `what` never happened.
pub fn wait_for_line(path: &Path, what: &str) -> String {
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return text;
        }
        assert!(std::time::Instant::now() < give_up, "{what}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A repository whose `build` check (clippy's line format) fails until `fixed.txt` exists;
/// `delegates` are the config's `[[delegate]]` tables. They make `fixed.txt` at the top of the
/// tree, confined as a user's delegates are.
pub fn build_repo(delegates: &str) -> Repo {
    let repo = Repo::new();
    repo.write(".gitignore", "/.refine-loop\n");
    // A `[loop]` table at the start of `delegates` joins the one here.
    let (more_loop, delegates) = match delegates.strip_prefix("[loop]\n") {
        Some(rest) => rest.split_once("\n\n").unwrap_or((rest, "")),
        None => ("", delegates),
    };
    repo.write(
        "refine-loop.toml",
        &format!(
            "[loop]\n{more_loop}\n\n[[gate.check]]\nname = \"build\"\ncategory = \"build\"\n\
             run = \"test -f fixed.txt || {{ echo 'fixed.txt:1:1: error: missing'; exit 1; }}\"\n\
             parser = \"clippy\"\n\n{delegates}"
        ),
    );
    repo.commit("build");
    repo
}

/// Processes of process group `group` that are still alive (zombies do not count).
pub fn live_members_of_group(group: i32) -> Vec<i32> {
    let mut members = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
        let Some(after_comm) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let fields: Vec<&str> = after_comm.split_whitespace().collect();
        if fields.len() > 6
            && fields[2] == group.to_string()
            && fields[0] != "Z"
            && fields[0] != "X"
            && !dying(&entry.path(), fields[6])
        {
            members.push(pid);
        }
    }
    members
}

/// A process already on its way out: exiting (`PF_EXITING` in its flags) or with SIGKILL
/// pending. Between the moment a killed process closes its files (its pipe, which the loop
/// waits for) and the moment it becomes a zombie, `/proc` still shows it running.
fn dying(proc_dir: &Path, flags: &str) -> bool {
    const PF_EXITING: u64 = 0x4;
    const SIGKILL_BIT: u64 = 1 << (9 - 1);
    let exiting = flags.parse::<u64>().is_ok_and(|f| f & PF_EXITING != 0);
    let killed = std::fs::read_to_string(proc_dir.join("status"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let (key, value) = line.split_once(':')?;
            matches!(key, "SigPnd" | "ShdPnd")
                .then(|| u64::from_str_radix(value.trim(), 16).ok())?
        })
        .any(|pending| pending & SIGKILL_BIT != 0);
    exiting || killed
}

/// Reads a pid a test script wrote into the repository.
pub fn read_pid(repo: &Repo, relative: &str) -> i32 {
    std::fs::read_to_string(repo.join(relative))
        .expect("pid file")
        .trim()
        .parse()
        .expect("pid")
}

/// What one path of a tree holds, as a rollback must restore it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    File {
        bytes: Vec<u8>,
        mode: u32,
    },
    Symlink(PathBuf),
    Folder {
        mode: u32,
    },
    /// A FIFO, a socket or a device: never opened (a FIFO would block the read).
    Special {
        mode: u32,
    },
}

/// Every path under `root` (but the top-level names in `skip`) with what it holds, by relative
/// path.
pub fn tree_of(root: &Path, skip: &[&str]) -> std::collections::BTreeMap<PathBuf, Entry> {
    use std::os::unix::fs::PermissionsExt;
    let mut entries = std::collections::BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).expect("read folder").flatten() {
            let path = entry.path();
            let relative = path.strip_prefix(root).expect("under root").to_path_buf();
            if folder == root && skip.iter().any(|name| entry.file_name() == *name) {
                continue;
            }
            let metadata = std::fs::symlink_metadata(&path).expect("metadata");
            let mode = metadata.permissions().mode() & 0o7777;
            let value = if metadata.file_type().is_symlink() {
                Entry::Symlink(std::fs::read_link(&path).expect("read link"))
            } else if metadata.is_dir() {
                stack.push(path.clone());
                Entry::Folder { mode }
            } else if !metadata.is_file() {
                Entry::Special { mode }
            } else {
                Entry::File {
                    bytes: std::fs::read(&path).expect("read file"),
                    mode,
                }
            };
            entries.insert(relative, value);
        }
    }
    entries
}

/// `program` with `args` in `dir`, with no `REFINE_LOOP_*` from outside and the tools first on
/// PATH (for the binary itself, `program` is [`binary`]).
pub fn command_in(dir: &Path, program: &str, args: &[&str]) -> Command {
    let mut command = Command::new(program);
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("REFINE_LOOP_") {
            command.env_remove(key);
        }
    }
    // The CI's checkout folder places report paths: none unless a test says so.
    command
        .env_remove("GITHUB_WORKSPACE")
        .env_remove("CI_PROJECT_DIR")
        .args(args)
        .current_dir(dir)
        .env("PATH", path_with_tools())
        .env("PYTHONPATH", python_path_with_tools());
    command
}

/// Runs git in `dir` (with a test identity, and local file transport allowed for submodules)
/// and returns its trimmed stdout; fails the test when git fails.
pub fn git_in(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(["-c", "protocol.file.allow=always"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run git");
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// Fails the test unless it runs as root (the effective uid, from /proc/self/status), saying
/// `why` it needs root.
pub fn require_root(why: &str) {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let euid = status
        .lines()
        .find_map(|line| line.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1))
        .expect("the Uid: line");
    assert!(euid == "0", "{why}");
}

/// Processes still running in `dir` (their working folder is in it).
pub fn processes_in(dir: &Path) -> Vec<i32> {
    let dir = dir.canonicalize().unwrap();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(&dir))
                && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .is_ok_and(|stat| stat.contains(") Z "))
        })
        .collect()
}
