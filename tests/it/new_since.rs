//! `run --new-since REF` (pull-request mode) on a real repository with real tools: ruff and
//! clippy report findings that were on `main` before the branch and two the branch added; only
//! the branch's two are worked, in the branch's files only, and the reports tell them apart, by
//! the change's lines and by the gate run on the base alike. Then the case the lines get wrong:
//! a change that causes a finding on a line it did not touch.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::run_loop::{json, run};
use crate::support::{Repo, tool};

/// `[loop] new_since` set to `mode`, a ruff check and a clippy check, their fixers.
fn config(mode: &str) -> String {
    let ruff = tool("ruff");
    format!(
        r#"[loop]
new_since = "{mode}"

[[gate.check]]
name = "ruff"
category = "lint"
run = "{ruff} check --no-cache --output-format=concise ."
parser = "ruff"

[[gate.check]]
name = "clippy"
category = "rust"
run = "cargo clippy --all-targets --message-format=short -- -D warnings"
parser = "clippy"

[[delegate]]
categories = ["lint"]
run = "{ruff} check --no-cache --fix ."

[[delegate]]
categories = ["rust"]
run = "cargo clippy --fix --allow-dirty --allow-staged --allow-no-vcs --all-targets"
"#
    )
}

/// `main` with a pre-existing ruff finding (`pkg/old.py`: `os` unused) and a pre-existing clippy
/// finding (`src/old.rs`: a needless `return`), and a branch `feature` that adds one of each in
/// files it changes (`pkg/app.py`, `src/shapes.rs`); checked out on the branch.
fn repository_with_a_branch(mode: &str) -> Repo {
    let repo = Repo::new();
    repo.write(".gitignore", "/target\n/.refine-loop\n.ruff_cache/\n");
    repo.write("pyproject.toml", "[tool.ruff.lint]\nselect = [\"F401\"]\n");
    repo.write("pkg/old.py", "import os\n\n\ndef legacy():\n    return 1\n");
    repo.write("pkg/app.py", "def run():\n    return 2\n");
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"since\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    );
    repo.write("src/lib.rs", "pub mod old;\npub mod shapes;\n");
    repo.write(
        "src/old.rs",
        "pub fn answer() -> i32 {\n    return 42;\n}\n",
    );
    repo.write(
        "src/shapes.rs",
        "pub fn area(w: i32, h: i32) -> i32 {\n    w * h\n}\n",
    );
    repo.write("refine-loop.toml", &config(mode));
    repo.commit("main: two pre-existing findings");
    repo.git(&["checkout", "-q", "-b", "feature"]);
    repo.write("pkg/app.py", "import sys\n\n\ndef run():\n    return 2\n");
    repo.write(
        "src/shapes.rs",
        "pub fn area(w: i32, h: i32) -> i32 {\n    w * h\n}\n\npub fn double(x: i32) -> i32 {\n    return x * 2;\n}\n",
    );
    repo.commit("feature: two new findings");
    repo
}

/// The files the run's patch series changes.
fn patched_files(repo: &Repo) -> BTreeSet<String> {
    let dir = repo.join(".refine-loop/patches");
    let mut files = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let patch = std::fs::read_to_string(entry.path()).unwrap();
        for line in patch.lines() {
            if let Some(rest) = line.strip_prefix("diff --git a/") {
                files.insert(rest.split(" b/").next().unwrap().to_string());
            }
        }
    }
    files
}

fn read(repo: &Repo, file: &str) -> String {
    std::fs::read_to_string(repo.join(file)).unwrap()
}

