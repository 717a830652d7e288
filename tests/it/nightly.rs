//! Scheduled hardening: one improve campaign over three nights, each night on a fresh clone at
//! another path (as every CI runner checks out afresh), the state dir carried from night to
//! night as a tarball (as a CI cache or artifact carries it). Between the nights the project's
//! main branch moves on: new code with new findings, and the campaign's earlier patch merged as
//! one squashed commit. The fixer is the real `ruff check --fix`.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::{Repo, binary, command_in, git_in};

/// The project's main branch, and a folder for the nights' clones and tarballs.
struct Nights {
    origin: Repo,
    dir: tempfile::TempDir,
}

/// What one night left: its clone, its output, its state dir as a tarball.
struct Night {
    clone: PathBuf,
    output: Output,
    tarball: PathBuf,
}

impl Night {
    fn backlog(&self) -> serde_json::Value {
        backlog_of(&self.clone.join(".refine-loop"))
    }

    fn report(&self) -> String {
        std::fs::read_to_string(self.clone.join(".refine-loop/REFINE-LOOP-FINAL.md"))
            .unwrap_or_default()
    }

    fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.clone.join(relative)).unwrap()
    }

    fn patch(&self) -> String {
        std::fs::read_to_string(self.clone.join(".refine-loop/refine-loop.patch"))
            .unwrap_or_default()
    }
}

/// The backlog file's block of state: `provenance` and `backlog`.
fn state_of(state_dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(state_dir.join("REFINE-BACKLOG.md")).unwrap();
    let start = text.find("```json\n").unwrap() + "```json\n".len();
    let end = start + text[start..].find("\n```").unwrap();
    serde_json::from_str::<serde_json::Value>(&text[start..end]).unwrap()
}

fn backlog_of(state_dir: &Path) -> serde_json::Value {
    state_of(state_dir)["backlog"].clone()
}

const UTIL: &str = "import os\nimport sys\n\n\ndef greet(name):\n    return f\"hello\" + name\n";
const UTIL_FIXED: &str = "\n\ndef greet(name):\n    return \"hello\" + name\n";
const EXTRA: &str = "import json\n\n\ndef shout(text):\n    return f\"!\" + text\n";
const EXTRA_FIXED: &str = "\n\ndef shout(text):\n    return \"!\" + text\n";
const MORE: &str = "import re\n\n\ndef whisper(text):\n    return text\n";

