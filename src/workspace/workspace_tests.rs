//! Change detection and rollback on real temporary git repositories.

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use super::*;
use crate::test_git::git;

/// Every file under `dir` (but .git and the state dir) with its bytes and mode, and every folder.
fn tree(dir: &Path) -> Vec<(String, Option<Vec<u8>>, u32)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        for entry in std::fs::read_dir(&current).unwrap().flatten() {
            let path = entry.path();
            let name = path
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if name == ".git" || name.starts_with(".refine-loop") {
                continue;
            }
            let metadata = std::fs::symlink_metadata(&path).unwrap();
            let mode = metadata.permissions().mode();
            if metadata.is_dir() {
                out.push((format!("{name}/"), None, mode));
                stack.push(path);
            } else if metadata.file_type().is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.push((name, Some(target.to_string_lossy().as_bytes().to_vec()), 0));
            } else {
                out.push((name, Some(std::fs::read(&path).unwrap()), mode));
            }
        }
    }
    out.sort();
    out
}

/// `git status --porcelain`, less the state dir's own line.
fn status(dir: &Path) -> String {
    git(dir, &["status", "--porcelain"])
        .lines()
        .filter(|line| !line.contains(".refine-loop"))
        .map(|line| format!("{line}\n"))
        .collect()
}

fn open(root: &Path) -> Workspace {
    std::fs::create_dir_all(root.join(".refine-loop")).unwrap();
    Workspace::open(root, &root.join(".refine-loop")).unwrap()
}

