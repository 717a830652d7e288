//! Recording iterations on a private ref and exporting them, checked with the git CLI on real
//! temporary repositories: `git am` and `git apply` on fresh clones must rebuild the same tree.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

use super::ledger::tests::{sample, tricky};
use super::manifest::{EntryKind, FileVersion, ManifestFile};
use super::*;

impl Recorder<'_> {
    /// Author and committer of every commit from now on (for reproducible commits); without it,
    /// `refine-loop <refine-loop@localhost>` at the current time.
    pub fn with_signature(mut self, signature: git2::Signature<'static>) -> Self {
        self.signature = Some(signature);
        self
    }
}

const MARKER: &[u8] = b"SECRET-MARKER";

/// Runs git in `dir` with no user or system configuration, asserting success; its output.
fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8_lossy(&output.stdout)
        .trim_end()
        .to_string()
}

fn no_secrets(_: &[u8]) -> Vec<String> {
    Vec::new()
}

fn marker_scan(content: &[u8]) -> Vec<String> {
    if content.windows(MARKER.len()).any(|window| window == MARKER) {
        vec!["the test marker".to_string()]
    } else {
        Vec::new()
    }
}

/// What a tree holds at one path: git mode and bytes.
type Entry = (u32, Vec<u8>);

/// A tree of files, as the tests expect it.
type Files = BTreeMap<Vec<u8>, Entry>;

/// Bytes git takes for binary (NULs among them), `length` + 3 long.
fn binary(seed: u8, length: usize) -> Vec<u8> {
    (0..length)
        .map(|index| (index as u8).wrapping_mul(31).wrapping_add(seed) ^ (index / 7) as u8)
        .chain([0, 0, 0xff])
        .collect()
}

fn base_files() -> Files {
    let lines: String = (1..=20).map(|line| format!("line {line}\n")).collect();
    [
        (
            &b"src/lib.rs"[..],
            0o100644,
            b"pub fn answer() -> u32 {\n    41\n}\n".to_vec(),
        ),
        (b"README.md", 0o100644, b"# demo\n".to_vec()),
        (b"run.sh", 0o100644, b"#!/bin/sh\necho run\n".to_vec()),
        (b"data.bin", 0o100644, binary(1, 600)),
        (b"old/name.txt", 0o100644, lines.into_bytes()),
        (b"notes.txt", 0o100644, b"notes\n".to_vec()),
        (b"tail.txt", 0o100644, b"no newline at the end".to_vec()),
        (b"keep.txt", 0o100644, b"untouched\n".to_vec()),
        (b"blob.bin", 0o100644, binary(4, 300)),
        (b"conf", 0o100644, b"key = 1\n".to_vec()),
        (b"lib/x.rs", 0o100644, b"fn x() {}\n".to_vec()),
        (
            b"windows.txt",
            0o100644,
            b"one\r\ntwo\r\nthree\r\n".to_vec(),
        ),
    ]
    .into_iter()
    .map(|(path, mode, bytes)| (path.to_vec(), (mode, bytes)))
    .collect()
}

/// A repository whose `main` holds `files` in one commit.
fn repository(root: &Path, files: &Files) -> git2::Oid {
    git(root, &["init", "-q", "-b", "main"]);
    for (path, (mode, bytes)) in files {
        let path = root.join(std::str::from_utf8(path).unwrap());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        if *mode == 0o100755 {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "base"]);
    git2::Oid::from_str(&git(root, &["rev-parse", "HEAD"])).unwrap()
}

fn state_of(store: &SnapshotStore, entry: Option<&Entry>) -> PathState {
    match entry {
        None => PathState::Absent,
        Some((0o120000, target)) => PathState::Symlink {
            target: target.clone(),
        },
        Some((mode, bytes)) => PathState::File {
            sha256: store.put_bytes(bytes).unwrap(),
            mode: mode & 0o777,
        },
    }
}

/// Changes `files` as `edits` say (None: removed) and returns the changes, before and after.
fn edit(
    store: &SnapshotStore,
    files: &mut Files,
    edits: Vec<(&[u8], Option<Entry>)>,
) -> Vec<PathChange> {
    edits
        .into_iter()
        .map(|(path, after)| {
            let before = state_of(store, files.get(path));
            let after_state = state_of(store, after.as_ref());
            match after {
                Some(entry) => files.insert(path.to_vec(), entry),
                None => files.remove(path),
            };
            PathChange {
                path: path.to_vec(),
                before,
                after: after_state,
            }
        })
        .collect()
}

