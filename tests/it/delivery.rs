//! The record of a run: accepted cycles as commits on a private ref, a `git am` series that
//! rebuilds the final tree exactly on a fresh clone, a cumulative patch, and a manifest.

use std::path::Path;
use std::process::Command;

use crate::run_loop::json;
use crate::support::{Repo, git_in};

/// The tree id of the work tree as it is (with a throwaway index).
pub fn work_tree_id(dir: &Path) -> String {
    let scratch = tempfile::tempdir().unwrap();
    let with_index = |args: &[&str]| {
        let output = Command::new("git")
            .args(args)
            .env("GIT_INDEX_FILE", scratch.path().join("index"))
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).unwrap().trim().to_string()
    };
    with_index(&["add", "-A"]);
    with_index(&["write-tree"])
}

/// A delegate that, each cycle, fixes one finding and changes the tree in every way git knows:
/// an edit, a new file in a new folder, a deletion, a mode, a symlink, bytes that are not text,
/// a name that is not UTF-8, a rename.
const DELEGATE: &str = r#"n=$(wc -l < findings.txt); sed -i 1d findings.txt
case $n in
3) echo edited >> src/lib.txt; mkdir -p src/new/deep; echo new > src/new/deep/file.txt
   rm src/gone.txt; chmod +x src/tool.sh ;;
2) ln -s lib.txt src/link; printf '\000\001\377\n' > src/blob.bin
   printf 'not utf-8\n' > "src/$(printf 'caf\351').txt" ;;
1) mv src/old-name.txt src/new-name.txt; echo again >> src/lib.txt ;;
esac"#;

#[test]
fn git_am_of_the_series_rebuilds_the_final_tree_on_a_fresh_clone() {
    let repo = Repo::new();
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write(
        "findings.txt",
        "a.rs:1:1: error: one\na.rs:2:1: error: two\na.rs:3:1: error: three\n",
    );
    for (file, text) in [
        ("src/lib.txt", "library\n"),
        ("src/gone.txt", "to be deleted\n"),
        ("src/tool.sh", "#!/bin/sh\n"),
        ("src/old-name.txt", "renamed\n"),
    ] {
        repo.write(file, text);
    }
    repo.write(
        "refine-loop.toml",
        &format!(
            "[[gate.check]]\nname = \"lint\"\ncategory = \"lint\"\nrun = \"cat findings.txt; test ! -s findings.txt\"\nparser = \"clippy\"\n\n\
             [[delegate]]\ncategories = [\"lint\"]\nrun = '''{DELEGATE}'''\n"
        ),
    );
    repo.commit("base");
    let root = repo.path();
    let base = git_in(root, &["rev-parse", "HEAD"]);
    let output = repo.run(&["run"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");

    // The user's branch did not move; the accepted cycles are commits on the private ref.
    assert_eq!(git_in(root, &["rev-parse", "HEAD"]), base);
    let manifest = json(&repo, "manifest.json");
    let reference = manifest["ref"].as_str().unwrap();
    assert!(reference.starts_with("refs/refine-loop/"), "{manifest}");
    let tip = git_in(root, &["rev-parse", reference]);
    assert_eq!(manifest["final_commit"], tip.as_str());
    assert_eq!(manifest["base_commit"], base.as_str());
    assert_eq!(manifest["outcome"], "SUCCESS");
    let subjects = git_in(
        root,
        &["log", "--format=%s", &format!("{base}..{reference}")],
    );
    assert_eq!(
        subjects.lines().collect::<Vec<_>>(),
        [
            "refine-loop: iteration 3 — failed 1→0 (lint 1→0)",
            "refine-loop: iteration 2 — failed 2→1 (lint 2→1)",
            "refine-loop: iteration 1 — failed 3→2 (lint 3→2)",
        ]
    );
    let body = git_in(root, &["log", "-1", "--format=%b", reference]);
    for section in [
        "Thesis:",
        "Outcome: confirmed",
        "Test evidence:",
        "What landed:",
        "Notes:",
        "Next backlog: empty",
        "Stop-condition state:",
    ] {
        assert!(body.contains(section), "{section}: {body}");
    }
    // The recorded tree is the work tree (nothing else is dirty here).
    let final_tree = git_in(root, &["rev-parse", &format!("{reference}^{{tree}}")]);
    assert_eq!(work_tree_id(root), final_tree);

    // A fresh clone at the base: the series rebuilds exactly that tree.
    let clones = tempfile::tempdir().unwrap();
    let clone = clones.path().join("am");
    git_in(
        clones.path(),
        &["clone", "-q", "--no-local", root.to_str().unwrap(), "am"],
    );
    git_in(&clone, &["checkout", "-q", &base]);
    let mut patches: Vec<_> = std::fs::read_dir(repo.join(".refine-loop/patches"))
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .collect();
    patches.sort();
    assert_eq!(patches.len(), 3, "{patches:?}");
    let mut am = vec!["am", "-q"];
    am.extend(patches.iter().map(String::as_str));
    git_in(&clone, &am);
    assert_eq!(git_in(&clone, &["rev-parse", "HEAD^{tree}"]), final_tree);

    // And the cumulative patch applies cleanly to the base, to the same tree.
    let apply = clones.path().join("apply");
    git_in(
        clones.path(),
        &["clone", "-q", "--no-local", root.to_str().unwrap(), "apply"],
    );
    git_in(&apply, &["checkout", "-q", &base]);
    let patch = repo.join(".refine-loop/refine-loop.patch");
    git_in(&apply, &["apply", "--check", patch.to_str().unwrap()]);
    git_in(&apply, &["apply", patch.to_str().unwrap()]);
    assert_eq!(work_tree_id(&apply), final_tree);

    let final_report =
        std::fs::read_to_string(repo.join(".refine-loop/REFINE-LOOP-FINAL.md")).unwrap();
    assert!(final_report.contains(&format!("3 accepted cycle(s) committed on `{reference}`")));
}
