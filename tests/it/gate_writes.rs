//! A gate check must only read. One that changes tracked files or the user's untracked ones (a
//! linter whose project config says `fix = true`, a formatter without `--check`) is caught:
//! `check` and `run` name it and the files, put every file back to the byte, and end with ERROR
//! (exit 4). What it makes anew is its output.

use crate::support::{Repo, stdout, tool};

const WRITER: &str = "printf 'x' >> src/a.txt; rm 'd é.txt'; echo rewritten > user.txt; \
                      echo fresh > untracked.txt; echo 'src/a.txt:1:1: error: E1 boom'";

/// A repository with tracked files, one of them changed by the user (not committed).
fn repo_with_work(gate: &str) -> Repo {
    let repo = Repo::new();
    repo.write("src/a.txt", "a\n");
    repo.write("d é.txt", "d\n");
    repo.write("user.txt", "committed\n");
    repo.write(".gitignore", ".refine-loop/\n");
    repo.write(
        "refine-loop.toml",
        &format!(
            "[[gate.check]]\nname = \"writer\"\ncategory = \"lint\"\nrun = '''{gate}'''\nparser = \"generic\"\n\
             \n[[delegate]]\ncategories = [\"*\"]\nrun = \"true\"\n"
        ),
    );
    repo.commit("files");
    repo.write("user.txt", "the user's own work, not committed\n");
    repo
}

fn assert_untouched(repo: &Repo) {
    let read = |path: &str| std::fs::read_to_string(repo.join(path)).unwrap();
    assert_eq!(read("src/a.txt"), "a\n");
    assert_eq!(read("d é.txt"), "d\n");
    assert_eq!(read("user.txt"), "the user's own work, not committed\n");
}

#[test]
fn check_names_a_check_that_writes_puts_the_files_back_and_ends_with_error() {
    let repo = repo_with_work(WRITER);
    let output = repo.run(&["check"]);
    assert_eq!(output.status.code(), Some(4), "{output:?}");
    assert_untouched(&repo);
    let out = stdout(&output);
    let line = out
        .lines()
        .find(|line| {
            line.starts_with("check \"writer\": it changed the repository's files, put back: ")
        })
        .unwrap_or_else(|| panic!("no line naming the check: {out}"));
    for name in ["src/a.txt", "d é.txt", "user.txt"] {
        assert!(line.contains(name), "{name} not named: {line}");
    }
    assert!(!line.contains("untracked.txt"), "{line}");
    assert!(line.contains("must only read"), "{line}");
    let summary = repo.summary();
    assert_eq!(summary["checks"][0]["status"], "infra");
    assert_eq!(
        summary["checks"][0]["wrote_tracked"],
        serde_json::json!(["d é.txt", "src/a.txt", "user.txt"])
    );
}