/// Every file of `tree`, with its mode and bytes.
fn tree_files(repo: &git2::Repository, tree: &git2::Tree<'_>, prefix: &[u8], out: &mut Files) {
    for entry in tree.iter() {
        let mut path = prefix.to_vec();
        if !path.is_empty() {
            path.push(b'/');
        }
        path.extend_from_slice(entry.name_bytes());
        if entry.kind() == Some(git2::ObjectType::Tree) {
            tree_files(repo, &repo.find_tree(entry.id()).unwrap(), &path, out);
        } else {
            let blob = repo.find_blob(entry.id()).unwrap();
            out.insert(path, (entry.filemode() as u32, blob.content().to_vec()));
        }
    }
}

fn commit_files(repo: &git2::Repository, commit: git2::Oid) -> Files {
    let mut files = Files::new();
    let tree = repo.find_commit(commit).unwrap().tree().unwrap();
    tree_files(repo, &tree, b"", &mut files);
    files
}

fn tree_of(repo: &git2::Repository, commit: git2::Oid) -> String {
    repo.find_commit(commit).unwrap().tree_id().to_string()
}

fn signature() -> git2::Signature<'static> {
    git2::Signature::new(
        "refine-loop",
        "refine-loop@localhost",
        &git2::Time::new(1_700_000_000, 60),
    )
    .unwrap()
}

/// A fresh clone of `source` (objects sent as over the wire: the private ref stays behind) with
/// `base` checked out.
fn checkout(source: &Path, base: git2::Oid, into: &Path) -> PathBuf {
    let parent = into.parent().unwrap();
    git(
        parent,
        &[
            "clone",
            "-q",
            "--no-local",
            "--no-checkout",
            &format!("file://{}", source.display()),
            into.to_str().unwrap(),
        ],
    );
    git(into, &["checkout", "-q", "--detach", &base.to_string()]);
    into.to_path_buf()
}

/// The `*.patch` files of `dir`, sorted.
fn patch_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    files
}

fn version(entry: &Entry) -> FileVersion {
    let (mode, bytes) = entry;
    FileVersion {
        sha256: Some(
            Sha256::digest(bytes)
                .iter()
                .map(|byte| format!("{byte:02x}"))
                .collect(),
        ),
        mode: format!("{mode:o}"),
        kind: if *mode == 0o120000 {
            EntryKind::Symlink
        } else {
            EntryKind::File
        },
        commit: None,
    }
}

struct Run {
    _dir: tempfile::TempDir,
    root: PathBuf,
    scratch: PathBuf,
    store: SnapshotStore,
    base: git2::Oid,
    files: Files,
}

fn run() -> Run {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    let scratch = dir.path().join("scratch");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&scratch).unwrap();
    let store = SnapshotStore::new(&dir.path().join("store")).unwrap();
    let files = base_files();
    let base = repository(&root, &files);
    Run {
        _dir: dir,
        root,
        scratch,
        store,
        base,
        files,
    }
}

