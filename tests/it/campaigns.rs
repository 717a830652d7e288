//! Campaigns end to end: the refine preset with scripted discover, execute and reviewer
//! delegates; resuming after SIGTERM and continuing a finished campaign; the state dir's refusals;
//! the improve preset with a real fixer.

use std::process::{Command, Stdio};

use crate::support::Repo;

/// The campaign's machine-readable state, from REFINE-BACKLOG.md.
pub fn backlog(repo: &Repo) -> serde_json::Value {
    let text = std::fs::read_to_string(repo.join(".refine-loop/REFINE-BACKLOG.md")).unwrap();
    let start = text.find("```json\n").expect("a json block") + "```json\n".len();
    let end = start + text[start..].find("\n```").expect("closed block");
    let block: serde_json::Value = serde_json::from_str(&text[start..end]).unwrap();
    block["backlog"].clone()
}

/// A refine project: the gate passes; `todo.txt` lists refinements a discover delegate proposes
/// one per line; the executor does the first and appends it to `done.txt`; the reviewer approves.
fn refine_project(discover: &str, execute: &str, reviewer: &str) -> Repo {
    let repo = Repo::new();
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write("todo.txt", "rename-helpers\nsplit-parser\n");
    repo.write("done.txt", "");
    repo.write(
        "refine-loop.toml",
        &format!(
            r#"[loop]

[[gate.check]]
name = "build"
category = "build"
run = "test -f done.txt"

[[delegate]]
role = "discover"
lens = "refactoring"
run = '''{discover}'''

[[delegate]]
role = "execute"
run = '''{execute}'''
idle_timeout = "30s"

[[delegate]]
role = "reviewer"
run = '''{reviewer}'''
"#
        ),
    );
    repo.commit("refine project");
    repo
}

pub const DISCOVER: &str = r#"while read -r item; do
  printf '{"title":"%s","family":"tidy/%s","evidence":"todo.txt lists %s","paths":["done.txt"],"impact":4,"confidence":4,"effort":2,"behaviour_changing":false}\n' "$item" "$item" "$item"
done < todo.txt > "$REFINE_LOOP_CANDIDATES_FILE""#;
pub const EXECUTE: &str = r#"head -n 1 todo.txt >> done.txt; sed -i 1d todo.txt"#;
const APPROVE: &str = r#"echo approve > "$REFINE_LOOP_VERDICT_FILE""#;

