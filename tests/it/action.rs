//! The GitHub Action's run script, run here with a fake `GITHUB_*` environment: the outputs
//! file, the step summary and the annotation lines (GitHub's limits and escaping); and its steps
//! replayed in order, with the campaign's cache steps, across nights.

use std::process::Command;

use crate::support::{Repo, assert_valid_junit, binary, build_repo};

mod endings;
mod expression;
mod nightly_delivery;
mod pull_requests;
mod replay;

#[test]
fn the_action_script_writes_outputs_summary_and_annotations_within_githubs_limits() {
    let repo = Repo::new();
    let mut findings: String = (1..=12)
        .map(|n| format!("src/lib.rs:{n}:1: error: finding {n}\n"))
        .collect();
    findings.push_str("src/lib.rs:2:5: error: 50% done, a:b\n");
    findings.push_str("src/lib.rs:30:1: warning: one warning\n");
    repo.write("findings.txt", &findings);
    repo.write("src/lib.rs", "fn main() {}\n");
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write(
        "refine-loop.toml",
        "[[gate.check]]\nname = \"lint\"\ncategory = \"lint\"\nrun = \"cat findings.txt; ! grep -q error findings.txt\"\nparser = \"clippy\"\n\n\
         [[delegate]]\ncategories = [\"lint\"]\nrun = \"sed -i 1d findings.txt\"\n",
    );
    repo.commit("findings");
    let github = tempfile::tempdir().unwrap();
    let (outputs, summary) = (github.path().join("output"), github.path().join("summary"));
    std::fs::write(&summary, "earlier step text\n").unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ci/action/run.sh");
    let output = Command::new("bash")
        .arg(&script)
        .current_dir(repo.path())
        .env("REFINE_LOOP_BIN", binary())
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_WORKSPACE", repo.path())
        .env("GITHUB_OUTPUT", &outputs)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_RUN_ATTEMPT", "1")
        .env("REFINE_LOOP_JOB", "harden")
        .env("REFINE_LOOP_MATRIX", "null")
        .env_remove("GITHUB_WORKFLOW")
        .env_remove("GITHUB_JOB")
        .env("INPUT_TARGET", "")
        .env("INPUT_PRESET", "refactoring")
        .env("INPUT_MAX_CYCLES", "1")
        .env("INPUT_EXIT_ZERO", "true")
        .env_remove("GITLAB_CI")
        .env_remove("JENKINS_URL")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");

    let written = std::fs::read_to_string(&outputs).unwrap();
    for line in [
        "outcome=BUDGET",
        "stop-reason=max-cycles",
        "failed-before=13",
        "failed-after=12",
        "cycles=1",
    ] {
        assert!(written.lines().any(|l| l == line), "{line}:\n{written}");
    }
    assert!(
        written.contains("artifact-name=refine-loop-harden-"),
        "{written}"
    );
    assert!(
        written.contains("report-path=") && written.contains("patch-path="),
        "{written}"
    );

    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(
        text.starts_with("earlier step text\n"),
        "appended, not replaced"
    );
    assert!(text.contains("refine-loop: BUDGET"), "{text}");
    assert!(text.contains("xychart-beta"), "{text}");

    // 12 errors and 1 warning remain: 10 errors, the warning, one notice for the rest.
    let stdout = String::from_utf8_lossy(&output.stdout);
    let count = |prefix: &str| stdout.lines().filter(|l| l.starts_with(prefix)).count();
    assert_eq!(count("::error "), 10, "{stdout}");
    assert_eq!(count("::warning "), 1, "{stdout}");
    assert_eq!(count("::notice "), 1, "{stdout}");
    assert!(stdout.contains("file=src/lib.rs,line=2,"), "{stdout}");
    assert!(stdout.contains("50%25 done, a:b"), "{stdout}");
    assert_eq!(count("::group::refine-loop cycle 1"), 1, "{stdout}");
    assert_eq!(count("::endgroup::"), 1, "{stdout}");

    // The reports other CI systems read describe what remains: 12 errors, 1 warning.
    let state = repo.join(".refine-loop");
    let sarif: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(state.join("report.sarif")).unwrap())
            .unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    assert_eq!(sarif["runs"][0]["results"].as_array().unwrap().len(), 13);
    // The job the action names (no matrix): code scanning's category for this job.
    assert_eq!(
        sarif["runs"][0]["automationDetails"]["id"],
        "refine-loop/harden/"
    );
    let quality: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(state.join("codequality.json")).unwrap())
            .unwrap();
    assert_eq!(quality.as_array().unwrap().len(), 13);
    let junit = std::fs::read_to_string(state.join("junit.xml")).unwrap();
    assert!(junit.contains("<testsuite name=\"lint\""), "{junit}");
    assert_valid_junit(&state.join("junit.xml"));
}

