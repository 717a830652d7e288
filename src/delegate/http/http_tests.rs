//! A model's diff is applied whole or not at all, and never outside what it may touch.

use std::collections::BTreeMap;
use std::path::Path;

use super::*;
use crate::test_git::git;

/// A repository with `src/app.py`, `docs/a.md` and a symlink `linked -> src`, committed.
fn repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "-q"]);
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join("docs")).unwrap();
    std::fs::write(root.join("src/app.py"), "import os\nx = 1\nprint(x)\n").unwrap();
    std::fs::write(root.join("docs/a.md"), "one\ntwo\n").unwrap();
    std::os::unix::fs::symlink("src", root.join("linked")).unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "base"]);
    dir
}

const GOOD: &str = "\
--- a/src/app.py
+++ b/src/app.py
@@ -1,3 +1,2 @@
-import os
 x = 1
 print(x)
";

fn state_of(root: &Path) -> BTreeMap<String, Vec<u8>> {
    ["src/app.py", "docs/a.md", ".git/index", ".git/config"]
        .into_iter()
        .map(|path| (path.to_string(), std::fs::read(root.join(path)).unwrap()))
        .collect()
}

#[test]
fn a_clean_diff_is_applied_and_the_index_is_not_touched() {
    let dir = repository();
    let root = dir.path();
    let with_header = format!("diff --git a/src/app.py b/src/app.py\n{GOOD}");
    for text in [GOOD.to_string(), with_header] {
        git(root, &["checkout", "-q", "--", "."]);
        let index = std::fs::read(root.join(".git/index")).unwrap();
        let paths = apply_diff(root, &text, &BTreeMap::new(), &root.join(".refine-loop")).unwrap();
        assert_eq!(paths, ["src/app.py"]);
        assert_eq!(
            std::fs::read_to_string(root.join("src/app.py")).unwrap(),
            "x = 1\nprint(x)\n"
        );
        assert_eq!(std::fs::read(root.join(".git/index")).unwrap(), index);
    }
}

#[test]
fn a_new_file_and_a_deletion_are_applied() {
    let dir = repository();
    let root = dir.path();
    let text = "\
diff --git a/src/new.py b/src/new.py
new file mode 100644
--- /dev/null
+++ b/src/new.py
@@ -0,0 +1 @@
+y = 2
diff --git a/docs/a.md b/docs/a.md
deleted file mode 100644
--- a/docs/a.md
+++ /dev/null
@@ -1,2 +0,0 @@
-one
-two
";
    let paths = apply_diff(root, text, &BTreeMap::new(), &root.join(".refine-loop")).unwrap();
    assert_eq!(paths, ["src/new.py", "docs/a.md"]);
    assert_eq!(
        std::fs::read_to_string(root.join("src/new.py")).unwrap(),
        "y = 2\n"
    );
    assert!(!root.join("docs/a.md").exists());
}

#[test]
fn a_diff_that_may_not_be_applied_writes_nothing() {
    let dir = repository();
    let root = dir.path();
    let protected: BTreeMap<RepoPath, PathState> =
        [(RepoPath::from("docs"), PathState::Absent)].into();
    let retarget = |from: &str, to: &str| GOOD.replace(from, to);
    let second_fails =
        format!("{GOOD}--- a/docs/a.md\n+++ b/docs/a.md\n@@ -1,2 +1,2 @@\n-uno\n+eins\n two\n");
    let cases: [(String, &BTreeMap<RepoPath, PathState>, &str); 8] = [
        (
            retarget("src/app.py", "../outside.py"),
            &BTreeMap::new(),
            "outside the repository",
        ),
        (
            retarget("src/app.py", "/etc/passwd"),
            &BTreeMap::new(),
            "outside the repository",
        ),
        (
            retarget("src/app.py", ".git/config"),
            &BTreeMap::new(),
            "into .git",
        ),
        (
            retarget("src/app.py", "linked/app.py"),
            &BTreeMap::new(),
            "symbolic link",
        ),
        (
            "--- a/docs/a.md\n+++ b/docs/a.md\n@@ -1 +1 @@\n-one\n+uno\n".to_string(),
            &protected,
            "the user's own work",
        ),
        (
            "this is not a diff\n".to_string(),
            &BTreeMap::new(),
            "does not parse",
        ),
        (
            GOOD.replace("import os", "import sys"),
            &BTreeMap::new(),
            "does not apply cleanly",
        ),
        (second_fails, &BTreeMap::new(), "does not apply cleanly"),
    ];
    let before = state_of(root);
    for (text, protected, expected) in cases {
        let error = apply_diff(root, &text, protected, &root.join(".refine-loop")).unwrap_err();
        assert!(error.contains(expected), "{text}\n→ {error}");
        assert_eq!(state_of(root), before, "{text}");
    }
    assert!(!dir.path().parent().unwrap().join("outside.py").exists());
}

