//! A run killed with SIGKILL at any moment (the OOM killer, a lost runner) leaves a journal;
//! `refine-loop recover` puts the tree back exactly as it was before the interrupted turn, and
//! no run or check starts until it has.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use crate::support::{Entry, Repo, processes_in, stderr, stdout, tree_of};

/// The gate rejects any change to `src/` (so every change is rolled back) and fails while
/// `findings.txt` lists findings (so a delegate always runs).
const GATE: &str = r#"[[gate.check]]
name = "lint"
category = "lint"
run = "cat findings.txt; test ! -s findings.txt"
parser = "clippy"

[[gate.check]]
name = "tests"
category = "tests"
run = "sleep 0.1; git diff --quiet HEAD -- src && test -z \"$(git ls-files --others --exclude-standard -- src new)\""
"#;

const FINDINGS: &str = "src/a.txt:1:1: error: one\nsrc/a.txt:2:1: error: two\n";

/// A delegate that changes the tree slowly, a step at a time: a kill can fall between any two.
/// A delegate that changes the tree slowly, a step at a time: a kill can fall between any two.
/// In cycle 1 its change goes to the gate (which rejects it); in cycle 2 it also acts against
/// the repository (the user's work, a git hook) and is undone at once.
const SLOW_DELEGATE: &str = "touch \"$STARTED\"; sed -i 1d findings.txt; sleep 0.05; \
echo clobbered > .env; sleep 0.05; \
printf 'more\\n' >> src/a.txt; sleep 0.05; \
mkdir -p new/deep; echo made > new/deep/file.txt; sleep 0.05; \
rm src/b.txt; sleep 0.05; \
chmod 600 src/run.sh; sleep 0.05; \
mv src/c.txt src/c-moved.txt; sleep 0.05; \
if [ \"$REFINE_LOOP_CYCLE\" = 2 ]; then \
echo clobbered > docs/guide.md; sleep 0.05; \
echo '#!/bin/sh' > .git/hooks/pre-commit; sleep 0.05; fi";

