use std::collections::BTreeSet;
use std::path::Path;

use super::{Since, TreeWatch};

fn no_skip(_: &[u8]) -> bool {
    false
}

fn paths(list: &[&str]) -> BTreeSet<Vec<u8>> {
    list.iter().map(|p| p.as_bytes().to_vec()).collect()
}

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src/inner")).unwrap();
    std::fs::create_dir_all(dir.path().join("build")).unwrap();
    std::fs::write(dir.path().join("src/a.rs"), "a").unwrap();
    std::fs::write(dir.path().join("src/inner/b.rs"), "b").unwrap();
    dir
}

/// What the watch reports after `act`, from a mark taken before it.
fn reported(root: &Path, act: impl FnOnce(&Path)) -> Since {
    let skip = |path: &[u8]| path == b"build";
    let mut watch = TreeWatch::start(root, &skip).unwrap();
    let mark = watch.mark(&skip);
    act(root);
    watch.since(mark, &skip).0
}

#[test]
fn each_kind_of_change_is_reported_by_its_paths() {
    type Act = fn(&Path);
    let cases: [(&str, Act, &[&str]); 9] = [
        ("nothing", |_| {}, &[]),
        (
            "a write",
            |root| std::fs::write(root.join("src/a.rs"), "changed").unwrap(),
            &["src/a.rs"],
        ),
        (
            "a new file deep down",
            |root| std::fs::write(root.join("src/inner/c.rs"), "c").unwrap(),
            &["src/inner/c.rs"],
        ),
        (
            "a deletion",
            |root| std::fs::remove_file(root.join("src/inner/b.rs")).unwrap(),
            &["src/inner/b.rs"],
        ),
        (
            "a mode change",
            |root| {
                use std::os::unix::fs::PermissionsExt;
                let mode = std::fs::Permissions::from_mode(0o755);
                std::fs::set_permissions(root.join("src/a.rs"), mode).unwrap();
            },
            &["src/a.rs"],
        ),
        (
            "a rename",
            |root| std::fs::rename(root.join("src/a.rs"), root.join("src/z.rs")).unwrap(),
            &["src/a.rs", "src/z.rs"],
        ),
        (
            // Made with its files before its watch could be added: all are read.
            "a folder made with files in it",
            |root| {
                std::fs::create_dir_all(root.join("new/deep")).unwrap();
                std::fs::write(root.join("new/deep/x.rs"), "x").unwrap();
            },
            &["new", "new/deep", "new/deep/x.rs"],
        ),
        (
            "a folder moved",
            |root| std::fs::rename(root.join("src/inner"), root.join("moved")).unwrap(),
            &["src/inner", "moved", "moved/b.rs"],
        ),
        (
            "a write in a skipped folder",
            |root| std::fs::write(root.join("build/out.o"), "o").unwrap(),
            &[],
        ),
    ];
    for (name, act, expected) in cases {
        let dir = tree();
        let since = reported(dir.path(), act);
        assert_eq!(since, Since::Exact(paths(expected)), "{name}");
    }
}

#[test]
fn a_moved_folder_is_followed_at_its_new_place() {
    let dir = tree();
    let root = dir.path();
    let mut watch = TreeWatch::start(root, &no_skip).unwrap();
    std::fs::rename(root.join("src/inner"), root.join("moved")).unwrap();
    let mark = watch.mark(&no_skip);
    std::fs::write(root.join("moved/b.rs"), "written after the move").unwrap();
    assert_eq!(
        watch.since(mark, &no_skip).0,
        Since::Exact(paths(&["moved/b.rs"]))
    );
}

#[test]
fn a_changed_ignore_file_gives_up_the_account() {
    for name in [".gitignore", "src/.gitattributes"] {
        let dir = tree();
        let since = reported(dir.path(), |root| {
            std::fs::write(root.join(name), "*").unwrap()
        });
        assert!(
            matches!(since, Since::Lost(ref why) if why.contains(name)),
            "{name}: {since:?}"
        );
    }
}

#[test]
fn a_look_from_before_a_loss_is_lost_and_one_after_is_exact() {
    let dir = tree();
    let root = dir.path();
    let mut watch = TreeWatch::start(root, &no_skip).unwrap();
    let before = watch.mark(&no_skip);
    watch.lose("lost on purpose".to_string());
    let after = watch.mark(&no_skip);
    std::fs::write(root.join("src/a.rs"), "changed").unwrap();
    assert_eq!(
        watch.since(before, &no_skip).0,
        Since::Lost("lost on purpose".to_string())
    );
    assert_eq!(
        watch.since(after, &no_skip).0,
        Since::Exact(paths(&["src/a.rs"]))
    );
}

#[test]
fn a_new_folder_hidden_by_its_own_ignore_file_gives_up_the_account() {
    let dir = tree();
    // Skipped as git would skip it once its ignore file is there.
    let skip = |path: &[u8]| path == b"hidden";
    let mut watch = TreeWatch::start(dir.path(), &skip).unwrap();
    let mark = watch.mark(&skip);
    std::fs::create_dir(dir.path().join("hidden")).unwrap();
    std::fs::write(dir.path().join("hidden/.gitignore"), "*").unwrap();
    let since = watch.since(mark, &skip).0;
    assert!(
        matches!(since, Since::Lost(ref why) if why.contains("hidden/.gitignore")),
        "{since:?}"
    );
}

#[test]
fn a_folder_moved_onto_another_or_exchanged_is_followed_at_its_new_place() {
    type Act = fn(&Path);
    let cases: [(&str, Act); 2] = [
        ("onto an empty folder", |root| {
            std::fs::rename(root.join("src/inner"), root.join("build2")).unwrap();
        }),
        ("exchanged", |root| {
            nix::fcntl::renameat2(
                nix::fcntl::AT_FDCWD,
                &root.join("src/inner"),
                nix::fcntl::AT_FDCWD,
                &root.join("build2"),
                nix::fcntl::RenameFlags::RENAME_EXCHANGE,
            )
            .unwrap();
        }),
    ];
    for (name, act) in cases {
        let dir = tree();
        let root = dir.path();
        std::fs::create_dir(root.join("build2")).unwrap();
        let mut watch = TreeWatch::start(root, &no_skip).unwrap();
        act(root);
        let mark = watch.mark(&no_skip);
        std::fs::write(root.join("build2/b.rs"), "written after").unwrap();
        let since = watch.since(mark, &no_skip).0;
        assert_eq!(since, Since::Exact(paths(&["build2/b.rs"])), "{name}");
    }
}
