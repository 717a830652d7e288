//! The trusted job of ci/examples/github-nightly.yml, its script run as written against a local
//! origin and a stand-in for `gh`: the first night opens the campaign's pull request, a later
//! night updates its branch, and a record that is stale, or a branch someone pushed to, changes
//! nothing. And ci/examples/github-deliver.yml's script, with the records as download-artifact
//! lays them out: one artifact straight in its path, several each in a folder of its name.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::{Repo, build_repo, git_in};

const BRANCH: &str = "refine-loop/nightly";

/// The script of the step that pushes the branch and opens or updates the pull request.
fn delivery_script() -> String {
    let workflow = crate::ci_files::read_yaml("ci/examples/github-nightly.yml");
    workflow["jobs"]["pull-request"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|step| step["run"].as_str())
        .expect("a run step")
        .to_string()
}

/// The origin (a bare copy of `project`), and a folder for the jobs' clones and `gh`'s log.
struct Night {
    origin: PathBuf,
    dir: tempfile::TempDir,
}

impl Night {
    fn new(project: &Repo) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let origin = dir.path().join("origin.git");
        let source = project.path().to_str().unwrap();
        git_in(dir.path(), &["clone", "-q", "--bare", source, "origin.git"]);
        let gh = dir.path().join("bin/gh");
        std::fs::create_dir_all(gh.parent().unwrap()).unwrap();
        // `pr list` prints the open pull request's number (none until one is created).
        std::fs::write(
            &gh,
            "#!/bin/sh\necho \"$*\" >> \"$GH_LOG\"\ncase \"$1 $2\" in\n\
             'pr list') cat \"$GH_OPEN\" 2>/dev/null || true ;;\n\
             'pr create') echo 7 > \"$GH_OPEN\" ;;\nesac\n",
        )
        .unwrap();
        let executable = std::os::unix::fs::PermissionsExt::from_mode(0o755);
        std::fs::set_permissions(&gh, executable).unwrap();
        Self { origin, dir }
    }

    /// A fresh clone of the origin, as a job's checkout (every branch fetched).
    fn clone(&self, name: &str) -> PathBuf {
        let origin = self.origin.to_str().unwrap();
        git_in(self.dir.path(), &["clone", "-q", origin, name]);
        self.dir.path().join(name)
    }

    /// The run's job: improve on a fresh clone; returns its record and the commit it ran on.
    fn run(&self, name: &str) -> (PathBuf, String) {
        let clone = self.clone(name);
        let mut command = Command::new(crate::support::binary());
        for (key, _) in std::env::vars_os() {
            let key_text = key.to_string_lossy();
            if key_text.starts_with("REFINE_LOOP_") || key_text.starts_with("GITHUB_") {
                command.env_remove(&key);
            }
        }
        let output = command
            .args(["run", "--preset", "improve", "fix the build"])
            .current_dir(&clone)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        let commit = git_in(&clone, &["rev-parse", "HEAD"]);
        (clone.join(".refine-loop"), commit)
    }

    /// The trusted job: its script in a fresh clone, with `record` from a run on `commit`.
    fn deliver(&self, name: &str, record: &Path, commit: &str) -> Output {
        assert!(
            Command::new("jq").arg("--version").output().is_ok(),
            "jq is not installed (GitHub's runners have it)"
        );
        let checkout = self.clone(name);
        let temp = self.dir.path().join(format!("{name}-temp"));
        std::fs::create_dir_all(&temp).unwrap();
        let path = format!(
            "{}:{}",
            self.dir.path().join("bin").display(),
            std::env::var("PATH").unwrap()
        );
        Command::new("bash")
            .args(["--noprofile", "--norc", "-eo", "pipefail", "-c"])
            .arg(delivery_script())
            .current_dir(&checkout)
            .env("PATH", path)
            .env("GH_TOKEN", "not-a-token")
            .env("GH_LOG", self.dir.path().join("gh.log"))
            .env("GH_OPEN", self.dir.path().join("gh-open"))
            .env("RECORD", record)
            .env("RUN_COMMIT", commit)
            .env("BASE_BRANCH", "main")
            .env("RUNNER_TEMP", &temp)
            .output()
            .unwrap()
    }

    /// github-deliver.yml's script in a fresh clone, with the downloaded `records` of a run on
    /// `commit` (of the workflow `harden`).
    fn deliver_records(&self, name: &str, records: &Path, commit: &str) -> Output {
        let workflow = crate::ci_files::read_yaml("ci/examples/github-deliver.yml");
        let script = workflow["jobs"]["pull-request"]["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find_map(|step| step["run"].as_str())
            .expect("a run step")
            .to_string();
        let checkout = self.clone(name);
        let temp = self.dir.path().join(format!("{name}-temp"));
        std::fs::create_dir_all(&temp).unwrap();
        let path = format!(
            "{}:{}",
            self.dir.path().join("bin").display(),
            std::env::var("PATH").unwrap()
        );
        Command::new("bash")
            .args(["--noprofile", "--norc", "-eo", "pipefail", "-c"])
            .arg(script)
            .current_dir(&checkout)
            .env("PATH", path)
            .env("GH_TOKEN", "not-a-token")
            .env("GH_LOG", self.dir.path().join("gh.log"))
            .env("GH_OPEN", self.dir.path().join("gh-open"))
            .env("RECORDS", records)
            .env("RUN_COMMIT", commit)
            .env("BASE_BRANCH", "main")
            .env("WORKFLOW", "harden")
            .env("RUNNER_TEMP", &temp)
            .output()
            .unwrap()
    }

    /// The origin's branch `name`, if any.
    fn branch_named(&self, name: &str) -> Option<String> {
        let output = Command::new("git")
            .args([
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("refs/heads/{name}"),
            ])
            .current_dir(&self.origin)
            .output()
            .unwrap();
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
    }

    /// What `gh` was asked, one call a line, and the log emptied.
    fn gh_calls(&self) -> Vec<String> {
        let log = self.dir.path().join("gh.log");
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let _ = std::fs::remove_file(&log);
        text.lines().map(str::to_string).collect()
    }

    /// The origin's campaign branch, if any.
    fn branch(&self) -> Option<String> {
        let output = Command::new("git")
            .args([
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("refs/heads/{BRANCH}"),
            ])
            .current_dir(&self.origin)
            .output()
            .unwrap();
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
    }
}

