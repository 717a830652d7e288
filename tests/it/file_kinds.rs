//! Every kind of file a delegate can leave behind: FIFOs, sockets and devices (never opened,
//! reported, removed), a 1 GiB sparse file (streamed, rolled back), and the loop's own files
//! replaced by a symlink or a FIFO (never followed, never blocking). After each, the user's
//! files are byte-, mode- and owner-identical, nothing outside the repository changed, and the
//! delegate's report names what happened.

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use crate::support::{Entry, Repo, tree_of};

const GATE: &str = r#"[loop]
# The watch's own suite: what it finds and undoes on its own, when the kernel does not stop
# the delegate first (tests/it/confine.rs shows the kernel stopping it).
confine = "off"

[[gate.check]]
name = "lint"
category = "lint"
run = "cat findings.txt; test ! -s findings.txt"
parser = "clippy"

[[gate.check]]
name = "tests"
category = "tests"
# The library must be as committed: any file added to src/ fails.
run = "test -z \"$(git ls-files --others --exclude-standard -- src)\" && git diff --quiet HEAD -- src/lib.txt"
"#;

const FINDINGS: &str = "src/lib.txt:1:1: error: one\nsrc/lib.txt:2:1: error: two\n";

/// A repository with a committed library, the user's work on top, and a folder outside it.
pub(crate) struct Scene {
    pub repo: Repo,
    pub outside: tempfile::TempDir,
}

/// Everything a run must leave as it was: the tree (bytes and modes), who owns each path, and
/// the folder outside.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Look {
    tree: BTreeMap<PathBuf, Entry>,
    owners: BTreeMap<PathBuf, (u32, u32)>,
    outside: BTreeMap<PathBuf, Entry>,
}

impl Scene {
    /// The delegate fixes one lint finding, then runs `fault` (`$OUTSIDE` is the outside folder).
    pub(crate) fn new(fault: &str) -> Self {
        let repo = Repo::new();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("notes.txt"), "outside the repository\n").unwrap();
        repo.write("findings.txt", FINDINGS);
        repo.write(".gitignore", "/.refine-loop\n/build/\n");
        repo.write("src/lib.txt", "library\nsecond line\n");
        repo.write("src/keep.txt", "another\n");
        let fault = fault.replace("$OUTSIDE", &outside.path().display().to_string());
        repo.write(
            "refine-loop.toml",
            &format!(
                "{GATE}\n[[delegate]]\ncategories = [\"lint\"]\nrun = '''sed -i 1d findings.txt; {fault}'''\n"
            ),
        );
        repo.commit("library");
        repo.write("docs/wip.md", "the user's draft\n");
        std::fs::set_permissions(
            repo.join("docs/wip.md"),
            std::fs::Permissions::from_mode(0o600),
        )
        .unwrap();
        // Another uid's file in the user's work (root may make it so).
        let _ = std::os::unix::fs::lchown(repo.join("docs/wip.md"), Some(4321), Some(4321));
        Self { repo, outside }
    }

    pub(crate) fn look(&self) -> Look {
        Look {
            tree: tree_of(self.repo.path(), &[".git", ".refine-loop"]),
            owners: owners_of(self.repo.path(), &[".git", ".refine-loop"]),
            outside: tree_of(self.outside.path(), &[]),
        }
    }

    pub(crate) fn report(&self) -> String {
        std::fs::read_to_string(
            self.repo
                .join(".refine-loop/cycle-1/delegate-reports/fix-lint.md"),
        )
        .unwrap()
    }

    /// Runs one cycle; fails the test when the run has not ended after `patience` (a hang).
    pub(crate) fn run(&self) -> Output {
        run_bounded(&self.repo, &["run", "--max-cycles", "1"])
    }
}