/// Runs `ci/action/run.sh` in `repo` as the composite action does, with a fake GitHub
/// environment in `github` (its own process group, so that a test can signal it as the runner
/// does); `inputs` are (INPUT_* name, value).
fn action_run(repo: &Repo, github: &std::path::Path, inputs: &[(&str, &str)]) -> Command {
    use std::os::unix::process::CommandExt;
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ci/action/run.sh");
    let mut command = Command::new("bash");
    command
        .arg(&script)
        .current_dir(repo.path())
        .env("REFINE_LOOP_BIN", binary())
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_WORKSPACE", repo.path())
        .env("GITHUB_OUTPUT", github.join("output"))
        .env("GITHUB_STEP_SUMMARY", github.join("summary"))
        .env("REFINE_LOOP_JOB", "harden")
        .env_remove("GITLAB_CI")
        .env_remove("JENKINS_URL")
        .process_group(0);
    for (name, value) in inputs {
        command.env(name, value);
    }
    command
}

/// An improve campaign on `repo` through the action, with `inputs` beside the preset.
fn improve_through_action(
    repo: &Repo,
    github: &std::path::Path,
    inputs: &[(&str, &str)],
) -> std::process::Output {
    let mut all = vec![("INPUT_PRESET", "improve")];
    all.extend_from_slice(inputs);
    action_run(repo, github, &all).output().unwrap()
}

/// What a campaign through the action must leave: the CI reports, the outputs and the summary.
fn assert_published(repo: &Repo, github: &std::path::Path, outcome: &str) -> String {
    let state = repo.join(".refine-loop");
    for file in [
        "junit.xml",
        "report.sarif",
        "codequality.json",
        "trend.json",
    ] {
        assert!(state.join(file).is_file(), "{file} was not written");
    }
    assert_valid_junit(&state.join("junit.xml"));
    let outputs = std::fs::read_to_string(github.join("output")).unwrap();
    for name in [
        "stop-reason",
        "failed-before",
        "failed-after",
        "report-path",
    ] {
        assert!(
            outputs.lines().any(|l| l.starts_with(&format!("{name}="))),
            "{name}:\n{outputs}"
        );
    }
    assert!(
        outputs.lines().any(|l| l == format!("outcome={outcome}")),
        "{outputs}"
    );
    let summary = std::fs::read_to_string(github.join("summary")).unwrap();
    assert!(
        summary.contains(&format!("## refine-loop: {outcome}")),
        "{summary}"
    );
    outputs
}

