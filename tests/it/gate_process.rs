//! The gate runner's hold on processes: deadlines, process groups, leftovers, cancellation,
//! interleaved output and infrastructure failures.

use crate::support::{Repo, live_members_of_group, read_pid, stdout};

fn config(run: &str, extra: &str) -> String {
    format!(
        "[gate]\nkill_grace = \"1s\"\n[[gate.check]]\nname = \"c\"\ncategory = \"tests\"\nrun = '''{run}'''\n{extra}"
    )
}

#[test]
fn deadline_leaves_no_process_of_the_group() {
    // The check starts a grandchild that ignores SIGTERM and holds the output pipe, then never
    // exits itself: only SIGKILL to the whole group ends it.
    let run = "echo $$ > leader.pid; (trap '' TERM; exec sleep 300) & echo $! > grandchild.pid; sleep 300";
    let repo = Repo::new();
    repo.write("refine-loop.toml", &config(run, "timeout = \"1s\"\n"));
    let output = repo.run(&["check"]);
    assert_eq!(output.status.code(), Some(4), "{output:?}");

    let leader = read_pid(&repo, "leader.pid");
    let grandchild = read_pid(&repo, "grandchild.pid");
    assert_ne!(leader, grandchild);
    assert_eq!(live_members_of_group(leader), Vec::<i32>::new());

    let summary = repo.summary();
    let check = &summary["checks"][0];
    assert_eq!(check["status"], "infra");
    assert_eq!(check["timed_out"], true);
    assert_eq!(check["signal"], 15, "the shell dies of SIGTERM");
    assert_eq!(summary["categories"]["infra"]["failures"], 1);
    assert!(summary["categories"].get("tests").is_none(), "{summary}");
    let detail = summary["categories"]["infra"]["details"][0]
        .as_str()
        .unwrap();
    assert!(
        detail.starts_with("c: stopped at its deadline of 1s"),
        "{detail}"
    );
}

