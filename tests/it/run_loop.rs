//! `refine-loop run` end to end: real repositories, real fixers where the bar asks for them, and
//! small scripted delegates for the loop's own rules.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::support::{Repo, live_members_of_group, read_pid};

pub fn json(repo: &Repo, file: &str) -> Value {
    let text = std::fs::read_to_string(repo.join(&format!(".refine-loop/{file}")))
        .unwrap_or_else(|e| panic!("{file}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"))
}

pub fn failed_counts(repo: &Repo) -> Vec<u64> {
    json(repo, "trend.json")["cycles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["failed_count"].as_u64().unwrap())
        .collect()
}

pub fn run(repo: &Repo, args: &[&str]) -> Output {
    let mut command = repo.command(&["run"]);
    command
        .args(args)
        .env("CARGO_TARGET_DIR", repo.join("target"))
        .env_remove("RUSTFLAGS");
    command.output().unwrap()
}

/// Every file of the work tree (not .git, the state dir or target/) with its bytes.
fn tree(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let name = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if [".git", ".refine-loop", "target"].contains(&name.as_str()) {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push((name, std::fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// A gate of one check: `lint` failures are the lines of `findings.txt`.
const SCRIPTED_GATE: &str = r#"[loop]

[[gate.check]]
name = "lint"
category = "lint"
run = "cat findings.txt; test ! -s findings.txt"
parser = "clippy"

[[gate.check]]
name = "tests"
category = "tests"
run = "test ! -e broken"
"#;

fn scripted_repo(findings: &str, delegate: &str) -> Repo {
    scripted_repo_idle(findings, delegate, "2s")
}

fn scripted_repo_idle(findings: &str, delegate: &str, idle: &str) -> Repo {
    let repo = Repo::new();
    repo.write("findings.txt", findings);
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write(
        "refine-loop.toml",
        &format!(
            "{SCRIPTED_GATE}\n[[delegate]]\ncategories = [\"lint\"]\nrun = '''{delegate}'''\nidle_timeout = \"{idle}\"\n"
        ),
    );
    repo.commit("scripted");
    repo
}

const TWO_FINDINGS: &str = "src/a.rs:1:1: error: one\nsrc/b.rs:2:2: error: two\n";

#[test]
fn a_delegate_that_fixes_everything_ends_in_success() {
    let repo = scripted_repo(TWO_FINDINGS, ": > findings.txt");
    let output = run(&repo, &[]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(failed_counts(&repo), [2, 0]);
    let trend = json(&repo, "trend.json");
    assert_eq!(trend["outcome"], "SUCCESS");
    assert_eq!(trend["stop_reason"], "gate-passed");
    assert_eq!(trend["cycles"][1]["breakthrough"], true);
    let report =
        std::fs::read_to_string(repo.join(".refine-loop/cycle-1/delegate-reports/fix-lint.md"))
            .unwrap();
    assert!(
        report.contains("- result: kept") && report.contains("`findings.txt`"),
        "{report}"
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains(
        "refine-loop cycle 1/5 · failed 2→0 · accepted 1 · rolled back 0 · stopping: gate-passed"
    ));
}

#[test]
fn a_partial_fixer_ends_by_diminishing_returns_below_the_baseline() {
    let repo = scripted_repo(TWO_FINDINGS, "sed -i '/one/d' findings.txt");
    let output = run(&repo, &[]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(failed_counts(&repo), [2, 1, 1, 1]);
    assert_eq!(
        json(&repo, "trend.json")["stop_reason"],
        "diminishing-returns"
    );
}

#[test]
fn a_delegate_that_breaks_the_tests_is_rolled_back_to_the_byte() {
    let repo = scripted_repo(
        TWO_FINDINGS,
        "sed -i '/one/d' findings.txt; touch broken; mkdir -p new/dir; echo x > new/dir/f; chmod +x refine-loop.toml",
    );
    // The user's own uncommitted work must come through untouched too.
    repo.write("notes.txt", "my notes\n");
    let before = tree(repo.path());
    let output = run(&repo, &[]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(tree(repo.path()), before);
    assert!(!repo.join("new").exists());
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(repo.join("refine-loop.toml"))
            .unwrap()
            .permissions(),
    );
    assert_eq!(mode & 0o111, 0);
    let trend = json(&repo, "trend.json");
    assert_eq!(trend["cycles"][1]["rolled_back"], true);
    assert_eq!(trend["cycles"][1]["accepted"], false);
    let history = json(&repo, "category-history.json");
    assert_eq!(history["regressions"][0]["category"], "tests");
}

#[test]
fn a_delegate_that_flips_between_two_broken_states_is_caught_oscillating() {
    let flip = "if grep -q one findings.txt; then printf 'src/c.rs:3:3: error: three\\nsrc/b.rs:2:2: error: two\\n' > findings.txt; else printf 'src/a.rs:1:1: error: one\\nsrc/b.rs:2:2: error: two\\n' > findings.txt; fi";
    let repo = scripted_repo(TWO_FINDINGS, flip);
    let output = run(&repo, &[]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let trend = json(&repo, "trend.json");
    assert_eq!(trend["stop_reason"], "oscillation");
    assert!(trend["cycles"].as_array().unwrap().len() <= 5, "{trend}");
}

#[test]
fn a_hanging_delegate_is_stopped_at_its_idle_timeout() {
    let repo = scripted_repo(TWO_FINDINGS, "echo $$ > delegate.pid; sleep 300");
    let output = run(&repo, &["--max-cycles", "1"]);
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    let leader = read_pid(&repo, "delegate.pid");
    assert_eq!(live_members_of_group(leader), Vec::<i32>::new());
    let report =
        std::fs::read_to_string(repo.join(".refine-loop/cycle-1/delegate-reports/fix-lint.md"))
            .unwrap();
    assert!(report.contains("idle timeout"), "{report}");
}

#[test]
fn sigterm_during_a_delegate_cancels_cleanly() {
    let repo = scripted_repo_idle(
        TWO_FINDINGS,
        "echo changed >> findings.txt; echo $$ > delegate.pid; sleep 300",
        "10m",
    );
    let mut child = repo
        .command(&["run"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Its change made, the delegate sleeps: the signal falls in the middle of its turn.
    crate::support::wait_for_line(&repo.join("delegate.pid"), "the delegate never started");
    let leader = read_pid(&repo, "delegate.pid");
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert_eq!(live_members_of_group(leader), Vec::<i32>::new());
    for file in [
        "trend.json",
        "category-history.json",
        "heuristics.json",
        "cycle-0/gate-summary.json",
        "cycle-1/gate-summary.json",
    ] {
        json(&repo, file);
    }
    assert_eq!(json(&repo, "trend.json")["outcome"], "CANCELLED");
    // The unverified changes were not kept (the pid file the delegate wrote is gone too).
    assert_eq!(
        std::fs::read_to_string(repo.join("findings.txt")).unwrap(),
        TWO_FINDINGS
    );
    assert!(!repo.join("delegate.pid").exists());
}

#[test]
fn run_without_a_delegate_is_a_configuration_error() {
    let repo = Repo::new();
    repo.write("refine-loop.toml", SCRIPTED_GATE);
    let output = repo.run(&["run"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("delegate: run needs at least one [[delegate]]")
    );
}

#[test]
fn exit_zero_keeps_the_outcome_in_the_files() {
    let repo = scripted_repo(TWO_FINDINGS, "sed -i '/one/d' findings.txt");
    let output = run(&repo, &["--exit-zero"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(json(&repo, "trend.json")["outcome"], "NEEDS-FIX");
}

#[test]
fn exit_zero_keeps_a_missing_tool_red_and_exit_zero_all_does_not() {
    let repo = Repo::new();
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write(
        "refine-loop.toml",
        "[[gate.check]]\nname = \"lint\"\ncategory = \"lint\"\nrun = \"refine-loop-no-such-linter .\"\n\n\
         [[delegate]]\ncategories = [\"lint\"]\nrun = \"true\"\n",
    );
    repo.commit("a gate whose tool is missing");
    for (flags, env, code) in [
        (&["--exit-zero"][..], None, 4),
        (&[], Some("true"), 4),
        (&["--exit-zero=findings"], None, 4),
        (&["--exit-zero=all"], None, 0),
        (&[], Some("all"), 0),
        (&[], None, 4),
    ] {
        let mut command = repo.command(&["run"]);
        command.args(flags).env_remove("REFINE_LOOP_EXIT_ZERO");
        if let Some(value) = env {
            command.env("REFINE_LOOP_EXIT_ZERO", value);
        }
        let output = command.output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(code),
            "{flags:?} {env:?}: {output:?}"
        );
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("refine-loop-no-such-linter"),
            "{output:?}"
        );
        let report =
            std::fs::read_to_string(repo.join(".refine-loop/REFINE-LOOP-FINAL.md")).unwrap();
        assert!(report.contains("ERROR"), "{flags:?}: {report}");
    }
}

#[test]
fn per_delegate_verification_keeps_one_delegate_and_undoes_the_other() {
    // Two categories, two delegates: the lint fixer helps, the tests "fixer" breaks lint.
    let repo = Repo::new();
    repo.write("findings.txt", TWO_FINDINGS);
    repo.write("broken", "");
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write(
        "refine-loop.toml",
        &format!(
            "{SCRIPTED_GATE}\n[[delegate]]\ncategories = [\"lint\"]\nrun = \"sed -i '/one/d' findings.txt\"\n\n\
             [[delegate]]\ncategories = [\"tests\"]\nrun = \"echo 'src/z.rs:9:9: error: new' >> findings.txt\"\n"
        ),
    );
    repo.commit("two delegates");
    let output = run(&repo, &["--verify", "per-delegate", "--max-cycles", "1"]);
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    // tests is worked first (priority), made lint worse and was undone; then lint was kept.
    assert_eq!(
        std::fs::read_to_string(repo.join("findings.txt")).unwrap(),
        "src/b.rs:2:2: error: two\n"
    );
    let tests_report =
        std::fs::read_to_string(repo.join(".refine-loop/cycle-1/delegate-reports/fix-tests.md"))
            .unwrap();
    assert!(
        tests_report
            .contains("- result: rolled back: failures rose from 3 to 4; lint got worse (2 → 3)"),
        "{tests_report}"
    );
    let lint_report =
        std::fs::read_to_string(repo.join(".refine-loop/cycle-1/delegate-reports/fix-lint.md"))
            .unwrap();
    assert!(lint_report.contains("- result: kept"), "{lint_report}");
}

#[test]
fn a_gate_that_changes_its_mind_and_a_delegate_for_an_absent_category_end_cleanly() {
    // The check fails every other run, whatever anyone does; the only delegate is for a
    // category that never appears.
    let repo = Repo::new();
    repo.write(".gitignore", "/.refine-loop\n/count\n");
    repo.write(
        "refine-loop.toml",
        "[[gate.check]]\nname = \"flaky\"\ncategory = \"tests\"\nrun = \"n=$(cat count 2>/dev/null || echo 0); echo $((n+1)) > count; test $((n % 2)) -eq 1\"\n\n\
         [[delegate]]\ncategories = [\"types\"]\nrun = \"touch never\"\n",
    );
    repo.commit("flaky");
    let output = run(&repo, &[]);
    assert!(
        matches!(output.status.code(), Some(0 | 1 | 3)),
        "{output:?}"
    );
    assert!(!repo.join("never").exists());
    json(&repo, "trend.json");
    json(&repo, "category-history.json");
}

#[test]
fn files_the_gate_writes_between_delegates_are_not_a_delegates_change() {
    // Per-delegate: the gate runs between the two delegates and appends to a file it owns. The
    // second delegate is undone; the gate's file must not be taken for its change.
    let repo = Repo::new();
    repo.write("findings.txt", TWO_FINDINGS);
    repo.write("broken", "");
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write(
        "refine-loop.toml",
        &format!(
            "{SCRIPTED_GATE}\n[[gate.check]]\nname = \"log\"\ncategory = \"report\"\nrun = \"echo run >> gate-runs.txt\"\n\n\
             [[delegate]]\ncategories = [\"tests\"]\nrun = \"rm broken\"\n\n\
             [[delegate]]\ncategories = [\"lint\"]\nrun = \"echo 'src/z.rs:9:9: error: new' >> findings.txt\"\n"
        ),
    );
    repo.commit("gate writes a file");
    let output = run(&repo, &["--verify", "per-delegate", "--max-cycles", "1"]);
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    assert_eq!(
        std::fs::read_to_string(repo.join("gate-runs.txt")).unwrap(),
        "run\nrun\nrun\n"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("findings.txt")).unwrap(),
        TWO_FINDINGS
    );
    assert!(!repo.join("broken").exists());
    let lint_report =
        std::fs::read_to_string(repo.join(".refine-loop/cycle-1/delegate-reports/fix-lint.md"))
            .unwrap();
    assert!(
        lint_report.contains("- result: rolled back"),
        "{lint_report}"
    );
    assert!(!lint_report.contains("gate-runs.txt"), "{lint_report}");
}

#[test]
fn per_delegate_each_fixer_is_given_the_findings_the_kept_state_has_then() {
    // Two lint-like categories from one tagged output: the types fixer's kept change removes a
    // lint finding too, so the lint fixer that follows is given one finding, not two. The lint
    // fixer then breaks the tests: rolled back, and the cycle's record is the kept state.
    let repo = Repo::new();
    repo.write(
        "findings.txt",
        "error types: t1\nerror lint: l1\nerror lint: l2\n",
    );
    repo.write(
        "parsers/tagged.toml",
        "name = \"tagged\"\n[[pattern]]\nregex = '^(?P<severity>error) (?P<category>[a-z]+): (?P<message>.+)$'\n",
    );
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write(
        "refine-loop.toml",
        "parser_dirs = [\"parsers\"]\n[loop]\npriority = [\"types\", \"lint\"]\n\n\
         [[gate.check]]\nname = \"tagged\"\ncategory = \"lint\"\nrun = \"cat findings.txt; test ! -s findings.txt\"\nparser = \"tagged\"\n\n\
         [[gate.check]]\nname = \"tests\"\ncategory = \"tests\"\nrun = \"test ! -e broken\"\n\n\
         [[delegate]]\ncategories = [\"types\"]\nrun = \"sed -i '/t1/d; /l1/d' findings.txt\"\n\n\
         [[delegate]]\ncategories = [\"lint\"]\nrun = \"touch broken\"\n",
    );
    repo.commit("tagged");
    let output = run(&repo, &["--verify", "per-delegate", "--max-cycles", "1"]);
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    let given = json(&repo, "cycle-1/delegate-reports/fix-lint.findings.json");
    let text = given.to_string();
    assert!(text.contains("l2") && !text.contains("l1"), "{text}");
    let cycle = json(&repo, "cycle-1/gate-summary.json");
    assert_eq!(cycle["failed_count"], 1, "the kept state: {cycle}");
    let trend = json(&repo, "trend.json");
    assert_eq!(trend["cycles"][1]["failed_count"], 1);
    assert!(
        trend["cycles"][1].get("attempt_failed_count").is_none(),
        "{trend}"
    );
    let history = json(&repo, "category-history.json");
    assert_eq!(history["regressions"], serde_json::json!([]), "{history}");
}

/// The report answers the user's next questions: where the kept changes are and how to keep or
/// drop them (also the console's last line), and why each remaining finding is left: in the
/// user's own uncommitted files (not given to a fixer, not worked again), or no fixer at all.
#[test]
fn the_report_says_where_the_changes_are_and_why_findings_remain() {
    let repo = Repo::new();
    repo.write(
        "findings.txt",
        "src/a.rs:1:1: error: one\nsrc/mine.rs:1:1: error: mine\n",
    );
    repo.write("src/mine.rs", "fn mine() {}\n");
    repo.write("broken", "");
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write(
        "refine-loop.toml",
        &format!(
            "{SCRIPTED_GATE}\n[[delegate]]\ncategories = [\"lint\"]\nrun = \"sed -i '/one/d' findings.txt\"\n"
        ),
    );
    repo.commit("scripted");
    // The user's own work in progress: protected, so its finding is no fixer's.
    repo.write("src/mine.rs", "fn mine() { /* editing */ }\n");
    let output = run(&repo, &["--max-cycles", "3"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let out = crate::support::stdout(&output);
    let last = out.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("The accepted changes are in your working tree, uncommitted")
            && last.contains("refine-loop.patch")
            && last.contains("git apply -R"),
        "{out}"
    );
    let report = std::fs::read_to_string(repo.join(".refine-loop/REFINE-LOOP-FINAL.md")).unwrap();
    assert!(report.contains("## Where the changes are"), "{report}");
    assert!(
        report.contains("- lint: 1 failures left (1 in your own uncommitted files (protected: no fixer may change them, by design))"),
        "{report}"
    );
    assert!(
        report.contains("- tests: 1 failures left (no fixer takes this category"),
        "{report}"
    );
    // The finding in the user's file was never given to the fixer, and lint was not worked again.
    let given = std::fs::read_to_string(
        repo.join(".refine-loop/cycle-1/delegate-reports/fix-lint.findings.json"),
    )
    .unwrap();
    assert!(
        given.contains("src/a.rs") && !given.contains("src/mine.rs"),
        "{given}"
    );
    assert!(
        !repo
            .join(".refine-loop/cycle-2/delegate-reports/fix-lint.md")
            .exists()
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("src/mine.rs")).unwrap(),
        "fn mine() { /* editing */ }\n"
    );
}

#[test]
fn the_loops_own_output_redirected_into_the_tree_is_not_the_users_work() {
    // `refine-loop run >logs/run.log 2>&1` inside the tree: the file grows while delegates run;
    // it is the loop's output, never put back (a new inode would lose every later line), and no
    // delegate is blamed for it.
    let repo = crate::support::build_repo(
        "[[delegate]]\ncategories = [\"build\"]\nrun = \"echo ok > fixed.txt\"\n",
    );
    std::fs::create_dir(repo.join("logs")).unwrap();
    let log = std::fs::File::create(repo.join("logs/run.log")).unwrap();
    let status = repo
        .command(&["run", "--max-cycles", "1"])
        .env("RUST_LOG", "info")
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .status()
        .unwrap();
    let text = std::fs::read_to_string(repo.join("logs/run.log")).unwrap();
    assert_eq!(status.code(), Some(0), "{text}");
    // The outcome, printed last, is in the file the run wrote to all along.
    assert!(text.contains("SUCCESS"), "{text}");
    let report =
        std::fs::read_to_string(repo.join(".refine-loop/cycle-1/delegate-reports/fix-build.md"))
            .unwrap();
    assert!(report.contains("- result: kept"), "{report}");
    // Nothing took the log for the user's work: no gate run or delegate changed it.
    for file in [
        "cycle-1/delegate-reports/fix-build.md",
        "run.json",
        "REFINE-LOOP-FINAL.md",
    ] {
        let text = std::fs::read_to_string(repo.join(".refine-loop").join(file)).unwrap();
        assert!(!text.contains("logs/run.log"), "{file}: {text}");
    }
    assert!(!text.contains("logs/run.log"), "{text}");
}

#[test]
fn the_loops_own_output_piped_into_a_file_in_the_tree_is_not_the_users_work() {
    // `refine-loop run 2>&1 | tee logs/run.log` (and further down a pipeline): the file grows
    // while delegates run, written by another process; it is the loop's output all the same.
    for pipeline in [
        "2>&1 | tee logs/run.log >/dev/null",
        "2>&1 | cat | tee -a 'logs/run é.log' >/dev/null",
    ] {
        let repo = crate::support::build_repo(
            "[[delegate]]\ncategories = [\"build\"]\nrun = \"echo ok > fixed.txt\"\n",
        );
        std::fs::create_dir(repo.join("logs")).unwrap();
        let script = format!(
            "RUST_LOG=info '{}' run --max-cycles 1 {pipeline}; echo \"exit $?\"",
            crate::support::binary()
        );
        let output = repo
            .command_through("bash", &["-o", "pipefail", "-c", &script])
            .output()
            .unwrap();
        let log = std::fs::read_dir(repo.join("logs"))
            .unwrap()
            .flatten()
            .map(|entry| std::fs::read_to_string(entry.path()).unwrap())
            .collect::<String>();
        assert!(log.contains("SUCCESS"), "{pipeline}: {output:?}\n{log}");
        let report = std::fs::read_to_string(
            repo.join(".refine-loop/cycle-1/delegate-reports/fix-build.md"),
        )
        .unwrap();
        assert!(report.contains("- result: kept"), "{pipeline}: {report}");
        for file in [
            "cycle-1/delegate-reports/fix-build.md",
            "run.json",
            "REFINE-LOOP-FINAL.md",
        ] {
            let text = std::fs::read_to_string(repo.join(".refine-loop").join(file)).unwrap();
            assert!(!text.contains("logs/run"), "{pipeline}: {file}: {text}");
        }
        assert!(!log.contains("logs/run"), "{pipeline}: {log}");
    }
}

#[test]
fn a_file_the_process_reading_the_loops_output_holds_open_is_still_the_users() {
    // A driver (an IDE, a CI harness) that reads the loop's stdout through a pipe and holds the
    // user's notes open for reading and writing: the notes are the user's, not the loop's output.
    let repo = crate::support::build_repo(
        "[[delegate]]\ncategories = [\"build\"]\nrun = \"echo ok > fixed.txt; echo CLOBBERED > notes.txt\"\n",
    );
    repo.write("notes.txt", "the user's notes\n");
    let driver = format!(
        "import subprocess, sys\n\
         held = open('notes.txt', 'r+')\n\
         run = subprocess.run(['{}', 'run', '--max-cycles', '1'], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)\n\
         sys.stdout.buffer.write(run.stdout)\n\
         sys.exit(run.returncode)\n",
        crate::support::binary()
    );
    let output = repo
        .command_through("python3", &["-c", &driver])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        std::fs::read_to_string(repo.join("notes.txt")).unwrap(),
        "the user's notes\n"
    );
}

#[test]
fn a_restored_state_dir_with_a_link_inside_is_refused_and_nothing_outside_changes() {
    // A CI cache restored the state dir with a folder that is a link out of the repository.
    let repo = crate::support::build_repo(
        "[[delegate]]\ncategories = [\"build\"]\nrun = \"echo ok > fixed.txt\"\n",
    );
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("keep.txt"), "outside\n").unwrap();
    std::fs::create_dir(repo.join(".refine-loop")).unwrap();
    std::os::unix::fs::symlink(outside.path(), repo.join(".refine-loop/cycle-1")).unwrap();
    let before = crate::support::tree_of(outside.path(), &[]);
    for command in ["run", "check"] {
        let output = repo.run(&[command]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{command}: {stderr}");
        assert!(
            stderr.contains("holds a symbolic link") && stderr.contains("cycle-1"),
            "{command}: {stderr}"
        );
        assert_eq!(
            crate::support::tree_of(outside.path(), &[]),
            before,
            "{command}"
        );
    }
    assert!(!repo.join("fixed.txt").exists());
}

#[test]
fn folder_modes_a_delegate_changes_are_put_back() {
    use std::os::unix::fs::PermissionsExt;
    // git keeps no folder modes: a change to them is in no diff, so nothing else would undo it.
    let repo = crate::support::build_repo(
        "[[delegate]]\ncategories = [\"build\"]\nrun = \"echo ok > fixed.txt; chmod 700 src; chmod 000 docs/deep\"\n",
    );
    repo.write("src/a.txt", "a\n");
    repo.write("docs/deep/b.txt", "b\n");
    repo.commit("folders");
    let mode = |path: &str| {
        std::fs::metadata(repo.join(path))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777
    };
    let before = (mode("src"), mode("docs/deep"));
    let output = repo.run(&["run", "--max-cycles", "1"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!((mode("src"), mode("docs/deep")), before);
    let report =
        std::fs::read_to_string(repo.join(".refine-loop/cycle-1/delegate-reports/fix-build.md"))
            .unwrap();
    let said = format!(
        "changed the mode of the folder `docs/deep` (0000; it was {:04o}): put back",
        before.1
    );
    assert!(report.contains(&said), "{report}");
    assert!(report.contains("- result: kept"), "{report}");
}

/// A delegate that adds a file the linter crashes on, before it prints a finding, turns the
/// linter's findings into one failure nobody can read: fewer failures, nothing fixed. Not kept.
#[test]
fn a_change_that_makes_a_check_crash_before_it_reports_is_not_kept() {
    let repo = Repo::new();
    repo.write(
        "findings.txt",
        "src/a.rs:1:1: error: one\nsrc/a.rs:2:1: error: two\nsrc/a.rs:3:1: error: three\n",
    );
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write(
        "lint.sh",
        "for f in src/*.bin; do [ -e \"$f\" ] && { echo 'Traceback (most recent call last):'; \
         echo \"  UnicodeDecodeError in $f\"; exit 2; }; done\n\
         cat findings.txt; test ! -s findings.txt\n",
    );
    repo.write(
        "refine-loop.toml",
        "[loop]\nmax_cycles = 1\n\n[[gate.check]]\nname = \"lint\"\ncategory = \"lint\"\n\
         run = \"sh lint.sh\"\nparser = \"clippy\"\n\n\
         [[delegate]]\ncategories = [\"lint\"]\nrun = 'mkdir -p src && printf \"\\001\" > src/data.bin'\n",
    );
    repo.commit("a linter that crashes on binary data");
    let output = run(&repo, &[]);
    let trend = json(&repo, "trend.json");
    let report = std::fs::read_to_string(repo.join(".refine-loop/REFINE-LOOP-FINAL.md")).unwrap();
    assert_eq!(
        trend["cycles"][1]["accepted"], false,
        "{output:?}\n{report}"
    );
    assert!(!repo.join("src/data.bin").exists(), "{report}");
    let delegate =
        std::fs::read_to_string(repo.join(".refine-loop/cycle-1/delegate-reports/fix-lint.md"))
            .unwrap();
    assert!(
        delegate.contains("lint failed with nothing its parser could read, where it had 3"),
        "{delegate}"
    );
}
