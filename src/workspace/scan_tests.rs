//! The split scan finds exactly what one whole-tree scan finds, whatever happened to the tree.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::Path;

use super::*;
use crate::test_git::git;

fn write(root: &Path, path: &[u8], text: &str) {
    let full = root.join(std::ffi::OsStr::from_bytes(path));
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, text).unwrap();
}

/// A committed tree with folders big enough to be split, an ignored folder with tracked files,
/// and names that are globs, prefixes of each other, or not UTF-8.
fn repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "-q"]);
    for i in 0..40 {
        write(root, format!("big/f{i:02}.rs").as_bytes(), "x\n");
        write(root, format!("src/m{}/f{i:02}.rs", i % 4).as_bytes(), "y\n");
    }
    for path in [
        &b"big2"[..],
        b"bigger/file",
        b"a/x.rs",
        b"a/b/y.rs",
        b"a/b/c/z.rs",
        b"vendor/lib.rs",
        b"glob*[x]?.txt",
        b"caf\xe9/men\xfc.txt",
        b"top.txt",
        b"sub/sub2/deep.rs",
    ] {
        write(root, path, "tracked\n");
    }
    git(root, &["add", "-A"]);
    write(root, b".gitignore", "vendor/\n*.log\n");
    git(root, &["add", ".gitignore"]);
    git(root, &["commit", "-q", "-m", "base"]);
    dir
}

/// Both scans on the tree as it is now; the split one with `lanes` lanes must really split.
fn assert_same(root: &Path, lanes: usize, expect_split: bool) -> BTreeSet<Vec<u8>> {
    let repo = git2::Repository::open(root).unwrap();
    let whole = statuses(&repo, &[]).unwrap();
    let scanner = Scanner::with_lanes(&repo, root, lanes, 0).unwrap();
    let plan = scanner.plan.as_ref().unwrap();
    assert_eq!(plan.lists(root).is_some(), expect_split, "{plan:?}");
    let split = scanner.dirty_paths(&repo).unwrap();
    let show = |set: &BTreeSet<Vec<u8>>| {
        set.iter()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(show(&split), show(&whole), "{lanes} lanes, {plan:?}");
    whole
}

#[test]
fn the_plan_splits_the_heavy_folders_and_keeps_the_light_ones_whole() {
    let dir = repository();
    let repo = git2::Repository::open(dir.path()).unwrap();
    let plan = Plan::from_index(&repo.index().unwrap(), 2);
    let split: Vec<String> = plan
        .split
        .keys()
        .map(|k| String::from_utf8_lossy(k).into_owned())
        .collect();
    // 91 entries, two lanes: anything over 11 is split; `src/m*` hold 10 each.
    assert_eq!(split, ["", "big", "src"]);
    assert_eq!(plan.split[&b"src".to_vec()].len(), 4);
    let lists = plan.lists(dir.path()).unwrap();
    assert_eq!(lists.len(), 2);
    let load = |list: &Vec<Vec<u8>>| list.len();
    assert!(lists.iter().all(|list| load(list) > 5), "{lists:?}");
}

#[test]
fn a_clean_tree_and_every_kind_of_change_scan_the_same_split_or_whole() {
    let dir = repository();
    let root = dir.path();
    for lanes in [2, 3, 4] {
        assert!(assert_same(root, lanes, true).is_empty());
    }
    // Edits, deletions of files and of whole folders, renamed folders, new folders at every
    // depth, ignored files inside and outside ignored folders, odd names.
    write(root, b"a/x.rs", "changed\n");
    std::fs::remove_dir_all(root.join("a/b/c")).unwrap();
    std::fs::rename(root.join("sub/sub2"), root.join("sub/moved")).unwrap();
    std::fs::remove_file(root.join("big/f03.rs")).unwrap();
    write(root, b"big/new.rs", "new\n");
    write(root, b"big/newdir/deeper/f.rs", "new\n");
    write(root, b"src/m9/new.rs", "new\n");
    write(root, b"src/untracked-top.rs", "new\n");
    write(root, b"newtop/f", "new\n");
    write(root, b"big.rs", "prefix of a split folder\n");
    write(root, b"vendor/untracked.rs", "ignored folder\n");
    write(
        root,
        b"vendor/lib.rs",
        "tracked in an ignored folder, changed\n",
    );
    write(root, b"big/debug.log", "ignored\n");
    write(root, b"glob*[x]?.txt", "changed\n");
    write(root, b"caf\xe9/new\xff.txt", "not utf-8\n");
    std::fs::remove_dir_all(root.join("src/m1")).unwrap();
    for lanes in [2, 3, 4] {
        let found = assert_same(root, lanes, true);
        assert!(found.contains(b"caf\xe9/new\xff.txt".as_slice()));
        assert!(found.contains(b"src/m1/f01.rs".as_slice()));
        assert!(found.contains(b"big/newdir/deeper/f.rs".as_slice()));
        assert!(!found.contains(b"vendor/untracked.rs".as_slice()));
    }
}

#[test]
fn a_split_folder_that_became_a_file_or_a_symlink_falls_back_to_one_whole_scan() {
    let dir = repository();
    let root = dir.path();
    std::fs::remove_dir_all(root.join("big")).unwrap();
    std::fs::write(root.join("big"), "a file now\n").unwrap();
    assert_same(root, 2, false);
    std::fs::remove_file(root.join("big")).unwrap();
    symlink("src", root.join("big")).unwrap();
    assert_same(root, 2, false);
    std::fs::remove_file(root.join("big")).unwrap();
    // Gone altogether: its indexed entries still fall in the lists.
    assert!(assert_same(root, 2, true).contains(b"big/f00.rs".as_slice()));
}

#[test]
fn small_trees_and_single_cores_are_scanned_whole() {
    let dir = repository();
    let repo = git2::Repository::open(dir.path()).unwrap();
    assert!(
        Scanner::with_lanes(&repo, dir.path(), 1, 0)
            .unwrap()
            .plan
            .is_none()
    );
    assert!(
        Scanner::with_lanes(&repo, dir.path(), 4, 10_000)
            .unwrap()
            .plan
            .is_none()
    );
}