fn repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "-q"]);
    std::fs::write(root.join("clean.txt"), "clean\n").unwrap();
    std::fs::write(root.join("gone.txt"), "to be deleted\n").unwrap();
    std::fs::write(root.join("plain.sh"), "echo hi\n").unwrap();
    std::fs::write(root.join("link-me.txt"), "target of a link\n").unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/a b\tc ü.rs"), "fn main() {}\n").unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "base"]);
    // The user's own work: dirty and untracked before the run.
    std::fs::write(root.join("clean.txt"), "clean\nuser edit\n").unwrap();
    std::fs::write(root.join("notes.txt"), "untracked user notes\n").unwrap();
    std::fs::set_permissions(
        root.join("notes.txt"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    dir
}

#[test]
fn every_kind_of_change_is_found_and_rolled_back_to_the_byte() {
    let dir = repository();
    let root = dir.path();
    let mut workspace = open(root);
    let before_tree = tree(root);
    let before_status = status(root);
    let since = std::time::SystemTime::now() - std::time::Duration::from_millis(20);
    let snapshot = workspace.snapshot().unwrap();

    // A delegate at work.
    std::fs::write(root.join("clean.txt"), "rewritten\n").unwrap();
    std::fs::remove_file(root.join("gone.txt")).unwrap();
    std::fs::set_permissions(
        root.join("plain.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::fs::remove_file(root.join("link-me.txt")).unwrap();
    symlink("/etc/hostname", root.join("link-me.txt")).unwrap();
    std::fs::write(root.join("notes.txt"), "clobbered").unwrap();
    std::fs::create_dir_all(root.join("new/deep")).unwrap();
    std::fs::write(root.join("new/deep/file.rs"), "created\n").unwrap();
    std::fs::rename(root.join("src/a b\tc ü.rs"), root.join("src/renamed.rs")).unwrap();
    std::fs::write(root.join(".refine-loop/own-file"), "ignored").unwrap();

    let changes = workspace.changes_since(&snapshot).unwrap();
    let paths: Vec<String> = changes.iter().map(|c| c.path.to_string()).collect();
    assert_eq!(
        paths,
        [
            "clean.txt",
            "gone.txt",
            "link-me.txt",
            "new/deep/file.rs",
            "notes.txt",
            "plain.sh",
            "src/a b\tc ü.rs",
            "src/renamed.rs",
        ]
    );
    workspace.roll_back(&changes, since).unwrap();
    assert_eq!(tree(root), before_tree);
    assert_eq!(status(root), before_status);
    assert!(!root.join("new").exists());
    assert!(workspace.changes_since(&snapshot).unwrap().is_empty());
}

#[test]
fn a_change_made_by_someone_else_stops_the_rollback_before_any_write() {
    let dir = repository();
    let root = dir.path();
    let mut workspace = open(root);
    let since = std::time::SystemTime::now() - std::time::Duration::from_millis(20);
    let snapshot = workspace.snapshot().unwrap();
    std::fs::write(root.join("gone.txt"), "delegate\n").unwrap();
    std::fs::write(root.join("plain.sh"), "delegate\n").unwrap();
    let changes = workspace.changes_since(&snapshot).unwrap();
    std::fs::write(root.join("plain.sh"), "someone else\n").unwrap();
    let error = workspace.roll_back(&changes, since).unwrap_err();
    assert!(
        matches!(error, WorkspaceError::ConcurrentChange { ref path, .. } if *path == "plain.sh")
    );
    // Nothing was written: both the delegate's and the other writer's versions are still there.
    assert_eq!(
        std::fs::read_to_string(root.join("gone.txt")).unwrap(),
        "delegate\n"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("plain.sh")).unwrap(),
        "someone else\n"
    );
}

#[test]
fn the_state_dir_and_ignored_files_are_not_changes() {
    let dir = repository();
    let root = dir.path();
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    git(root, &["add", ".gitignore"]);
    git(root, &["commit", "-q", "-m", "ignore"]);
    let mut workspace = open(root);
    let snapshot = workspace.snapshot().unwrap();
    std::fs::create_dir_all(root.join("target")).unwrap();
    std::fs::write(root.join("target/build.o"), "object").unwrap();
    std::fs::write(root.join(".refine-loop/cycle-1.json"), "{}").unwrap();
    assert!(workspace.changes_since(&snapshot).unwrap().is_empty());
    assert!(Workspace::open(&root.join("src"), &root.join(".refine-loop")).is_ok());
    let outside = tempfile::tempdir().unwrap();
    assert!(matches!(
        Workspace::open(outside.path(), &outside.path().join(".refine-loop")),
        Err(WorkspaceError::NotARepository { .. })
    ));
}

#[test]
fn what_is_put_back_belongs_to_whoever_owns_its_folder() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "-q"]);
    std::fs::create_dir_all(root.join("src/deep")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "lib\n").unwrap();
    std::fs::write(root.join("src/deep/mod.rs"), "deep\n").unwrap();
    symlink("lib.rs", root.join("src/link")).unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "base"]);
    // Run as root (a container's default user), src/ is another uid's, as in a mounted
    // repository (the top and .git stay root's: libgit2 opens only its own user's repository
    // without safe.directory). Anyone else owns whatever it writes, as before.
    let me = std::fs::metadata(root).unwrap();
    let owner = if me.uid() == 0 {
        (12345, 12345)
    } else {
        (me.uid(), me.gid())
    };
    if me.uid() == 0 {
        for path in [
            "src",
            "src/lib.rs",
            "src/deep",
            "src/deep/mod.rs",
            "src/link",
        ] {
            std::os::unix::fs::lchown(root.join(path), Some(owner.0), Some(owner.1)).unwrap();
        }
    }
    let mut workspace = open(root);
    let since = std::time::SystemTime::now() - std::time::Duration::from_millis(20);
    let snapshot = workspace.snapshot().unwrap();

    std::fs::remove_dir_all(root.join("src/deep")).unwrap();
    std::fs::remove_file(root.join("src/lib.rs")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "rewritten\n").unwrap();
    std::fs::remove_file(root.join("src/link")).unwrap();
    let changes = workspace.changes_since(&snapshot).unwrap();
    workspace.roll_back(&changes, since).unwrap();
    for path in ["src/deep", "src/deep/mod.rs", "src/lib.rs", "src/link"] {
        let metadata = std::fs::symlink_metadata(root.join(path)).unwrap();
        assert_eq!((metadata.uid(), metadata.gid()), owner, "{path}");
    }
    assert_eq!(
        std::fs::read_to_string(root.join("src/lib.rs")).unwrap(),
        "lib\n"
    );
}