/// What a run in `mode` on the branch did: only the two new findings are worked.
fn only_the_branch_findings_are_worked(mode: &str) -> Value {
    let repo = repository_with_a_branch(mode);
    let output = run(&repo, &["--new-since", "main"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    // The new ones are fixed, the pre-existing ones untouched.
    assert!(!read(&repo, "pkg/app.py").contains("import sys"));
    assert!(!read(&repo, "src/shapes.rs").contains("return x * 2;"));
    assert!(read(&repo, "pkg/old.py").starts_with("import os\n"));
    assert!(read(&repo, "src/old.rs").contains("    return 42;\n"));
    // The patch touches only the branch's files.
    let patched = patched_files(&repo);
    assert!(!patched.is_empty());
    assert!(
        patched.is_subset(&BTreeSet::from([
            "pkg/app.py".into(),
            "src/shapes.rs".into()
        ])),
        "{patched:?}"
    );
    // run.json: the base, the change, the split.
    let notes = json(&repo, "run.json");
    let since = &notes["new_since"];
    assert_eq!(since["ref"], "main", "{notes}");
    assert_eq!(since["source"], "given");
    assert_eq!(since["mode"], mode);
    assert_eq!(since["base"].as_str().unwrap().len(), 40);
    assert_eq!(
        since["changed_files"],
        serde_json::json!(["pkg/app.py", "src/shapes.rs"])
    );
    assert_eq!(since["new_count"], 2, "{since}");
    assert_eq!(since["preexisting_count"], 2, "{since}");
    // The baseline's summary counts the new ones, the pre-existing ones apart.
    let baseline = json(&repo, "cycle-0/gate-summary.json");
    assert_eq!(baseline["failed_count"], 2, "{baseline}");
    assert_eq!(baseline["new_count"], 2);
    assert_eq!(baseline["preexisting_count"], 2);
    // The reports separate them.
    let report = read(&repo, ".refine-loop/REFINE-LOOP-FINAL.md");
    assert!(
        report.contains("2 pre-existing") && report.contains("new since"),
        "{report}"
    );
    let sarif = json(&repo, "report.sarif");
    let states: BTreeSet<String> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|result| result["baselineState"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(states, BTreeSet::from(["unchanged".to_string()]), "{sarif}");
    // JUnit: what was there before is skipped, not failed.
    let junit = repo.join(".refine-loop/junit.xml");
    crate::support::assert_valid_junit(&junit);
    let junit = std::fs::read_to_string(junit).unwrap();
    assert!(
        junit.contains("<skipped message=\"pre-existing, there before the change: "),
        "{junit}"
    );
    // And a check that fails only on those is no failure either.
    assert!(!junit.contains("<failure"), "{junit}");
    since.clone()
}

#[test]
fn new_since_works_only_the_branch_findings_by_lines_and_by_gate_alike() {
    let by_lines = only_the_branch_findings_are_worked("lines");
    let by_gate = only_the_branch_findings_are_worked("gate");
    for key in ["changed_files", "new_count", "preexisting_count"] {
        assert_eq!(by_lines[key], by_gate[key], "{key}");
    }
}

/// `main` uses `json` in `pkg/codec.py`; the branch drops that use (line 5), which leaves the
/// import on line 1, a line the branch did not touch, unused.
fn repository_where_the_change_causes_a_finding_elsewhere(mode: &str) -> Repo {
    let repo = Repo::new();
    repo.write(".gitignore", "/.refine-loop\n.ruff_cache/\n");
    repo.write("pyproject.toml", "[tool.ruff.lint]\nselect = [\"F401\"]\n");
    repo.write(
        "pkg/codec.py",
        "import json\n\n\ndef dump(value):\n    return json.dumps(value)\n",
    );
    let ruff = tool("ruff");
    repo.write(
        "refine-loop.toml",
        &format!(
            "[loop]\nnew_since = \"{mode}\"\n\n[[gate.check]]\nname = \"ruff\"\ncategory = \"lint\"\nrun = \"{ruff} check --no-cache --output-format=concise .\"\nparser = \"ruff\"\n\n\
             [[delegate]]\ncategories = [\"lint\"]\nrun = \"{ruff} check --no-cache --fix .\"\n"
        ),
    );
    repo.commit("main: clean");
    repo.git(&["checkout", "-q", "-b", "feature"]);
    repo.write(
        "pkg/codec.py",
        "import json\n\n\ndef dump(value):\n    return str(value)\n",
    );
    repo.commit("feature: json is no longer used");
    repo
}

#[test]
fn new_since_lines_misses_a_finding_the_change_caused_off_its_lines_and_gate_finds_it() {
    // By the lines: F401 is on line 1, which the branch did not touch: pre-existing, left.
    let repo = repository_where_the_change_causes_a_finding_elsewhere("lines");
    let output = run(&repo, &["--new-since", "main"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let baseline = json(&repo, "cycle-0/gate-summary.json");
    assert_eq!(baseline["new_count"], 0, "{baseline}");
    assert_eq!(baseline["preexisting_count"], 1);
    assert!(read(&repo, "pkg/codec.py").starts_with("import json\n"));
    // By the gate: main had no F401, so it is new, and fixed.
    let repo = repository_where_the_change_causes_a_finding_elsewhere("gate");
    let output = run(&repo, &["--new-since", "main"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let baseline = json(&repo, "cycle-0/gate-summary.json");
    assert_eq!(baseline["new_count"], 1, "{baseline}");
    assert_eq!(baseline["preexisting_count"], 0);
    assert!(!read(&repo, "pkg/codec.py").contains("import json"));
    let base = json(&repo, "cycle-0/new-since-base/gate-summary.json");
    assert_eq!(base["failed_count"], 0, "{base}");
}

/// The pull-request variables of every CI system the mode reads, removed.
const PULL_REQUEST_VARIABLES: [&str; 6] = [
    "GITHUB_EVENT_NAME",
    "GITHUB_BASE_REF",
    "CI_MERGE_REQUEST_DIFF_BASE_SHA",
    "CI_MERGE_REQUEST_TARGET_BRANCH_NAME",
    "CHANGE_TARGET",
    "GITHUB_ACTIONS",
];

fn run_with(repo: &Repo, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut command = repo.command(&["run"]);
    command.args(args);
    for name in PULL_REQUEST_VARIABLES {
        command.env_remove(name);
    }
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

#[test]
fn new_since_auto_reads_the_base_of_a_pull_request_from_the_environment() {
    let repo = repository_where_the_change_causes_a_finding_elsewhere("gate");
    // GitHub's pull_request event; `origin/main` is not in the clone, `main` is.
    let output = run_with(
        &repo,
        &["--new-since", "auto"],
        &[
            ("GITHUB_EVENT_NAME", "pull_request"),
            ("GITHUB_BASE_REF", "main"),
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let since = &json(&repo, "run.json")["new_since"];
    assert_eq!(since["ref"], "auto");
    assert_eq!(since["source"], "github");
    assert_eq!(since["changed_files"], serde_json::json!(["pkg/codec.py"]));
    // GitLab's merge request pipeline names the base commit itself.
    let repo = repository_where_the_change_causes_a_finding_elsewhere("lines");
    let main = crate::support::git_in(repo.path(), &["rev-parse", "main"]);
    let output = run_with(
        &repo,
        &[],
        &[
            ("REFINE_LOOP_NEW_SINCE", "auto"),
            ("CI_MERGE_REQUEST_DIFF_BASE_SHA", main.as_str()),
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let since = &json(&repo, "run.json")["new_since"];
    assert_eq!(since["source"], "gitlab");
    assert_eq!(since["base"], main.as_str());
}

#[test]
fn new_since_auto_outside_a_pull_request_is_a_full_run_that_says_so() {
    let repo = repository_where_the_change_causes_a_finding_elsewhere("lines");
    let output = run_with(&repo, &["--new-since", "auto"], &[]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let notes = json(&repo, "run.json");
    assert!(notes.get("new_since").is_none(), "{notes}");
    assert!(
        notes["new_since_skipped"]
            .as_str()
            .unwrap()
            .contains("a full run"),
        "{notes}"
    );
    // Every finding counted, and worked: the unused import is gone.
    assert_eq!(json(&repo, "cycle-0/gate-summary.json")["failed_count"], 1);
    assert!(!read(&repo, "pkg/codec.py").contains("import json"));
    let report = read(&repo, ".refine-loop/REFINE-LOOP-FINAL.md");
    assert!(report.contains("a full run"), "{report}");
}

#[test]
fn a_base_the_clone_does_not_hold_is_a_usage_error_by_name_and_a_full_run_for_auto() {
    // Named: the user asked for that base; nothing ran.
    let repo = repository_where_the_change_causes_a_finding_elsewhere("lines");
    let output = run_with(&repo, &["--new-since", "release"], &[]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let err = crate::support::stderr(&output);
    assert!(err.contains("fetch-depth: 0"), "{err}");
    assert!(!repo.join(".refine-loop/cycle-0").exists());

    // `auto`: the CI system's base where the checkout has it; a shallow one still gets its
    // verdict, as a full run that says why and what to fetch.
    let repo = repository_where_the_change_causes_a_finding_elsewhere("lines");
    let output = run_with(
        &repo,
        &["--new-since", "auto"],
        &[("CHANGE_TARGET", "release")],
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let notes = json(&repo, "run.json");
    let skipped = notes["new_since_skipped"].as_str().unwrap();
    assert!(
        skipped.contains("git fetch origin release") && skipped.contains("a full run"),
        "{notes}"
    );
    assert!(notes.get("new_since").is_none(), "{notes}");
}

#[test]
fn check_new_since_counts_only_the_new_findings() {
    let repo = repository_with_a_branch("lines");
    // Only the ruff half: the check needs no build.
    let ruff = tool("ruff");
    repo.write(
        "refine-loop.toml",
        &format!(
            "[[gate.check]]\nname = \"ruff\"\ncategory = \"lint\"\nrun = \"{ruff} check --no-cache --output-format=concise .\"\nparser = \"ruff\"\n"
        ),
    );
    let mut command = repo.command(&["check", "--new-since", "main"]);
    for name in PULL_REQUEST_VARIABLES {
        command.env_remove(name);
    }
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let summary = json(&repo, "cycle-0/gate-summary.json");
    assert_eq!(summary["failed_count"], 1, "{summary}");
    assert_eq!(summary["preexisting_count"], 1);
    let sarif = json(&repo, "report.sarif");
    let states: Vec<&str> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|result| result["baselineState"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["new", "unchanged"], "{sarif}");
}

#[test]
fn a_campaign_takes_auto_as_a_full_run_and_refuses_a_named_base() {
    // (new-since, exit code)
    for (given, code) in [("auto", 0), ("main", 2)] {
        let repo = crate::support::build_repo(
            "[[delegate]]\ncategories = [\"build\"]\nrun = \"echo ok > fixed.txt\"\nusage = \"none\"\n",
        );
        let mut command =
            repo.command(&["run", "--preset", "improve", "--new-since", given, "harden"]);
        command
            .env("GITHUB_EVENT_NAME", "pull_request")
            .env("GITHUB_BASE_REF", "main");
        let output = command.output().unwrap();
        assert_eq!(output.status.code(), Some(code), "{given}: {output:?}");
        if code == 0 {
            let notes = json(&repo, "run.json");
            assert!(
                notes["new_since_skipped"]
                    .as_str()
                    .unwrap()
                    .contains("a campaign"),
                "{notes}"
            );
        }
    }
}
