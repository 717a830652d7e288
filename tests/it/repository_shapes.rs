//! The shapes a repository comes in: a linked worktree, a shallow clone, a detached HEAD and a
//! submodule all work; an unborn HEAD, a bare repository or no repository at all are a clear
//! usage error (exit 2) before anything runs.

use std::path::Path;
use std::process::Command;

use crate::support::{Repo, binary, git_in};

const CONFIG: &str = r#"[loop]

[[gate.check]]
name = "lint"
category = "lint"
run = "cat findings.txt; test ! -s findings.txt"
parser = "clippy"

[[delegate]]
categories = ["lint"]
run = "sed -i 1d findings.txt; echo fixed >> src.txt"
"#;

fn project() -> Repo {
    let repo = Repo::new();
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write(
        "findings.txt",
        "a.rs:1:1: error: one\na.rs:2:1: error: two\n",
    );
    repo.write("src.txt", "source\n");
    repo.write("refine-loop.toml", CONFIG);
    repo.commit("project");
    repo
}

fn run_in(dir: &Path) -> std::process::Output {
    Command::new(binary())
        .arg("run")
        .current_dir(dir)
        .env_remove("REFINE_LOOP_STATE_DIR")
        .output()
        .unwrap()
}

fn assert_hardened(dir: &Path) {
    assert_eq!(
        std::fs::read_to_string(dir.join("findings.txt")).unwrap(),
        ""
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("src.txt")).unwrap(),
        "source\nfixed\nfixed\n"
    );
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join(".refine-loop/manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(manifest["outcome"], "SUCCESS");
    let reference = manifest["ref"].as_str().unwrap();
    assert_eq!(
        git_in(dir, &["rev-parse", reference]),
        manifest["final_commit"].as_str().unwrap()
    );
}

#[test]
fn a_linked_worktree_is_worked_in_and_the_main_tree_is_left_alone() {
    let repo = project();
    let linked = tempfile::tempdir().unwrap();
    let worktree = linked.path().join("wt");
    git_in(
        repo.path(),
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "feature",
            worktree.to_str().unwrap(),
        ],
    );
    let output = run_in(&worktree);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_hardened(&worktree);
    assert_eq!(git_in(repo.path(), &["status", "--porcelain"]), "");
    assert_eq!(
        git_in(&worktree, &["rev-parse", "--abbrev-ref", "HEAD"]),
        "feature"
    );
}

#[test]
fn a_shallow_clone_works() {
    let repo = project();
    repo.write("more.txt", "second commit\n");
    repo.commit("second");
    let clones = tempfile::tempdir().unwrap();
    let url = format!("file://{}", repo.path().display());
    git_in(
        clones.path(),
        &["clone", "-q", "--depth", "1", &url, "shallow"],
    );
    let shallow = clones.path().join("shallow");
    assert_eq!(
        git_in(&shallow, &["rev-parse", "--is-shallow-repository"]),
        "true"
    );
    let output = run_in(&shallow);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_hardened(&shallow);
}

#[test]
fn a_detached_head_stays_where_it_was() {
    let repo = project();
    git_in(repo.path(), &["checkout", "-q", "--detach"]);
    let head = git_in(repo.path(), &["rev-parse", "HEAD"]);
    let output = run_in(repo.path());
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_hardened(repo.path());
    assert_eq!(git_in(repo.path(), &["rev-parse", "HEAD"]), head);
    assert_eq!(
        git_in(repo.path(), &["rev-parse", "--abbrev-ref", "HEAD"]),
        "HEAD"
    );
}

/// The project with another as its submodule at `vendor/library` (kept alive beside it).
fn with_a_submodule() -> (Repo, Repo) {
    let library = project();
    let repo = project();
    git_in(
        repo.path(),
        &[
            "submodule",
            "add",
            "-q",
            library.path().to_str().unwrap(),
            "vendor/library",
        ],
    );
    repo.commit("with a submodule");
    (repo, library)
}

#[test]
fn a_submodule_is_not_descended() {
    let (repo, _library) = with_a_submodule();
    // The delegate also writes inside the submodule: not the loop's to judge or to record.
    repo.write(
        "refine-loop.toml",
        &CONFIG.replace(
            "echo fixed >> src.txt",
            "echo fixed >> src.txt; echo inside >> vendor/library/src.txt",
        ),
    );
    repo.commit("delegate writes into the submodule");
    let output = run_in(repo.path());
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_hardened(repo.path());
    let manifest = std::fs::read_to_string(repo.join(".refine-loop/manifest.json")).unwrap();
    assert!(!manifest.contains("vendor/library"), "{manifest}");
}

