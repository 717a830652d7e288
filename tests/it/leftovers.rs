//! No process outlives its turn, and the user's work is checked after every step: a delegate
//! that leaves an escaped writer behind (`setsid`, a double fork) or plants code the gate runs
//! cannot change the user's work or the files that steer git while the gate verifies its
//! change. The writer is killed before anything is judged; what planted code changed is put
//! back, reported, and held against the delegate.

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::PathBuf;

use crate::support::{Entry, Repo, live_members_of_group, tree_of};

const FINDINGS: &str = "src/lib.txt:1:1: error: one\nsrc/lib.txt:2:1: error: two\n";

/// The gate: `check.sh`, which says it started (in the folder outside), waits while a writer
/// that escaped a delegate is alive and has not written yet (none, when the loop killed it), and
/// then reports the findings left in `findings.txt`.
const CHECK: &str = r#"touch "$OUTSIDE/gate-started"
for name in first second; do
  if [ -e "$OUTSIDE/$name.pid" ]; then
    while kill -0 "$(cat "$OUTSIDE/$name.pid")" 2>/dev/null && [ ! -e "$OUTSIDE/$name.wrote" ]; do sleep 0.02; done
  fi
done
cat findings.txt; test ! -s findings.txt
"#;

/// A writer that escaped its delegate: it says its pid, waits for the gate to start, then
/// clobbers the user's work and plants a hook. (Its pid as the loop sees it: a confined
/// delegate's `$$` counts in a PID namespace of its own, `/proc` in the loop's.)
const ESCAPE: &str = r#"read -r pid _ < /proc/self/stat; echo $pid > "$OUTSIDE/$1.pid"
while [ ! -e "$OUTSIDE/gate-started" ]; do sleep 0.02; done
echo clobbered > docs/guide.md
chmod 777 scratch.txt
printf '#!/bin/sh\nexit 0\n' > .git/hooks/pre-commit
chmod +x .git/hooks/pre-commit
touch "$OUTSIDE/$1.wrote"
"#;

/// A repository with a committed library and gate, the user's work in progress on top, and a
/// folder outside it; the delegate fixes one finding and then does `fault`.
struct Scene {
    repo: Repo,
    outside: tempfile::TempDir,
}

impl Scene {
    fn new(fault: &str) -> Self {
        Self::confined(fault, true)
    }

    /// With `confine = "off"` unless `confined`: the watch alone holds the delegate.
    fn confined(fault: &str, confined: bool) -> Self {
        let confine = if confined {
            ""
        } else {
            "[loop]\nconfine = \"off\"\n\n"
        };
        let repo = Repo::new();
        let outside = tempfile::tempdir().unwrap();
        let outside_path = outside.path().display().to_string();
        std::fs::write(
            outside.path().join("escape.sh"),
            ESCAPE.replace("$OUTSIDE", &outside_path),
        )
        .unwrap();
        repo.write("findings.txt", FINDINGS);
        repo.write(".gitignore", "/.refine-loop\n");
        repo.write("src/lib.txt", "library\nsecond line\n");
        repo.write("check.sh", &CHECK.replace("$OUTSIDE", &outside_path));
        repo.write("docs/guide.md", "the guide\n");
        let fault = fault.replace("$OUTSIDE", &outside_path);
        repo.write(
            "refine-loop.toml",
            &format!(
                "{confine}[[gate.check]]\nname = \"lint\"\ncategory = \"lint\"\nrun = \"sh check.sh\"\nparser = \"clippy\"\ntimeout = \"60s\"\n\n[[delegate]]\ncategories = [\"lint\"]\nrun = '''sed -i 1d findings.txt; {fault}'''\n"
            ),
        );
        repo.commit("library");
        // The user's own work in progress.
        repo.write("docs/guide.md", "the guide\nwith the user's edit\n");
        repo.write("scratch.txt", "user notes\n");
        std::fs::set_permissions(
            repo.join("scratch.txt"),
            std::fs::Permissions::from_mode(0o600),
        )
        .unwrap();
        Self { repo, outside }
    }