#[test]
fn processes_left_behind_are_stopped_when_the_check_ends() {
    let run = "sleep 300 & echo $! > left.pid; echo done";
    let repo = Repo::new();
    repo.write("refine-loop.toml", &config(run, ""));
    let output = repo.run(&["check"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let left = read_pid(&repo, "left.pid");
    let stat = std::fs::read_to_string(format!("/proc/{left}/stat")).unwrap_or_default();
    let state = stat
        .rfind(')')
        .map(|i| stat[i + 1..].trim_start().chars().next());
    assert!(
        matches!(state, None | Some(Some('Z' | 'X'))),
        "still running: {stat}"
    );
    assert_eq!(repo.summary()["checks"][0]["status"], "passed");
}

#[test]
fn sigterm_mid_check_cancels_and_stops_the_group() {
    let repo = Repo::new();
    repo.write(
        "refine-loop.toml",
        &config("echo $$ > leader.pid; sleep 300", ""),
    );
    let mut child = repo
        .command(&["check"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    crate::support::wait_for_line(&repo.join("leader.pid"), "the check never started");
    let status = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let leader = read_pid(&repo, "leader.pid");
    assert_eq!(live_members_of_group(leader), Vec::<i32>::new());
    let summary = repo.summary();
    assert_eq!(summary["checks"][0]["infra_reason"], "cancelled");
}

#[test]
fn stdout_and_stderr_interleave_in_arrival_order() {
    let run = "echo out-1; echo err-1 >&2; echo out-2; echo err-2 >&2; exit 0";
    let repo = Repo::new();
    repo.write("refine-loop.toml", &config(run, ""));
    let output = repo.run(&["check"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let log = String::from_utf8(repo.gate_output()).unwrap();
    assert!(
        log.contains("\nout-1\nerr-1\nout-2\nerr-2\n<== check \"c\": exit code 0 after "),
        "{log}"
    );
    assert!(log.starts_with("==> refine-loop: check \"c\" · category tests · parser exit-code · cwd . <==\n$ echo out-1;"), "{log}");
}

#[test]
fn command_not_found_is_infra_not_a_finding() {
    let repo = Repo::new();
    repo.write(
        "refine-loop.toml",
        &config("no-such-linter-xyz --check", "parser = \"clippy\"\n"),
    );
    let output = repo.run(&["check"]);
    assert_eq!(output.status.code(), Some(4), "{output:?}");
    assert!(
        stdout(&output).contains("gate ERROR (infrastructure failure)"),
        "{output:?}"
    );
    // The console names the check and the command, not only the JSON.
    let named = stdout(&output)
        .lines()
        .find(|line| line.starts_with("check \"c\": command not found (exit code 127): "))
        .map(str::to_string);
    assert!(
        named
            .as_deref()
            .is_some_and(|line| line.contains("no-such-linter-xyz")),
        "{output:?}"
    );
    let summary = repo.summary();
    assert_eq!(summary["failed_count"], 1);
    assert_eq!(summary["categories"]["infra"]["failures"], 1);
    assert!(summary["categories"].get("tests").is_none());
    let detail = summary["categories"]["infra"]["details"][0]
        .as_str()
        .unwrap();
    assert!(
        detail.starts_with("c: command not found (exit code 127): "),
        "{detail}"
    );
    assert!(detail.contains("no-such-linter-xyz"), "{detail}");
}

#[test]
fn a_failing_check_without_findings_counts_once_unparsed() {
    let repo = Repo::new();
    repo.write(
        "refine-loop.toml",
        &config("echo something went wrong; exit 3", ""),
    );
    let output = repo.run(&["check"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let summary = repo.summary();
    assert_eq!(summary["failed_count"], 1);
    let tests = &summary["categories"]["tests"];
    assert_eq!(tests["unparsed"], true);
    let detail = tests["details"][0].as_str().unwrap();
    assert!(
        detail.starts_with("c: failed (exit code 3 after "),
        "{detail}"
    );
    assert!(
        detail.ends_with(
            "with no finding parser \"exit-code\" reads; output ends: something went wrong"
        ),
        "{detail}"
    );
}

#[test]
fn success_codes_and_cwd_and_env_apply() {
    let repo = Repo::new();
    repo.write("sub/marker", "");
    let extra = "success_codes = [0, 5]\ncwd = \"sub\"\nenv = { GREETING = \"hello\" }\n";
    repo.write(
        "refine-loop.toml",
        &config(
            "test -f marker && test \"$GREETING\" = hello && exit 5",
            extra,
        ),
    );
    let output = repo.run(&["check"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(repo.summary()["checks"][0]["exit_code"], 5);
}

#[test]
fn cancelling_between_checks_never_reports_a_pass() {
    // The first check asks refine-loop itself to stop; the second must not run.
    let repo = Repo::new();
    repo.write(
        "refine-loop.toml",
        "[[gate.check]]\nname = \"first\"\nrun = \"kill -TERM $PPID; sleep 1; exit 0\"\n\
         [[gate.check]]\nname = \"second\"\nrun = \"touch second-ran; exit 1\"\n",
    );
    let output = repo.run(&["check"]);
    assert_eq!(output.status.code(), Some(130), "{output:?}");
    let summary = repo.summary();
    assert_eq!(summary["cancelled"], true);
    assert_eq!(summary["overall_result"], "FAILED");
    assert_eq!(summary["not_run"], serde_json::json!(["second"]));
    assert!(!repo.join("second-ran").exists());
}

#[test]
fn output_held_open_outside_the_group_is_abandoned_and_recorded() {
    // setsid puts the sleeper in a new session, out of reach of the group's signals; it keeps
    // the pipe open. The check must still finish, and say so.
    let run = "setsid sh -c 'sleep 15' & echo done";
    let repo = Repo::new();
    repo.write("refine-loop.toml", &config(run, ""));
    let output = repo.run(&["check"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let check = &repo.summary()["checks"][0];
    assert_eq!(check["output_abandoned"], true, "{check}");
    assert_eq!(check["leftover_processes_stopped"], true, "{check}");
    assert_eq!(check["status"], "passed");
}

#[test]
fn workspace_relative_paths_from_a_member_cwd() {
    // cargo prints paths relative to the workspace root even when run in a member's folder.
    let repo = Repo::new();
    repo.write("crates/core/src/lib.rs", "");
    repo.write(
        "refine-loop.toml",
        &config(
            "echo 'crates/core/src/lib.rs:1:1: error: from the root'; echo 'src/lib.rs:2:1: error: from the member'; exit 1",
            "parser = \"clippy\"\ncwd = \"crates/core\"\n",
        ),
    );
    repo.run(&["check"]);
    assert_eq!(
        repo.summary()["categories"]["tests"]["details"],
        serde_json::json!([
            "crates/core/src/lib.rs:1:1: from the root",
            "crates/core/src/lib.rs:2:1: from the member"
        ])
    );
}
