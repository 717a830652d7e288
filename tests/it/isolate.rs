//! `--isolate worktree`: the loop works in a linked worktree made from HEAD; the user's tree is
//! not written (but the state dir and the shared folders), and the patches carry the result.

use crate::run_loop::json;
use crate::support::{Repo, git_in, tree_of};

#[test]
fn the_users_tree_is_not_written_and_the_patches_carry_the_result() {
    let repo = Repo::new();
    repo.write(".gitignore", "/.refine-loop\n/target/\n");
    repo.write(
        "findings.txt",
        "a.rs:1:1: error: one\na.rs:2:1: error: two\n",
    );
    repo.write("src/lib.txt", "library\n");
    repo.write(
        "refine-loop.toml",
        r#"[loop]
share = ["target"]

[[gate.check]]
name = "lint"
category = "lint"
run = "echo built >> target/builds; cat findings.txt; test ! -s findings.txt"
parser = "clippy"

[[delegate]]
categories = ["lint"]
run = "sed -i 1d findings.txt; echo fixed >> src/lib.txt; mkdir -p src/new; echo new > src/new/file.txt; chmod 600 \"$USER_TREE/notes.txt\" \"$USER_TREE/src\"; touch \"$USER_TREE/target/delegate-was-here\""
"#,
    );
    repo.commit("base");
    // The user's work in progress, and a build folder to share.
    repo.write("src/lib.txt", "library\nthe user's edit\n");
    repo.write("notes.txt", "user notes\n");
    repo.write("target/builds", "");
    let root = repo.path();
    let base = git_in(root, &["rev-parse", "HEAD"]);
    let before = tree_of(root, &[".git", ".refine-loop", "target"]);
    let status = git_in(root, &["status", "--porcelain"]);

    // The delegate also tries to change the modes in the user's tree (in /tmp, a folder it may
    // write: the user's tree is read-only all the same), and writes in the shared folder.
    let output = repo
        .command(&["run", "--isolate", "worktree"])
        .env("USER_TREE", root)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");

    assert_eq!(tree_of(root, &[".git", ".refine-loop", "target"]), before);
    assert!(repo.join("target/delegate-was-here").exists());
    assert_eq!(git_in(root, &["status", "--porcelain"]), status);
    assert_eq!(git_in(root, &["rev-parse", "HEAD"]), base);
    // The shared folder is the user's own: the gate's builds went there (three gate runs, and
    // the failing check run again at the baseline to confirm it).
    assert_eq!(
        std::fs::read_to_string(repo.join("target/builds")).unwrap(),
        "built\nbuilt\nbuilt\nbuilt\n"
    );
    // The worktree and its branch are gone; the private ref stays.
    assert_eq!(git_in(root, &["worktree", "list"]).lines().count(), 1);
    assert_eq!(git_in(root, &["branch", "--list", "refine-loop/*"]), "");
    let manifest = json(&repo, "manifest.json");
    assert_eq!(manifest["outcome"], "SUCCESS");
    let reference = manifest["ref"].as_str().unwrap();

    // The result is in the patches: on a clone at the base they give the recorded tree.
    let clones = tempfile::tempdir().unwrap();
    git_in(
        clones.path(),
        &["clone", "-q", "--no-local", root.to_str().unwrap(), "am"],
    );
    let clone = clones.path().join("am");
    git_in(&clone, &["checkout", "-q", &base]);
    let mut am = vec!["am".to_string(), "-q".to_string()];
    let mut patches: Vec<String> = std::fs::read_dir(repo.join(".refine-loop/patches"))
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .collect();
    patches.sort();
    am.extend(patches);
    git_in(&clone, &am.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(
        git_in(&clone, &["rev-parse", "HEAD^{tree}"]),
        git_in(root, &["rev-parse", &format!("{reference}^{{tree}}")])
    );
    assert_eq!(
        std::fs::read_to_string(clone.join("src/lib.txt")).unwrap(),
        "library\nfixed\nfixed\n"
    );
    assert_eq!(
        std::fs::read_to_string(clone.join("findings.txt")).unwrap(),
        ""
    );
}

#[test]
fn cleanup_never_follows_a_rewritten_gitdir_out_of_the_git_folder() {
    let repo = Repo::new();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    std::fs::write(victim.join("precious.txt"), "outside the repository\n").unwrap();
    // What git's prune looks for before it removes a worktree's folder.
    std::fs::write(victim.join(".git"), "gitdir: elsewhere\n").unwrap();
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write("findings.txt", "a.rs:1:1: error: one\n");
    // The gate (not watched as a delegate is) points the worktree's record at the outside
    // folder: a cleanup that trusted it would delete that folder as the worktree's.
    repo.write(
        "refine-loop.toml",
        &format!(
            r#"[[gate.check]]
name = "lint"
category = "lint"
run = "gd=$(sed -n 's/^gitdir: //p' .git); echo {}/.git > \"$gd/gitdir\"; cat findings.txt; test ! -s findings.txt"
parser = "clippy"

[[delegate]]
categories = ["lint"]
run = "true"
"#,
            victim.display()
        ),
    );
    repo.commit("base");
    let before = tree_of(outside.path(), &[]);
    let output = repo.run(&["run", "--isolate", "worktree", "--max-cycles", "1"]);
    assert!(matches!(output.status.code(), Some(1 | 3)), "{output:?}");
    assert_eq!(
        tree_of(outside.path(), &[]),
        before,
        "the outside folder changed"
    );
    assert_eq!(
        git_in(repo.path(), &["worktree", "list"]).lines().count(),
        1
    );
    assert!(
        !repo
            .join(".git/worktrees")
            .read_dir()
            .is_ok_and(|mut d| d.next().is_some())
    );
}