    /// The user's files: bytes, mode, and owner.
    fn user_work(&self) -> BTreeMap<PathBuf, (Entry, u32, u32)> {
        let tree = tree_of(self.repo.path(), &[".git", ".refine-loop"]);
        tree.into_iter()
            .filter(|(path, _)| path.starts_with("docs") || path.starts_with("scratch.txt"))
            .map(|(path, entry)| {
                let metadata = std::fs::symlink_metadata(self.repo.path().join(&path)).unwrap();
                (path, (entry, metadata.uid(), metadata.gid()))
            })
            .collect()
    }

    /// The git folder but its object store, the loop's own folder and its private ref.
    fn git_folder(&self) -> BTreeMap<PathBuf, Entry> {
        let mut tree = tree_of(&self.repo.join(".git"), &["objects", "refine-loop", "logs"]);
        tree.retain(|path, entry| {
            !matches!(entry, Entry::Folder { .. }) && !path.starts_with("refs/refine-loop")
        });
        tree
    }

    /// The folder outside, but the markers the scripts leave there.
    fn outside(&self) -> BTreeMap<PathBuf, Entry> {
        let mut tree = tree_of(self.outside.path(), &[]);
        tree.retain(|path, _| {
            !path.ends_with("gate-started")
                && path.extension().is_none_or(|extension| extension != "pid")
        });
        tree
    }

    fn report(&self) -> String {
        std::fs::read_to_string(
            self.repo
                .join(".refine-loop/cycle-1/delegate-reports/fix-lint.md"),
        )
        .unwrap()
    }