/// Three iterations that cover every kind of change; `files` ends as the last one's tree.
fn iterations(store: &SnapshotStore, files: &mut Files) -> Vec<Iteration> {
    let first = edit(
        store,
        files,
        vec![
            (
                b"src/lib.rs",
                Some((0o100644, b"pub fn answer() -> u32 {\n    42\n}\n".to_vec())),
            ),
            (
                b"docs/guide/intro.md",
                Some((0o100644, b"# Intro\n".to_vec())),
            ),
            (b"README.md", None),
            (
                b"run.sh",
                Some((0o100755, b"#!/bin/sh\necho run\n".to_vec())),
            ),
            (b"empty.txt", Some((0o100644, Vec::new()))),
            (
                b"windows.txt",
                Some((0o100644, b"one\r\nTWO\r\nthree\r\n".to_vec())),
            ),
        ],
    );
    let mut first_changes = first;
    // A folder is no tree entry: its state changes nothing.
    first_changes.push(PathChange {
        path: b"docs/guide".to_vec(),
        before: PathState::Absent,
        after: PathState::Directory,
    });
    let renamed = files.get(&b"old/name.txt"[..]).unwrap().clone();
    let second = edit(
        store,
        files,
        vec![
            (b"link", Some((0o120000, b"src/lib.rs".to_vec()))),
            (b"data.bin", Some((0o100644, binary(2, 600)))),
            (
                b"caf\xe9.txt",
                Some((0o100644, b"caf\xe9 in latin-1\n".to_vec())),
            ),
            (b"old/name.txt", None),
            (b"new/name.txt", Some(renamed)),
            (b"conf", None),
            (b"conf/app.toml", Some((0o100644, b"key = 2\n".to_vec()))),
        ],
    );
    let moved = files.get(&b"data.bin"[..]).unwrap().clone();
    let third = edit(
        store,
        files,
        vec![
            (
                b"notes.txt",
                Some((0o120000, b"docs/guide/intro.md".to_vec())),
            ),
            (b"image.bin", Some((0o100755, binary(3, 3000)))),
            (
                b"tail.txt",
                Some((0o100644, b"no newline at the end, still".to_vec())),
            ),
            (b"data.bin", None),
            (b"assets/data.bin", Some(moved)),
            (b"blob.bin", Some((0o100755, binary(4, 300)))),
            (b"lib/x.rs", None),
            (b"lib", Some((0o100644, b"now a file\n".to_vec()))),
            (
                b"old",
                Some((0o100644, b"was a folder in the base\n".to_vec())),
            ),
        ],
    );
    vec![
        Iteration {
            cycle: 1,
            summary: "failed 12\u{2192}7 (lint 5\u{2192}0)".to_string(),
            ledger: sample(1),
            provenance: Provenance::default(),
            changes: first_changes,
        },
        Iteration {
            cycle: 3,
            summary: "failed 7\u{2192}3".to_string(),
            ledger: sample(3),
            provenance: Provenance::default(),
            changes: second,
        },
        Iteration {
            cycle: 4,
            summary: "failed 3\u{2192}0\n(all green)".to_string(),
            ledger: tricky(),
            provenance: Provenance {
                run: "https://ci.example/runs/7".to_string(),
                gate: "sha256:0123".to_string(),
                delegates: vec!["fixer\n\nRefine-Loop-Cost: 0 USD".to_string()],
                cost: "tokens 12, cost unknown".to_string(),
                findings: "fixed 3, new 0, pre-existing 0".to_string(),
            },
            changes: third,
        },
    ]
}

