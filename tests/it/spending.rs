//! Spending caps held in flight. Stand-in agents print each reader's documented output
//! (`tests/fixtures/usage/`) a piece at a time, writing to the tree between the pieces as an
//! agent does: a streaming one that passes the cap is stopped at once (its later writes never
//! land, what it wrote is undone), a non-streaming one ends the run after the turn that passed
//! it, a campaign's lifetime cap stops the second night; and what the ledger says it spent is
//! what the readers read.

use std::path::{Path, PathBuf};

use crate::run_loop::{json, run};
use crate::support::{Repo, build_repo};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/usage")
        .join(name)
}

/// A stand-in agent: a shell script `name` (outside the repository) of `body`, with `$OUT` the
/// fixture `output` it prints from.
fn stand_in(dir: &Path, name: &str, output: &str, body: &str) -> PathBuf {
    let script = dir.join(format!("{name}.sh"));
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nOUT='{}'\nline() {{ sed -n \"$1p\" \"$OUT\"; }}\n{body}",
            fixture(output).display()
        ),
    )
    .unwrap();
    script
}

/// A run of a stand-in `agent` read by `reader` under the `[loop]` cap `cap`, which it passes in
/// flight: stopped (exit 3, `cost-budget`), its later write (`late.txt`) never made, its earlier
/// one (`fixed.txt`) undone. Returns the repository and the run's output.
fn stopped_in_flight(agent: &Path, reader: &str, cap: &str) -> (Repo, std::process::Output) {
    let repo = build_repo(&format!(
        "[loop]\n{cap}\n\n[[delegate]]\ncategories = [\"build\"]\n\
         run = \"sh '{}'\"\nusage = \"{reader}\"\n",
        agent.display()
    ));
    let output = run(&repo, &[]);
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    assert_eq!(json(&repo, "trend.json")["stop_reason"], "cost-budget");
    assert!(
        !repo.join("late.txt").exists(),
        "a write after the cap landed"
    );
    assert!(
        !repo.join("fixed.txt").exists(),
        "the stopped change was kept"
    );
    (repo, output)
}