#[test]
fn an_improve_campaign_through_the_action_publishes_like_the_refactoring_loop() {
    let repo =
        build_repo("[[delegate]]\ncategories = [\"build\"]\nrun = \"echo ok > fixed.txt\"\n");
    let github = tempfile::tempdir().unwrap();
    let output = improve_through_action(&repo, github.path(), &[("INPUT_INTENT", "fix the build")]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let outputs = assert_published(&repo, github.path(), "SUCCESS");
    assert!(outputs.contains("stop-reason=complete"), "{outputs}");
    assert!(outputs.contains("failed-before=1"), "{outputs}");
    assert!(outputs.contains("failed-after=0"), "{outputs}");
}

#[test]
fn a_refine_campaign_through_the_action_publishes_like_the_refactoring_loop() {
    let repo = build_repo(
        "[[delegate]]\nrole = \"execute\"\nrun = \"true\"\n\n\
         [[delegate]]\nrole = \"reviewer\"\nrun = \"echo approve > \\\"$REFINE_LOOP_VERDICT_FILE\\\"\"\n",
    );
    let github = tempfile::tempdir().unwrap();
    let output = action_run(
        &repo,
        github.path(),
        &[
            ("INPUT_PRESET", "refine"),
            ("INPUT_INTENT", "-tidy the build"),
        ],
    )
    .output()
    .unwrap();
    // The finding is a candidate whose executor changes nothing: the rounds plateau with it.
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let outputs = assert_published(&repo, github.path(), "SUCCESS");
    assert!(outputs.contains("failed-after=1"), "{outputs}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("::error file=fixed.txt,line=1"),
        "the finding that remains is annotated: {stdout}"
    );
    let goal = std::fs::read_to_string(repo.join(".refine-loop/REFINE-GOAL.md")).unwrap();
    assert!(goal.contains("-tidy the build"), "{goal}");
}

#[test]
fn a_cancelled_improve_campaign_through_the_action_rolls_back_and_still_publishes() {
    let outside = tempfile::tempdir().unwrap();
    let marker = outside.path().join("changed");
    let repo = build_repo(&format!(
        "[[delegate]]\ncategories = [\"build\"]\n\
         run = \"echo ok > fixed.txt; touch {}; sleep 300\"\n",
        marker.display()
    ));
    let github = tempfile::tempdir().unwrap();
    let mut child = action_run(
        &repo,
        github.path(),
        &[
            ("INPUT_PRESET", "improve"),
            ("INPUT_INTENT", "fix the build"),
        ],
    )
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    .spawn()
    .unwrap();
    crate::support::wait_for(&marker, "the delegate never ran");
    // The runner cancels a step by signalling its process group.
    let group = format!("-{}", child.id());
    Command::new("kill")
        .args(["-TERM", "--", &group])
        .status()
        .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert!(
        !repo.join("fixed.txt").exists(),
        "the unverified change was rolled back"
    );
    let outputs = assert_published(&repo, github.path(), "CANCELLED");
    assert!(outputs.contains("stop-reason=cancelled"), "{outputs}");
}

#[test]
fn a_run_that_ends_in_an_error_still_publishes_and_exit_zero_keeps_it_red() {
    let repo = Repo::new();
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write(
        "refine-loop.toml",
        "[[gate.check]]\nname = \"lint\"\ncategory = \"lint\"\nrun = \"refine-loop-no-such-linter .\"\n\n\
         [[delegate]]\ncategories = [\"lint\"]\nrun = \"true\"\n",
    );
    repo.commit("a gate whose tool is missing");
    // `exit-zero: true` passes `--exit-zero`, which keeps an ERROR red; `all` hides it.
    for (exit_zero, code) in [("true", 4), ("false", 4), ("all", 0)] {
        let github = tempfile::tempdir().unwrap();
        let output = action_run(&repo, github.path(), &[("INPUT_EXIT_ZERO", exit_zero)])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(code), "{output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("refine-loop-no-such-linter (check \"lint\") is not installed"),
            "{stderr}"
        );
        let outputs = std::fs::read_to_string(github.path().join("output")).unwrap();
        let state_dir = format!("state-dir={}", repo.join(".refine-loop").display());
        for line in [
            "outcome=ERROR",
            "stop-reason=",
            "failed-after=1",
            &state_dir,
        ] {
            assert!(outputs.lines().any(|l| l == line), "{line}:\n{outputs}");
        }
        let summary = std::fs::read_to_string(github.path().join("summary")).unwrap();
        assert!(summary.contains("## refine-loop: ERROR"), "{summary}");
        assert!(
            summary.contains("- **Error:** infrastructure failure"),
            "{summary}"
        );
        let report =
            std::fs::read_to_string(repo.join(".refine-loop/REFINE-LOOP-FINAL.md")).unwrap();
        assert!(report.contains("the run ended in an error"), "{report}");
    }
}