fn starts(calls: &[String]) -> Vec<String> {
    calls
        .iter()
        .map(|c| c.split(' ').take(2).collect::<Vec<_>>().join(" "))
        .collect()
}

#[test]
fn the_nightly_delivery_keeps_one_pull_request_and_never_overwrites_a_persons_commit() {
    let project =
        build_repo("[[delegate]]\ncategories = [\"build\"]\nrun = \"echo ok > fixed.txt\"\n");
    let night = Night::new(&project);

    // Night 1: the branch is created and the pull request opened.
    let (record, commit) = night.run("run-1");
    let output = night.deliver("deliver-1", &record, &commit);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(starts(&night.gh_calls()), ["pr list", "pr create"]);
    let first = night.branch().expect("the campaign's branch");
    let shown = Command::new("git")
        .args(["show", &format!("{first}:fixed.txt")])
        .current_dir(&night.origin)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&shown.stdout), "ok\n");

    // The same record again (a night that found the campaign finished): nothing changes.
    let output = night.deliver("deliver-2", &record, &commit);
    assert!(output.status.success(), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stdout).contains("already holds these changes"));
    assert!(night.gh_calls().is_empty());
    assert_eq!(night.branch().as_ref(), Some(&first));

    // The default branch moved: the next night's series replaces the branch, and the open pull
    // request is updated, not doubled.
    let work = night.clone("work");
    std::fs::write(work.join("notes.txt"), "more\n").unwrap();
    git_in(&work, &["add", "notes.txt"]);
    git_in(&work, &["commit", "-q", "-m", "more"]);
    git_in(&work, &["push", "-q", "origin", "HEAD:main"]);
    let (next_record, next_commit) = night.run("run-3");
    let output = night.deliver("deliver-3", &next_record, &next_commit);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(starts(&night.gh_calls()), ["pr list", "pr edit"]);
    let second = night.branch().unwrap();
    assert_ne!(second, first);
    let base = git_in(&night.origin, &["merge-base", &second, &next_commit]);
    assert_eq!(base, next_commit, "the series sits on the night's commit");

    // An earlier night's record, based elsewhere: nothing new to deliver.
    let output = night.deliver("deliver-4", &record, &next_commit);
    assert!(output.status.success(), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stdout).contains("nothing new to deliver"));
    assert_eq!(night.branch().as_ref(), Some(&second));

    // A night whose series leaves out the branch's changes (the earlier work rolled back by the
    // gate, or left alone): the branch, and the reviewed work on it, is left as it is.
    let partial = night.clone("partial");
    std::fs::write(partial.join("other.txt"), "other\n").unwrap();
    git_in(&partial, &["add", "other.txt"]);
    let bot = "user.email=refine-loop@users.noreply.github.com";
    git_in(
        &partial,
        &["-c", bot, "commit", "-q", "-m", "refine-loop: iteration 1"],
    );
    let record = night.dir.path().join("partial-record");
    let patches = record.join("patches");
    git_in(
        &partial,
        &["format-patch", "-q", "-1", "-o", patches.to_str().unwrap()],
    );
    std::fs::write(
        record.join("manifest.json"),
        format!("{{\"base_commit\": \"{next_commit}\", \"iterations\": [{{\"cycle\": 1}}]}}"),
    )
    .unwrap();
    std::fs::write(record.join("REFINE-LOOP-FINAL.md"), "# report\n").unwrap();
    let output = night.deliver("deliver-partial", &record, &next_commit);
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("this night's changes leave out some of"),
        "{stdout}"
    );
    assert!(night.gh_calls().is_empty());
    assert_eq!(night.branch().as_ref(), Some(&second));

    // A series with a patch the manifest does not describe fails the job, and pushes nothing.
    let copied = night.dir.path().join("copied");
    let status = Command::new("cp")
        .args([
            "-r",
            next_record.to_str().unwrap(),
            copied.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::write(copied.join("patches/0009-extra.patch"), "From 0\n").unwrap();
    let output = night.deliver("deliver-copied", &copied, &next_commit);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("::error::the series is not the one"),
        "{stdout}"
    );
    assert_eq!(night.branch().as_ref(), Some(&second));

    // Someone pushed to the branch: it is left as it is, with a warning.
    let person = night.clone("person");
    git_in(&person, &["switch", "-q", BRANCH]);
    std::fs::write(person.join("fixed.txt"), "by hand\n").unwrap();
    git_in(&person, &["commit", "-q", "-am", "by hand"]);
    git_in(&person, &["push", "-q", "origin", BRANCH]);
    let by_hand = night.branch().unwrap();
    let work = night.clone("work-2");
    std::fs::write(work.join("notes.txt"), "even more\n").unwrap();
    git_in(&work, &["commit", "-q", "-am", "even more"]);
    git_in(&work, &["push", "-q", "origin", "HEAD:main"]);
    let (last_record, last_commit) = night.run("run-5");
    let output = night.deliver("deliver-5", &last_record, &last_commit);
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("::warning::refine-loop/nightly ends in a commit"),
        "{stdout}"
    );
    assert_eq!(night.branch(), Some(by_hand));
}