#[test]
fn a_repository_another_user_owns_is_told_apart_from_none() {
    // libgit2's refusal (tests/it/image.rs shows the real one, as root in a chroot).
    let refused = git2::Error::new(
        git2::ErrorCode::Owner,
        git2::ErrorClass::Config,
        "repository path '/work/repo/' is not owned by current user",
    );
    let error = WorkspaceError::opening(Path::new("/work/repo"), refused);
    assert!(matches!(error, WorkspaceError::NotOwned { .. }));
    assert!(error.is_unusable_repository());
    let message = error.to_string();
    assert!(
        message.starts_with("/work/repo: the repository belongs to another user")
            && message.contains("--user \"$(id -u):$(id -g)\"")
            && message.contains("safe.directory"),
        "{message}"
    );
    let missing = git2::Error::new(
        git2::ErrorCode::NotFound,
        git2::ErrorClass::Repository,
        "could not find repository",
    );
    assert!(matches!(
        WorkspaceError::opening(Path::new("/tmp"), missing),
        WorkspaceError::NotARepository { .. }
    ));
}

#[test]
fn a_clean_file_comes_back_as_git_wrote_it_with_its_filters() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "-q"]);
    std::fs::write(root.join(".gitattributes"), "*.txt text eol=crlf\n").unwrap();
    std::fs::write(root.join("crlf.txt"), "one\r\ntwo\r\n").unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "crlf"]);
    let mut workspace = open(root);
    let since = std::time::SystemTime::now() - std::time::Duration::from_millis(20);
    let snapshot = workspace.snapshot().unwrap();
    std::fs::write(root.join("crlf.txt"), "rewritten\n").unwrap();
    let changes = workspace.changes_since(&snapshot).unwrap();
    assert_eq!(changes.len(), 1, "{changes:?}");
    workspace.roll_back(&changes, since).unwrap();
    // The index holds "one\ntwo\n"; the work tree held (and holds again) CRLF.
    assert_eq!(
        std::fs::read(root.join("crlf.txt")).unwrap(),
        b"one\r\ntwo\r\n"
    );
    assert_eq!(status(root), "");
}

#[test]
fn a_stop_asked_while_the_users_work_is_recorded_ends_the_record_and_changes_nothing() {
    let dir = repository();
    let root = dir.path();
    std::fs::write(root.join(".gitignore"), ".env\n").unwrap();
    std::fs::write(root.join(".env"), "TOKEN=1\n").unwrap();
    let before = tree(root);
    let cancel = Cancel::default();
    cancel.request();
    let mut workspace = open(root);
    assert!(matches!(
        workspace.record_baseline(&cancel),
        Err(WorkspaceError::Cancelled)
    ));
    let budget = IgnoredBudget {
        max_bytes: 1 << 20,
        skip: Vec::new(),
    };
    assert!(matches!(
        workspace.protect_ignored(&budget, &cancel),
        Err(WorkspaceError::Cancelled)
    ));
    // With no stop asked, the same workspace records it all, the ignored file too.
    let mut workspace = open(root);
    let going_on = Cancel::default();
    workspace.record_baseline(&going_on).unwrap();
    workspace.protect_ignored(&budget, &going_on).unwrap();
    assert!(workspace.ignored_not_protected().is_empty());
    assert!(
        workspace
            .ignored
            .state_of(&RepoPath::from(".env"))
            .is_some()
    );
    assert_eq!(tree(root), before);
}

