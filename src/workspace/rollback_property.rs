//! The rollback property: whatever sequence of file operations a delegate makes, finding its
//! changes from git and rolling them back leaves the tree byte-, mode- and symlink-identical.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::Workspace;

/// Names the operations pick from: files at the top and nested, a script, a link, a name that
/// is not UTF-8, paths under folders that do not exist yet, and a file git writes with CRLF
/// (its blob has LF) with the attributes that say so.
const NAMES: [&[u8]; 16] = [
    b"a.txt",
    b"b.txt",
    b"dir/c.txt",
    b"dir/sub/d.txt",
    b"dir/sub",
    b"dir",
    b"run.sh",
    b"link",
    b"caf\xe9.txt",
    b"untracked.txt",
    b"new/x.txt",
    b"new/deeper/y.txt",
    b"new",
    b"dir/sub/e f.txt",
    b"crlf.txt",
    b".gitattributes",
];

/// Where links may point: inside, outside, nowhere, into a folder.
const TARGETS: [&str; 5] = ["a.txt", "../outside.txt", "/etc/hostname", "missing", "dir"];

#[derive(Debug, Clone)]
enum Operation {
    Write(usize, Vec<u8>),
    Append(usize, Vec<u8>),
    Delete(usize),
    Chmod(usize, bool),
    Rename(usize, usize),
    Link(usize, usize),
    /// A file where a folder was, or the other way round.
    Swap(usize),
}

fn operation() -> impl Strategy<Value = Operation> {
    let name = 0..NAMES.len();
    let bytes = proptest::collection::vec(any::<u8>(), 0..40);
    prop_oneof![
        (name.clone(), bytes.clone()).prop_map(|(n, b)| Operation::Write(n, b)),
        (name.clone(), bytes).prop_map(|(n, b)| Operation::Append(n, b)),
        name.clone().prop_map(Operation::Delete),
        (name.clone(), any::<bool>()).prop_map(|(n, x)| Operation::Chmod(n, x)),
        (name.clone(), name.clone()).prop_map(|(a, b)| Operation::Rename(a, b)),
        (name.clone(), 0..TARGETS.len()).prop_map(|(n, t)| Operation::Link(n, t)),
        name.prop_map(Operation::Swap),
    ]
}

fn at(root: &Path, name: usize) -> PathBuf {
    root.join(OsStr::from_bytes(NAMES[name]))
}

/// Does one operation the way a careless delegate would; failures (a folder in the way, a
/// missing parent) are part of the game and ignored.
fn apply(root: &Path, operation: &Operation) {
    let _ = match operation {
        Operation::Write(name, bytes) => {
            let path = at(root, *name);
            path.parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| std::fs::write(&path, bytes))
        }
        Operation::Append(name, bytes) => {
            use std::io::Write;
            std::fs::OpenOptions::new()
                .append(true)
                .open(at(root, *name))
                .and_then(|mut file| file.write_all(bytes))
        }
        Operation::Delete(name) => {
            let path = at(root, *name);
            if path.is_dir() && !path.is_symlink() {
                std::fs::remove_dir_all(path)
            } else {
                std::fs::remove_file(path)
            }
        }
        Operation::Chmod(name, executable) => std::fs::set_permissions(
            at(root, *name),
            std::fs::Permissions::from_mode(if *executable { 0o755 } else { 0o644 }),
        ),
        Operation::Rename(from, to) => std::fs::rename(at(root, *from), at(root, *to)),
        Operation::Link(name, target) => {
            let path = at(root, *name);
            let _ = std::fs::remove_file(&path);
            symlink(TARGETS[*target], path)
        }
        Operation::Swap(name) => {
            let path = at(root, *name);
            if path.is_dir() && !path.is_symlink() {
                std::fs::remove_dir_all(&path).and_then(|()| std::fs::write(&path, b"was a folder"))
            } else {
                let _ = std::fs::remove_file(&path);
                std::fs::create_dir_all(&path)
                    .and_then(|()| std::fs::write(path.join("inside.txt"), b"was a file"))
            }
        }
    };
}

