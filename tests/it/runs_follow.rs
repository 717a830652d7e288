//! Runs one after another in one state dir: a run on a tree that holds the last run's
//! accepted changes uncommitted says so, builds on them and names each run's patch with the
//! order that undoes them all; the top of the state dir holds one run's files (or one
//! check's), the earlier ones' under `runs/<id>/`; old runs' refs and folders are pruned.

use std::path::Path;

use crate::delivery::work_tree_id;
use crate::run_loop::json;
use crate::support::{Repo, git_in, stderr};

/// A gate with four findings, and a delegate that fixes one a cycle and writes a line in the
/// same library file each time, and a new file the first time: two runs change one file.
fn project(keep_runs: u32) -> Repo {
    let repo = Repo::new();
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write(
        "findings.txt",
        "a.rs:1:1: error: one\na.rs:2:1: error: two\na.rs:3:1: error: three\na.rs:4:1: error: four\n",
    );
    repo.write("src/lib.txt", "library\n");
    repo.write(
        "refine-loop.toml",
        &format!(
            "[loop]\nkeep_runs = {keep_runs}\n\n\
             [[gate.check]]\nname = \"lint\"\ncategory = \"lint\"\nrun = \"cat findings.txt; test ! -s findings.txt\"\nparser = \"clippy\"\n\n\
             [[delegate]]\ncategories = [\"lint\"]\n\
             run = '''sed -i 1d findings.txt; echo \"fixed $(wc -l < findings.txt)\" >> src/lib.txt; test -e src/new.txt || echo new > src/new.txt'''\n"
        ),
    );
    repo.commit("a project with four findings");
    repo
}

/// One cycle of the loop; its run id.
fn run_once(repo: &Repo) -> (String, String) {
    let output = repo.run(&["run", "--max-cycles", "1"]);
    assert!(
        matches!(output.status.code(), Some(0 | 1 | 3)),
        "{output:?}"
    );
    let manifest = json(repo, "manifest.json");
    assert!(manifest["final_commit"].is_string(), "{manifest}");
    (
        manifest["run_id"].as_str().unwrap().to_string(),
        stderr(&output),
    )
}

/// The command the final report gives to drop every run's changes, newest first.
fn undo_command(report: &str) -> String {
    let (_, after) = report
        .split_once("Drop them, newest first: `")
        .unwrap_or_else(|| panic!("no undo for earlier runs in {report}"));
    after.split_once('`').unwrap().0.to_string()
}

fn refs(root: &Path) -> Vec<String> {
    let listed = git_in(
        root,
        &["for-each-ref", "--format=%(refname)", "refs/refine-loop/"],
    );
    listed.lines().map(str::to_string).collect()
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn run_then_run_the_reports_undo_restores_heads_tree_exactly() {
    // keep_runs = 1: only this run's ref and folder would stay, but the first run's changes are
    // still in the tree, so its ref and its folder are kept.
    let repo = project(1);
    let root = repo.path();
    let head_tree = git_in(root, &["rev-parse", "HEAD^{tree}"]);
    let (first, _) = run_once(&repo);
    let first_patch = repo.join(&format!(".refine-loop/runs/{first}/refine-loop.patch"));
    // The user's own work beside it: the tree holds the first run's changes and more.
    repo.write("notes.txt", "my own notes\n");

    let (second, second_err) = run_once(&repo);
    assert_ne!(first, second);
    assert!(
        second_err.contains(&format!(
            "the tree holds run {first}'s accepted changes, not committed"
        )),
        "{second_err}"
    );
    // The first run's files were set aside, its patch whole; its library line is the second
    // run's to build on, not the user's own file: the second run changed it too.
    assert!(std::fs::metadata(&first_patch).unwrap().len() > 0);
    assert_eq!(
        std::fs::read_to_string(repo.join("src/lib.txt")).unwrap(),
        "library\nfixed 3\nfixed 2\n"
    );
    // The second run's patch holds its own change alone: it goes on after the first run's.
    let patch = std::fs::read_to_string(repo.join(".refine-loop/refine-loop.patch")).unwrap();
    assert!(patch.contains(" fixed 3\n+fixed 2\n"), "{patch}");
    assert!(!patch.contains("src/new.txt"), "{patch}");
    let manifest = json(&repo, "manifest.json");
    let first_manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo.join(&format!(".refine-loop/runs/{first}/manifest.json")))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(manifest["base_commit"], first_manifest["final_commit"]);

    let report = std::fs::read_to_string(repo.join(".refine-loop/REFINE-LOOP-FINAL.md")).unwrap();
    assert!(
        report.contains(&format!("- run {first}: `{}`", first_patch.display())),
        "{report}"
    );
    assert_eq!(
        refs(root),
        [
            format!("refs/refine-loop/{first}"),
            format!("refs/refine-loop/{second}")
        ]
        .into_iter()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect::<Vec<_>>()
    );
    assert_eq!(
        names_in(&repo.join(".refine-loop/runs")),
        std::slice::from_ref(&first)
    );

    let undo = undo_command(&report);
    let output = std::process::Command::new("sh")
        .args(["-c", &undo])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(output.status.success(), "{undo}: {output:?}");
    assert_eq!(
        std::fs::read_to_string(repo.join("notes.txt")).unwrap(),
        "my own notes\n"
    );
    std::fs::remove_file(repo.join("notes.txt")).unwrap();
    assert_eq!(work_tree_id(root), head_tree, "{undo}");
}

#[test]
fn check_after_run_leaves_one_runs_files_at_the_top() {
    let repo = project(10);
    let (first, _) = run_once(&repo);
    let output = repo.run(&["check"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let state = repo.join(".refine-loop");
    // The check's own files, the lessons the runs carry on, the earlier run under runs/.
    assert_eq!(
        names_in(&state)
            .into_iter()
            .filter(|name| name != ".lock")
            .collect::<Vec<_>>(),
        [
            "codequality.json",
            "cycle-0",
            "heuristics.json",
            "junit.xml",
            "report.sarif",
            "runs",
        ]
    );
    assert_eq!(repo.summary()["failed_count"], 3);
    let earlier = state.join("runs").join(&first);
    for file in [
        "REFINE-LOOP-FINAL.md",
        "manifest.json",
        "refine-loop.patch",
        "patches",
        "run.json",
        "cycle-1",
    ] {
        assert!(earlier.join(file).exists(), "{file} in {earlier:?}");
    }

    // A run after the check clears the check's files and finds the first run's work held.
    let (second, second_err) = run_once(&repo);
    assert!(
        second_err.contains(&format!("the tree holds run {first}'s accepted changes")),
        "{second_err}"
    );
    assert_eq!(names_in(&state.join("runs")), [first]);
    assert_eq!(json(&repo, "manifest.json")["run_id"], second.as_str());
    assert!(!state.join("cycle-2").exists());
}

#[test]
fn old_runs_refs_and_folders_are_pruned_to_keep_runs() {
    let repo = project(2);
    let root = repo.path();
    let mut ids = Vec::new();
    for n in 0..3 {
        ids.push(run_once(&repo).0);
        // Committed: the runs' changes are the user's now, no run holds the tree.
        repo.commit(&format!("the run's work, read and committed ({n})"));
    }
    let kept = refs(root);
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert!(
        kept.contains(&format!("refs/refine-loop/{}", ids[2])),
        "{kept:?}"
    );
    let folders = names_in(&repo.join(".refine-loop/runs"));
    assert_eq!(folders.len(), 1, "{folders:?}");
    assert!(!folders.contains(&ids[2]), "{folders:?}");
}