#[test]
fn the_users_work_inside_a_submodule_is_put_back_and_reported() {
    let (repo, _library) = with_a_submodule();
    repo.write(
        "refine-loop.toml",
        &CONFIG.replace(
            "echo fixed >> src.txt",
            "echo fixed >> src.txt; echo clobbered > vendor/library/src.txt; \
             echo clobbered > vendor/library/wip.txt",
        ),
    );
    repo.commit("delegate writes over the submodule's work");
    // The user's work in the submodule, not committed there: an edit and a new file.
    std::fs::write(repo.join("vendor/library/src.txt"), "source\nmine\n").unwrap();
    std::fs::write(repo.join("vendor/library/wip.txt"), "work in progress\n").unwrap();
    let output = run_in(repo.path());
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        std::fs::read_to_string(repo.join("vendor/library/src.txt")).unwrap(),
        "source\nmine\n"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("vendor/library/wip.txt")).unwrap(),
        "work in progress\n"
    );
    let report =
        std::fs::read_to_string(repo.join(".refine-loop/cycle-1/delegate-reports/fix-lint.md"))
            .unwrap();
    for path in ["vendor/library/src.txt", "vendor/library/wip.txt"] {
        assert!(
            report.contains(&format!(
                "changed `{path}`, which held the user's own work before the run: put back"
            )),
            "{report}"
        );
    }
}

#[test]
fn an_unborn_head_a_bare_repository_and_no_repository_are_usage_errors() {
    let unborn = tempfile::tempdir().unwrap();
    git_in(unborn.path(), &["init", "-q"]);
    std::fs::write(unborn.path().join("refine-loop.toml"), CONFIG).unwrap();
    let bare = tempfile::tempdir().unwrap();
    git_in(bare.path(), &["init", "-q", "--bare"]);
    std::fs::write(bare.path().join("refine-loop.toml"), CONFIG).unwrap();
    let plain = tempfile::tempdir().unwrap();
    std::fs::write(plain.path().join("refine-loop.toml"), CONFIG).unwrap();
    for (dir, says) in [
        (unborn.path(), "HEAD has no commit yet"),
        (bare.path(), "a bare repository has no working tree"),
        (
            plain.path(),
            "not inside a git repository; run `git init` and commit once, or use `refine-loop check`",
        ),
    ] {
        let output = run_in(dir);
        assert_eq!(output.status.code(), Some(2), "{output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(says), "{stderr}");
        // What libgit2 says is kept, without its class and code numbers.
        assert!(!stderr.contains("class="), "{stderr}");
        assert!(
            !dir.join(".refine-loop/cycle-0").exists(),
            "the gate ran in {dir:?}"
        );
    }
}

#[test]
fn an_untracked_repository_inside_the_tree_is_refused_before_anything_runs() {
    let repo = project();
    let nested = repo.join("vendor/lib");
    std::fs::create_dir_all(&nested).unwrap();
    git_in(&nested, &["init", "-q"]);
    std::fs::write(nested.join("code.c"), "int main;\n").unwrap();
    let output = run_in(repo.path());
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("vendor/lib: a git repository inside the work tree"),
        "{stderr}"
    );
    assert!(stderr.contains("--isolate worktree"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(nested.join("code.c")).unwrap(),
        "int main;\n"
    );
    // In a worktree made from HEAD it is not there: the run goes ahead.
    let output = Command::new(binary())
        .args(["run", "--isolate", "worktree"])
        .current_dir(repo.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
}

#[test]
fn a_tracked_file_hard_linked_elsewhere_is_refused_before_anything_runs() {
    // A dotfile setup: the tracked file is one name of a file that also lives outside the tree.
    let repo = project();
    let outside = tempfile::tempdir().unwrap();
    let home = outside.path().join(".bashrc");
    std::fs::write(&home, "export EDITOR=vi\n").unwrap();
    std::fs::remove_file(repo.join("src.txt")).unwrap();
    std::fs::hard_link(&home, repo.join("src.txt")).unwrap();
    std::fs::write(&home, "source\n").unwrap();
    let output = run_in(repo.path());
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("src.txt: a hard link (2 names for one file"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&home).unwrap(), "source\n");
    assert_eq!(
        std::fs::read_to_string(repo.join("findings.txt")).unwrap(),
        "a.rs:1:1: error: one\na.rs:2:1: error: two\n"
    );
}

#[test]
fn a_folder_nested_deeper_than_git_walks_is_a_usage_error_at_once() {
    // A chain of folders deeper than libgit2 walks (100): the watch stops at that depth instead
    // of spending time that grows with the square of it, and the run says why.
    let repo = project();
    let mut deep = repo.join("chain");
    for _ in 0..150 {
        deep.push("d");
    }
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("leaf.txt"), "leaf\n").unwrap();
    let output = run_in(repo.path());
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("is nested deeper than 99 folders or has a path longer than"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("findings.txt")).unwrap(),
        "a.rs:1:1: error: one\na.rs:2:1: error: two\n"
    );
    assert_eq!(
        std::fs::read_to_string(deep.join("leaf.txt")).unwrap(),
        "leaf\n"
    );
}