#[test]
fn the_ci_reports_name_paths_from_the_repository_root_whatever_the_target() {
    let repo = Repo::new();
    repo.write("services/shop/cart.py", "x = 1\n");
    repo.write(
        "services/shop/refine-loop.toml",
        "[[gate.check]]\nname = \"lint\"\ncategory = \"lint\"\n\
         run = \"echo 'cart.py:1:1: error: boom'; echo 'services/shop/lib/tax.py:2:1: error: from the root'; echo 'error: no file here'; exit 1\"\nparser = \"clippy\"\n",
    );
    repo.write("services/shop/lib/tax.py", "y = 2\n");
    repo.write(".gitignore", ".refine-loop/\n");
    repo.commit("a service in a subfolder");
    let output = repo.run(&["check", "--target", "services/shop"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let state = repo.join("services/shop/.refine-loop");
    let sarif: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(state.join("report.sarif")).unwrap())
            .unwrap();
    let uris: Vec<&str> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
        })
        .collect();
    // A path the tool gave from the root (as cargo does for a workspace member) is not
    // prefixed twice.
    assert_eq!(
        uris,
        [
            "services/shop/cart.py",
            "services/shop/lib/tax.py",
            "services/shop/refine-loop.toml"
        ]
    );
    let quality: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(state.join("codequality.json")).unwrap())
            .unwrap();
    for issue in quality.as_array().unwrap() {
        let path = issue["location"]["path"].as_str().unwrap();
        assert!(path.starts_with("services/shop/"), "{path}");
    }
    let junit = std::fs::read_to_string(state.join("junit.xml")).unwrap();
    assert!(junit.contains("services/shop/cart.py"), "{junit}");
    assert_valid_junit(&state.join("junit.xml"));
}

#[test]
fn remaining_findings_are_placed_on_the_lines_of_the_commit_ci_checked_out() {
    let repo = Repo::new();
    repo.write("app.txt", "a\nb\nBAD one\nc\nd\nBAD two\n");
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write(
        "refine-loop.toml",
        "[[gate.check]]\nname = \"bad\"\ncategory = \"lint\"\nparser = \"clippy\"\n\
         run = '''grep -n BAD app.txt | sed 's/^\\([0-9]*\\):.*/app.txt:\\1:1: error: bad/'; ! grep -q BAD app.txt'''\n\n\
         [[delegate]]\ncategories = [\"lint\"]\n\
         run = '''sed -i '3s/BAD/ok/' app.txt && sed -i '5i new1\\nnew2' app.txt'''\n",
    );
    repo.commit("two bad lines");
    let output = repo
        .command(&["run", "--max-cycles", "1", "--ci", "github"])
        .env("GITHUB_WORKSPACE", repo.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    assert_eq!(
        std::fs::read_to_string(repo.join("app.txt")).unwrap(),
        "a\nb\nok one\nc\nnew1\nnew2\nd\nBAD two\n",
        "the fix is kept, uncommitted"
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("::error file=app.txt,line=6,"),
        "HEAD's line 6, not the tree's 8: {stdout}"
    );
    let sarif: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo.join(".refine-loop/report.sarif")).unwrap(),
    )
    .unwrap();
    let region = &sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"];
    assert_eq!(region["startLine"], 6, "{region}");
}

#[test]
fn the_scope_priority_and_extra_flags_reach_the_run() {
    let repo = build_repo("[[delegate]]\ncategories = [\"build\"]\nrun = \"true\"\n");
    let github = tempfile::tempdir().unwrap();
    let output = action_run(
        &repo,
        github.path(),
        &[
            ("INPUT_SCOPE", "src\n  tools/*.py  docs"),
            ("INPUT_PRIORITY", "build,lint"),
            ("INPUT_ARGS", "  --max-cycles 1   --verify per-delegate "),
            ("INPUT_EXIT_ZERO", "true"),
        ],
    )
    .output()
    .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo.join(".refine-loop/run.json")).unwrap())
            .unwrap();
    assert_eq!(
        run["scope"],
        serde_json::json!(["src", "tools/*.py", "docs"])
    );
    let outputs = std::fs::read_to_string(github.path().join("output")).unwrap();
    assert!(outputs.lines().any(|l| l == "cycles=1"), "{outputs}");
    let sarif = repo.join(".refine-loop/report.sarif");
    assert!(
        outputs
            .lines()
            .any(|l| l == format!("sarif-path={}", sarif.display())),
        "{outputs}"
    );
    // The one finding lies outside the scope: reported, not worked.
    let report = std::fs::read_to_string(repo.join(".refine-loop/REFINE-LOOP-FINAL.md")).unwrap();
    assert!(
        report.contains("1 finding(s) outside the scope"),
        "{report}"
    );
}