    fn pid(&self, name: &str) -> i32 {
        let file = self.outside.path().join(format!("{name}.pid"));
        std::fs::read_to_string(file)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    fn after_gate_notes(&self) -> String {
        let text = std::fs::read_to_string(self.repo.join(".refine-loop/run.json")).unwrap();
        let run: serde_json::Value = serde_json::from_str(&text).unwrap();
        run["after_gate"].to_string()
    }
}

/// Runs one cycle of `scene` and checks that the user's work, the git folder and the folder
/// outside are as before.
fn run_unharmed(scene: &Scene) {
    run_unharmed_for(scene, "1");
}

fn run_unharmed_for(scene: &Scene, cycles: &str) {
    let (work, git, outside) = (scene.user_work(), scene.git_folder(), scene.outside());
    let output = scene.repo.run(&["run", "--max-cycles", cycles]);
    assert!(matches!(output.status.code(), Some(1 | 3)), "{output:?}");
    assert_eq!(scene.user_work(), work, "the user's work changed");
    assert_eq!(scene.git_folder(), git, "the git folder changed");
    assert_eq!(scene.outside(), outside, "the folder outside changed");
    assert!(!scene.repo.join(".git/hooks/pre-commit").exists());
}

/// Processes a delegate leaves running, however they left its group: a confined delegate is
/// the first process of a PID namespace of its own, so the kernel ends them when it ends; with
/// the watch alone, the loop finds them, stops them and names them. Either way none writes.
#[test]
fn writers_that_escaped_the_delegates_group_are_killed_before_the_gate_runs() {
    for confined in [true, false] {
        // One leaves the group by `setsid`, the other by a double fork and `setsid`; the
        // delegate waits until both have said their pid.
        let scene = Scene::confined(
            "rm -f $OUTSIDE/gate-started; \
             setsid sh $OUTSIDE/escape.sh first </dev/null >/dev/null 2>&1 & \
             (setsid sh $OUTSIDE/escape.sh second </dev/null >/dev/null 2>&1 &); \
             while [ ! -s $OUTSIDE/first.pid ] || [ ! -s $OUTSIDE/second.pid ]; do sleep 0.01; done",
            confined,
        );
        run_unharmed(&scene);
        let report = scene.report();
        for name in ["first", "second"] {
            let pid = scene.pid(name);
            assert_eq!(live_members_of_group(pid), Vec::<i32>::new(), "{name}");
            assert!(
                !scene.outside.path().join(format!("{name}.wrote")).exists(),
                "confined {confined}: {name} wrote"
            );
            assert_eq!(
                report.contains(&format!(
                    "left a process running after it ended (pid {pid}, `"
                )),
                !confined,
                "confined {confined}: {name} ({pid}):\n{report}"
            );
        }
        // Left processes are reported, not hostile: its fix was judged, and kept.
        assert!(report.contains("- result: kept"), "{report}");
    }
}

/// What the report of a confined run says when the kernel refused a gate check's write.
const REFUSED: &str = "while the gate ran on its change, check `lint` tried to write where no check may, and the kernel refused: ";

/// Runs a delegate that appends `planted` to the gate's own script, confined and not; checks
/// that what it did is put back or refused, and that the delegate's change is rolled back.
/// Unconfined, the watch puts it back and the report says `says`; confined, the report says
/// `confined` (for a write into the git dir, the kernel's refusal, after [`REFUSED`]; `None`:
/// the refusal named no path, as `git hash-object -w` says "unable to create temporary file",
/// so only the bytes are checked).
fn planted(planted: &str, says: &str, confined: Option<String>) {
    planted_in(planted, false, Some(says));
    planted_in(planted, true, confined.as_deref());
}

fn planted_in(planted: &str, confined: bool, says: Option<&str>) {
    let scene = Scene::confined(&format!("printf '%s\\n' '{planted}' >> check.sh"), confined);
    run_unharmed_for(&scene, "2");
    // Held against it, when it was seen: its delegate is not run again in the second cycle.
    assert_eq!(
        scene
            .repo
            .join(".refine-loop/cycle-2/delegate-reports/fix-lint.md")
            .exists(),
        says.is_none(),
        "{planted} (confined {confined}): whether its delegate ran again"
    );
    assert_eq!(
        std::fs::read_to_string(scene.repo.join("findings.txt")).unwrap(),
        FINDINGS,
        "{planted}: the change was not rolled back"
    );
    assert_eq!(
        std::fs::read_to_string(scene.repo.join("check.sh")).unwrap(),
        CHECK.replace("$OUTSIDE", &scene.outside.path().display().to_string()),
        "{planted}: the gate's script was not rolled back"
    );
    let report = scene.report();
    assert!(
        report.contains("- result: rolled back"),
        "{planted}: {report}"
    );
    if let Some(says) = says {
        assert!(
            report.contains(says),
            "{planted} (confined {confined}): the report lacks {says:?}:\n{report}"
        );
        let notes = scene.after_gate_notes();
        assert!(
            notes.contains("the change was rolled back"),
            "{planted}: {notes}"
        );
    }
    let staged = std::process::Command::new("git")
        .args(["diff", "--cached", "--quiet"])
        .current_dir(scene.repo.path())
        .status()
        .unwrap();
    assert!(staged.success(), "{planted}: a staged edit is left");
    let edited = std::process::Command::new("git")
        .args(["diff", "--quiet", "--", "src/lib.txt"])
        .current_dir(scene.repo.path())
        .status()
        .unwrap();
    assert!(
        edited.success(),
        "{planted}: an edit the gate staged is left"
    );
}

#[test]
fn gate_code_a_delegate_planted_cannot_change_the_users_work_or_gits_config() {
    // (the line planted in the gate's script, what the delegate's report says, and confined)
    let guide = "while the gate ran on its change, `docs/guide.md` (the user's own work) changed: put back as it was";
    let cases = [
        (
            "echo clobbered > docs/guide.md; chmod 777 scratch.txt",
            guide,
            Some(guide.to_string()),
        ),
        (
            "git config user.name mallory",
            "while the gate ran on its change, `.git/config` in the git folder was written: put back",
            Some(format!("{REFUSED}`.git/config` (read-only)")),
        ),
    ];
    for (line, says, refused) in cases {
        planted(line, says, refused);
    }
}

#[test]
fn a_hook_or_a_staged_edit_planted_through_the_gate_is_put_back() {
    // (the line planted in the gate's script, what the delegate's report says, and confined)
    let cases = [
        (
            "echo exit 0 > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit",
            "while the gate ran on its change, `.git/hooks/pre-commit` in the git folder was written: removed",
            Some(format!("{REFUSED}`.git/hooks/pre-commit` (read-only)")),
        ),
        (
            "git update-index --cacheinfo 100644,$(echo evil | git hash-object -w --stdin),src/lib.txt",
            "while the gate ran on its change, `.git/index` in the git folder was written: put back",
            None,
        ),
        // An edit staged by the gate: the index and the edit go back together.
        (
            "echo owned >> src/lib.txt && git add src/lib.txt",
            "while the gate ran on its change, `.git/index` in the git folder was written: put back",
            Some(format!("{REFUSED}`")),
        ),
    ];
    for (line, says, confined) in cases {
        planted(line, says, confined);
    }
}

#[test]
fn what_the_baseline_gate_writes_over_the_users_files_is_put_back_and_stops_the_run() {
    // The user's own untracked report, which the gate rewrites on every run: the user's work,
    // put back to the byte and named, and the run stops (a gate must only read; git can ignore
    // what it writes).
    let scene = Scene::new("true");
    let check = scene.repo.join("check.sh");
    let script = std::fs::read_to_string(&check).unwrap();
    std::fs::write(&check, format!("date +%N > report.xml\n{script}")).unwrap();
    scene.repo.commit("the gate writes a report");
    scene.repo.write("report.xml", "an old report\n");
    let output = scene.repo.run(&["run", "--max-cycles", "1"]);
    assert_eq!(output.status.code(), Some(4), "{output:?}");
    assert_eq!(
        std::fs::read_to_string(scene.repo.join("report.xml")).unwrap(),
        "an old report\n"
    );
    let stderr = crate::support::stderr(&output);
    assert!(
        stderr.contains("changed the repository's files: report.xml; they are put back"),
        "{stderr}"
    );
}

#[test]
fn a_left_process_that_keeps_forking_is_still_stopped() {
    for confined in [true, false] {
        // It forks a sleeper every turn of its loop, as fast as it can, from a session of its
        // own.
        let scene = Scene::confined(
            "setsid sh -c 'read -r pid _ < /proc/self/stat; echo $pid > $OUTSIDE/first.pid; \
             while true; do sleep 30 & done' \
             </dev/null >/dev/null 2>&1 & \
             while [ ! -s $OUTSIDE/first.pid ]; do sleep 0.01; done",
            confined,
        );
        run_unharmed(&scene);
        let pid = scene.pid("first");
        // The session's whole group: the loop and every sleeper it made.
        assert_eq!(live_members_of_group(pid), Vec::<i32>::new());
        let report = scene.report();
        assert_eq!(
            report.contains(&format!("(pid {pid}, `sh -c")),
            !confined,
            "confined {confined}: the forking loop:\n{report}"
        );
    }
}

#[test]
fn a_process_a_check_leaves_running_is_killed_and_named() {
    let outside = tempfile::tempdir().unwrap();
    let pid_file = outside.path().join("left.pid");
    let repo = Repo::new();
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write(
        "refine-loop.toml",
        &format!(
            "[[gate.check]]\nname = \"daemon\"\nrun = '''setsid sh -c 'echo $$ > {}; exec sleep 300' </dev/null >/dev/null 2>&1 & while [ ! -s {} ]; do sleep 0.01; done'''\n",
            pid_file.display(),
            pid_file.display()
        ),
    );
    repo.commit("a gate that leaves a daemon");
    let output = repo.run(&["check"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(live_members_of_group(pid), Vec::<i32>::new());
    let notes = repo.summary()["notes"].to_string();
    assert!(
        notes.contains(&format!(
            "daemon: left 1 process(es) running after it ended, killed: pid {pid} (`sleep 300`)"
        )),
        "{notes}"
    );
}