fn spent(repo: &Repo) -> serde_json::Value {
    json(repo, "run.json")["spent"].clone()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_streaming_agent_past_the_token_cap_is_stopped_and_its_writes_never_land() {
    let scripts = tempfile::tempdir().unwrap();
    // claude -p --output-format stream-json: init, a message (18628 tokens), a tool result, a
    // second message (18885: 37513 in all, past the cap of 30000), then the result line.
    let agent = stand_in(
        scripts.path(),
        "claude",
        "claude-stream-json.out",
        "line 1; line 2; echo ok > fixed.txt\n\
         line 3; line 4; sleep 3; echo late > late.txt\n\
         line 5\n",
    );
    let (repo, _) = stopped_in_flight(&agent, "claude-stream-json", "max_tokens = 30000");
    // The ledger is the reader's: two messages' tokens, their cost unknown (no result line).
    let spent = spent(&repo);
    assert_eq!(spent["tokens"], 18628 + 18885, "{spent}");
    assert_eq!(spent["cost_unknown"], 1, "{spent}");
    let cycle = &json(&repo, "trend.json")["cycles"][1];
    assert_eq!(cycle["tokens"]["total_tokens"], spent["tokens"], "{cycle}");
    let report =
        std::fs::read_to_string(repo.join(".refine-loop/cycle-1/delegate-reports/fix-build.md"))
            .unwrap();
    assert!(report.contains("passed its spending cap"), "{report}");
    let last = std::fs::read_to_string(repo.join(".refine-loop/REFINE-LOOP-FINAL.md")).unwrap();
    assert!(
        last.contains(
            "Stopped at the spending cap: [loop] max_tokens = 30000 is spent (37513 tokens spent)"
        ),
        "{last}"
    );
}

#[test]
fn an_aider_stand_in_past_the_cost_cap_is_stopped_at_the_cost_line() {
    let scripts = tempfile::tempdir().unwrap();
    // aider: each reply ends with `Cost: $… message, $… session.`: 0.05, then 0.07 (past 0.06).
    let agent = stand_in(
        scripts.path(),
        "aider",
        "aider.out",
        "sed -n 1,15p \"$OUT\"; echo ok > fixed.txt\n\
         sed -n '16,$p' \"$OUT\"; sleep 3; echo late > late.txt\n",
    );
    let (repo, output) = stopped_in_flight(&agent, "aider", "max_cost = \"0.06 USD\"");
    let spent = spent(&repo);
    assert_eq!(spent["cost_usd"], 0.07, "{spent}");
    assert_eq!(spent["cost_unknown"], 0, "{spent}");
    assert!(
        stderr(&output).contains("[loop] max_cost = \"0.06 USD\" is spent"),
        "{}",
        stderr(&output)
    );
}

/// Two checks, each failing until its file exists, and a stand-in for each that makes it (the
/// build fixer only when `build_fixes`) and prints claude-json's one result line (0.0734215 USD).
fn two_categories(dir: &Path, config: &str, build_fixes: bool) -> Repo {
    let agent =
        |name: &str, fix: &str| stand_in(dir, name, "claude-json.out", &format!("{fix}line 1\n"));
    let build = agent(
        "build",
        if build_fixes {
            "echo ok > fixed.txt; "
        } else {
            ""
        },
    );
    let lint = agent("lint", "echo ok > linted.txt; ");
    let repo = Repo::new();
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write(
        "refine-loop.toml",
        &format!(
            "{config}\n\n\
             [[gate.check]]\nname = \"build\"\ncategory = \"build\"\n\
             run = \"test -f fixed.txt || {{ echo 'fixed.txt:1:1: error: missing'; exit 1; }}\"\n\
             parser = \"clippy\"\n\n\
             [[gate.check]]\nname = \"lint\"\ncategory = \"lint\"\n\
             run = \"test -f linted.txt || {{ echo 'linted.txt:1:1: error: missing'; exit 1; }}\"\n\
             parser = \"clippy\"\n\n\
             [[delegate]]\ncategories = [\"build\"]\nrun = \"sh '{}'\"\nusage = \"claude-json\"\n\n\
             [[delegate]]\ncategories = [\"lint\"]\nrun = \"sh '{}'\"\nusage = \"claude-json\"\n",
            build.display(),
            lint.display()
        ),
    );
    repo.commit("two checks");
    repo
}

#[test]
fn a_non_streaming_agent_ends_the_run_after_the_turn_that_passed_the_cap() {
    let scripts = tempfile::tempdir().unwrap();
    let repo = two_categories(
        scripts.path(),
        "[loop]\nmax_cost = \"0.05 USD\"\npriority = [\"build\", \"lint\"]",
        true,
    );
    let output = run(&repo, &[]);
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    assert_eq!(json(&repo, "trend.json")["stop_reason"], "cost-budget");
    assert!(
        stderr(&output).contains("stopping: cost-budget"),
        "{}",
        stderr(&output)
    );
    // Its turn finished: verified under the run's rules, and kept; no further turn started.
    assert!(repo.join("fixed.txt").exists(), "{}", stderr(&output));
    assert!(
        !repo.join("linted.txt").exists(),
        "a turn started past the cap"
    );
    assert!(
        !repo
            .join(".refine-loop/cycle-1/delegate-reports/fix-lint.md")
            .exists()
    );
    let spent = spent(&repo);
    assert_eq!(spent["cost_usd"], 0.0734215, "{spent}");
    assert_eq!(spent["turns"], 1, "{spent}");
    // The trend's cycle and the outputs say the same.
    let cycle = &json(&repo, "trend.json")["cycles"][1];
    assert_eq!(cycle["tokens"]["cost_usd"], 0.0734215, "{cycle}");

    // Without the cap, both turns run.
    let repo = two_categories(
        scripts.path(),
        "[loop]\npriority = [\"build\", \"lint\"]",
        true,
    );
    assert_eq!(run(&repo, &[]).status.code(), Some(0));
    assert_eq!(json(&repo, "run.json")["spent"]["turns"], 2);
}

#[test]
fn a_delegate_at_its_own_cap_sits_out_while_the_others_work() {
    let scripts = tempfile::tempdir().unwrap();
    let repo = two_categories(
        scripts.path(),
        "[loop]\npriority = [\"build\", \"lint\"]",
        false,
    );
    let config = std::fs::read_to_string(repo.join("refine-loop.toml")).unwrap();
    // The build fixer may spend 0.01 USD: its first turn (0.0734, no fix) passes it, so it sits
    // out from then on; the lint fixer works. With nobody left for build, the run ends.
    let config = config.replacen(
        "usage = \"claude-json\"\n",
        "usage = \"claude-json\"\nmax_cost = \"0.01 USD\"\n",
        1,
    );
    repo.write("refine-loop.toml", &config);
    repo.commit("cap the build fixer");
    let output = run(&repo, &[]);
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    assert!(repo.join("linted.txt").exists());
    assert_eq!(json(&repo, "run.json")["spent"]["turns"], 2);
    let stderr = stderr(&output);
    assert!(
        stderr.contains("every delegate that could take the work has spent its own cap"),
        "{stderr}"
    );
    assert!(
        stderr
            .contains("sits out the rest of the run: delegate[0] max_cost = \"0.01 USD\" is spent"),
        "{stderr}"
    );
}

#[test]
fn a_delegate_that_reports_nothing_is_refused_under_a_cap() {
    // (loop config, delegate config) → refused, and the key the error names
    let table = [
        ("max_cost = \"5 USD\"", "", Some("delegate[0].usage")),
        ("max_tokens = 1000", "", Some("delegate[0].usage")),
        (
            "max_cost = \"5 USD\"",
            "usage = \"codex-json\"",
            Some("delegate[0].usage"),
        ),
        ("max_tokens = 1000", "usage = \"codex-json\"", None),
        ("max_cost = \"5 USD\"", "usage = \"none\"", None),
        ("max_cost = \"5 USD\"", "usage = \"claude-json\"", None),
        (
            "",
            "usage = \"claude-json\"\nmax_cost = \"5 EUR\"",
            Some("max_cost"),
        ),
        (
            "max_tokens = 0",
            "usage = \"none\"",
            Some("loop.max_tokens"),
        ),
        ("", "", None),
    ];
    for (loop_config, delegate, refused) in table {
        let repo = build_repo(&format!(
            "[loop]\n{loop_config}\n\n[[delegate]]\ncategories = [\"build\"]\n\
             run = \"echo ok > fixed.txt\"\n{delegate}\n"
        ));
        let output = run(&repo, &[]);
        let stderr = stderr(&output);
        match refused {
            Some(key) => {
                assert_eq!(
                    output.status.code(),
                    Some(2),
                    "{loop_config} / {delegate}: {stderr}"
                );
                assert!(stderr.contains(key), "{key}: {stderr}");
                assert!(!repo.join("fixed.txt").exists());
            }
            None => assert_eq!(
                output.status.code(),
                Some(0),
                "{loop_config} / {delegate}: {stderr}"
            ),
        }
    }
}

#[test]
fn a_campaign_lifetime_cap_stops_the_second_night() {
    let scripts = tempfile::tempdir().unwrap();
    // An agent that spends 0.0734 USD a night and fixes nothing.
    let agent = stand_in(scripts.path(), "claude", "claude-json.out", "line 1\n");
    let repo = build_repo(&format!(
        "[campaign]\nmax_lifetime_cost = \"0.10 USD\"\n\n[[delegate]]\n\
         run = \"sh '{}'\"\nusage = \"claude-json\"\n",
        agent.display()
    ));
    let night = |args: &[&str]| {
        let mut command = repo.command(&["run", "--preset", "improve"]);
        command.args(args).env("IMPROVE_LOOP_MAX_CYCLES", "1");
        command.output().unwrap()
    };
    let first = night(&["harden"]);
    assert_eq!(first.status.code(), Some(3), "{first:?}");
    assert_eq!(json(&repo, "trend.json")["stop_reason"], "max-cycles");
    let books = crate::campaigns::backlog(&repo);
    assert_eq!(
        books["counters"]["lifetime_spent"]["cost_usd"], 0.0734215,
        "{books}"
    );

    let second = night(&["--continue"]);
    assert_eq!(second.status.code(), Some(3), "{second:?}");
    assert_eq!(json(&repo, "trend.json")["stop_reason"], "cost-budget");
    assert!(
        stderr(&second)
            .contains("[campaign] max_lifetime_cost = \"0.10 USD\" is spent (0.1468 USD spent)"),
        "{}",
        stderr(&second)
    );
    let books = crate::campaigns::backlog(&repo);
    assert_eq!(books["counters"]["lifetime_spent"]["turns"], 2, "{books}");

    // The third night finds the campaign finished, and starts no agent.
    let third = night(&["--continue"]);
    assert!(
        stderr(&third).contains("lifetime spending cap"),
        "{third:?}"
    );
    let books = crate::campaigns::backlog(&repo);
    assert_eq!(books["counters"]["lifetime_spent"]["turns"], 2, "{books}");
}

#[test]
fn a_campaign_segment_ends_at_its_cap_and_the_next_segment_starts_afresh() {
    let scripts = tempfile::tempdir().unwrap();
    // 0.0734 USD a turn, nothing fixed: the segment's cap of 0.10 is reached at its second turn.
    let agent = stand_in(scripts.path(), "claude", "claude-json.out", "line 1\n");
    let repo = build_repo(&format!(
        "[loop]\nmax_cost = \"0.10 USD\"\n\n[[delegate]]\n\
         run = \"sh '{}'\"\nusage = \"claude-json\"\n",
        agent.display()
    ));
    let night = |args: &[&str]| {
        let mut command = repo.command(&["run", "--preset", "improve"]);
        command.args(args).env("IMPROVE_LOOP_MAX_CYCLES", "5");
        command.output().unwrap()
    };
    let first = night(&["harden"]);
    assert_eq!(first.status.code(), Some(3), "{first:?}");
    let books = crate::campaigns::backlog(&repo);
    let counters = &books["counters"];
    assert_eq!(counters["stop_reason"], "cost-budget", "{books}");
    assert_eq!(counters["outcome"], "BUDGET", "{books}");
    assert_eq!(counters["segment_spent"]["turns"], 2, "{books}");

    // The next segment has its own cap: two more turns, then cost-budget again.
    let second = night(&["--continue"]);
    assert_eq!(second.status.code(), Some(3), "{second:?}");
    let books = crate::campaigns::backlog(&repo);
    let counters = &books["counters"];
    assert_eq!(counters["segment"], 2, "{books}");
    assert_eq!(counters["stop_reason"], "cost-budget", "{books}");
    assert_eq!(counters["segment_spent"]["turns"], 2, "{books}");
    assert_eq!(counters["lifetime_spent"]["turns"], 4, "{books}");
}

#[test]
fn another_delegate_for_the_category_takes_over_from_one_at_its_cap() {
    let scripts = tempfile::tempdir().unwrap();
    let agent = stand_in(scripts.path(), "claude", "claude-json.out", "line 1\n");
    let repo = build_repo(&format!(
        "[[delegate]]\ncategories = [\"build\"]\nrun = \"sh '{}'\"\nusage = \"claude-json\"\n\
         max_cost = \"0.01 USD\"\n\n\
         [[delegate]]\ncategories = [\"build\"]\nrun = \"echo ok > fixed.txt\"\nusage = \"none\"\n",
        agent.display()
    ));
    let output = run(&repo, &[]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(repo.join("fixed.txt").exists());
    assert_eq!(spent(&repo)["turns"], 2);
}

#[test]
fn in_a_refine_round_no_role_starts_once_the_cap_is_reached() {
    // Discover, execute and review each print claude-json's result (0.0734 USD): the cap of
    // 0.10 is reached by the executor, so no reviewer starts, and nothing unreviewed is kept.
    let print = format!("; cat '{}'", fixture("claude-json.out").display());
    let repo = Repo::new();
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write("todo.txt", "rename-helpers\nsplit-parser\n");
    repo.write("done.txt", "");
    let role = |role: &str, run: &str| {
        format!(
            "[[delegate]]\nrole = \"{role}\"\nrun = '''{run}{print}'''\nusage = \"claude-json\"\n"
        )
    };
    repo.write(
        "refine-loop.toml",
        &format!(
            "[loop]\nmax_cost = \"0.10 USD\"\n\n[[gate.check]]\nname = \"build\"\ncategory = \"build\"\n\
             run = \"test -f done.txt\"\n\n{}\nlens = \"refactoring\"\n\n{}\n{}",
            role("discover", crate::campaigns::DISCOVER),
            role("execute", crate::campaigns::EXECUTE),
            role("reviewer", "touch reviewed.txt; echo approve > \"$REFINE_LOOP_VERDICT_FILE\"")
        ),
    );
    repo.commit("refine project");
    let output = repo.run(&["run", "--preset", "refine", "tidy"]);
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    let books = crate::campaigns::backlog(&repo);
    assert_eq!(books["counters"]["stop_reason"], "cost-budget", "{books}");
    assert_eq!(books["counters"]["segment_spent"]["turns"], 2, "{books}");
    assert!(
        !repo.join("reviewed.txt").exists(),
        "the reviewer started past the cap"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("done.txt")).unwrap(),
        "",
        "an unreviewed change was kept"
    );
}