/// Files the loop does not watch, and entries it does not apply: refused before anything is
/// written, every file as it was.
#[test]
fn a_diff_reaching_what_the_loop_cannot_watch_writes_nothing() {
    let dir = repository();
    let root = dir.path();
    let outside = tempfile::tempdir_in(root.parent().unwrap()).unwrap();
    std::fs::write(root.join(".gitignore"), "secret.env\n").unwrap();
    git(root, &["add", ".gitignore"]);
    git(root, &["commit", "-qm", "ignore"]);
    let app = std::fs::read_to_string(root.join("src/app.py")).unwrap();
    std::fs::write(root.join("secret.env"), &app).unwrap();
    std::fs::create_dir_all(root.join("state")).unwrap();
    std::fs::write(root.join("state/run.py"), &app).unwrap();
    std::fs::write(outside.path().join("shared.py"), &app).unwrap();
    std::fs::hard_link(outside.path().join("shared.py"), root.join("docs/hard.py")).unwrap();
    let retarget = |to: &str| GOOD.replace("src/app.py", to);
    let copy = "diff --git a/src/app.py b/src/copy.py\nsimilarity index 100%\ncopy from src/app.py\ncopy to src/copy.py\n";
    let under_a_file = "--- /dev/null\n+++ b/src/app.py/x.py\n@@ -0,0 +1 @@\n+y = 1\n";
    let cases = [
        (retarget("secret.env"), "an ignored file"),
        (retarget("state/run.py"), "the state dir"),
        (retarget("docs/hard.py"), "hard-linked"),
        (copy.to_string(), "not applied"),
        (
            format!("--- a/docs/a.md\n+++ b/docs/a.md\n@@ -1 +1 @@\n-one\n+uno\n{under_a_file}"),
            "a folder where a file is",
        ),
        (
            "--- /dev/null\n+++ b/src/app.py\n@@ -0,0 +1 @@\n+y = 1\n".to_string(),
            "which exists",
        ),
    ];
    let watched = |root: &Path| {
        let mut state = state_of(root);
        for path in ["secret.env", "state/run.py", "docs/hard.py"] {
            state.insert(path.into(), std::fs::read(root.join(path)).unwrap());
        }
        state
    };
    let before = watched(root);
    for (text, expected) in cases {
        let error = apply_diff(root, &text, &BTreeMap::new(), &root.join("state")).unwrap_err();
        assert!(error.contains(expected), "{text}\n→ {error}");
        assert_eq!(watched(root), before, "{text}");
        assert!(!root.join("src/copy.py").exists());
    }
    assert_eq!(
        std::fs::read_to_string(outside.path().join("shared.py")).unwrap(),
        app
    );
}

#[test]
fn what_a_failed_apply_wrote_is_put_back() {
    let dir = repository();
    let root = dir.path();
    let paths = [b"docs/a.md".to_vec(), b"new/deep/file.py".to_vec()];
    let before = apply::Before::take(root, &paths).unwrap();
    std::fs::write(root.join("docs/a.md"), "changed\n").unwrap();
    std::fs::create_dir_all(root.join("new/deep")).unwrap();
    std::fs::write(root.join("new/deep/file.py"), "x\n").unwrap();
    before.put_back().unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("docs/a.md")).unwrap(),
        "one\ntwo\n"
    );
    assert!(!root.join("new").exists());
}

#[test]
fn a_fifo_or_a_symlink_in_a_diffs_way_is_never_read() {
    let dir = repository();
    let root = dir.path();
    nix::unistd::mkfifo(&root.join("pipe"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", root.join("link")).unwrap();
    // (path, what the refusal says)
    let cases: [(&[u8], &str); 2] = [(b"pipe", "a FIFO"), (b"link", "a symlink")];
    for (path, says) in cases {
        let Err(error) = apply::Before::take(root, &[path.to_vec()]) else {
            panic!("{says} was read");
        };
        assert!(error.contains(says), "{error}");
    }
}

#[test]
fn a_broken_hunk_does_not_parse() {
    let dir = repository();
    let text = "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,3 +1,9 @@\n-import os\n";
    let error = apply_diff(
        dir.path(),
        text,
        &BTreeMap::new(),
        &dir.path().join(".refine-loop"),
    )
    .unwrap_err();
    assert!(error.contains("does not parse"), "{error}");
}

#[test]
fn a_mode_git_does_not_know_is_refused_not_a_panic() {
    let dir = repository();
    let root = dir.path();
    // (the header lines, with a mode in them)
    let cases = [
        "diff --git a/src/new.py b/src/new.py\nnew file mode 104755\n--- /dev/null\n+++ b/src/new.py\n@@ -0,0 +1 @@\n+y = 2\n",
        "diff --git a/src/app.py b/src/app.py\nold mode 100644\nnew mode 104755\n--- a/src/app.py\n+++ b/src/app.py\n@@ -1,3 +1,2 @@\n-import os\n x = 1\n print(x)\n",
        "diff --git a/docs/a.md b/docs/a.md\ndeleted file mode 100777\n--- a/docs/a.md\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-one\n-two\n",
        "diff --git a/src/app.py b/src/app.py\nindex 0123456..789abcd 100600\n--- a/src/app.py\n+++ b/src/app.py\n@@ -1,3 +1,2 @@\n-import os\n x = 1\n print(x)\n",
    ];
    for text in cases {
        let before = state_of(root);
        let error = std::panic::catch_unwind(|| {
            apply_diff(root, text, &BTreeMap::new(), &root.join(".refine-loop"))
        })
        .unwrap_or_else(|_| panic!("apply_diff panicked on:\n{text}"))
        .unwrap_err();
        assert!(error.contains("mode"), "{error}");
        assert_eq!(state_of(root), before, "{text}");
    }
    // The modes git writes are accepted.
    let executable = "diff --git a/src/app.py b/src/app.py\nold mode 100644\nnew mode 100755\n";
    assert!(
        apply_diff(
            root,
            executable,
            &BTreeMap::new(),
            &root.join(".refine-loop")
        )
        .is_ok()
    );
}