#[test]
fn continue_starts_a_finished_campaigns_next_segment() {
    let repo =
        build_repo("[[delegate]]\ncategories = [\"build\"]\nrun = \"echo ok > fixed.txt\"\n");
    let github = tempfile::tempdir().unwrap();
    let first = improve_through_action(&repo, github.path(), &[("INPUT_INTENT", "fix the build")]);
    assert_eq!(first.status.code(), Some(0), "{first:?}");
    let again = improve_through_action(
        &repo,
        github.path(),
        &[
            ("INPUT_CONTINUE", "true"),
            ("INPUT_INTENT", "keep it passing"),
        ],
    );
    assert_eq!(again.status.code(), Some(0), "{again:?}");
    let goal = std::fs::read_to_string(repo.join(".refine-loop/REFINE-GOAL.md")).unwrap();
    assert!(goal.contains("keep it passing"), "{goal}");
}

/// Every file under `dir`, relative to it, sorted.
fn files_under(dir: &std::path::Path) -> Vec<String> {
    fn walk(dir: &std::path::Path, root: &std::path::Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, root, out);
            } else {
                out.push(path.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// What `ci/artifact-files.mjs` (upload-artifact v4's own search, with action.yml's settings)
/// finds in `state_dir`, with `extra` flags.
fn artifact_files(state_dir: &std::path::Path, extra: &[&str]) -> Vec<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    assert!(
        root.join(".tools/node/node_modules/@actions/glob").exists(),
        "@actions/glob is not installed: run scripts/test, which installs the pinned tools"
    );
    let output = Command::new("node")
        .arg(root.join("ci/artifact-files.mjs"))
        .arg(state_dir)
        .args(extra)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let mut files: Vec<String> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .filter(|line| !line.is_empty() && !line.starts_with("::"))
        .map(str::to_string)
        .collect();
    files.sort();
    files
}

#[test]
fn the_upload_step_finds_every_file_of_the_default_hidden_state_dir() {
    let repo = Repo::new();
    repo.write(
        "findings.txt",
        "src/lib.rs:1:1: error: one\nsrc/lib.rs:2:1: error: two\n",
    );
    repo.write("src/lib.rs", "fn main() {}\n");
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write(
        "refine-loop.toml",
        "[[gate.check]]\nname = \"lint\"\ncategory = \"lint\"\n\
         run = \"cat findings.txt; ! grep -q error findings.txt\"\nparser = \"clippy\"\n\n\
         [[delegate]]\ncategories = [\"lint\"]\nrun = \"sed -i 1d findings.txt\"\n",
    );
    repo.commit("findings");
    let github = tempfile::tempdir().unwrap();
    let output = action_run(
        &repo,
        github.path(),
        &[("INPUT_MAX_CYCLES", "1"), ("INPUT_EXIT_ZERO", "true")],
    )
    .output()
    .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let outputs = std::fs::read_to_string(github.path().join("output")).unwrap();
    // The last line of a name is its value (run.sh writes every output first, refine-loop its
    // own after).
    let state_dir = outputs
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix("state-dir="))
        .expect("a state-dir output");
    let state_dir = std::path::Path::new(state_dir);
    assert_eq!(state_dir.file_name().unwrap(), ".refine-loop");

    let every_file = files_under(state_dir);
    for file in [
        "REFINE-LOOP-FINAL.md",
        "junit.xml",
        "report.sarif",
        "trend.json",
    ] {
        assert!(
            every_file.iter().any(|f| f == file),
            "{file}: {every_file:?}"
        );
    }
    assert!(
        every_file.iter().any(|f| f.starts_with("patches/")),
        "{every_file:?}"
    );
    assert_eq!(artifact_files(state_dir, &[]), every_file);
    // What upload-artifact v4.4+ does without `include-hidden-files`: nothing at all.
    assert_eq!(
        artifact_files(state_dir, &["--without-hidden-files"]),
        Vec::<String>::new()
    );
}