/// A committed tree, with the user's work on top: a changed file and an untracked one.
fn repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    std::fs::create_dir_all(root.join("dir/sub")).unwrap();
    std::fs::write(dir.path().join("outside.txt"), "outside\n").unwrap();
    for (name, bytes) in [
        (&b"a.txt"[..], &b"alpha\n"[..]),
        (b"b.txt", b"beta\n"),
        (b"dir/c.txt", b"gamma\n"),
        (b"dir/sub/d.txt", b"delta\x00\xff\n"),
        (b"run.sh", b"#!/bin/sh\n"),
        (b"caf\xe9.txt", b"not utf-8\n"),
        (b"dir/sub/e f.txt", b"spaced\n"),
        (b".gitattributes", b"crlf.txt text eol=crlf\n"),
        // Committed as "one\ntwo\n" (the text filter), left on disk with CRLF: clean.
        (b"crlf.txt", b"one\r\ntwo\r\n"),
    ] {
        std::fs::write(root.join(OsStr::from_bytes(name)), bytes).unwrap();
    }
    std::fs::set_permissions(root.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    symlink("a.txt", root.join("link")).unwrap();
    let repo = git2::Repository::init_opts(
        &root,
        git2::RepositoryInitOptions::new().external_template(false),
    )
    .unwrap();
    let mut index = repo.index().unwrap();
    index
        .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
        .unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let signature = git2::Signature::now("t", "t@example.invalid").unwrap();
    repo.commit(Some("HEAD"), &signature, &signature, "base", &tree, &[])
        .unwrap();
    // Clean as git sees it, though its bytes on disk are not its blob's.
    assert_eq!(
        repo.status_file(Path::new("crlf.txt")).unwrap(),
        git2::Status::CURRENT
    );
    assert_eq!(
        repo.find_blob(index.get_path(Path::new("crlf.txt"), 0).unwrap().id)
            .unwrap()
            .content(),
        b"one\ntwo\n"
    );
    std::fs::write(root.join("b.txt"), "beta\nthe user's edit\n").unwrap();
    std::fs::write(root.join("untracked.txt"), "the user's notes\n").unwrap();
    dir
}

#[derive(Debug, PartialEq, Eq)]
enum Entry {
    File(Vec<u8>, u32),
    Link(PathBuf),
    Folder,
}

/// Every path under `root` but `.git`; folders that hold no file or link now and were not there
/// `before` are left out (git cannot see them, so nobody can tell a delegate made them).
fn tree(root: &Path, before: Option<&BTreeMap<PathBuf, Entry>>) -> BTreeMap<PathBuf, Entry> {
    let mut entries = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            let relative = path.strip_prefix(root).unwrap().to_path_buf();
            if relative == Path::new(".git") {
                continue;
            }
            let metadata = std::fs::symlink_metadata(&path).unwrap();
            let value = if metadata.file_type().is_symlink() {
                Entry::Link(std::fs::read_link(&path).unwrap())
            } else if metadata.is_dir() {
                stack.push(path.clone());
                Entry::Folder
            } else {
                Entry::File(
                    std::fs::read(&path).unwrap(),
                    metadata.permissions().mode() & 0o7777,
                )
            };
            entries.insert(relative, value);
        }
    }
    if let Some(before) = before {
        let holders: Vec<PathBuf> = entries
            .iter()
            .filter(|(_, entry)| !matches!(entry, Entry::Folder))
            .map(|(path, _)| path.clone())
            .collect();
        entries.retain(|path, entry| {
            !matches!(entry, Entry::Folder)
                || before.contains_key(path)
                || holders.iter().any(|held| held.starts_with(path))
        });
    }
    entries
}

proptest! {
    // 100 cases by default (a few seconds); `PROPTEST_CASES=1000` for the thorough run.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|cases| cases.parse().ok())
            .unwrap_or(100),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn any_sequence_of_file_operations_rolls_back_to_the_byte(
        operations in proptest::collection::vec(operation(), 1..8)
    ) {
        rolls_back(&operations, false)?;
    }

    #[test]
    fn any_sequence_of_file_operations_rolls_back_to_the_byte_with_the_watch(
        operations in proptest::collection::vec(operation(), 1..8)
    ) {
        rolls_back(&operations, true)?;
    }
}

/// Applies `operations`, finds the change (by the tree watch's account, or by scanning) and
/// rolls it back: the tree is as before, and no change is left.
fn rolls_back(operations: &[Operation], watch: bool) -> Result<(), TestCaseError> {
    let dir = repository();
    let root = dir.path().join("repo");
    let mut workspace = Workspace::open(&root, &dir.path().join("state")).unwrap();
    if watch {
        workspace.start_tree_watch();
    }
    let before = tree(&root, None);
    let snapshot = workspace.snapshot().unwrap();
    let since = super::watch::coarse_now();
    for operation in operations {
        apply(&root, operation);
    }
    let changes = workspace.changes_since(&snapshot).unwrap();
    workspace.roll_back(&changes, since).unwrap();
    prop_assert_eq!(tree(&root, Some(&before)), before);
    prop_assert!(workspace.changes_since(&snapshot).unwrap().is_empty());
    Ok(())
}