/// Runs the binary in `repo`; a run still going after five minutes is killed and fails the test.
pub(crate) fn run_bounded(repo: &Repo, args: &[&str]) -> Output {
    let mut child = repo
        .command(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let give_up = Instant::now() + Duration::from_secs(300);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > give_up {
            let _ = child.kill();
            let output = child.wait_with_output().unwrap();
            panic!("the run hung: {output:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// Who owns every path under `root` (but the top-level names in `skip`).
fn owners_of(root: &Path, skip: &[&str]) -> BTreeMap<PathBuf, (u32, u32)> {
    tree_of(root, skip)
        .into_keys()
        .map(|relative| {
            let metadata = std::fs::symlink_metadata(root.join(&relative)).unwrap();
            (relative, (metadata.uid(), metadata.gid()))
        })
        .collect()
}

/// Runs `fault`; checks that the run ended, that everything is as it was, and that the report
/// says `says`. Returns the scene and the report.
fn inject(fault: &str, says: &str) -> (Scene, String) {
    inject_judged(fault, says, false)
}

/// [`inject`]; with `fix_judged`, the delegate's lint fix is judged as usual (it may be kept).
fn inject_judged(fault: &str, says: &str, fix_judged: bool) -> (Scene, String) {
    let scene = Scene::new(fault);
    let without_fix = |mut look: Look| {
        if fix_judged {
            look.tree.remove(Path::new("findings.txt"));
        }
        look
    };
    let before = without_fix(scene.look());
    let output = scene.run();
    assert!(
        matches!(output.status.code(), Some(1 | 3)),
        "{fault}: {output:?}"
    );
    assert!(
        without_fix(scene.look()) == before,
        "{fault}: something changed"
    );
    let report = scene.report();
    assert!(
        report.contains(says),
        "{fault}: the report lacks {says:?}:\n{report}"
    );
    (scene, report)
}

pub(crate) fn require_root(what: &str) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let euid = status
        .lines()
        .find_map(|line| line.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1))
        .unwrap();
    assert!(
        euid == "0",
        "{what} needs root: run the tests as root (in a container or a VM), or leave this one \
         out with `--skip file_kinds::`"
    );
}

#[test]
fn a_fifo_at_a_tracked_path_is_never_opened_and_is_removed() {
    inject(
        "rm src/lib.txt && mkfifo src/lib.txt",
        "made `src/lib.txt` a FIFO (named pipe), which the loop never opens: removed",
    );
}

#[test]
fn fifos_at_new_paths_are_found_though_git_does_not_list_them() {
    let (_, report) = inject(
        "mkfifo pipe && mkdir -p deep/er && mkfifo deep/er/pipe",
        "made `deep/er/pipe` a FIFO (named pipe), which the loop never opens: removed",
    );
    assert!(report.contains("made `pipe` a FIFO"), "{report}");
}

#[test]
fn a_fifo_in_a_folder_git_ignores_is_found_though_the_watch_leaves_it_out() {
    inject(
        "mkdir -p build/out && mkfifo build/out/pipe",
        "made `build/out/pipe` a FIFO (named pipe), which the loop never opens: removed",
    );
}

#[test]
fn a_socket_is_removed() {
    inject(
        "python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind(\"src/socket\")'",
        "made `src/socket` a socket, which the loop never opens: removed",
    );
}

#[test]
fn a_character_device_is_never_copied() {
    require_root("making a character device (mknod)");
    inject(
        "mknod src/zero c 1 5 && rm src/keep.txt && mknod src/keep.txt c 1 5",
        "made `src/keep.txt` a character device, which the loop never opens: removed",
    );
}

#[test]
fn a_fifo_as_the_verdict_file_does_not_hang_the_run() {
    let (scene, report) = inject_judged(
        "rm -f \"$REFINE_LOOP_VERDICT_FILE\"; mkfifo \"$REFINE_LOOP_VERDICT_FILE\"",
        "is a FIFO (named pipe), not a regular file: it is not opened",
        true,
    );
    assert!(report.contains("- verdict: (not read:"), "{report}");
    assert!(scene.repo.join(".refine-loop").exists());
}

#[test]
fn a_symlinked_verdict_file_is_neither_read_nor_rewritten() {
    // A verdict outside, holding a credential shape: the loop rewrites a verdict without its
    // secrets, and must not do so through the link.
    let outside = tempfile::tempdir().unwrap();
    let verdict = outside.path().join("verdict.txt");
    let token = format!("ghp_{}", "a1B2".repeat(9));
    std::fs::write(&verdict, format!("needs-fix {token}\n")).unwrap();
    let (_, report) = inject_judged(
        &format!("ln -sf {} \"$REFINE_LOOP_VERDICT_FILE\"", verdict.display()),
        "is a symlink, not a regular file: it is not opened",
        true,
    );
    assert_eq!(
        std::fs::read_to_string(&verdict).unwrap(),
        format!("needs-fix {token}\n"),
        "the file behind the link was rewritten"
    );
    assert!(!report.contains("needs-fix"), "{report}");
}

/// A sparse file of a gibibyte or a tebibyte costs a delegate nothing to make, and reading or
/// keeping it would cost the run its disk: past the largest change the loop reads, it is removed
/// unread, named, and the change rolled back; the store holds nothing of it. A large file under
/// that bound is read and kept as any other.
#[test]
fn a_file_past_the_largest_change_is_removed_unread_and_rolled_back() {
    // (what the delegate leaves, removed unread)
    let cases = [
        ("truncate -s 1T src/big.bin", true),
        ("truncate -s 1G src/big.bin", true),
        ("head -c 1048576 /dev/urandom > src/big.bin", false),
    ];
    for (fault, unread) in cases {
        let (scene, report) = inject(fault, "- result: rolled back");
        assert!(!scene.repo.join("src/big.bin").exists(), "{fault}");
        assert!(report.contains("src/big.bin"), "{fault}: {report}");
        assert_eq!(
            report.contains("more than any change the loop reads: removed unread"),
            unread,
            "{fault}: {report}"
        );
        let store = scene.repo.join(".git/refine-loop/snapshots");
        let largest = largest_file_in(&store);
        assert!(largest < 1 << 30, "{fault}: the store kept {largest} bytes");
    }
}

/// The size of the largest file beneath `folder`.
fn largest_file_in(folder: &Path) -> u64 {
    let mut largest = 0;
    for entry in std::fs::read_dir(folder).into_iter().flatten().flatten() {
        let metadata = entry.metadata().unwrap();
        largest = largest.max(if metadata.is_dir() {
            largest_file_in(&entry.path())
        } else {
            metadata.len()
        });
    }
    largest
}

#[test]
fn a_folder_moved_into_the_tree_is_set_aside_and_outlives_the_run() {
    // A repository made outside before the delegate runs; it moves it into the tree, where git
    // shows it as one folder. The loop did not make it: it is set aside, never deleted.
    let scene = Scene::new("mv $OUTSIDE/nested src/nested");
    let nested = scene.outside.path().join("nested");
    std::fs::create_dir(&nested).unwrap();
    crate::support::git_in(&nested, &["init", "-q"]);
    std::fs::write(nested.join("kept.txt"), "not the loop's to delete\n").unwrap();
    crate::support::git_in(&nested, &["add", "-A"]);
    crate::support::git_in(&nested, &["commit", "-q", "-m", "nested"]);
    let before = scene.look();
    let output = scene.run();
    assert!(matches!(output.status.code(), Some(1 | 3)), "{output:?}");
    assert_eq!(scene.look().tree, before.tree);
    let report =
        std::fs::read_to_string(scene.repo.join(".refine-loop/REFINE-LOOP-FINAL.md")).unwrap();
    let line = report
        .lines()
        .find(|line| line.contains("is set aside at"))
        .unwrap_or_else(|| panic!("the report does not say where:\n{report}"));
    assert!(line.contains("`src/nested`"), "{line}");
    let aside = line
        .rsplit_once("set aside at `")
        .and_then(|(_, rest)| rest.strip_suffix('`'))
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(Path::new(aside).join("kept.txt")).unwrap(),
        "not the loop's to delete\n"
    );
    assert!(!scene.repo.join(".git/refine-loop/snapshots").exists());
}

#[test]
fn a_secret_in_a_file_name_keeps_the_whole_change_out_of_the_record() {
    let variable = "s3cr3t-in-a-name-4242";
    let shape = format!("ghp_{}", "n4Me".repeat(9));
    // (what, the name the delegate makes, the secret that must not appear)
    let cases = [
        (
            "a variable's value",
            "notes/$API_TOKEN.txt".to_string(),
            variable,
        ),
        (
            "a credential shape",
            format!("notes/{shape}/notes.txt"),
            shape.as_str(),
        ),
    ];
    // Outside src/, the gate would pass: the change would be kept but for its name.
    for (what, name, secret) in cases {
        let scene = Scene::new(&format!(
            "mkdir -p \"$(dirname \"{name}\")\" && echo harmless > \"{name}\""
        ));
        let before = scene.look();
        let output = scene
            .repo
            .command(&["run", "--max-cycles", "1"])
            .env("API_TOKEN", variable)
            .output()
            .unwrap();
        assert!(
            matches!(output.status.code(), Some(1 | 3)),
            "{what}: {output:?}"
        );
        assert!(scene.look() == before, "{what}: not rolled back");
        let report = scene.report();
        assert!(
            report.contains("named a path with a secret in it"),
            "{what}: {report}"
        );
        // Nowhere: not in the state dir, the private ref's trees and messages, or the patches.
        let mut files = vec![];
        let mut stack = vec![scene.repo.join(".refine-loop")];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                if entry.file_type().unwrap().is_dir() {
                    stack.push(entry.path());
                } else {
                    files.push(entry.path());
                }
            }
        }
        for file in files {
            let bytes = std::fs::read(&file).unwrap();
            assert!(
                !String::from_utf8_lossy(&bytes).contains(secret),
                "{what}: {} holds the secret",
                file.display()
            );
        }
        let record = crate::support::git_in(
            scene.repo.path(),
            &["log", "--all", "--format=%B", "--name-only"],
        );
        assert!(!record.contains(secret), "{what}: the record holds it");
        assert!(!record.contains("harmless"), "{what}: {record}");
    }
}

/// Git lists no folder, so one a delegate makes and leaves empty, or whose files the rollback
/// removes, would outlive its rolled-back change: each made in its turn goes too. A folder that
/// was there before stays, empty or not.
#[test]
fn the_folders_a_rolled_back_change_made_go_with_it() {
    let scene = Scene::new(
        "mkdir -p emptydir/sub newdir keep/made deep/er && echo x > newdir/file.txt && \
         echo y > deep/er/f.txt && mkdir -p src/new && echo z > src/new/breaks-the-tests.txt",
    );
    std::fs::create_dir_all(scene.repo.join("keep/old")).unwrap();
    let output = scene.run();
    assert!(matches!(output.status.code(), Some(1 | 3)), "{output:?}");
    let report = scene.report();
    assert!(report.contains("- result: rolled back"), "{report}");
    for gone in ["emptydir", "newdir", "deep", "keep/made", "src/new"] {
        assert!(!scene.repo.join(gone).exists(), "{gone} is left:\n{report}");
    }
    assert!(scene.repo.join("keep/old").is_dir());
}