#[test]
fn a_file_of_the_users_with_another_name_is_refused_whether_clean_dirty_or_untracked() {
    // (the file, its bytes after linking, refused)
    let table = [
        ("link-me.txt", "target of a link\n", true),
        ("link-me.txt", "an edit through the link\n", true),
        ("notes.txt", "untracked user notes\n", true),
        ("src/new dotfile.rc", "an untracked dotfile\n", true),
    ];
    for (file, bytes, refused) in table {
        let dir = repository();
        let root = dir.path();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(root.join(file), bytes).unwrap();
        std::fs::hard_link(root.join(file), outside.path().join("other")).unwrap();
        let mut workspace = open(root);
        let recorded = workspace.record_baseline(&Cancel::default());
        assert_eq!(
            matches!(
                recorded,
                Err(WorkspaceError::HardLinkedFile { links: 2, .. })
            ),
            refused,
            "{file}, {bytes:?}: {recorded:?}"
        );
    }
}

#[test]
fn folders_beyond_gits_reach_made_after_the_baseline_are_set_aside_and_the_rest_rolled_back() {
    // Case: (where the delegate makes a chain, how deep, and how long each name is).
    for (top, depth, name_length) in [
        ("deep", 150, 1_usize), // deeper than git walks: its listing fails
        ("src/deep", 99, 1),    // just deeper, beneath a folder of the user's
        ("long", 20, 250),      // longer than a path may be: git passes it by
        ("shallow", 97, 1),     // within reach: rolled back like any change
    ] {
        let dir = repository();
        let root = dir.path();
        let mut workspace = open(root);
        let before_tree = tree(root);
        let since = std::time::SystemTime::now() - std::time::Duration::from_millis(20);
        let snapshot = workspace.snapshot().unwrap();

        // The delegate makes the chain, hides the user's notes at its bottom and puts a file
        // there.
        let name = "é".repeat(name_length.div_ceil(2));
        let made = std::process::Command::new("python3")
            .arg("-c")
            .arg(
                r#"
import os, sys
top = os.open('.', os.O_RDONLY)
fd = top
for name in sys.argv[1].split('/') + [sys.argv[3]] * int(sys.argv[2]):
    try:
        os.mkdir(name, dir_fd=fd)
    except FileExistsError:
        pass
    fd = os.open(name, os.O_RDONLY, dir_fd=fd)
os.rename('notes.txt', 'notes.txt', src_dir_fd=top, dst_dir_fd=fd)
os.write(os.open('planted.sh', os.O_CREAT | os.O_WRONLY, 0o755, dir_fd=fd), b'rm -rf ~')
"#,
            )
            .args([top, &depth.to_string(), &name])
            .current_dir(root)
            .status()
            .unwrap();
        assert!(made.success());

        let changes = workspace.changes_since(&snapshot).unwrap();
        assert!(
            changes.iter().any(|c| c.path.as_bytes() == b"notes.txt"),
            "{top}: {changes:?}"
        );
        workspace.roll_back(&changes, since).unwrap();
        let left = std::process::Command::new("find")
            .args([
                ".",
                "-path",
                "./.git",
                "-prune",
                "-o",
                "-name",
                "planted.sh",
                "-print",
            ])
            .current_dir(root)
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&left.stdout), "", "{top}");
        let set_aside = workspace.set_aside();
        if top == "shallow" {
            assert!(set_aside.is_empty(), "{top}: {set_aside:?}");
        } else {
            assert_eq!(set_aside.len(), 1, "{top}: {set_aside:?}");
            assert!(set_aside[0].contains("beyond git's reach"), "{set_aside:?}");
        }
        // Whatever is left of the chain is folders only; the rest is as it was.
        let mut now = tree(root);
        now.retain(|(path, _, _)| !path.starts_with(top));
        let mut was = before_tree.clone();
        was.retain(|(path, _, _)| !path.starts_with(top));
        assert_eq!(now, was, "{top}");
        assert!(
            workspace.changes_since(&snapshot).unwrap().is_empty(),
            "{top}"
        );
    }
}