#[test]
fn recording_leaves_the_branch_head_index_and_working_tree_alone() {
    let mut run = run();
    // Work in progress of the user's: a staged change and an untracked file.
    std::fs::write(run.root.join("keep.txt"), "staged\n").unwrap();
    git(&run.root, &["add", "keep.txt"]);
    std::fs::write(run.root.join("scratch.txt"), "untracked\n").unwrap();
    let status = git(&run.root, &["status", "--porcelain"]);
    let index = std::fs::read(run.root.join(".git/index")).unwrap();
    let repo = git2::Repository::open(&run.root).unwrap();

    let mut recorder = Recorder::new(&repo, run.base, "run-1")
        .unwrap()
        .with_signature(signature());
    let mut tips = Vec::new();
    for iteration in iterations(&run.store, &mut run.files) {
        tips.push(recorder.record(&iteration, &run.store).unwrap());
    }

    let tip = recorder.tip().unwrap();
    assert_eq!(tip, tips[2]);
    assert_eq!(
        git(&run.root, &["rev-parse", "refs/refine-loop/run-1"]),
        tip.to_string()
    );
    assert_eq!(git(&run.root, &["rev-parse", "HEAD"]), run.base.to_string());
    assert_eq!(git(&run.root, &["rev-parse", "main"]), run.base.to_string());
    assert_eq!(git(&run.root, &["symbolic-ref", "HEAD"]), "refs/heads/main");
    assert_eq!(git(&run.root, &["status", "--porcelain"]), status);
    assert_eq!(std::fs::read(run.root.join(".git/index")).unwrap(), index);
    // A chain from the base, one commit per iteration, with the fixed identity.
    assert_eq!(
        git(
            &run.root,
            &["rev-list", "--reverse", &format!("{}..{tip}", run.base)]
        ),
        tips.iter()
            .map(|tip| tip.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(
        git(
            &run.root,
            &[
                "log",
                "-1",
                "--format=%an <%ae>|%cn <%ce>",
                &tip.to_string()
            ]
        ),
        "refine-loop <refine-loop@localhost>|refine-loop <refine-loop@localhost>"
    );
    assert_eq!(commit_files(&repo, tip), run.files);
    assert_eq!(
        recorder
            .iterations()
            .iter()
            .map(|iteration| iteration.subject.as_str())
            .collect::<Vec<_>>(),
        [
            "refine-loop: iteration 1 \u{2014} failed 12\u{2192}7 (lint 5\u{2192}0)",
            "refine-loop: iteration 3 \u{2014} failed 7\u{2192}3",
            "refine-loop: iteration 4 \u{2014} failed 3\u{2192}0 (all green)",
        ]
    );
    let message = repo
        .find_commit(tip)
        .unwrap()
        .message()
        .unwrap()
        .to_string();
    assert_eq!(Ledger::parse(&message).unwrap(), tricky().normalized());
}

#[test]
fn the_series_applies_with_git_am_on_a_fresh_clone_of_the_base() {
    let mut run = run();
    let repo = git2::Repository::open(&run.root).unwrap();
    let mut recorder = Recorder::new(&repo, run.base, "run-1")
        .unwrap()
        .with_signature(signature());
    let iterations = iterations(&run.store, &mut run.files);
    for iteration in &iterations {
        recorder.record(iteration, &run.store).unwrap();
    }
    let patches = run.scratch.join("state/patches");
    // A longer earlier export leaves its tail; other files stay.
    std::fs::create_dir_all(&patches).unwrap();
    std::fs::write(patches.join("0009-stale.patch"), "old").unwrap();
    std::fs::write(patches.join("README"), "kept").unwrap();
    let written = recorder.write_series(&patches, &no_secrets).unwrap();
    std::fs::remove_file(patches.join("README")).unwrap();
    assert_eq!(written, patch_files(&patches));
    let names: Vec<String> = written
        .iter()
        .map(|path| path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "0001-refine-loop-iteration-1-failed-12-7-lint-5-0.patch",
            "0002-refine-loop-iteration-3-failed-7-3.patch",
            "0003-refine-loop-iteration-4-failed-3-0-all-green.patch",
        ]
    );

    let clone = checkout(&run.root, run.base, &run.scratch.join("am"));
    let mut arguments = vec!["am", "-q"];
    arguments.extend(written.iter().map(|path| path.to_str().unwrap()));
    git(&clone, &arguments);

    let tip = recorder.tip().unwrap();
    assert_eq!(
        git(&clone, &["rev-parse", "HEAD^{tree}"]),
        tree_of(&repo, tip)
    );
    let range = format!("{}..HEAD", run.base);
    assert_eq!(
        git(&clone, &["log", "--reverse", "--format=%s", &range]),
        recorder
            .iterations()
            .iter()
            .map(|iteration| iteration.subject.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    let commits = git(&clone, &["rev-list", "--reverse", &range]);
    for (commit, iteration) in commits.lines().zip(&iterations) {
        let message = git(&clone, &["log", "-1", "--format=%B", commit]);
        assert_eq!(
            Ledger::parse(&message).unwrap(),
            iteration.ledger.normalized(),
            "{message}"
        );
        // The trailers survive `git am` whole, and only they are trailers.
        let trailers = git(&clone, &["log", "-1", "--format=%(trailers:only)", commit]);
        assert_eq!(
            format!("{trailers}\n"),
            iteration.provenance.trailers(),
            "{message}"
        );
    }
    assert_eq!(
        git(&clone, &["log", "-1", "--format=%an <%ae> %at"]),
        "refine-loop <refine-loop@localhost> 1700000000"
    );
}

#[test]
fn the_cumulative_patch_applies_with_git_apply_on_a_fresh_clone_of_the_base() {
    let mut run = run();
    let repo = git2::Repository::open(&run.root).unwrap();
    let mut recorder = Recorder::new(&repo, run.base, "run-1").unwrap();
    for iteration in iterations(&run.store, &mut run.files) {
        recorder.record(&iteration, &run.store).unwrap();
    }
    let patch = run.scratch.join("refine-loop.patch");
    recorder
        .write_cumulative_patch(&patch, &no_secrets)
        .unwrap();

    let clone = checkout(&run.root, run.base, &run.scratch.join("apply"));
    let patch = patch.to_str().unwrap();
    git(&clone, &["apply", "--check", patch]);
    git(&clone, &["apply", patch]);
    git(&clone, &["add", "-A"]);
    assert_eq!(
        git(&clone, &["write-tree"]),
        tree_of(&repo, recorder.tip().unwrap())
    );
}

#[test]
fn the_manifest_lists_exactly_the_changed_files_with_their_hashes() {
    let mut run = run();
    let before = run.files.clone();
    let repo = git2::Repository::open(&run.root).unwrap();
    let mut recorder = Recorder::new(&repo, run.base, "run-1").unwrap();
    for iteration in iterations(&run.store, &mut run.files) {
        recorder.record(&iteration, &run.store).unwrap();
    }
    let path = run.scratch.join("manifest.json");
    recorder
        .write_manifest(&path, "improved", "all categories pass")
        .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let manifest: Manifest = serde_json::from_str(&text).unwrap();

    let mut paths: Vec<&Vec<u8>> = before.keys().chain(run.files.keys()).collect();
    paths.sort();
    paths.dedup();
    let expected: Vec<ManifestFile> = paths
        .into_iter()
        .filter(|path| before.get(*path) != run.files.get(*path))
        .map(|path| ManifestFile {
            path: String::from_utf8_lossy(path).into_owned(),
            path_bytes_hex: std::str::from_utf8(path)
                .is_err()
                .then(|| path.iter().map(|byte| format!("{byte:02x}")).collect()),
            before: before.get(path).map(version),
            after: run.files.get(path).map(version),
        })
        .collect();
    assert_eq!(manifest.files, expected);
    assert_eq!(expected.len(), 21);
    assert_eq!(manifest.format_version, 1);
    assert_eq!(manifest.run_id, "run-1");
    assert_eq!(manifest.reference, "refs/refine-loop/run-1");
    assert_eq!(manifest.base_commit, run.base.to_string());
    assert_eq!(
        manifest.final_commit,
        recorder.tip().map(|tip| tip.to_string())
    );
    assert_eq!(
        (manifest.outcome.as_str(), manifest.stop_reason.as_str()),
        ("improved", "all categories pass")
    );
    assert_eq!(
        manifest
            .iterations
            .iter()
            .map(|iteration| iteration.cycle)
            .collect::<Vec<_>>(),
        [1, 3, 4]
    );
    // The wire shape: the ref key, hex only for the path that is not UTF-8, kind only for links.
    assert!(
        text.contains("\"ref\": \"refs/refine-loop/run-1\""),
        "{text}"
    );
    assert_eq!(text.matches("path_bytes_hex").count(), 1, "{text}");
    assert!(
        text.contains("\"path_bytes_hex\": \"636166e92e747874\""),
        "{text}"
    );
    assert_eq!(text.matches("\"kind\": \"symlink\"").count(), 2, "{text}");
    assert!(text.contains("\"before\": null"), "{text}");
}

#[test]
fn a_run_without_iterations_exports_empty_files() {
    let run = run();
    let repo = git2::Repository::open(&run.root).unwrap();
    let recorder = Recorder::new(&repo, run.base, "run-1").unwrap();
    let patch = run.scratch.join("refine-loop.patch");
    recorder
        .write_cumulative_patch(&patch, &no_secrets)
        .unwrap();
    assert_eq!(std::fs::read(&patch).unwrap(), b"");
    let patches = run.scratch.join("patches");
    assert!(
        recorder
            .write_series(&patches, &no_secrets)
            .unwrap()
            .is_empty()
    );
    assert!(patch_files(&patches).is_empty());
    let manifest = recorder.manifest("no-change", "nothing failed").unwrap();
    assert_eq!(manifest.final_commit, None);
    assert!(manifest.files.is_empty() && manifest.iterations.is_empty());
    assert!(repo.find_reference("refs/refine-loop/run-1").is_err());
}

#[test]
fn a_detached_head_in_a_shallow_clone_works_too() {
    let run = run();
    let shallow = run.scratch.join("shallow");
    git(
        &run.scratch,
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            &format!("file://{}", run.root.display()),
            shallow.to_str().unwrap(),
        ],
    );
    git(&shallow, &["checkout", "-q", "--detach"]);
    assert_eq!(
        git(&shallow, &["rev-parse", "--is-shallow-repository"]),
        "true"
    );
    let repo = git2::Repository::open(&shallow).unwrap();
    let base = repo.head().unwrap().target().unwrap();
    let mut files = run.files.clone();
    let changes = edit(
        &run.store,
        &mut files,
        vec![(
            b"src/lib.rs",
            Some((0o100644, b"fn changed() {}\n".to_vec())),
        )],
    );
    let mut recorder = Recorder::new(&repo, base, "detached").unwrap();
    let iteration = Iteration {
        cycle: 1,
        summary: "failed 1\u{2192}0".to_string(),
        ledger: sample(1),
        provenance: Provenance::default(),
        changes,
    };
    let tip = recorder.record(&iteration, &run.store).unwrap();
    assert!(repo.head_detached().unwrap());
    assert_eq!(repo.head().unwrap().target(), Some(base));
    assert_eq!(
        git(&shallow, &["rev-parse", "refs/refine-loop/detached"]),
        tip.to_string()
    );

    let patches = recorder
        .write_series(&run.scratch.join("patches"), &no_secrets)
        .unwrap();
    let clone = checkout(&shallow, base, &run.scratch.join("am"));
    git(&clone, &["am", "-q", patches[0].to_str().unwrap()]);
    assert_eq!(
        git(&clone, &["rev-parse", "HEAD^{tree}"]),
        tree_of(&repo, tip)
    );
}

#[test]
fn the_secret_scan_refuses_patches_and_writes_nothing() {
    let mut run = run();
    let repo = git2::Repository::open(&run.root).unwrap();
    let mut recorder = Recorder::new(&repo, run.base, "run-1").unwrap();
    let clean = edit(
        &run.store,
        &mut run.files,
        vec![(b"src/lib.rs", Some((0o100644, b"fn clean() {}\n".to_vec())))],
    );
    recorder
        .record(
            &Iteration {
                cycle: 1,
                summary: "clean".to_string(),
                ledger: sample(1),
                provenance: Provenance::default(),
                changes: clean,
            },
            &run.store,
        )
        .unwrap();
    let patches = run.scratch.join("patches");
    let written = recorder.write_series(&patches, &marker_scan).unwrap();
    let first = std::fs::read(&written[0]).unwrap();

    // The marker inside a binary file: the patch text only has it compressed and encoded.
    let mut secret = binary(9, 200);
    secret.extend_from_slice(MARKER);
    let leaking = edit(
        &run.store,
        &mut run.files,
        vec![(b"assets/key.bin", Some((0o100644, secret)))],
    );
    recorder
        .record(
            &Iteration {
                cycle: 2,
                summary: "leaks".to_string(),
                ledger: sample(2),
                provenance: Provenance::default(),
                changes: leaking,
            },
            &run.store,
        )
        .unwrap();
    let error = recorder.write_series(&patches, &marker_scan).unwrap_err();
    let DeliverError::SecretRefused { path, findings } = &error else {
        panic!("{error}");
    };
    assert_eq!(
        path,
        &patches.join("0002-refine-loop-iteration-2-leaks.patch")
    );
    assert_eq!(findings, &["assets/key.bin (after): the test marker"]);
    assert!(!error.to_string().contains("SECRET-MARKER"));
    // Nothing written: the earlier export is as it was.
    assert_eq!(patch_files(&patches), written);
    assert_eq!(std::fs::read(&written[0]).unwrap(), first);

    let cumulative = run.scratch.join("refine-loop.patch");
    let error = recorder
        .write_cumulative_patch(&cumulative, &marker_scan)
        .unwrap_err();
    let DeliverError::SecretRefused { path, findings } = &error else {
        panic!("{error}");
    };
    assert_eq!(path, &cumulative);
    assert_eq!(findings, &["assets/key.bin (after): the test marker"]);
    assert!(!cumulative.exists());
}

#[test]
fn a_secret_in_text_is_found_in_the_patch_text_and_the_blob() {
    let mut run = run();
    let repo = git2::Repository::open(&run.root).unwrap();
    let mut recorder = Recorder::new(&repo, run.base, "run-1").unwrap();
    let changes = edit(
        &run.store,
        &mut run.files,
        vec![(
            b"config.env",
            Some((0o100644, b"TOKEN=SECRET-MARKER\n".to_vec())),
        )],
    );
    let iteration = Iteration {
        cycle: 1,
        summary: "config".to_string(),
        ledger: sample(1),
        provenance: Provenance::default(),
        changes,
    };
    recorder.record(&iteration, &run.store).unwrap();
    let path = run.scratch.join("refine-loop.patch");
    let error = recorder
        .write_cumulative_patch(&path, &marker_scan)
        .unwrap_err();
    let DeliverError::SecretRefused { findings, .. } = &error else {
        panic!("{error}");
    };
    assert_eq!(
        findings,
        &[
            "patch text: the test marker",
            "config.env (after): the test marker"
        ]
    );
    assert!(!path.exists());
    assert!(
        recorder
            .write_series(&run.scratch.join("patches"), &marker_scan)
            .is_err()
    );
    assert!(!run.scratch.join("patches").exists());
}

#[test]
fn bad_run_ids_paths_and_empty_iterations_are_refused() {
    let mut run = run();
    let repo = git2::Repository::open(&run.root).unwrap();
    for run_id in ["", "a/b", "a..b", "x.lock", "sp ace"] {
        assert!(
            matches!(
                Recorder::new(&repo, run.base, run_id),
                Err(DeliverError::InvalidRunId { .. })
            ),
            "{run_id:?}"
        );
    }
    let mut recorder = Recorder::new(&repo, run.base, "run-1").unwrap();
    for path in [
        &b"../escape"[..],
        b"/absolute",
        b".git/config",
        b"a//b",
        b"a/./b",
        b"",
    ] {
        let iteration = Iteration {
            cycle: 1,
            summary: String::new(),
            ledger: Ledger::default(),
            provenance: Provenance::default(),
            changes: edit(
                &run.store,
                &mut run.files.clone(),
                vec![(path, Some((0o100644, b"x".to_vec())))],
            ),
        };
        assert!(
            matches!(
                recorder.record(&iteration, &run.store),
                Err(DeliverError::InvalidPath { .. })
            ),
            "{path:?}"
        );
    }
    let twice = Iteration {
        cycle: 1,
        summary: String::new(),
        ledger: Ledger::default(),
        provenance: Provenance::default(),
        changes: [None, Some((0o100644, b"x".to_vec()))]
            .into_iter()
            .flat_map(|after| {
                edit(
                    &run.store,
                    &mut run.files.clone(),
                    vec![(b"keep.txt", after)],
                )
            })
            .collect(),
    };
    assert!(matches!(
        recorder.record(&twice, &run.store),
        Err(DeliverError::InvalidPath {
            problem: "changed twice in one iteration",
            ..
        })
    ));
    // The same bytes as the base: nothing to commit.
    let same = Iteration {
        cycle: 1,
        summary: String::new(),
        ledger: Ledger::default(),
        provenance: Provenance::default(),
        changes: edit(
            &run.store,
            &mut run.files.clone(),
            vec![(b"keep.txt", Some((0o100644, b"untouched\n".to_vec())))],
        ),
    };
    assert!(matches!(
        recorder.record(&same, &run.store),
        Err(DeliverError::NothingToRecord { cycle: 1 })
    ));
    assert_eq!(recorder.tip(), None);
    // A real one, then the run id is taken.
    let real = Iteration {
        cycle: 2,
        summary: String::new(),
        ledger: Ledger::default(),
        provenance: Provenance::default(),
        changes: edit(
            &run.store,
            &mut run.files,
            vec![(b"keep.txt", Some((0o100644, b"changed\n".to_vec())))],
        ),
    };
    recorder.record(&real, &run.store).unwrap();
    assert_eq!(recorder.iterations()[0].subject, "refine-loop: iteration 2");
    assert!(matches!(
        Recorder::new(&repo, run.base, "run-1"),
        Err(DeliverError::RefExists { .. })
    ));
}

#[test]
fn a_corrupt_store_entry_is_refused() {
    let mut run = run();
    let repo = git2::Repository::open(&run.root).unwrap();
    let mut recorder = Recorder::new(&repo, run.base, "run-1").unwrap();
    let changes = edit(
        &run.store,
        &mut run.files,
        vec![(b"keep.txt", Some((0o100644, b"changed\n".to_vec())))],
    );
    let PathState::File { sha256, .. } = &changes[0].after else {
        panic!("a file");
    };
    std::fs::write(run.store.path_of(sha256), b"other bytes").unwrap();
    let iteration = Iteration {
        cycle: 1,
        summary: String::new(),
        ledger: Ledger::default(),
        provenance: Provenance::default(),
        changes,
    };
    assert!(matches!(
        recorder.record(&iteration, &run.store),
        Err(DeliverError::StoreCorrupt { .. })
    ));
}

#[test]
fn a_new_entry_takes_the_place_of_what_the_changes_do_not_list() {
    // The parent holds `x/kept.txt` and the file `y`; the changes put a file at `x` and one at
    // `y/z.txt` without listing what was there (a staged deletion, say): it goes.
    let dir = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init(dir.path().join("repo")).unwrap();
    let store = SnapshotStore::new(&dir.path().join("store")).unwrap();
    let blob = repo.blob(b"old\n").unwrap();
    let parent = git2::build::TreeUpdateBuilder::new()
        .upsert("x/kept.txt", blob, git2::FileMode::Blob)
        .upsert("y", blob, git2::FileMode::Blob)
        .upsert("other.txt", blob, git2::FileMode::Blob)
        .create_updated(
            &repo,
            &repo
                .find_tree(repo.treebuilder(None).unwrap().write().unwrap())
                .unwrap(),
        )
        .unwrap();
    let parent = repo.find_tree(parent).unwrap();
    let file = |bytes: &[u8]| PathState::File {
        sha256: store.put_bytes(bytes).unwrap(),
        mode: 0o644,
    };
    let changes = [
        PathChange {
            path: b"x".to_vec(),
            before: PathState::Directory,
            after: file(b"x is a file\n"),
        },
        PathChange {
            path: b"y/z.txt".to_vec(),
            before: PathState::Absent,
            after: file(b"z\n"),
        },
    ];
    let built = tree::build(&repo, &parent, &changes, &store).unwrap();
    let mut files = Files::new();
    tree_files(&repo, &repo.find_tree(built).unwrap(), b"", &mut files);
    let names: Vec<&[u8]> = files.keys().map(Vec::as_slice).collect();
    assert_eq!(names, [&b"other.txt"[..], b"x", b"y/z.txt"]);
}

#[test]
fn a_diff_limited_to_the_paths_that_differ_lists_what_a_whole_diff_lists() {
    // Each step changes the tree one way; the limited diff of each step, and of the base to the
    // end, must name the same files as libgit2's diff of the whole trees.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "-q"]);
    let steps: [(&str, &str); 9] = [
        (
            "base",
            "mkdir -p a/b c d && echo 1 > a/b/f && echo 2 > a/g && echo 3 > c/h && echo 4 > top && echo 5 > d/i",
        ),
        ("edit deep", "echo one > a/b/f"),
        ("add in a new folder", "mkdir -p n/m && echo new > n/m/x"),
        ("delete a folder", "rm -r c"),
        (
            "a file becomes a folder",
            "rm top && mkdir top && echo in > top/y",
        ),
        (
            "a folder becomes a file",
            "rm -r d && echo was-a-folder > d",
        ),
        ("mode", "chmod +x a/g"),
        ("a symlink", "ln -s a/g link"),
        ("nothing", "true"),
    ];
    let repo = git2::Repository::open(root).unwrap();
    let mut commits = Vec::new();
    for (name, script) in steps {
        let status = Command::new("sh")
            .args(["-c", script])
            .current_dir(root)
            .status()
            .unwrap();
        assert!(status.success(), "{name}");
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "--allow-empty", "-m", name]);
        commits.push((name, repo.head().unwrap().peel_to_tree().unwrap()));
    }
    let files = |diff: &git2::Diff<'_>| -> Vec<(Vec<u8>, Vec<u8>)> {
        diff.deltas()
            .map(|delta| {
                let side = |file: git2::DiffFile<'_>| file.path_bytes().unwrap_or(b"").to_vec();
                (side(delta.old_file()), side(delta.new_file()))
            })
            .collect()
    };
    let mut pairs: Vec<(&str, &git2::Tree<'_>, &git2::Tree<'_>)> = commits
        .windows(2)
        .map(|pair| (pair[1].0, &pair[0].1, &pair[1].1))
        .collect();
    pairs.push(("base to end", &commits[0].1, &commits[commits.len() - 1].1));
    for (name, old, new) in pairs {
        let whole = repo.diff_tree_to_tree(Some(old), Some(new), None).unwrap();
        let limited = patch::diff_trees(&repo, old, new, false).unwrap();
        assert_eq!(files(&limited), files(&whole), "{name}");
    }
}