#[test]
fn a_refine_campaign_accepts_one_reviewed_candidate_per_round_and_ends_by_plateau() {
    let repo = refine_project(DISCOVER, EXECUTE, APPROVE);
    let output = repo.run(&["run", "--preset", "refine", "tidy", "the", "helpers"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        std::fs::read_to_string(repo.join("done.txt")).unwrap(),
        "rename-helpers\nsplit-parser\n"
    );
    let state = backlog(&repo);
    let counters = &state["counters"];
    assert_eq!(counters["outcome"], "SUCCESS", "{state}");
    assert_eq!(counters["stop_reason"], "plateau");
    // Two rounds with an acceptance, then three with nothing qualified.
    assert_eq!(counters["round"], 5);
    assert_eq!(counters["plateau_count"], 3);
    let accepted: Vec<&str> = state["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "accepted")
        .map(|c| c["family"].as_str().unwrap())
        .collect();
    assert_eq!(accepted, ["tidy/rename-helpers", "tidy/split-parser"]);
    let goal = std::fs::read_to_string(repo.join(".refine-loop/REFINE-GOAL.md")).unwrap();
    assert!(goal.contains("tidy the helpers"), "{goal}");
    // The record: one commit per accepted round.
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo.join(".refine-loop/manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        manifest["iterations"].as_array().unwrap().len(),
        2,
        "{manifest}"
    );
}

#[test]
fn a_discover_delegate_or_reviewer_that_writes_is_undone_and_the_executors_change_judged_alone() {
    // The discover delegate proposes, and also edits todo.txt and leaves a file; the reviewer
    // approves, and also appends to done.txt, the very file the executor changed.
    let discover = format!("{DISCOVER}; echo scribbled >> todo.txt; echo x > discover-notes.txt");
    let reviewer = format!("echo reviewer >> done.txt; {APPROVE}");
    let repo = refine_project(&discover, EXECUTE, &reviewer);
    let output = repo.run(&["run", "--preset", "refine", "tidy"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    // The discover delegate's writes were undone each round; the executor's work stands alone.
    assert!(!repo.join("discover-notes.txt").exists());
    assert!(
        !std::fs::read_to_string(repo.join("todo.txt"))
            .unwrap()
            .contains("scribbled")
    );
    // The reviewer's edit was undone and its approval not taken: nothing was accepted, and the
    // executor's change went back with the rejected candidate.
    assert_eq!(std::fs::read_to_string(repo.join("done.txt")).unwrap(), "");
    let state = backlog(&repo);
    let statuses: Vec<&str> = state["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["status"].as_str().unwrap())
        .collect();
    assert!(!statuses.contains(&"accepted"), "{state}");
    let worklog = std::fs::read_to_string(repo.join(".refine-loop/REFINE-WORKLOG.md")).unwrap()
        + &std::fs::read_to_string(repo.join(".refine-loop/REFINE-BACKLOG.md")).unwrap();
    assert!(worklog.contains("while discovering; undone"), "{worklog}");
    assert!(worklog.contains("the reviewer edited files"), "{worklog}");
}

#[test]
fn a_behaviour_changing_candidate_is_handed_off_and_never_executed() {
    let discover = r#"printf '{"title":"fix the rounding bug","family":"bug/rounding","evidence":"totals are off by one cent","paths":["done.txt"],"impact":5,"confidence":5,"effort":1,"behaviour_changing":true}\n' > "$REFINE_LOOP_CANDIDATES_FILE""#;
    let repo = refine_project(discover, "echo executed >> executed.log", APPROVE);
    let output = repo.run(&["run", "--preset", "refine", "tidy"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(
        !repo.join("executed.log").exists(),
        "the handoff was executed"
    );
    let state = backlog(&repo);
    assert_eq!(state["counters"]["outcome"], "NEEDS-FIX");
    assert_eq!(state["counters"]["stop_reason"], "plateau with handoffs");
    assert_eq!(state["handoffs"][0]["family"], "bug/rounding");
    let report = std::fs::read_to_string(repo.join(".refine-loop/REFINE-LOOP-FINAL.md")).unwrap();
    assert!(
        report.contains("fix the rounding bug (bug/rounding, medium)"),
        "{report}"
    );
}

#[test]
fn sigterm_in_round_two_resumes_there_and_a_finished_campaign_continues_in_segment_two() {
    let outside = tempfile::tempdir().unwrap();
    let marker = outside.path().join("hung-once");
    // In round 2 the executor hangs once (until SIGTERM); after that it works.
    let execute = format!(
        "if [ \"$REFINE_LOOP_CYCLE\" = 2 ] && [ ! -e {m} ]; then touch {m}; sleep 300; fi; {EXECUTE}",
        m = marker.display()
    );
    let repo = refine_project(DISCOVER, &execute, APPROVE);
    let mut child = repo
        .command(&["run", "--preset", "refine", "tidy"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    crate::support::wait_for(&marker, "round 2 never started");
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let state = backlog(&repo);
    assert_eq!(state["counters"]["round"], 1, "{state}");
    assert_eq!(state["counters"]["round_in_progress"], true);
    assert_eq!(state["candidates"][0]["status"], "accepted");
    // Round 2's unverified change was undone.
    assert_eq!(
        std::fs::read_to_string(repo.join("done.txt")).unwrap(),
        "rename-helpers\n"
    );

    let output = repo.run(&["run", "--preset", "refine", "--continue"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let state = backlog(&repo);
    assert_eq!(state["counters"]["segment"], 1);
    assert_eq!(state["counters"]["round"], 5, "{state}");
    assert_eq!(
        state["candidates"][1]["round"], 2,
        "round 2 was done again: {state}"
    );
    let worklog = std::fs::read_to_string(repo.join(".refine-loop/REFINE-WORKLOG.md")).unwrap();
    assert!(worklog.contains("round 2: cancelled"), "{worklog}");

    // Finished: without --continue nothing runs; with it, segment 2 starts.
    let again = repo.run(&["run", "--preset", "refine"]);
    assert_eq!(again.status.code(), Some(0), "{again:?}");
    assert!(String::from_utf8_lossy(&again.stderr).contains("already ended with SUCCESS"));
    assert_eq!(backlog(&repo)["counters"]["round"], 5);
    let output = repo.run(&[
        "run",
        "--preset",
        "refine",
        "--continue",
        "now",
        "the",
        "docs",
    ]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let state = backlog(&repo);
    assert_eq!(state["counters"]["segment"], 2, "{state}");
    assert_eq!(state["counters"]["round"], 3);
    assert_eq!(state["counters"]["lifetime_rounds"], 8);
    assert_eq!(
        state["candidates"].as_array().unwrap().len(),
        2,
        "history kept"
    );
    let goal = std::fs::read_to_string(repo.join(".refine-loop/REFINE-GOAL.md")).unwrap();
    assert!(goal.contains("now the docs"), "{goal}");
}

#[test]
fn a_bad_request_and_a_bad_state_dir_are_refused_and_nothing_is_overwritten() {
    let repo = refine_project(DISCOVER, EXECUTE, APPROVE);
    for (args, says) in [
        (
            vec!["theta=1e1", "tidy"],
            "theta=1e1: theta must be a plain decimal",
        ),
        (vec!["focus=speed", "tidy"], "speed"),
        (vec![], "a new campaign needs an intent"),
    ] {
        let mut all = vec!["run", "--preset", "refine"];
        all.extend(args);
        let output = repo.run(&all);
        assert_eq!(output.status.code(), Some(2), "{output:?}");
        assert!(
            String::from_utf8_lossy(&output.stderr).contains(says),
            "{output:?}"
        );
    }
    // A partial set of state files.
    std::fs::create_dir_all(repo.join(".refine-loop")).unwrap();
    std::fs::write(repo.join(".refine-loop/REFINE-GOAL.md"), "mine\n").unwrap();
    let output = repo.run(&["run", "--preset", "refine", "tidy"]);
    assert_eq!(output.status.code(), Some(4), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("REFINE-BACKLOG.md"),
        "{output:?}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join(".refine-loop/REFINE-GOAL.md")).unwrap(),
        "mine\n"
    );
    // A symlinked state dir.
    let elsewhere = tempfile::tempdir().unwrap();
    let link = repo.join("linked-state");
    std::os::unix::fs::symlink(elsewhere.path(), &link).unwrap();
    let output = repo.run(&[
        "run",
        "--preset",
        "refine",
        "--state-dir=linked-state",
        "tidy",
    ]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(
        std::fs::read_dir(elsewhere.path())
            .unwrap()
            .next()
            .is_none()
    );
    // Another repository's campaign: its history starts at another root commit (made within
    // the same second from the same files, the two roots would be one commit).
    let other = refine_project(DISCOVER, EXECUTE, APPROVE);
    other.git(&["checkout", "-q", "--orphan", "another"]);
    other.commit("another history");
    let output = other.run(&["run", "--preset", "refine", "tidy"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let state_dir = other.join(".refine-loop");
    let backlog_file = state_dir.join("REFINE-BACKLOG.md");
    let before = std::fs::read(&backlog_file).unwrap();
    let output = repo.run(&[
        "run",
        "--preset",
        "refine",
        &format!("--state-dir={}", state_dir.display()),
        "tidy",
    ]);
    assert_eq!(output.status.code(), Some(4), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("belongs to another campaign: its root commit is"),
        "{output:?}"
    );
    assert_eq!(std::fs::read(&backlog_file).unwrap(), before);
    // A state file replaced by a symlink: refused, its target untouched.
    let worklog = state_dir.join("REFINE-WORKLOG.md");
    let decoy = elsewhere.path().join("decoy.md");
    std::fs::write(&decoy, "not the loop's\n").unwrap();
    let kept = std::fs::read(&worklog).unwrap();
    std::fs::remove_file(&worklog).unwrap();
    std::os::unix::fs::symlink(&decoy, &worklog).unwrap();
    let output = other.run(&["run", "--preset", "refine", "--continue", "more"]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("REFINE-WORKLOG.md"),
        "{output:?}"
    );
    assert_eq!(std::fs::read_to_string(&decoy).unwrap(), "not the loop's\n");
    std::fs::remove_file(&worklog).unwrap();
    std::fs::write(&worklog, kept).unwrap();
    // A second run while one holds the lock.
    let lock = std::fs::File::open(state_dir.join(".lock")).unwrap();
    lock.lock().unwrap();
    let output = other.run(&["run", "--preset", "refine", "--continue", "more"]);
    assert_eq!(output.status.code(), Some(4), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("another refine-loop run"),
        "{output:?}"
    );
    assert_eq!(std::fs::read(&backlog_file).unwrap(), before);
    drop(lock);
}

#[test]
fn an_improve_campaign_with_ruff_completes_only_after_two_clean_cycles() {
    let repo = crate::run_fixers::python_package_with_ruff_findings();
    let output = repo.run(&["run", "--preset", "improve", "harden", "the", "package"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("▸ improve · kickoff"), "{stderr}");
    assert!(
        stderr.contains("▸ improve · cycle 1/8 · failed 3→0"),
        "{stderr}"
    );
    let state = backlog(&repo);
    let counters = &state["counters"];
    // Cycle 1 fixed everything (streak 1); cycle 2 confirmed it (streak 2): complete.
    assert_eq!(counters["outcome"], "SUCCESS", "{state}");
    assert_eq!(counters["stop_reason"], "complete");
    assert_eq!(counters["round"], 2);
    assert_eq!(counters["residual_streak"], 2);
    assert_eq!(
        std::fs::read_to_string(repo.join("pkg/util.py")).unwrap(),
        "\n\ndef greet(name):\n    return \"hello\" + name\n"
    );
    // The patch series carries the ledger, with the backlog and the counters.
    let patches: Vec<_> = std::fs::read_dir(repo.join(".refine-loop/patches"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(patches.len(), 1, "{patches:?}");
    let patch = std::fs::read_to_string(&patches[0]).unwrap();
    for field in [
        "Subject: [PATCH] refine-loop: iteration 1 — failed 3→0 (lint 3→0)",
        "Thesis: lint: `",
        "Outcome: confirmed: failed 3→0",
        "Test evidence:",
        "What landed: pkg/util.py:",
        "Notes: none",
        "Next backlog: empty: nothing material open",
        "Stop-condition state: cycle 1 of at most 8; no-progress 0/3; same-error 0/3; residual streak 1/2",
    ] {
        assert!(patch.contains(field), "{field}:\n{patch}");
    }
}

#[test]
fn a_rejecting_reviewer_rolls_back_and_a_family_failing_three_rounds_rests() {
    let reject = r#"echo "reject renames a public function" > "$REFINE_LOOP_VERDICT_FILE""#;
    let repo = refine_project(DISCOVER, EXECUTE, reject);
    let output = repo.run(&["run", "--preset", "refine", "tidy"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    // Nothing was kept.
    assert_eq!(std::fs::read_to_string(repo.join("done.txt")).unwrap(), "");
    let state = backlog(&repo);
    let rested: Vec<&str> = state["cooldowns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["family"].as_str().unwrap())
        .collect();
    assert_eq!(
        rested,
        ["tidy/rename-helpers", "tidy/split-parser"],
        "{state}"
    );
    assert_eq!(state["cooldowns"][0]["since_round"], 3);
    // Three rounds of rejections (no plateau), then three with nothing left to try.
    assert_eq!(state["counters"]["round"], 6);
    assert!(
        state["rollbacks"][0]
            .as_str()
            .unwrap()
            .contains("reviewer: renames a public function"),
        "{state}"
    );
}

#[test]
fn a_broken_executor_is_an_operational_error_and_focus_picks_the_discover_delegates() {
    let repo = refine_project(DISCOVER, "no-such-command-xyz", APPROVE);
    let output = repo.run(&["run", "--preset", "refine", "tidy"]);
    assert_eq!(output.status.code(), Some(4), "{output:?}");
    let state = backlog(&repo);
    assert_eq!(state["counters"]["outcome"], "ERROR", "{state}");
    assert_eq!(state["counters"]["stop_reason"], "failure-limit");
    assert_eq!(state["counters"]["fail_count"], 3);

    // A lens out of focus: its discover delegate does not run, nothing is proposed.
    let repo = refine_project(DISCOVER, EXECUTE, APPROVE);
    let output = repo.run(&["run", "--preset", "refine", "focus=usability", "tidy"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(std::fs::read_to_string(repo.join("done.txt")).unwrap(), "");
    assert_eq!(backlog(&repo)["counters"]["round"], 3);

    // Campaigns work where their state is: no worktree isolation.
    let output = repo.run(&["run", "--preset", "refine", "--isolate", "worktree", "x"]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
}

#[test]
fn improve_never_runs_a_hostile_delegate_again_and_gives_its_work_to_the_next() {
    let outside = tempfile::tempdir().unwrap();
    let runs = outside.path().join("hostile-runs");
    let repo = crate::support::build_repo(&format!(
        "[[delegate]]\ncategories = [\"build\"]\n\
         run = \"echo run >> {runs}; ln -s /etc/hostname fixed.txt\"\n\n\
         [[delegate]]\ncategories = [\"build\"]\nrun = \"echo fixed > fixed.txt\"\n",
        runs = runs.display()
    ));
    let output = repo.run(&["run", "--preset", "improve", "fix", "the", "build"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        std::fs::read_to_string(&runs).unwrap(),
        "run\n",
        "the hostile delegate ran once"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("fixed.txt")).unwrap(),
        "fixed\n"
    );
    let report =
        std::fs::read_to_string(repo.join(".refine-loop/cycle-1/delegate-reports/fix-build.md"))
            .unwrap();
    assert!(
        report.contains("a symlink out of the repository"),
        "{report}"
    );
}

#[test]
fn sigterm_while_an_improve_delegate_works_rolls_its_unverified_change_back() {
    let outside = tempfile::tempdir().unwrap();
    let marker = outside.path().join("changed");
    let repo = crate::support::build_repo(&format!(
        "[[delegate]]\ncategories = [\"build\"]\n\
         run = \"echo fixed > fixed.txt; touch {m}; sleep 300\"\n",
        m = marker.display()
    ));
    let mut child = repo
        .command(&["run", "--preset", "improve", "fix", "the", "build"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    crate::support::wait_for(&marker, "the delegate never ran");
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert!(
        !repo.join("fixed.txt").exists(),
        "the unverified change was rolled back"
    );
    let report =
        std::fs::read_to_string(repo.join(".refine-loop/cycle-1/delegate-reports/fix-build.md"))
            .unwrap();
    assert!(
        report.contains("an unverified change is not kept"),
        "{report}"
    );
    let state = backlog(&repo);
    assert_eq!(
        state["counters"]["round"], 0,
        "the cycle is done again: {state}"
    );
}

#[test]
fn sigkill_in_round_two_is_recovered_and_the_campaign_resumes_there() {
    let outside = tempfile::tempdir().unwrap();
    let marker = outside.path().join("hung-once");
    // In round 2 the executor writes half its change and hangs once (until killed with the loop).
    let execute = format!(
        "if [ \"$REFINE_LOOP_CYCLE\" = 2 ] && [ ! -e {m} ]; then head -n 1 todo.txt >> done.txt; touch {m}; sleep 300; fi; {EXECUTE}",
        m = marker.display()
    );
    let repo = refine_project(DISCOVER, &execute, APPROVE);
    let mut child = repo
        .command(&["run", "--preset", "refine", "tidy"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    crate::support::wait_for(&marker, "round 2 never started");
    child.kill().unwrap();
    child.wait().unwrap();
    // Half of round 2's change is in the tree; nothing runs until it is put back.
    assert_eq!(
        std::fs::read_to_string(repo.join("done.txt")).unwrap(),
        "rename-helpers\nsplit-parser\n"
    );
    let refused = repo.run(&["run", "--preset", "refine", "--continue"]);
    assert_eq!(refused.status.code(), Some(4), "{refused:?}");
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("refine-loop recover"),
        "{refused:?}"
    );
    let recovered = repo.run(&["recover"]);
    assert_eq!(recovered.status.code(), Some(0), "{recovered:?}");
    let said = String::from_utf8_lossy(&recovered.stdout);
    assert!(said.contains("done.txt"), "{said}");
    assert!(
        said.contains("process(es) it left running were stopped"),
        "the hung executor was not stopped: {said}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("done.txt")).unwrap(),
        "rename-helpers\n"
    );

    let output = repo.run(&["run", "--preset", "refine", "--continue"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let state = backlog(&repo);
    assert_eq!(state["counters"]["round"], 5, "{state}");
    assert_eq!(state["candidates"][1]["status"], "accepted", "{state}");
    assert_eq!(
        std::fs::read_to_string(repo.join("done.txt")).unwrap(),
        "rename-helpers\nsplit-parser\n"
    );
}