#[test]
fn the_modes_of_the_top_and_of_the_users_own_folders_come_back() {
    let dir = repository();
    let root = dir.path();
    std::fs::create_dir_all(root.join("wip/deeper")).unwrap();
    std::fs::write(root.join("wip/deeper/draft.md"), "draft\n").unwrap();
    let mut workspace = open(root);
    workspace.record_baseline(&Cancel::default()).unwrap();
    let mode = |path: &str| {
        std::fs::symlink_metadata(root.join(path))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777
    };
    // (folder: the top, a folder of tracked files, the user's untracked ones; its new mode)
    let table = [
        ("", 0o700),
        ("src", 0o500),
        ("wip", 0o777),
        ("wip/deeper", 0o1700),
    ];
    let before: Vec<u32> = table.iter().map(|(path, _)| mode(path)).collect();
    for (path, new) in table {
        std::fs::set_permissions(root.join(path), std::fs::Permissions::from_mode(new)).unwrap();
    }
    let incidents = workspace.restore_folder_modes();
    let after: Vec<u32> = table.iter().map(|(path, _)| mode(path)).collect();
    assert_eq!(after, before);
    assert_eq!(incidents.len(), table.len(), "{incidents:?}");
}

#[test]
fn a_deep_folder_of_the_users_that_git_ignored_is_never_set_aside() {
    // The user's deep folder, ignored at the baseline; a delegate drops the rule: the folder
    // was not made during the run, so the look refuses to go on rather than move it.
    let dir = repository();
    let root = dir.path();
    std::fs::write(root.join(".gitignore"), "deep/\n").unwrap();
    let mut bottom = root.join("deep");
    for _ in 0..110 {
        bottom.push("d");
    }
    std::fs::create_dir_all(&bottom).unwrap();
    std::fs::write(bottom.join("user-data.txt"), "the user's\n").unwrap();
    // Made a clock tick (of the kernel's coarse clock) before the run begins.
    std::thread::sleep(std::time::Duration::from_millis(30));
    let mut workspace = open(root);
    // Every look a whole scan (with the watch, the one after the rule changed is).
    workspace.watch_tree(false);
    let snapshot = workspace.record_baseline(&Cancel::default()).unwrap();
    std::fs::write(root.join(".gitignore"), "").unwrap();
    let looked = workspace.changes_since(&snapshot);
    assert!(
        matches!(looked, Err(WorkspaceError::TooDeep { .. })),
        "{looked:?}"
    );
    assert_eq!(
        std::fs::read_to_string(bottom.join("user-data.txt")).unwrap(),
        "the user's\n"
    );
    assert!(workspace.set_aside().is_empty());
}

#[test]
fn a_tools_cache_file_is_told_by_its_name() {
    let cases = [
        (".eslintcache", true),
        (".stylelintcache", true),
        (".phpunit.result.cache", true),
        (".php-cs-fixer.cache", true),
        ("tsconfig.tsbuildinfo", true),
        ("tsconfig.app.tsbuildinfo", true),
        (".ESLintCache", true),
        (".env", false),
        (".coverage", false),
        ("junit.xml", false),
        ("local.settings.json", false),
    ];
    for (name, cache) in cases {
        assert_eq!(ignored::is_cache_file(name.as_bytes()), cache, "{name}");
    }
}

#[test]
fn a_name_in_an_incident_stays_on_its_line_as_code() {
    let forged = RepoPath::new(
        "src/a`\n\n## What it changed\n\n- nothing\u{202e}"
            .as_bytes()
            .to_vec(),
    );
    let incidents = [
        Incident::OutOfScope {
            path: forged.clone(),
        },
        Incident::SpecialFile {
            path: forged.clone(),
            kind: crate::files::SpecialKind::Fifo,
        },
        Incident::IgnoredRestored {
            path: forged.clone(),
        },
        Incident::GateWroteGitDir {
            path: PathBuf::from("hooks/a`\nb"),
            created: true,
        },
    ];
    for incident in incidents {
        let line = incident.describe();
        assert!(!line.contains('\n'), "{line}");
        assert!(
            line.contains("``src/a`  ## What it changed  - nothing\\u{202e}``")
                || line.contains("``hooks/a` b``"),
            "{line}"
        );
    }
}