#[test]
fn failing_tests_are_reported_on_the_line_of_their_own_frame() {
    crate::support::python_module("pytest");
    let repo = Repo::new();
    repo.write(
        "app/cart.py",
        "def total(items):\n    return sum(items) + 1\n",
    );
    repo.write("app/__init__.py", "");
    repo.write(
        "tests/test_cart.py",
        "from app.cart import total\n\n\n\
         class TestCart:\n    def test_total(self):\n        assert total([1, 2]) == 3\n\n\n\
         def test_empty():\n    items = []\n    assert total(items) == 0\n",
    );
    repo.write(
        ".gitignore",
        "/.refine-loop\n.pytest_cache/\n__pycache__/\n",
    );
    repo.write(
        "refine-loop.toml",
        "[[gate.check]]\nname = \"pytest\"\nrun = \"python3 -m pytest -p no:cacheprovider tests\"\n\
         parser = \"pytest\"\n",
    );
    repo.commit("two failing tests");
    let output = repo.run(&["check"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let state = repo.join(".refine-loop");
    let quality: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(state.join("codequality.json")).unwrap())
            .unwrap();
    let mut places: Vec<(String, u64)> = quality
        .as_array()
        .unwrap()
        .iter()
        .map(|issue| {
            (
                issue["location"]["path"].as_str().unwrap().to_string(),
                issue["location"]["lines"]["begin"].as_u64().unwrap(),
            )
        })
        .collect();
    places.sort();
    // The assert lines in the test file, not line 1 and not app/cart.py.
    assert_eq!(
        places,
        [
            ("tests/test_cart.py".to_string(), 6),
            ("tests/test_cart.py".to_string(), 11)
        ]
    );
    let sarif: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(state.join("report.sarif")).unwrap())
            .unwrap();
    let mut lines: Vec<u64> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["locations"][0]["physicalLocation"]["region"]["startLine"]
                .as_u64()
                .unwrap()
        })
        .collect();
    lines.sort();
    assert_eq!(lines, [6, 11]);
}

/// The campaign's machine-readable counters, from REFINE-BACKLOG.md in `state`.
fn campaign_counters(state: &std::path::Path) -> serde_json::Value {
    let text = std::fs::read_to_string(state.join("REFINE-BACKLOG.md")).unwrap();
    let start = text.find("```json\n").expect("a json block") + "```json\n".len();
    let end = start + text[start..].find("\n```").expect("closed block");
    let block: serde_json::Value = serde_json::from_str(&text[start..end]).unwrap();
    block["backlog"]["counters"].clone()
}

/// One night of the scheduled job: a fresh clone of `origin` at its own path, and the action's
/// steps replayed on it for `campaign: nightly` and `continue: auto` with `intent`, against
/// `cache`; `run_id` is the workflow run's.
fn night(
    origin: &Repo,
    nights: &std::path::Path,
    run_id: &str,
    intent: &str,
    cache: &replay::CacheStandIn,
) -> (std::path::PathBuf, replay::Replay) {
    let clone = nights.join(format!("night-{run_id}/shop"));
    std::fs::create_dir_all(clone.parent().unwrap()).unwrap();
    crate::support::git_in(
        nights,
        &[
            "clone",
            "-q",
            origin.path().to_str().unwrap(),
            clone.to_str().unwrap(),
        ],
    );
    let runner = nights.join(format!("night-{run_id}/runner"));
    std::fs::create_dir_all(&runner).unwrap();
    let replay = replay::replay(
        &clone,
        &runner,
        &[
            ("preset", "improve"),
            ("intent", intent),
            ("campaign", "nightly"),
            ("continue", "auto"),
        ],
        &[
            ("repository", "octo/shop"),
            ("ref_name", "main"),
            ("head_ref", ""),
            ("run_id", run_id),
            ("run_attempt", "1"),
            ("job", "improve"),
        ],
        cache,
    );
    (clone, replay)
}