#[test]
fn a_check_that_only_reads_is_not_flagged() {
    let repo =
        repo_with_work("cat src/a.txt user.txt > /dev/null; echo 'src/a.txt:1:1: error: E1 boom'");
    let output = repo.run(&["check"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_untouched(&repo);
    assert!(repo.summary()["checks"][0].get("wrote_tracked").is_none());
}

#[test]
fn run_stops_at_the_baseline_when_a_check_writes() {
    let repo = repo_with_work(WRITER);
    let output = repo.run(&["run", "--max-cycles", "2"]);
    assert_eq!(output.status.code(), Some(4), "{output:?}");
    assert_untouched(&repo);
    let err = crate::support::stderr(&output);
    assert!(
        err.contains("check \"writer\" changed the repository's files")
            && err.contains("src/a.txt")
            && err.contains("must only read"),
        "{err}"
    );
}

#[test]
fn ruff_with_fix_true_in_the_project_config_is_caught_and_its_files_put_back() {
    let ruff = tool("ruff");
    let repo = Repo::new();
    repo.write("pyproject.toml", "[tool.ruff]\nfix = true\n");
    let source = "import os\nimport sys\n\nprint(sys.argv)\n";
    repo.write("pkg/mod.py", source);
    repo.write(
        "refine-loop.toml",
        &format!(
            "[[gate.check]]\nname = \"ruff\"\ncategory = \"lint\"\nrun = \"{ruff} check --output-format=concise .\"\nparser = \"ruff\"\n"
        ),
    );
    repo.commit("package");
    let output = repo.run(&["check"]);
    assert_eq!(output.status.code(), Some(4), "{output:?}");
    assert_eq!(
        std::fs::read_to_string(repo.join("pkg/mod.py")).unwrap(),
        source
    );
    assert!(
        stdout(&output)
            .contains("check \"ruff\": it changed the repository's files, put back: pkg/mod.py"),
        "{output:?}"
    );
    // With --no-fix, as init writes it, the same check reads and reports the unused import.
    repo.write(
        "refine-loop.toml",
        &format!(
            "[[gate.check]]\nname = \"ruff\"\ncategory = \"lint\"\nrun = \"{ruff} check --no-fix --output-format=concise .\"\nparser = \"ruff\"\n"
        ),
    );
    let output = repo.run(&["check"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(
        std::fs::read_to_string(repo.join("pkg/mod.py")).unwrap(),
        source
    );
    assert_eq!(repo.summary()["categories"]["lint"]["failures"], 1);
}

#[test]
fn a_change_that_makes_the_gate_write_is_rolled_back_and_the_files_put_back() {
    // The delegate plants a line in the gate's script that rewrites a tracked file when the gate
    // runs: the verifying run is caught, the file put back, the change rolled back.
    let repo = Repo::new();
    repo.write("src/a.txt", "a\n");
    repo.write(
        "gate.sh",
        "test -f fixed.txt || echo 'src/a.txt:1:1: error: E1 boom'\n",
    );
    repo.write(".gitignore", ".refine-loop/\n");
    repo.write(
        "refine-loop.toml",
        "[[gate.check]]\nname = \"g\"\ncategory = \"lint\"\nrun = \"sh gate.sh\"\nparser = \"generic\"\n\
         \n[[delegate]]\ncategories = [\"*\"]\n\
         run = \"touch fixed.txt; echo 'echo owned >> src/a.txt' >> gate.sh\"\n",
    );
    repo.commit("files");
    let output = repo.run(&["run", "--max-cycles", "1"]);
    assert!(
        matches!(output.status.code(), Some(1 | 3 | 4)),
        "{output:?}"
    );
    let read = |path: &str| std::fs::read_to_string(repo.join(path)).unwrap();
    assert_eq!(read("src/a.txt"), "a\n");
    assert!(!read("gate.sh").contains("owned"), "the change was kept");
    assert!(!repo.join("fixed.txt").exists(), "the change was kept");
    let text =
        std::fs::read_to_string(repo.join(".refine-loop/cycle-1/gate-summary.json")).unwrap();
    let cycle: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        cycle["checks"][0]["wrote_tracked"],
        serde_json::json!(["src/a.txt"]),
        "{text}"
    );
}

#[test]
fn ruff_rewriting_the_users_untracked_file_is_caught_by_check_and_run() {
    // The user's new module, not added yet: ruff with `fix = true` rewrites it in place.
    let ruff = tool("ruff");
    let repo = Repo::new();
    repo.write("pyproject.toml", "[tool.ruff]\nfix = true\n");
    repo.write("pkg/mod.py", "print('ok')\n");
    repo.write(".gitignore", ".refine-loop/\n.ruff_cache/\n");
    repo.write(
        "refine-loop.toml",
        &format!(
            "[[gate.check]]\nname = \"ruff\"\ncategory = \"lint\"\nrun = \"{ruff} check --output-format=concise .\"\nparser = \"ruff\"\n\
             \n[[delegate]]\ncategories = [\"*\"]\nrun = \"true\"\n"
        ),
    );
    repo.commit("package");
    let scratch = "import os\nimport sys\n\nprint(sys.argv)\n";
    repo.write("pkg/scratch.py", scratch);
    let output = repo.run(&["check"]);
    assert_eq!(output.status.code(), Some(4), "{output:?}");
    assert_eq!(
        std::fs::read_to_string(repo.join("pkg/scratch.py")).unwrap(),
        scratch
    );
    assert!(
        stdout(&output).contains(
            "check \"ruff\": it changed the repository's files, put back: pkg/scratch.py"
        ),
        "{output:?}"
    );
    let output = repo.run(&["run", "--max-cycles", "1"]);
    assert_eq!(output.status.code(), Some(4), "{output:?}");
    assert_eq!(
        std::fs::read_to_string(repo.join("pkg/scratch.py")).unwrap(),
        scratch
    );
    assert!(
        crate::support::stderr(&output).contains("pkg/scratch.py"),
        "{output:?}"
    );
}

#[test]
fn a_check_that_stages_an_edit_is_caught_and_both_put_back() {
    let repo = repo_with_work(
        "echo owned >> src/a.txt && git add src/a.txt; echo 'src/a.txt:1:1: error: E1 boom'",
    );
    let output = repo.run(&["check"]);
    assert_eq!(output.status.code(), Some(4), "{output:?}");
    assert_untouched(&repo);
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(repo.path())
            .status()
            .unwrap()
            .success()
    };
    assert!(
        git(&["diff", "--cached", "--quiet"]),
        "a staged edit is left"
    );
    let out = stdout(&output);
    assert!(
        out.contains(
            "it changed the repository's files, put back: src/a.txt, the index (what it staged)"
        ),
        "{out}"
    );
}

#[test]
fn a_check_that_hides_an_edit_behind_skip_worktree_is_caught() {
    // libgit2 reports a skip-worktree file as unmodified: only the index's flags tell.
    let repo = repo_with_work(
        "git update-index --skip-worktree src/a.txt && echo owned >> src/a.txt; echo 'src/a.txt:1:1: error: E1 boom'",
    );
    let output = repo.run(&["check"]);
    assert_eq!(output.status.code(), Some(4), "{output:?}");
    assert_untouched(&repo);
    let flags = crate::support::git_in(repo.path(), &["ls-files", "-v", "src/a.txt"]);
    assert!(flags.starts_with("H "), "{flags}");
}

#[test]
fn an_ignored_file_of_the_users_that_planted_code_rewrites_in_the_gate_is_put_back() {
    // The delegate plants a line in the gate's script that rewrites the user's `.env` (ignored,
    // there before the run) and a coverage file the gate writes at every run anyway.
    let repo = Repo::new();
    repo.write("src/a.txt", "a\n");
    repo.write(
        "gate.sh",
        "date +%N > .coverage\ntest -f fixed.txt || echo 'src/a.txt:1:1: error: E1 boom'\n",
    );
    repo.write(".gitignore", ".refine-loop/\n.env\n.coverage\n");
    repo.write(
        "refine-loop.toml",
        "[[gate.check]]\nname = \"g\"\ncategory = \"lint\"\nrun = \"sh gate.sh\"\nparser = \"generic\"\n\
         \n[[delegate]]\ncategories = [\"*\"]\n\
         run = \"touch fixed.txt; echo 'echo stolen > .env' >> gate.sh\"\n",
    );
    repo.commit("files");
    repo.write(".env", "API_URL=http://localhost\n");
    let output = repo.run(&["run", "--max-cycles", "1"]);
    assert!(
        matches!(output.status.code(), Some(0 | 1 | 3)),
        "{output:?}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join(".env")).unwrap(),
        "API_URL=http://localhost\n"
    );
    let run = std::fs::read_to_string(repo.join(".refine-loop/run.json")).unwrap();
    let notes: serde_json::Value = serde_json::from_str(&run).unwrap();
    let lines = notes["after_gate"].to_string();
    assert!(lines.contains(".env"), "{lines}");
    // The gate's own output, rewritten at the baseline's run too, is the gate's.
    assert!(!lines.contains(".coverage"), "{lines}");
}

#[test]
fn build_output_the_gate_rebuilds_comes_back_with_its_time_so_it_is_rebuilt_again() {
    // A make-like gate: each object is rebuilt when its source is newer, then the objects are
    // checked. The objects (ignored, built before the run) are put back after each gate run,
    // with their times: put back with a new time, a stale object would look fresh and bring a
    // fixed bug back in the next cycle.
    let repo = Repo::new();
    repo.write("a.txt", "a BUG\n");
    repo.write("b.txt", "b BUG\n");
    repo.write(
        "gate.sh",
        "for s in a b; do [ -e $s.o ] && [ ! $s.txt -nt $s.o ] || cp $s.txt $s.o; done\n\
         grep -l BUG a.o b.o | sed 's/\\.o$/.txt:1:1: error: E1 bug/'\n\
         ! grep -q BUG a.o b.o\n",
    );
    repo.write(".gitignore", ".refine-loop/\n*.o\n");
    repo.write(
        "refine-loop.toml",
        "[loop]\nmax_cycles = 3\n\n[[gate.check]]\nname = \"g\"\ncategory = \"lint\"\nrun = \"sh gate.sh\"\nparser = \"generic\"\n\
         \n[[delegate]]\ncategories = [\"*\"]\n\
         run = \"f=$(grep -l BUG a.txt b.txt | head -1); sed -i s/BUG/ok/ $f\"\n",
    );
    repo.commit("files");
    // Built before the run, an hour ago.
    for object in ["a", "b"] {
        std::fs::copy(
            repo.join(&format!("{object}.txt")),
            repo.join(&format!("{object}.o")),
        )
        .unwrap();
    }
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for path in ["a.txt", "b.txt"] {
        std::fs::File::open(repo.join(path))
            .unwrap()
            .set_modified(old)
            .unwrap();
    }
    let output = repo.run(&["run"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(
        stdout(&output).contains("failed 2 → 0 in 2 cycles"),
        "{output:?}"
    );
}
