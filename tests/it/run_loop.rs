//! `refine-loop run` end to end: real repositories, real fixers where the bar asks for them, and
//! small scripted delegates for the loop's own rules.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{Repo, live_members_of_group, read_pid};

fn json(repo: &Repo, file: &str) -> Value {
    let text = std::fs::read_to_string(repo.join(&format!(".refine-loop/{file}")))
        .unwrap_or_else(|e| panic!("{file}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn failed_counts(repo: &Repo) -> Vec<u64> {
    json(repo, "trend.json")["cycles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["failed_count"].as_u64().unwrap())
        .collect()
}

fn run(repo: &Repo, args: &[&str]) -> Output {
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
const SCRIPTED_GATE: &str = r#"[[gate.check]]
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
        "echo $$ > delegate.pid; echo changed >> findings.txt; sleep 300",
        "10m",
    );
    let mut child = repo
        .command(&["run"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let give_up = Instant::now() + Duration::from_secs(60);
    while !repo.join("delegate.pid").exists() {
        assert!(Instant::now() < give_up, "the delegate never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
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

/// A tool for the real-fixer tests: from `.ci/node_modules/.bin` when `.ci/run` installed it there,
/// else from PATH. A missing tool fails the test (CI installs them all).
fn tool(name: &str) -> String {
    let local = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(".ci/node_modules/.bin")
        .join(name);
    if local.exists() {
        return local.display().to_string();
    }
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {name}")])
        .output()
        .unwrap();
    assert!(
        found.status.success(),
        "{name} is not installed: run .ci/run's install steps"
    );
    String::from_utf8(found.stdout).unwrap().trim().to_string()
}

fn assert_descends_to_success(repo: &Repo, output: &Output) {
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let counts = failed_counts(repo);
    assert!(
        counts.len() >= 2 && counts[0] > 0 && *counts.last().unwrap() == 0,
        "{counts:?}"
    );
    assert!(counts.windows(2).all(|w| w[1] <= w[0]), "{counts:?}");
    assert_eq!(json(repo, "trend.json")["outcome"], "SUCCESS");
    let history = json(repo, "category-history.json");
    for (name, cycles) in history["categories"].as_object().unwrap() {
        assert_eq!(
            cycles.as_array().unwrap().last().unwrap()["passed"],
            true,
            "{name}"
        );
    }
}

#[test]
fn rust_clippy_fix_and_cargo_fmt_harden_a_crate() {
    let repo = Repo::new();
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"hardened\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    );
    repo.write(
        "src/lib.rs",
        "pub fn answer() -> i32 {\n    return 42;\n}\n\npub fn   spaced( a:i32 )->i32{ a+1 }\n",
    );
    repo.write(".gitignore", "/target\n/.refine-loop\n");
    repo.write(
        "refine-loop.toml",
        r#"[[gate.check]]
name = "clippy"
category = "lint"
run = "cargo clippy --all-targets --message-format=short -- -D warnings"
parser = "clippy"

[[gate.check]]
name = "fmt"
category = "format"
run = "cargo fmt --check"
parser = "rustfmt"

[[delegate]]
categories = ["lint"]
run = "cargo clippy --fix --allow-dirty --allow-staged --all-targets"

[[delegate]]
categories = ["format"]
run = "cargo fmt"
"#,
    );
    repo.commit("crate");
    let output = run(&repo, &[]);
    assert_descends_to_success(&repo, &output);
    let code = std::fs::read_to_string(repo.join("src/lib.rs")).unwrap();
    assert!(
        code.contains("    42\n") && code.contains("pub fn spaced(a: i32) -> i32"),
        "{code}"
    );
}

#[test]
fn python_ruff_fix_cleans_a_package() {
    let ruff = tool("ruff");
    let repo = Repo::new();
    repo.write(
        "pyproject.toml",
        "[tool.ruff.lint]\nselect = [\"F401\", \"F541\"]\n",
    );
    repo.write(
        "pkg/util.py",
        "import os\nimport sys\n\n\ndef greet(name):\n    return f\"hello\" + name\n",
    );
    repo.write(".gitignore", "/.refine-loop\n.ruff_cache/\n");
    repo.write(
        "refine-loop.toml",
        &format!(
            "[[gate.check]]\nname = \"ruff\"\ncategory = \"lint\"\nrun = \"{ruff} check --no-cache --output-format=concise .\"\nparser = \"ruff\"\n\n\
             [[delegate]]\ncategories = [\"lint\"]\nrun = \"{ruff} check --no-cache --fix .\"\n"
        ),
    );
    repo.commit("package");
    let output = run(&repo, &[]);
    assert_descends_to_success(&repo, &output);
    assert_eq!(failed_counts(&repo)[0], 3);
}

#[test]
fn javascript_eslint_fix_cleans_a_package() {
    let eslint = tool("eslint");
    let repo = Repo::new();
    repo.write(
        "eslint.config.cjs",
        "module.exports = [{ files: [\"**/*.js\"], rules: { \"prefer-const\": \"error\", \"no-var\": \"error\" } }];\n",
    );
    repo.write(
        "src/app.js",
        "var total = 1;\nlet name = \"x\";\nconsole.log(total, name);\n",
    );
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write(
        "refine-loop.toml",
        &format!(
            "[[gate.check]]\nname = \"eslint\"\ncategory = \"lint\"\nrun = \"{eslint} .\"\nparser = \"eslint\"\n\n\
             [[delegate]]\ncategories = [\"lint\"]\nrun = \"{eslint} --fix .\"\n"
        ),
    );
    repo.commit("package");
    let output = run(&repo, &[]);
    assert_descends_to_success(&repo, &output);
    assert_eq!(
        std::fs::read_to_string(repo.join("src/app.js")).unwrap(),
        "const total = 1;\nconst name = \"x\";\nconsole.log(total, name);\n"
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
fn the_demo_hardens_its_crate_with_the_real_fixers() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("demo");
    let output = Command::new(crate::support::binary())
        .args(["demo", "--dir"])
        .arg(&target)
        .env("CARGO_TARGET_DIR", dir.path().join("target"))
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("SUCCESS: gate-passed"), "{stdout}");
    assert!(target.join(".refine-loop/REFINE-LOOP-FINAL.md").is_file());
    let again = Command::new(crate::support::binary())
        .args(["demo", "--dir"])
        .arg(&target)
        .output()
        .unwrap();
    assert_eq!(
        again.status.code(),
        Some(2),
        "a second demo into the same folder is refused"
    );
}