#[test]
fn the_actions_cache_steps_carry_a_campaign_from_one_night_to_the_next() {
    // A night's series holds the campaign's earlier work again (the nightly example's setting).
    let origin = build_repo(
        "[[delegate]]\ncategories = [\"build\"]\nrun = \"echo ok > fixed.txt\"\n\n\
         [campaign]\npending = \"reapply\"\n",
    );
    let nights = tempfile::tempdir().unwrap();
    let cache = replay::CacheStandIn::new(&nights.path().join("cache"));

    // Night 1: nothing to restore; the campaign starts, and its state is saved.
    let (clone, first) = night(&origin, nights.path(), "1001", "fix the build", &cache);
    let run = first.run.as_ref().expect("the run step ran");
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert_eq!(first.restored, [None]);
    let prefix = first.contexts.steps["campaign"]["key-prefix"].clone();
    assert!(
        prefix.starts_with("refine-loop-campaign-octo-shop-main-nightly-"),
        "{prefix}"
    );
    assert_eq!(first.saved, [(format!("{prefix}1001-1"), true)]);
    let counters = campaign_counters(&clone.join(".refine-loop"));
    assert_eq!(counters["segment"], 1, "{counters}");
    assert_eq!(counters["outcome"], "SUCCESS", "{counters}");

    // Night 2, elsewhere, night 1's pull request not merged: night 1's state is found and the
    // campaign goes on, applying night 1's work again first, so that this night's series holds
    // it (and can replace the campaign's pull request branch).
    let (clone, second) = night(&origin, nights.path(), "1002", "fix the build", &cache);
    let run = second.run.as_ref().expect("the run step ran");
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert_eq!(second.restored, [Some((format!("{prefix}1001-1"), false))]);
    let counters = campaign_counters(&clone.join(".refine-loop"));
    assert_eq!(counters["segment"], 2, "{counters}");
    let patches = clone.join(".refine-loop/patches");
    let series = files_under(&patches);
    let holds_it = series.iter().any(|name| {
        let patch = std::fs::read_to_string(patches.join(name)).unwrap();
        patch.contains("+++ b/fixed.txt")
    });
    assert!(holds_it, "{series:?}");
    assert_eq!(second.saved, [(format!("{prefix}1002-1"), true)]);
    // The cache keeps the campaign's files and history, not each night's cycles and reports.
    let kept = cache.entries().last().unwrap().paths();
    assert!(
        kept.contains(&".refine-loop/REFINE-BACKLOG.md".to_string()),
        "{kept:?}"
    );
    assert!(
        kept.contains(&".refine-loop/history/0002.patch".to_string()),
        "{kept:?}"
    );
    assert!(
        !kept
            .iter()
            .any(|p| p.contains("cycle-") || p.contains("FINAL")),
        "{kept:?}"
    );

    // The pull request is merged. Night 3 finds the work landed and nothing left: it completes
    // with nothing to deliver. Night 4, the intent unchanged, rests at once.
    origin.write("fixed.txt", "ok\n");
    origin.commit("the campaign's pull request, merged");
    let (clone, third) = night(&origin, nights.path(), "1003", "fix the build", &cache);
    let run = third.run.as_ref().expect("the run step ran");
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert_eq!(third.restored, [Some((format!("{prefix}1002-1"), false))]);
    assert!(files_under(&clone.join(".refine-loop/patches")).is_empty());
    let (clone, fourth) = night(&origin, nights.path(), "1004", "fix the build", &cache);
    let run = fourth.run.as_ref().expect("the run step ran");
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert_eq!(fourth.restored, [Some((format!("{prefix}1003-1"), false))]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("campaign finished"), "{run:?}");
    let worklog = std::fs::read_to_string(clone.join(".refine-loop/REFINE-WORKLOG.md")).unwrap();
    assert!(worklog.trim_end().ends_with("nothing ran"), "{worklog}");
    let keys: Vec<String> = cache.entries().into_iter().map(|e| e.key).collect();
    assert_eq!(
        keys,
        [1001, 1002, 1003, 1004].map(|id| format!("{prefix}{id}-1"))
    );
}