fn scene(started: &Path) -> Repo {
    let repo = Repo::new();
    repo.write(".gitignore", "/.refine-loop\n.env\n");
    repo.write("findings.txt", FINDINGS);
    repo.write("src/a.txt", "first\nsecond\n");
    repo.write("src/b.txt", "bee\n");
    repo.write("src/c.txt", "sea\n");
    repo.write("src/run.sh", "#!/bin/sh\necho run\n");
    std::fs::set_permissions(
        repo.join("src/run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    repo.write("docs/guide.md", "the guide\n");
    repo.write(
        "refine-loop.toml",
        &format!(
            "{GATE}\n[[delegate]]\ncategories = [\"lint\"]\nrun = '''{}'''\n",
            SLOW_DELEGATE.replace("$STARTED", &started.display().to_string())
        ),
    );
    repo.commit("library");
    // The user's own work: an edit, a staged file, an untracked file.
    repo.write("docs/guide.md", "the guide\nwith the user's edit\n");
    repo.write("staged.txt", "staged work\n");
    repo.git(&["add", "staged.txt"]);
    repo.write("notes/mine.txt", "user notes\n");
    // And a file git ignores: local settings.
    repo.write(".env", "LOCAL_SETTING=1\n");
    repo
}

/// Everything the user sees: the work tree (but the state dir) and the git folder's hooks,
/// config and index entries.
fn state_of(repo: &Repo) -> State {
    let tree = tree_of(repo.path(), &[".git", ".refine-loop"]);
    let mut git = tree_of(
        &repo.join(".git"),
        &["objects", "refine-loop", "logs", "index"],
    );
    git.retain(|path, entry| {
        !matches!(entry, Entry::Folder { .. }) && !path.starts_with("refs/refine-loop")
    });
    let index = crate::support::git_in(repo.path(), &["ls-files", "--stage"]);
    (tree, git, index)
}

type State = (BTreeMap<PathBuf, Entry>, BTreeMap<PathBuf, Entry>, String);

/// What differs between two states, by path.
fn differences(before: &State, after: &State) -> Vec<String> {
    let mut found = Vec::new();
    for (was, is, name) in [(&before.0, &after.0, "tree"), (&before.1, &after.1, ".git")] {
        for path in was.keys().chain(is.keys()) {
            if was.get(path) != is.get(path) {
                found.push(format!(
                    "{name}: {} was {:?}, is {:?}",
                    path.display(),
                    was.get(path),
                    is.get(path)
                ));
            }
        }
    }
    if before.2 != after.2 {
        found.push(format!("index: was\n{}\nis\n{}", before.2, after.2));
    }
    found.dedup();
    found
}

/// A small deterministic generator: the kill points differ from each other, not from run to run.
fn points(count: u64, span_ms: u64, mut seed: u64) -> Vec<Duration> {
    (0..count)
        .map(|i| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let slot = span_ms / count;
            Duration::from_millis(i * slot + seed % slot)
        })
        .collect()
}

#[test]
fn kill_nine_at_twenty_points_then_recover_puts_the_tree_back_byte_for_byte() {
    let outside = tempfile::tempdir().unwrap();
    let started = outside.path().join("delegate-started");
    let repo = scene(&started);
    let before = state_of(&repo);
    // Another seed explores other points: REFINE_LOOP_TEST_KILL_SEED=<n>.
    let seed = std::env::var("REFINE_LOOP_TEST_KILL_SEED")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(0x5eed_1234_u64);
    let mut interrupted = 0;
    // Each kill falls at a point after the first delegate started: in it, in the gate verifying
    // its change, in the rollback, or in the second cycle.
    for (round, delay) in points(20, 1_500, seed).into_iter().enumerate() {
        let _ = std::fs::remove_file(&started);
        let mut child = repo
            .command(&["run", "--max-cycles", "2"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        crate::support::wait_for(&started, "the delegate never started");
        std::thread::sleep(delay);
        child.kill().unwrap();
        child.wait().unwrap();
        let journaled = std::fs::read_dir(repo.join(".git/refine-loop/snapshots"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|entry| entry.path().join("journal.json").exists());
        if journaled {
            interrupted += 1;
            let refused = repo.run(&["check"]);
            assert_eq!(refused.status.code(), Some(4), "round {round}: {refused:?}");
            assert!(
                stderr(&refused).contains("refine-loop recover"),
                "round {round}: {}",
                stderr(&refused)
            );
        }
        let recovered = repo.run(&["recover"]);
        assert_eq!(
            recovered.status.code(),
            Some(0),
            "round {round} (killed after {delay:?}, seed {seed:#x}): {recovered:?}"
        );
        assert!(
            processes_in(repo.path()).is_empty(),
            "round {round}: a process of the killed run is still running"
        );
        let after = state_of(&repo);
        assert!(
            after == before,
            "round {round} (killed after {delay:?}, seed {seed:#x}): the tree differs: {:?}\n{}",
            differences(&before, &after),
            stdout(&recovered)
        );
    }
    eprintln!("{interrupted} of 20 kills fell in the middle of a turn (seed {seed:#x})");
    assert!(
        interrupted >= 10,
        "only {interrupted} of 20 kills fell in the middle of a turn"
    );
    // A run after all that works as ever.
    let output = repo.run(&["run", "--max-cycles", "1"]);
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    assert_eq!(state_of(&repo), before);
}

#[test]
fn a_run_killed_after_its_delegate_made_a_chain_deeper_than_git_walks_is_recovered() {
    let outside = tempfile::tempdir().unwrap();
    let started = outside.path().join("delegate-started");
    let repo = scene(&started);
    // The delegate hides the user's notes at the bottom of a chain deeper than git walks, and
    // the run is killed while it sleeps.
    repo.write(
        "refine-loop.toml",
        &format!(
            "{GATE}\n[[delegate]]\ncategories = [\"lint\"]\nrun = '''top=$PWD; \
             (cd src && for i in $(seq 150); do mkdir d && cd d; done; \
             mv \"$top/notes/mine.txt\" .); touch \"{}\"; sleep 30'''\n",
            started.display()
        ),
    );
    repo.git(&[
        "commit",
        "-q",
        "-m",
        "a delegate that hides notes",
        "refine-loop.toml",
    ]);
    let before = state_of(&repo);
    let mut child = repo
        .command(&["run", "--max-cycles", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    crate::support::wait_for(&started, "the delegate never started");
    child.kill().unwrap();
    child.wait().unwrap();
    let recovered = repo.run(&["recover"]);
    assert_eq!(recovered.status.code(), Some(0), "{recovered:?}");
    let after = state_of(&repo);
    assert!(
        after == before,
        "the tree differs: {:?}\n{}",
        differences(&before, &after),
        stdout(&recovered)
    );
}

#[test]
fn recover_with_nothing_to_do_says_so_and_outside_a_repository_is_a_usage_error() {
    let repo = scene(Path::new("/dev/null"));
    let output = repo.run(&["recover"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(stdout(&output).contains("nothing to recover"), "{output:?}");
    let outside = tempfile::tempdir().unwrap();
    let output = repo.run(&["recover", "--target", &outside.path().display().to_string()]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
}

/// The user's work: the edit, the staged file, the untracked notes.
fn user_work(repo: &Repo) -> BTreeMap<PathBuf, Entry> {
    let mut tree = tree_of(repo.path(), &[".git", ".refine-loop"]);
    tree.retain(|path, _| {
        ["docs", "staged.txt", "notes"]
            .iter()
            .any(|top| path.starts_with(top))
    });
    tree
}

/// A delegate clobbers the user's work and then damages the copies the loop keeps to put it back
/// (removes them, or overwrites them): the work comes back from the second copy outside the
/// repository, the rest of the change is undone, and the report names what happened.
#[test]
fn the_users_work_survives_a_delegate_that_damages_the_kept_copies() {
    for damage in [
        "rm -rf .git/refine-loop",
        "for f in .git/refine-loop/snapshots/*/*; do printf junk > \"$f\"; done",
    ] {
        let repo = scene(Path::new("/dev/null"));
        let config = std::fs::read_to_string(repo.join("refine-loop.toml")).unwrap();
        let start = config.find("[[delegate]]").unwrap();
        // Without the kernel's confinement (which refuses these writes), the watch and the
        // second copy are what hold.
        let delegate = format!(
            "[loop]\nconfine = \"off\"\n\n[[delegate]]\ncategories = [\"lint\"]\nrun = '''sed -i 1d findings.txt; echo clobbered > docs/guide.md; rm notes/mine.txt; printf 'more\\n' >> src/a.txt; {damage}'''\n"
        );
        std::fs::write(
            repo.join("refine-loop.toml"),
            format!("{}{delegate}", &config[..start]),
        )
        .unwrap();
        let (work, before) = (user_work(&repo), state_of(&repo));
        let output = repo.run(&["run", "--max-cycles", "1"]);
        assert!(
            matches!(output.status.code(), Some(1 | 3 | 4)),
            "{damage}: {output:?}"
        );
        assert_eq!(user_work(&repo), work, "{damage}: the user's work changed");
        let report =
            std::fs::read_to_string(repo.join(".refine-loop/cycle-1/delegate-reports/fix-lint.md"))
                .unwrap();
        assert!(
            report.contains("the loop's kept copies"),
            "{damage}: {report}"
        );
        let after = state_of(&repo);
        assert!(
            after.0.get(Path::new("src/a.txt")) == before.0.get(Path::new("src/a.txt")),
            "{damage}: the change was not undone: {:?}",
            differences(&before, &after)
        );
    }
}

/// A small file system of its own (tmpfs, which needs root), unmounted when dropped.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn new(size: &str) -> Self {
        crate::support::require_root(
            "the full-disk test mounts a small tmpfs, which needs root: run the tests as root (in \
             a container or a VM), or leave it out with `--skip recover::a_full_disk`",
        );
        let dir = tempfile::tempdir().unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(mounted.success(), "mount -t tmpfs");
        Self { dir }
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// The disk fills up after a delegate clobbered the user's work (a full disk in CI is ordinary):
/// the run ends, but only after the user's work and the tree are put back.
#[test]
fn a_full_disk_after_the_users_work_was_clobbered_loses_none_of_it() {
    let disk = SmallDisk::new("6m");
    let root = disk.dir.path().join("repo");
    std::fs::create_dir(&root).unwrap();
    let git = |args: &[&str]| crate::support::git_in(&root, args);
    git(&["init", "-q", "-b", "main"]);
    std::fs::write(root.join(".gitignore"), "/.refine-loop\n").unwrap();
    std::fs::write(root.join("findings.txt"), FINDINGS).unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/a.txt"), "first\nsecond\n").unwrap();
    std::fs::create_dir_all(root.join("docs")).unwrap();
    std::fs::write(root.join("docs/guide.md"), "the guide\n").unwrap();
    std::fs::write(
        root.join("refine-loop.toml"),
        format!(
            "{GATE}\n[[delegate]]\ncategories = [\"lint\"]\n\
             run = '''echo clobbered > docs/guide.md; rm notes/mine.txt; printf 'more\\n' >> src/a.txt; \
             dd if=/dev/zero of=src/fill bs=64k 2>/dev/null; true'''\n"
        ),
    )
    .unwrap();
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "library"]);
    std::fs::write(
        root.join("docs/guide.md"),
        "the guide\nwith the user's edit\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join("notes")).unwrap();
    std::fs::write(root.join("notes/mine.txt"), "user notes\n").unwrap();
    let before = tree_of(&root, &[".git", ".refine-loop"]);
    let output = std::process::Command::new(crate::support::binary())
        .args(["run", "--max-cycles", "1"])
        .current_dir(&root)
        // The second copies on the full disk too: nothing to fall back on but the order of work.
        .env("RUNNER_TEMP", disk.dir.path())
        .env("PATH", crate::support::path_with_tools())
        .env_remove("REFINE_LOOP_CONFIG")
        .output()
        .unwrap();
    // The disk filled while the loop kept the delegate's change: an error, after which the
    // tree was put back.
    assert_eq!(output.status.code(), Some(4), "{output:?}");
    assert!(
        stderr(&output).contains("No space left on device"),
        "{}",
        stderr(&output)
    );
    let after = tree_of(&root, &[".git", ".refine-loop"]);
    let differs: Vec<_> = before
        .keys()
        .chain(after.keys())
        .filter(|path| before.get(*path) != after.get(*path))
        .collect();
    assert!(
        differs.is_empty(),
        "the tree differs after a full disk: {differs:?}\n{}",
        stderr(&output)
    );
}

/// `recover` writes every path a journal names. A journal in the store that no run of this
/// repository wrote (forged by code that reached the store, or restored from elsewhere) whose
/// paths lie outside the repository is refused, and nothing is written.
#[test]
fn a_journal_naming_paths_outside_the_repository_is_refused() {
    let repo = Repo::new();
    repo.write("notes.txt", "the user's work\n");
    repo.write("src/lib.txt", "library\n");
    repo.commit("library");
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim.txt");
    std::fs::write(&victim, "outside\n").unwrap();
    let store = repo.join(".git/refine-loop/snapshots/1-0");
    std::fs::create_dir_all(&store).unwrap();
    let bytes = b"overwritten\n";
    let hash = {
        use sha2::Digest;
        sha2::Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    std::fs::write(store.join(&hash), bytes).unwrap();
    let root = repo.path().display().to_string();
    std::fs::write(
        store.join("owner.json"),
        format!("{{\"format\":1,\"run\":\"1-0\",\"pid\":1,\"root\":\"{root}\",\"state_dir\":\"{root}/.refine-loop\"}}"),
    )
    .unwrap();
    std::fs::write(
        store.join("journal.json"),
        format!(
            "{{\"format\":1,\"run\":\"1-0\",\"pid\":1,\"turn\":\"forged\",\"root\":\"{root}\",\
             \"state_dir\":\"{root}/.refine-loop\",\"since\":[1,0],\
             \"tree\":[{{\"path\":\"notes.txt\",\"state\":{{\"type\":\"absent\"}}}}],\
             \"protected\":[],\"artifacts\":[],\"git_roots\":[\"{root}/.git/\"],\
             \"git_files\":[{{\"path\":\"{}\",\"state\":{{\"type\":\"file\",\"sha256\":\"{hash}\",\"mode\":420}}}}]}}",
            victim.display()
        ),
    )
    .unwrap();
    let recovered = repo.run(&["recover"]);
    assert_ne!(recovered.status.code(), Some(0), "{recovered:?}");
    assert!(
        stderr(&recovered).contains("not a journal of this repository's runs"),
        "{recovered:?}"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "outside\n");
    assert_eq!(
        std::fs::read_to_string(repo.join("notes.txt")).unwrap(),
        "the user's work\n"
    );
}
