//! The seal on real temporary git repositories: what a step changed in the user's work or in
//! the files that steer git is found and put back; what it may change is not.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use super::super::{Breach, Workspace};
use crate::test_git::git;

/// A repository with the user's work on top: a dirty file, an untracked one, a staged one.
fn repository() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "-q"]);
    std::fs::write(root.join("tracked.txt"), "committed\n").unwrap();
    std::fs::write(root.join("staged.txt"), "committed\n").unwrap();
    std::fs::write(root.join("clean.txt"), "committed\n").unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "base"]);
    std::fs::write(root.join("tracked.txt"), "the user's edit\n").unwrap();
    std::fs::write(root.join("notes.txt"), "the user's notes\n").unwrap();
    std::fs::set_permissions(
        root.join("notes.txt"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    std::fs::write(root.join("staged.txt"), "staged by the user\n").unwrap();
    git(root, &["add", "staged.txt"]);
    std::fs::create_dir_all(root.join(".refine-loop")).unwrap();
    let mut workspace = Workspace::open(root, &root.join(".refine-loop")).unwrap();
    workspace
        .record_baseline(&crate::cancel::Cancel::default())
        .unwrap();
    (dir, workspace)
}

fn read(root: &Path, path: &str) -> Option<Vec<u8>> {
    std::fs::read(root.join(path)).ok()
}

#[test]
fn what_a_step_changes_in_the_users_work_or_gits_steering_files_is_found_and_put_back() {
    // (what the step does, the breaches it must show as "protected:<path>" or "git:<name>")
    let cases: [(&str, &[&str]); 9] = [
        ("echo clobbered > tracked.txt", &["protected:tracked.txt"]),
        ("chmod 644 notes.txt", &["protected:notes.txt"]),
        ("rm notes.txt", &["protected:notes.txt"]),
        ("echo edit > staged.txt", &["protected:staged.txt"]),
        (
            "printf '#!/bin/sh\\n' > .git/hooks/pre-commit",
            &["git:pre-commit"],
        ),
        ("git config user.name mallory", &["git:config"]),
        ("echo '*.txt' >> .git/info/exclude", &["git:exclude"]),
        ("echo x >> clean.txt; git add clean.txt", &["git:index"]),
        // What a step may do: a new file of its own, a clean file changed, git's refresh of the
        // index's file times.
        (
            "echo new > new.txt; echo y >> clean.txt; git status -s",
            &[],
        ),
    ];
    for (step, expected) in cases {
        let (dir, workspace) = repository();
        let root = dir.path();
        let before_files: Vec<Option<Vec<u8>>> = ["tracked.txt", "notes.txt", "staged.txt"]
            .iter()
            .map(|p| read(root, p))
            .collect();
        let config = read(root, ".git/config");
        let index = read(root, ".git/index");
        let seal = workspace.seal().unwrap();
        let status = Command::new("sh")
            .args(["-c", step])
            .current_dir(root)
            .status()
            .unwrap();
        assert!(status.success(), "{step}");
        let breaches = workspace.breaches(&seal).unwrap();
        let named: Vec<String> = breaches
            .iter()
            .map(|breach| match breach {
                Breach::Protected(change) => format!("protected:{}", change.path),
                Breach::GitFile { path, .. } => format!(
                    "git:{}",
                    path.file_name().unwrap_or_default().to_string_lossy()
                ),
            })
            .collect();
        assert_eq!(named, expected, "{step}");
        workspace.restore_seal(&seal, &breaches).unwrap();
        let after_files: Vec<Option<Vec<u8>>> = ["tracked.txt", "notes.txt", "staged.txt"]
            .iter()
            .map(|p| read(root, p))
            .collect();
        assert_eq!(after_files, before_files, "{step}");
        let mode = std::fs::metadata(root.join("notes.txt"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{step}");
        assert!(!root.join(".git/hooks/pre-commit").exists(), "{step}");
        assert_eq!(read(root, ".git/config"), config, "{step}");
        if !expected.is_empty() {
            assert_eq!(read(root, ".git/index"), index, "{step}");
        }
        // Once put back, nothing is found again.
        assert_eq!(workspace.breaches(&seal).unwrap(), Vec::new(), "{step}");
    }
}

#[test]
fn includes_are_followed_from_the_file_that_names_them() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join("conf/more")).unwrap();
    std::fs::create_dir_all(home.join("elsewhere")).unwrap();
    // (file, its text): a relative include is relative to the file that names it, at any depth;
    // `~/` is the home folder; sections and keys are read as git reads them.
    let files = [
        (
            ".gitconfig",
            "[user]\n\tname = x\n[include]\n\tpath = conf/a.inc\n[includeIf \"gitdir:~/w/\"]\n\tPath = \"~/elsewhere/w.inc\"\n",
        ),
        ("conf/a.inc", "[Include]\npath=more/b.inc ; a comment\n"),
        (
            "conf/more/b.inc",
            "[core]\n\texcludesFile = ~/.cache/ignore\n[include]\n\tpath = ../../.gitconfig\n",
        ),
        ("elsewhere/w.inc", "[core]\n\tpath = not-an-include\n"),
    ];
    for (path, text) in files {
        std::fs::write(home.join(path), text).unwrap();
    }
    let mut found = super::includes_of(&home.join(".gitconfig"), Some(&home));
    found.sort();
    assert_eq!(
        found,
        [
            home.join("conf/a.inc"),
            home.join("conf/more/../../.gitconfig"),
            home.join("conf/more/b.inc"),
            home.join("elsewhere/w.inc"),
        ]
    );
}