#[test]
fn without_a_campaign_the_action_neither_restores_nor_saves() {
    let origin =
        build_repo("[[delegate]]\ncategories = [\"build\"]\nrun = \"echo ok > fixed.txt\"\n");
    let nights = tempfile::tempdir().unwrap();
    let runner = nights.path().join("runner");
    std::fs::create_dir_all(&runner).unwrap();
    let cache = replay::CacheStandIn::new(&nights.path().join("cache"));
    let replay = replay::replay(
        origin.path(),
        &runner,
        &[("preset", "improve"), ("intent", "fix the build")],
        &[
            ("repository", "octo/shop"),
            ("ref_name", "main"),
            ("run_id", "7"),
            ("run_attempt", "1"),
        ],
        &cache,
    );
    assert_eq!(replay.run.unwrap().status.code(), Some(0));
    assert!(
        replay.restored.is_empty() && replay.saved.is_empty(),
        "{:?}",
        replay.ran
    );
    assert!(cache.entries().is_empty());
}

#[test]
fn a_continue_input_other_than_true_false_or_auto_is_refused_before_the_run() {
    let repo = build_repo("[[delegate]]\ncategories = [\"build\"]\nrun = \"true\"\n");
    let github = tempfile::tempdir().unwrap();
    let output = improve_through_action(&repo, github.path(), &[("INPUT_CONTINUE", "yes\n::x")]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("the continue input is true, false or auto, not $'yes\\n::x'"),
        "{stderr}"
    );
    assert!(!repo.join(".refine-loop").exists(), "nothing ran");
}

#[test]
fn on_a_pull_request_config_from_base_reads_the_base_branchs_config() {
    let base = "[[gate.check]]\nname = \"base-lint\"\ncategory = \"lint\"\nrun = \"true\"\n\n\
                [[delegate]]\ncategories = [\"lint\"]\nrun = \"true\"\n";
    let repo = Repo::new();
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write("refine-loop.toml", base);
    repo.commit("base");
    let branch = crate::support::git_in(repo.path(), &["rev-parse", "--abbrev-ref", "HEAD"]);
    let origin = tempfile::tempdir().unwrap();
    let bare = origin.path().join("origin.git");
    crate::support::git_in(
        repo.path(),
        &["clone", "-q", "--bare", ".", bare.to_str().unwrap()],
    );
    crate::support::git_in(
        repo.path(),
        &["remote", "add", "origin", bare.to_str().unwrap()],
    );
    // The pull request's own config: another check, confinement off.
    repo.write(
        "refine-loop.toml",
        &base.replace("base-lint", "pr-lint").replace(
            "[[gate.check]]",
            "[loop]\nconfine = \"off\"\n\n[[gate.check]]",
        ),
    );
    let github = tempfile::tempdir().unwrap();
    let output = action_run(
        &repo,
        github.path(),
        &[
            ("INPUT_CONFIG_FROM", "base"),
            ("GITHUB_BASE_REF", branch.trim()),
        ],
    )
    .output()
    .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("::warning::this pull request changes"),
        "{stdout}"
    );
    assert_eq!(repo.summary()["checks"][0]["name"], "base-lint");
    // Without config-from, a pull request is warned that its own config decides.
    let output = action_run(&repo, github.path(), &[("GITHUB_BASE_REF", branch.trim())])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("::warning::refine-loop reads its config from the pull request's own tree"),
        "{stdout}"
    );
    assert_eq!(repo.summary()["checks"][0]["name"], "pr-lint");
}
