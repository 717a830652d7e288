//! What a command delegate spent: stand-in agents print each tool's documented machine-readable
//! output (`tests/fixtures/usage/`), and the run reads it with the delegate's `usage` reader into
//! the delegate's report and `trend.json`; a delegate without a reader is reported as unknown.

use crate::run_loop::{json, run};
use crate::support::{Repo, build_repo};

/// A stand-in agent that fixes the build and prints `fixture`, with `usage = reader`.
fn agent(fixture: &str, reader: &str) -> Repo {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/usage")
        .join(fixture);
    build_repo(&format!(
        "[[delegate]]\ncategories = [\"build\"]\nrun = \"echo ok > fixed.txt && cat '{}'\"\n\
         usage = \"{reader}\"\n",
        path.display()
    ))
}

fn report(repo: &Repo) -> String {
    std::fs::read_to_string(repo.join(".refine-loop/cycle-1/delegate-reports/fix-build.md"))
        .unwrap()
}

#[test]
fn a_claude_stand_in_reports_its_tokens_cost_turns_and_text() {
    let repo = agent("claude-stream-json.out", "claude-stream-json");
    let output = run(&repo, &[]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let report = report(&repo);
    assert!(
        report.contains(
            "- tokens: 37376 prompt + 137 completion = 37513; 31936 read from cache; \
             5430 written to cache; cost 0.0284 USD; 3 turn(s)"
        ),
        "{report}"
    );
    assert!(
        report.contains("## Its answer\n\n```text\nThe unused import is gone.\n```"),
        "{report}"
    );
    let cycle = &json(&repo, "trend.json")["cycles"][1];
    assert_eq!(cycle["tokens"]["total_tokens"], 37513, "{cycle}");
    assert_eq!(cycle["tokens"]["cost_usd"], 0.0283541, "{cycle}");
    assert_eq!(cycle["tokens"]["turns"], 3, "{cycle}");
    assert!(cycle.get("usage_unknown").is_none(), "{cycle}");
    let last = final_report(&repo);
    assert!(
        last.contains("Spent, as the delegates reported it: 37376 prompt + 137 completion"),
        "{last}"
    );
    // The commit of the kept change says what it cost, read by real `git interpret-trailers`.
    let patches = repo.join(".refine-loop/patches");
    let patch = std::fs::read_dir(&patches)
        .unwrap()
        .flatten()
        .find(|e| e.path().extension().is_some_and(|x| x == "patch"))
        .expect("a patch")
        .path();
    let trailers = std::process::Command::new("git")
        .args(["interpret-trailers", "--parse"])
        .arg(&patch)
        .output()
        .unwrap();
    let trailers = String::from_utf8_lossy(&trailers.stdout);
    assert!(
        trailers.contains(
            "Refine-Loop-Cost: tokens 37513 (prompt 37376, completion 137), cost 0.0284 USD"
        ),
        "{trailers}"
    );
}

fn final_report(repo: &Repo) -> String {
    std::fs::read_to_string(repo.join(".refine-loop/REFINE-LOOP-FINAL.md")).unwrap()
}

#[test]
fn codex_and_aider_stand_ins_report_what_their_readers_read() {
    let repo = agent("codex-json.out", "codex-json");
    assert_eq!(run(&repo, &[]).status.code(), Some(0));
    let tokens = &json(&repo, "trend.json")["cycles"][1]["tokens"];
    assert_eq!(tokens["prompt_tokens"], 24763 + 25102, "{tokens}");
    assert_eq!(tokens["turns"], 2, "{tokens}");
    assert!(
        tokens.get("cost_usd").is_none(),
        "codex prints no cost: {tokens}"
    );
    assert!(report(&repo).contains("Checked again: no findings remain in src/app.py."));

    let repo = agent("aider.out", "aider");
    assert_eq!(run(&repo, &[]).status.code(), Some(0));
    let tokens = &json(&repo, "trend.json")["cycles"][1]["tokens"];
    assert_eq!(tokens["cost_usd"], 0.07, "{tokens}");
    assert_eq!(tokens["completion_tokens"], 1363, "{tokens}");
}

#[test]
fn a_delegate_without_a_reader_reports_its_usage_unknown_never_free() {
    let repo =
        build_repo("[[delegate]]\ncategories = [\"build\"]\nrun = \"echo ok > fixed.txt\"\n");
    assert_eq!(run(&repo, &[]).status.code(), Some(0));
    let text = report(&repo);
    assert!(
        text.contains(
            "- tokens: usage unknown (no `usage` reader is configured for it); not counted as free"
        ),
        "{text}"
    );
    let cycle = &json(&repo, "trend.json")["cycles"][1];
    assert_eq!(cycle["usage_unknown"], 1, "{cycle}");
    assert!(cycle.get("tokens").is_none(), "{cycle}");
    let last = final_report(&repo);
    assert!(
        last.contains("Spent: unknown; the usage of 1 delegate run(s) is unknown"),
        "{last}"
    );

    // A reader that finds nothing says so too; `none` is no account, on purpose.
    let repo = agent("aider-no-cost.out", "claude-json");
    assert_eq!(run(&repo, &[]).status.code(), Some(0));
    assert!(
        report(&repo).contains(
            "usage unknown (its output held nothing the `claude-json` reader could read)"
        ),
        "{}",
        report(&repo)
    );
    let repo = agent("claude-json.out", "none");
    assert_eq!(run(&repo, &[]).status.code(), Some(0));
    assert!(!report(&repo).contains("- tokens:"), "{}", report(&repo));
    assert!(
        json(&repo, "trend.json")["cycles"][1]
            .get("usage_unknown")
            .is_none()
    );
}