impl Nights {
    /// A Python package with three ruff findings, `[campaign]` as given.
    fn new(campaign: &str) -> Self {
        let origin = crate::run_fixers::python_package_with_ruff_findings();
        assert_eq!(
            std::fs::read_to_string(origin.join("pkg/util.py")).unwrap(),
            UTIL
        );
        if !campaign.is_empty() {
            let config = std::fs::read_to_string(origin.join("refine-loop.toml")).unwrap();
            origin.write("refine-loop.toml", &format!("{config}\n{campaign}\n"));
            origin.commit("campaign settings");
        }
        Self {
            origin,
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// Night `number`: a fresh clone of main at a path of its own (with a space and a
    /// non-ASCII letter), the state of `before` restored into it, the campaign run with
    /// `--continue=auto`, and the state dir packed again.
    fn night(&self, number: u32, before: Option<&Night>) -> Night {
        let clone = self.fresh_clone(&format!("runner {number}/wörk"));
        if let Some(before) = before {
            untar(&before.tarball, &clone);
        }
        let output = command_in(
            &clone,
            binary(),
            &[
                "run",
                "--preset",
                "improve",
                "--continue=auto",
                "harden",
                "the",
                "package",
            ],
        )
        .output()
        .unwrap();
        let tarball = self.dir.path().join(format!("state-{number}.tgz"));
        tar(&clone, &tarball);
        Night {
            clone,
            output,
            tarball,
        }
    }

    /// A fresh clone of main at `relative` under the nights' folder.
    fn fresh_clone(&self, relative: &str) -> PathBuf {
        let clone = self.dir.path().join(relative);
        std::fs::create_dir_all(clone.parent().unwrap()).unwrap();
        let origin = self.origin.path().to_str().unwrap();
        git_in(
            self.dir.path(),
            &["clone", "-q", origin, clone.to_str().unwrap()],
        );
        clone
    }

    /// Main moves on: `files` committed as they are.
    fn commit(&self, files: &[(&str, &str)], message: &str) {
        for (path, text) in files {
            self.origin.write(path, text);
        }
        self.origin.commit(message);
    }

    /// The pull request of `night` merged as one squashed commit.
    fn squash_merge(&self, night: &Night) {
        let patch = night.clone.join(".refine-loop/refine-loop.patch");
        git_in(self.origin.path(), &["apply", patch.to_str().unwrap()]);
        self.origin.commit("Harden the package (#1)");
    }
}

fn tar(clone: &Path, tarball: &Path) {
    let status = std::process::Command::new("tar")
        .arg("-czf")
        .arg(tarball)
        .arg("-C")
        .arg(clone)
        .arg(".refine-loop")
        .status()
        .unwrap();
    assert!(status.success());
}

fn untar(tarball: &Path, clone: &Path) {
    let status = std::process::Command::new("tar")
        .arg("-xzf")
        .arg(tarball)
        .arg("-C")
        .arg(clone)
        .status()
        .unwrap();
    assert!(status.success());
}

fn says(night: &Night, what: &str) {
    let report = night.report();
    assert!(
        report.contains(what),
        "{what:?} not in the report:\n{report}\n{:?}",
        night.output
    );
}

#[test]
fn skipped_pending_work_is_not_redone_and_is_seen_landed_after_a_squash_merge() {
    let nights = Nights::new("");
    // Night 1 fixes the three findings.
    let one = nights.night(1, None);
    assert_eq!(one.output.status.code(), Some(0), "{:?}", one.output);
    assert_eq!(one.read("pkg/util.py"), UTIL_FIXED);
    let state = one.backlog();
    assert_eq!(state["counters"]["segment"], 1, "{state}");
    assert_eq!(state["earlier"][0]["status"], "recorded", "{state}");
    assert_eq!(state["earlier"][0]["families"], serde_json::json!(["lint"]));
    let rounds_one = state["counters"]["lifetime_rounds"].as_u64().unwrap();

    // Night 2: its pull request is still open, and main has new code with a finding.
    nights.commit(&[("pkg/extra.py", EXTRA)], "add extra");
    let two = nights.night(2, Some(&one));
    assert_eq!(two.output.status.code(), Some(1), "{:?}", two.output);
    assert!(
        String::from_utf8_lossy(&two.output.stdout).contains("NEEDS-FIX: pending-work"),
        "{:?}",
        two.output
    );
    says(&two, "segment 1 (run ");
    says(&two, "pending: not in HEAD, and it still applies");
    says(&two, "left alone while their earlier work is pending");
    // Nothing was redone: no delegate ran, no file changed, no new record.
    assert_eq!(two.read("pkg/util.py"), UTIL);
    assert_eq!(two.read("pkg/extra.py"), EXTRA);
    assert!(two.patch().is_empty(), "{}", two.patch());
    let stderr = String::from_utf8_lossy(&two.output.stderr);
    assert!(!stderr.contains("--fix"), "a delegate ran: {stderr}");
    let state = two.backlog();
    assert_eq!(state["counters"]["segment"], 2, "{state}");
    assert_eq!(state["earlier"][0]["status"], "pending", "{state}");
    assert_eq!(state["earlier"].as_array().unwrap().len(), 1, "{state}");

    // Night 3: night 1's pull request was squash-merged, and main edited that file since; the
    // campaign goes on from there.
    nights.squash_merge(&one);
    nights.commit(
        &[("pkg/util.py", &format!("# upstream\n{UTIL_FIXED}"))],
        "edit util",
    );
    let three = nights.night(3, Some(&two));
    assert_eq!(three.output.status.code(), Some(0), "{:?}", three.output);
    says(
        &three,
        "landed: HEAD holds its changes, with later edits around them",
    );
    assert_eq!(three.read("pkg/extra.py"), EXTRA_FIXED);
    let state = three.backlog();
    assert_eq!(state["counters"]["segment"], 3, "{state}");
    assert_eq!(state["counters"]["outcome"], "SUCCESS", "{state}");
    assert!(state["counters"]["lifetime_rounds"].as_u64().unwrap() > rounds_one);
    assert_eq!(state["earlier"][0]["status"], "landed", "{state}");
    assert_eq!(state["earlier"][1]["status"], "recorded", "{state}");
    assert!(three.patch().contains("pkg/extra.py"), "{}", three.patch());
    assert!(!three.patch().contains("pkg/util.py"), "{}", three.patch());
}

#[test]
fn reapplied_pending_work_is_verified_first_and_carried_in_the_next_patch() {
    let nights = Nights::new("[campaign]\npending = \"reapply\"");
    let one = nights.night(1, None);
    assert_eq!(one.output.status.code(), Some(0), "{:?}", one.output);

    // Night 2: night 1's work is not in main, whose file moved on above it; it is applied
    // again first, where its lines are now, then night 2's own work.
    let upstream = format!("# upstream\n{UTIL}");
    nights.commit(
        &[("pkg/extra.py", EXTRA), ("pkg/util.py", &upstream)],
        "add extra",
    );
    let two = nights.night(2, Some(&one));
    assert_eq!(two.output.status.code(), Some(0), "{:?}", two.output);
    says(&two, "applied again in segment 2, verified by the gate");
    assert_eq!(two.read("pkg/util.py"), format!("# upstream\n{UTIL_FIXED}"));
    assert_eq!(two.read("pkg/extra.py"), EXTRA_FIXED);
    // Its patch holds both nights' work on top of main.
    let patch = two.patch();
    assert!(
        patch.contains("pkg/util.py") && patch.contains("pkg/extra.py"),
        "{patch}"
    );
    let series = std::fs::read_dir(two.clone.join(".refine-loop/patches"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect::<Vec<_>>();
    assert_eq!(series.len(), 2, "{series:?}");
    let first = std::fs::read_dir(two.clone.join(".refine-loop/patches"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .min()
        .unwrap();
    let first = std::fs::read_to_string(first).unwrap();
    assert!(
        first.contains("Thesis: reapply: `refine-loop: the earlier accepted work applied again"),
        "{first}"
    );
    let state = two.backlog();
    assert_eq!(state["counters"]["segment"], 2, "{state}");
    assert_eq!(state["earlier"][0]["status"], "reapplied", "{state}");
    assert_eq!(state["earlier"][1]["families"], serde_json::json!(["lint"]));

    // Night 3: night 2's pull request (both nights) squash-merged, and new code again.
    nights.squash_merge(&two);
    nights.commit(&[("pkg/more.py", MORE)], "add more");
    let three = nights.night(3, Some(&two));
    assert_eq!(three.output.status.code(), Some(0), "{:?}", three.output);
    says(&three, "landed: HEAD holds its files as it left them");
    let state = three.backlog();
    assert_eq!(state["counters"]["segment"], 3, "{state}");
    assert_eq!(state["earlier"][1]["status"], "landed", "{state}");
    assert_eq!(state["earlier"][0]["status"], "reapplied", "{state}");
    let patch = three.patch();
    assert!(
        patch.contains("pkg/more.py") && !patch.contains("pkg/util.py"),
        "{patch}"
    );
}

#[test]
fn another_repositorys_state_is_refused_and_a_truncated_backlog_is_set_aside() {
    let nights = Nights::new("");
    let one = nights.night(1, None);
    assert_eq!(one.output.status.code(), Some(0), "{:?}", one.output);

    // Another repository (its own root commit), the same files: refused, nothing changed.
    let other = crate::run_fixers::python_package_with_ruff_findings();
    // Its own history (made within the same second from the same files, two roots are one).
    other.git(&["checkout", "-q", "--orphan", "another"]);
    other.commit("another history");
    untar(&one.tarball, other.path());
    let backlog = other.join(".refine-loop/REFINE-BACKLOG.md");
    let before = std::fs::read(&backlog).unwrap();
    let output = other.run(&[
        "run",
        "--preset",
        "improve",
        "--continue=auto",
        "harden",
        "it",
    ]);
    assert_eq!(output.status.code(), Some(4), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("belongs to another campaign: its root commit is"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&backlog).unwrap(), before);

    // A cache restored a truncated backlog: with --continue it is refused as it was ...
    let clone = nights.fresh_clone("runner 9/work");
    untar(&one.tarball, &clone);
    let backlog = clone.join(".refine-loop/REFINE-BACKLOG.md");
    let truncated = before[..before.len() / 2].to_vec();
    std::fs::write(&backlog, &truncated).unwrap();
    let run = |how: &str| {
        command_in(
            &clone,
            binary(),
            &["run", "--preset", "improve", how, "harden", "it"],
        )
        .output()
        .unwrap()
    };
    let output = run("--continue");
    assert_eq!(output.status.code(), Some(4), "{output:?}");
    assert_eq!(std::fs::read(&backlog).unwrap(), truncated);
    // ... and with --continue=auto it is set aside whole, and a new segment starts.
    let output = run("--continue=auto");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let aside: Vec<PathBuf> = std::fs::read_dir(clone.join(".refine-loop/set-aside"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    assert_eq!(
        std::fs::read(aside[0].join("REFINE-BACKLOG.md")).unwrap(),
        truncated
    );
    assert!(aside[0].join("REFINE-WORKLOG.md").is_file());
    assert!(aside[0].join("history/0001.patch").is_file());
    let state = backlog_of(&clone.join(".refine-loop"));
    assert_eq!(state["counters"]["segment"], 2, "{state}");
    let report = std::fs::read_to_string(clone.join(".refine-loop/REFINE-LOOP-FINAL.md")).unwrap();
    assert!(
        report.contains("the restored state could not be used"),
        "{report}"
    );
    assert!(report.contains("set aside in"), "{report}");
}

#[test]
fn a_finished_campaign_rests_until_its_intent_changes() {
    let nights = Nights::new("[campaign]\nmax_segments = 4");
    let one = nights.night(1, None);
    assert_eq!(one.output.status.code(), Some(0), "{:?}", one.output);
    // Night 1's fix landed: night 2 sees it, finds nothing left, and completes.
    nights.squash_merge(&one);
    let two = nights.night(2, Some(&one));
    assert_eq!(two.output.status.code(), Some(0), "{:?}", two.output);
    says(&two, "landed");
    // Night 3: complete, all landed, the same intent: it rests, fast, and says so.
    let three = nights.night(3, Some(&two));
    assert_eq!(three.output.status.code(), Some(0), "{:?}", three.output);
    let stderr = String::from_utf8_lossy(&three.output.stderr);
    assert!(
        stderr.contains("campaign finished: segment 2 ended with complete"),
        "{stderr}"
    );
    let worklog = three.read(".refine-loop/REFINE-WORKLOG.md");
    assert!(
        worklog.trim_end().ends_with("campaign finished: segment 2 ended with complete and the intent is the same; nothing ran"),
        "{worklog}"
    );
    assert_eq!(three.backlog()["counters"]["segment"], 2);
    // A new intent starts segment 3; max_segments = 4 allows one more after it.
    let output = command_in(
        &three.clone,
        binary(),
        &[
            "run",
            "--preset",
            "improve",
            "--continue=auto",
            "keep",
            "it",
            "clean",
        ],
    )
    .output()
    .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        backlog_of(&three.clone.join(".refine-loop"))["counters"]["segment"],
        3
    );
}

#[test]
fn a_campaign_started_in_a_shallow_clone_is_matched_by_its_remote_then_learns_its_root() {
    let nights = Nights::new("");
    let url = format!("file://{}", nights.origin.path().display());
    let shallow = nights.dir.path().join("shallow");
    git_in(
        nights.dir.path(),
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            &url,
            shallow.to_str().unwrap(),
        ],
    );
    let run = |dir: &Path| {
        command_in(
            dir,
            binary(),
            &["run", "--preset", "improve", "--continue=auto", "harden"],
        )
        .output()
        .unwrap()
    };
    let output = run(&shallow);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let identity = state_of(&shallow.join(".refine-loop"))["provenance"]["identity"].clone();
    assert_eq!(
        identity["root_commits"],
        serde_json::json!([]),
        "{identity}"
    );
    assert_eq!(
        identity["remote"],
        nights.origin.path().display().to_string()
    );
    // A full clone at another path (origin named by its plain path): the remote matches, and
    // the root commit is learnt.
    let full = nights.fresh_clone("full clone");
    tar(&shallow, &nights.dir.path().join("s.tgz"));
    untar(&nights.dir.path().join("s.tgz"), &full);
    // Night 1's fix is pending there (skip): exit 1, pending-work.
    let output = run(&full);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let report = std::fs::read_to_string(full.join(".refine-loop/REFINE-LOOP-FINAL.md")).unwrap();
    assert!(report.contains("matched by its remote"), "{report}");
    let identity = state_of(&full.join(".refine-loop"))["provenance"]["identity"].clone();
    let root = git_in(&full, &["rev-list", "--max-parents=0", "HEAD"]);
    assert_eq!(
        identity["root_commits"],
        serde_json::json!([root]),
        "{identity}"
    );
}
