//! The seeds' remaining contract: a run keeps to its scope, its baseline is not fooled by a
//! flaky check or a test that fails only in its suite, and a missing tool is an infrastructure
//! failure to install or to report, never findings.

use crate::support::{Repo, python_module, stderr, tool, tree_of};

fn read(repo: &Repo, path: &str) -> String {
    std::fs::read_to_string(repo.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// One cycle, as on CI (`CI` set: pytest prints whole messages).
fn run_on_ci(repo: &Repo) -> std::process::Output {
    repo.command(&["run", "--max-cycles", "1"])
        .env("CI", "true")
        .output()
        .unwrap()
}

fn json(repo: &Repo, path: &str) -> serde_json::Value {
    serde_json::from_str(&read(repo, path)).unwrap()
}

/// Two packages with an unused import each; the delegate is the real `ruff check --fix .`,
/// which fixes both.
fn two_packages() -> Repo {
    two_packages_with(&tool("ruff"))
}

/// The same, with `ruff` as the command (tests that stop before anything runs need no ruff).
fn two_packages_with(ruff: &str) -> Repo {
    let repo = Repo::new();
    repo.write("pyproject.toml", "[tool.ruff.lint]\nselect = [\"F401\"]\n");
    repo.write("src/app.py", "import os\nx = 1\n");
    repo.write("tools/build.py", "import sys\ny = 2\n");
    repo.write(".gitignore", "/.refine-loop\n.ruff_cache/\n");
    repo.write(
        "refine-loop.toml",
        &format!(
            "[[gate.check]]\nname = \"ruff\"\ncategory = \"lint\"\n\
             run = \"{ruff} check --no-cache --output-format=concise .\"\nparser = \"ruff\"\n\n\
             [[delegate]]\ncategories = [\"lint\"]\n\
             run = \"{ruff} check --no-cache --fix .\"\n"
        ),
    );
    repo.commit("two packages");
    repo
}

#[test]
fn a_fix_outside_the_scope_is_undone_and_the_fix_inside_kept() {
    let repo = two_packages();
    let outside_before = read(&repo, "tools/build.py");
    let output = repo.run(&["run", "--scope", "src", "--max-cycles", "2"]);
    // The finding outside the scope is left (a person's to look at) and no cycle can work it:
    // the cycles run out.
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert_eq!(
        read(&repo, "src/app.py"),
        "x = 1\n",
        "the fix in scope is kept"
    );
    assert_eq!(
        read(&repo, "tools/build.py"),
        outside_before,
        "byte-identical"
    );

    let report = read(&repo, ".refine-loop/cycle-1/delegate-reports/fix-lint.md");
    assert!(
        report.contains("changed `tools/build.py`, outside the scope: a scope violation, undone"),
        "{report}"
    );
    let prompt = read(
        &repo,
        ".refine-loop/cycle-1/delegate-reports/fix-lint.prompt.md",
    );
    assert!(prompt.contains("only these paths: src"), "{prompt}");
    assert!(
        !prompt.contains("tools/build.py"),
        "findings outside are not given: {prompt}"
    );
    let last = read(&repo, ".refine-loop/REFINE-LOOP-FINAL.md");
    assert!(last.contains("## Scope\n\nonly these paths: src"), "{last}");
    assert!(
        last.contains("- scope violation: cycle 1,") && last.contains("tools/build.py"),
        "{last}"
    );
    assert!(last.contains("1 finding(s) outside the scope"), "{last}");
    // Cycle 2 had nothing in scope to work: no delegate ran.
    assert!(
        !repo
            .join(".refine-loop/cycle-2/delegate-reports/fix-lint.md")
            .exists()
    );
    // The record holds the change in scope only.
    let patch = read(&repo, ".refine-loop/refine-loop.patch");
    assert!(
        patch.contains("src/app.py") && !patch.contains("tools/build.py"),
        "{patch}"
    );
}

#[test]
fn a_scope_outside_the_target_is_refused_before_anything_runs() {
    let repo = two_packages_with("ruff");
    let output = repo.run(&["run", "--scope", "../elsewhere"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--scope"), "{}", stderr(&output));
    assert!(!repo.join(".refine-loop/cycle-0").exists());
}

#[test]
fn the_flags_replace_the_configs_scope_and_priority() {
    let repo = two_packages_with("ruff");
    let text = read(&repo, "refine-loop.toml");
    repo.write(
        "refine-loop.toml",
        &format!("[loop]\nscope = [\"tools\"]\npriority = [\"lint\"]\n\n{text}"),
    );
    let settings = |args: &[&str]| {
        let mut overrides = refine_loop::config::Overrides {
            target: Some(repo.path().to_path_buf()),
            ..Default::default()
        };
        if !args.is_empty() {
            overrides.scope = Some(vec![args[0].to_string()]);
            overrides.priority = Some(args[1].split(',').map(String::from).collect());
        }
        refine_loop::config::load(&overrides).unwrap().run
    };
    let from_file = settings(&[]);
    assert_eq!(from_file.scope.patterns(), ["tools"]);
    assert_eq!(from_file.priority, ["lint"]);
    let from_flags = settings(&["src", "types,tests"]);
    assert_eq!(from_flags.scope.patterns(), ["src"]);
    assert_eq!(from_flags.priority, ["types", "tests"]);
}

/// A check that fails on every odd run and passes on every even one (its count in `.runs`).
const FLAKY: &str = r#"n=$(cat .runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > .runs; if [ $((n % 2)) -eq 1 ]; then echo "timeout talking to the test database"; exit 1; fi"#;

#[test]
fn a_check_that_changes_between_runs_is_flaky_and_never_counted_against_a_delegate() {
    let ruff = tool("ruff");
    let repo = Repo::new();
    repo.write("pyproject.toml", "[tool.ruff.lint]\nselect = [\"F401\"]\n");
    repo.write("src/app.py", "import os\nx = 1\n");
    repo.write(".gitignore", "/.refine-loop\n.ruff_cache/\n.runs\n");
    repo.write(
        "refine-loop.toml",
        &format!(
            "[[gate.check]]\nname = \"integration\"\ncategory = \"tests\"\nrun = '{FLAKY}'\n\n\
             [[gate.check]]\nname = \"ruff\"\ncategory = \"lint\"\n\
             run = \"{ruff} check --no-cache --output-format=concise .\"\nparser = \"ruff\"\n\n\
             [[delegate]]\ncategories = [\"lint\"]\nrun = \"{ruff} check --no-cache --fix .\"\n"
        ),
    );
    repo.commit("a flaky check");
    let output = repo.run(&["run"]);
    // Run 1 failed, run 2 (the confirmation) passed: flaky. Run 3, after the fix, fails again
    // and is not counted: the delegate's fix is kept and the gate passes.
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(read(&repo, "src/app.py"), "x = 1\n");
    assert_eq!(read(&repo, ".runs").trim(), "3");
    let baseline = json(&repo, ".refine-loop/cycle-0/gate-summary.json");
    assert_eq!(baseline["checks"][0]["flaky"], true, "{baseline}");
    assert_eq!(
        baseline["failed_count"], 1,
        "ruff's finding only: {baseline}"
    );
    let cycle = json(&repo, ".refine-loop/cycle-1/gate-summary.json");
    assert_eq!(cycle["checks"][0]["status"], "failed");
    assert_eq!(cycle["failed_count"], 0, "{cycle}");
    let run = json(&repo, ".refine-loop/run.json");
    assert_eq!(run["flaky_checks"], serde_json::json!(["integration"]));
    assert!(run["cpus"].as_u64().unwrap() >= 1);
    assert_eq!(run["load_average"].as_array().unwrap().len(), 3);
    let last = read(&repo, ".refine-loop/REFINE-LOOP-FINAL.md");
    assert!(
        last.contains("flaky: check `integration` failed and then passed at the baseline"),
        "{last}"
    );
    assert!(last.contains("- load average: "), "{last}");
}

#[test]
fn a_test_that_fails_in_its_suite_but_passes_alone_is_not_counted() {
    python_module("pytest");
    let repo = Repo::new();
    // test_b fails after test_a has left its marker (in the suite), passes alone.
    repo.write(
        "tests/test_order.py",
        "import pathlib\n\nMARK = pathlib.Path('.marker')\n\n\n\
         def test_a():\n    MARK.write_text('a')\n\n\n\
         def test_b():\n    assert not MARK.exists()\n\n\n\
         def test_c():\n    assert 1 + 1 == 3\n",
    );
    repo.write(
        "conftest.py",
        "import pathlib\n\n\ndef pytest_sessionstart(session):\n    pathlib.Path('.marker').unlink(missing_ok=True)\n",
    );
    repo.write(
        ".gitignore",
        "/.refine-loop\n.marker\n.pytest_cache/\n__pycache__/\n",
    );
    repo.write(
        "refine-loop.toml",
        "[[gate.check]]\nname = \"pytest\"\nrun = \"python3 -m pytest -p no:cacheprovider tests\"\n\
         parser = \"pytest\"\nrerun = \"python3 -m pytest -p no:cacheprovider {test}\"\n\n\
         [[delegate]]\nrun = \"true\"\n",
    );
    repo.commit("order-dependent tests");
    let output = run_on_ci(&repo);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let baseline = json(&repo, ".refine-loop/cycle-0/gate-summary.json");
    assert_eq!(
        baseline["failed_count"], 1,
        "only test_c fails alone: {baseline}"
    );
    assert_eq!(
        baseline["checks"][0]["excused"],
        serde_json::json!(["tests/test_order.py::test_b"])
    );
    let run = json(&repo, ".refine-loop/run.json");
    assert_eq!(
        run["flaky_tests"],
        serde_json::json!([{
            "check": "pytest",
            "file": "tests/test_order.py",
            "test": "tests/test_order.py::test_b"
        }])
    );
    let confirm = read(&repo, ".refine-loop/cycle-0/confirm-output.txt");
    assert!(
        confirm.contains("tests/test_order.py::test_b: passed alone"),
        "{confirm}"
    );
    assert!(
        confirm.contains("tests/test_order.py::test_c: not shown to pass alone"),
        "{confirm}"
    );
}

/// A check whose tool is a Python module that is not there until `install` writes it.
fn missing_module(install: Option<&str>) -> Repo {
    let repo = Repo::new();
    repo.write(".gitignore", "/.refine-loop\n.tools/\n");
    let install = install.map_or(String::new(), |command| format!("install = '{command}'\n"));
    repo.write(
        "refine-loop.toml",
        &format!(
            "[[gate.check]]\nname = \"fakelint\"\nrun = \"PYTHONPATH=.tools python3 -m fakelint\"\n\
             missing_tool = 'No module named (\\S+)'\n{install}\n\
             [[delegate]]\nrun = \"true\"\n"
        ),
    );
    repo.commit("a gate with a tool to install");
    repo
}

#[test]
fn a_missing_tool_is_installed_once_and_the_run_goes_on() {
    let repo = missing_module(Some(
        "mkdir -p .tools && printf \"print(0)\\n\" > .tools/fakelint.py && echo installed fakelint",
    ));
    let output = repo.run(&["run"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let run = json(&repo, ".refine-loop/run.json");
    assert_eq!(run["installed"][0]["tool"], "fakelint", "{run}");
    assert_eq!(run["installed"][0]["exit_code"], 0);
    assert!(
        run["installed"][0]["output"]
            .as_str()
            .unwrap()
            .contains("installed fakelint")
    );
    let last = read(&repo, ".refine-loop/REFINE-LOOP-FINAL.md");
    assert!(
        last.contains("- installed `fakelint` for check `fakelint`"),
        "{last}"
    );
    let baseline = json(&repo, ".refine-loop/cycle-0/gate-summary.json");
    assert_eq!(
        baseline["failed_count"], 0,
        "no fake finding count: {baseline}"
    );
}

#[test]
fn a_tool_still_missing_after_its_install_or_without_one_ends_the_run_with_error() {
    let broken = missing_module(Some("echo cannot reach the package index >&2; exit 1"));
    let output = broken.run(&["run"]);
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(
        err.contains("infrastructure failure: fakelint (check \"fakelint\") is not installed"),
        "{err}"
    );
    assert!(err.contains("cannot reach the package index"), "{err}");
    assert!(
        !broken.join(".refine-loop/cycle-1").exists(),
        "no cycle ran"
    );

    let none = Repo::new();
    none.write(
        "refine-loop.toml",
        "[[gate.check]]\nname = \"lint\"\nrun = \"refine-loop-no-such-linter --check .\"\n\n\
         [[delegate]]\nrun = \"true\"\n",
    );
    none.commit("a gate naming a tool that is not installed");
    let before = tree_of(none.path(), &[".git", ".refine-loop"]);
    let output = none.run(&["run"]);
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(
            "infrastructure failure: refine-loop-no-such-linter (check \"lint\") is not installed"
        ),
        "{}",
        stderr(&output)
    );
    assert_eq!(tree_of(none.path(), &[".git", ".refine-loop"]), before);
}

#[test]
fn a_rerun_filter_that_runs_no_test_proves_nothing() {
    python_module("pytest");
    let repo = Repo::new();
    repo.write(
        "tests/test_one.py",
        "def test_fails():\n    assert 1 + 1 == 3\n",
    );
    repo.write(
        ".gitignore",
        "/.refine-loop\n.pytest_cache/\n__pycache__/\n",
    );
    // `-k` matching nothing selects no test: pytest exits 5, which this config calls a success.
    repo.write(
        "refine-loop.toml",
        "[[gate.check]]\nname = \"pytest\"\nrun = \"python3 -m pytest -p no:cacheprovider tests\"\n\
         parser = \"pytest\"\nsuccess_codes = [0, 5]\n\
         rerun = \"python3 -m pytest -p no:cacheprovider tests -k nothing_{test}\"\n\n\
         [[delegate]]\nrun = \"true\"\n",
    );
    repo.commit("a rerun that selects nothing");
    let output = run_on_ci(&repo);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let baseline = json(&repo, ".refine-loop/cycle-0/gate-summary.json");
    assert_eq!(baseline["failed_count"], 1, "still failing: {baseline}");
    assert_eq!(
        json(&repo, ".refine-loop/run.json")["flaky_tests"],
        serde_json::json!([])
    );
}

#[test]
fn a_change_undone_outside_the_scope_takes_what_depends_on_it_along() {
    let repo = Repo::new();
    repo.write("fix.py", "value = 'bad'\n");
    repo.write("config", "setting = 1\n");
    repo.write("lib/helper.py", "def help():\n    return 1\n");
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write(
        "refine-loop.toml",
        "[loop]\nscope = [\"fix.py\", \"lib\", \"config/*.py\"]\n\n\
         [[gate.check]]\nname = \"no-bad\"\nrun = \"! grep -q bad fix.py\"\n\n\
         [[delegate]]\n\
         run = \"sed -i s/bad/good/ fix.py && rm config && mkdir config && echo x=1 > config/settings.py && mkdir tools && mv lib/helper.py tools/\"\n",
    );
    repo.commit("a delegate that reaches out");
    let before = tree_of(repo.path(), &[".git", ".refine-loop"]);
    let output = repo.run(&["run"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        read(&repo, "fix.py"),
        "value = 'good'\n",
        "the fix in scope is kept"
    );
    let mut after = tree_of(repo.path(), &[".git", ".refine-loop"]);
    after.remove(std::path::Path::new("fix.py"));
    let mut expected = before;
    expected.remove(std::path::Path::new("fix.py"));
    assert_eq!(
        after, expected,
        "config, lib/helper.py as they were; no config/ nor tools/"
    );
    let patch = read(&repo, ".refine-loop/refine-loop.patch");
    assert!(patch.contains("fix.py"), "{patch}");
    assert!(
        !patch.contains("config") && !patch.contains("helper.py"),
        "{patch}"
    );
    let report = read(&repo, ".refine-loop/REFINE-LOOP-FINAL.md");
    assert!(report.contains("`config`, outside the scope"), "{report}");
    assert!(
        report.contains("`tools/helper.py`, outside the scope"),
        "{report}"
    );
}

/// A Python and Markdown project whose gate is ruff and prettier, with a finding of each inside
/// `docs` and outside it, and fixers made from the checks (`from_check`).
fn docs_and_code() -> Repo {
    let repo = Repo::new();
    repo.write("pyproject.toml", "[tool.ruff.lint]\nselect = [\"F401\"]\n");
    repo.write("docs/conf.py", "import os\nproject = \"demo\"\n");
    repo.write("docs/guide.md", "# Guide\n\n*  one\n*  two\n");
    repo.write("src/app.py", "import sys\nx = 1\n");
    repo.write("notes/todo.md", "# Todo\n\n*  later\n");
    repo.write(".gitignore", "/.refine-loop\n.ruff_cache/\n");
    repo.write(
        "refine-loop.toml",
        &format!(
            "[[gate.check]]\nname = \"ruff\"\ncategory = \"lint\"\n\
             run = \"{} check --no-cache --output-format=concise .\"\nparser = \"ruff\"\n\n\
             [[gate.check]]\nname = \"prettier\"\ncategory = \"format\"\n\
             run = \"{} --check '**/*.md'\"\nparser = \"prettier\"\n\n\
             [[delegate]]\nfrom_check = \"ruff\"\n\n[[delegate]]\nfrom_check = \"prettier\"\n",
            tool("ruff"),
            tool("prettier")
        ),
    );
    repo.commit("docs and code");
    repo
}

#[test]
fn a_fixer_made_from_a_check_works_only_the_scope() {
    let repo = docs_and_code();
    let outside = [read(&repo, "src/app.py"), read(&repo, "notes/todo.md")];
    let output = repo.run(&["run", "--scope", "docs", "--max-cycles", "2"]);
    // The findings outside the scope are left: the cycles run out.
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert_eq!(read(&repo, "docs/conf.py"), "project = \"demo\"\n");
    assert_eq!(read(&repo, "docs/guide.md"), "# Guide\n\n- one\n- two\n");
    assert_eq!(
        [read(&repo, "src/app.py"), read(&repo, "notes/todo.md")],
        outside,
        "outside the scope, never touched"
    );
    let last = read(&repo, ".refine-loop/REFINE-LOOP-FINAL.md");
    assert!(!last.contains("scope violation"), "{last}");
    assert!(last.contains("2 finding(s) outside the scope"), "{last}");
    for category in ["lint", "format"] {
        let report = read(
            &repo,
            &format!(".refine-loop/cycle-1/delegate-reports/fix-{category}.md"),
        );
        assert!(!report.contains("outside the scope"), "{report}");
        assert!(
            report.contains("- ran on the paths of its work in the scope: `"),
            "{report}"
        );
        // Kept, not undone: no strike.
        assert!(!report.contains("Refused"), "{report}");
    }
    let patch = read(&repo, ".refine-loop/refine-loop.patch");
    assert!(
        patch.contains("docs/conf.py") && patch.contains("docs/guide.md"),
        "{patch}"
    );
    assert!(
        !patch.contains("src/app.py") && !patch.contains("notes/todo.md"),
        "{patch}"
    );
}

#[test]
fn without_a_scope_a_fixer_made_from_a_check_runs_as_the_check_does() {
    let repo = docs_and_code();
    let output = repo.run(&["run", "--max-cycles", "2"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report = read(&repo, ".refine-loop/cycle-1/delegate-reports/fix-lint.md");
    assert!(!report.contains("ran on the paths"), "{report}");
    assert_eq!(read(&repo, "src/app.py"), "x = 1\n");
    assert_eq!(read(&repo, "notes/todo.md"), "# Todo\n\n- later\n");
}