/// A copy of the folder `from` at `to`.
fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    let status = Command::new("cp")
        .args(["-r", from.to_str().unwrap(), to.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn the_delivery_workflow_finds_records_at_any_depth_and_never_pushes_over_a_persons_commit() {
    let project =
        build_repo("[[delegate]]\ncategories = [\"build\"]\nrun = \"echo ok > fixed.txt\"\n");
    let night = Night::new(&project);
    let (record, commit) = night.run("run-1");
    assert!(record.join("manifest.json").exists());

    // One artifact: download-artifact (v5 on) extracts it straight into its path. An earlier
    // run the record keeps (runs/<id>/, its own manifest) is not delivered.
    let single = night.dir.path().join("single");
    copy(&record, &single);
    std::fs::create_dir_all(single.join("runs/earlier/patches")).unwrap();
    std::fs::write(
        single.join("runs/earlier/manifest.json"),
        format!("{{\"base_commit\": \"{}\"}}", "0".repeat(40)),
    )
    .unwrap();
    std::fs::copy(
        std::fs::read_dir(record.join("patches"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path(),
        single.join("runs/earlier/patches/0001-earlier.patch"),
    )
    .unwrap();
    let output = night.deliver_records("deliver-single", &single, &commit);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(starts(&night.gh_calls()), ["pr list", "pr create"]);
    let delivered = night
        .branch_named("refine-loop/harden")
        .expect("the single record's branch");

    // Several artifacts: each in a folder of its name; one without a change delivers nothing.
    let several = night.dir.path().join("several");
    copy(&record, &several.join("refine-loop-refine-a-1"));
    copy(&record, &several.join("refine-loop-refine-b-1"));
    std::fs::remove_dir_all(several.join("refine-loop-refine-b-1/patches")).unwrap();
    // `gh`'s stand-in knows one open pull request, whatever its branch: none for this one.
    std::fs::remove_file(night.dir.path().join("gh-open")).unwrap();
    let output = night.deliver_records("deliver-several", &several, &commit);
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("refine-loop-refine-b-1: no accepted change"),
        "{stdout}"
    );
    assert!(
        night
            .branch_named("refine-loop/refine-loop-refine-a-1")
            .is_some()
    );
    assert_eq!(starts(&night.gh_calls()), ["pr list", "pr create"]);

    // Someone pushed to the delivered branch: it is not forced over, and says so.
    let person = night.clone("person");
    git_in(&person, &["switch", "-q", "refine-loop/harden"]);
    std::fs::write(person.join("fixed.txt"), "by hand\n").unwrap();
    git_in(
        &person,
        &[
            "-c",
            "user.email=person@example.com",
            "commit",
            "-q",
            "-am",
            "by hand",
        ],
    );
    git_in(&person, &["push", "-q", "origin", "refine-loop/harden"]);
    let by_hand = night.branch_named("refine-loop/harden").unwrap();
    assert_ne!(by_hand, delivered);
    let output = night.deliver_records("deliver-again", &single, &commit);
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("::warning::refine-loop/harden ends in a commit that is not refine-loop's"),
        "{stdout}"
    );
    assert_eq!(night.branch_named("refine-loop/harden"), Some(by_hand));
    assert!(night.gh_calls().is_empty());

    // Nothing the workflow can read: it says so and ends green.
    let empty = night.dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let output = night.deliver_records("deliver-empty", &empty, &commit);
    assert!(output.status.success(), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stdout).contains("no record (manifest.json)"));
}
