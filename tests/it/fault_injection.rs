//! Fault injection: delegates that do what a delegate must not, or die doing it. After each, the
//! user's own work (dirty and untracked before the run) is byte- and mode-identical, what the
//! gate rejects is rolled back to the byte, and the delegate's report says what happened.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use crate::run_loop::json;
use crate::support::{Entry, Repo, live_members_of_group, tree_of};

const GATE: &str = r#"[[gate.check]]
name = "lint"
category = "lint"
run = "cat findings.txt; test ! -s findings.txt"
parser = "clippy"

[[gate.check]]
name = "tests"
category = "tests"
# The library must be as committed: any change to src/, or a file in new/, fails.
run = "git diff --quiet HEAD -- src && test -z \"$(git ls-files --others --exclude-standard -- src new)\""
"#;

const FINDINGS: &str = "src/lib.txt:1:1: error: one\nsrc/lib.txt:2:1: error: two\n";

/// A repository with a committed library, the user's work in progress on top, and a folder
/// outside it; the delegate fixes one lint finding and then does `fault`.
struct Scene {
    repo: Repo,
    outside: tempfile::TempDir,
}

impl Scene {
    fn new(fault: &str, idle_timeout: &str) -> Self {
        let repo = Repo::new();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(
            outside.path().join("secret.txt"),
            "outside the repository\n",
        )
        .unwrap();
        repo.write("findings.txt", FINDINGS);
        repo.write(".gitignore", "/.refine-loop\n*.log\n");
        repo.write("src/lib.txt", "library\nsecond line\n");
        repo.write("src/tool.sh", "#!/bin/sh\necho tool\n");
        std::fs::set_permissions(
            repo.join("src/tool.sh"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        std::fs::write(repo.join("src/data.bin"), [0u8, 159, 146, 150, 255, 10]).unwrap();
        repo.write("docs/guide.md", "the guide\n");
        std::os::unix::fs::symlink(outside.path(), repo.join("shared")).unwrap();
        let fault = fault.replace("$OUTSIDE", &outside.path().display().to_string());
        repo.write(
            "refine-loop.toml",
            &format!(
                "[loop]\n# The watch's own suite: with the kernel's confinement most of these\n# faults never happen (tests/it/confine.rs).\nconfine = \"off\"\n{GATE}\n[[delegate]]\ncategories = [\"lint\"]\nrun = '''sed -i 1d findings.txt; {fault}'''\nidle_timeout = \"{idle_timeout}\"\n"
            ),
        );
        repo.commit("library");
        // The user's own work in progress.
        repo.write("docs/guide.md", "the guide\nwith the user's edit\n");
        repo.write("scratch.txt", "user notes\n");
        std::fs::set_permissions(
            repo.join("scratch.txt"),
            std::fs::Permissions::from_mode(0o600),
        )
        .unwrap();
        repo.write("wip/draft.md", "a draft\n");
        Self { repo, outside }
    }

    fn user_work(&self) -> BTreeMap<PathBuf, Entry> {
        let mut tree = tree_of(self.repo.path(), &[".git", ".refine-loop"]);
        tree.retain(|path, _| {
            ["docs", "scratch.txt", "wip"]
                .iter()
                .any(|top| path.starts_with(top))
        });
        tree
    }

    fn library(&self) -> BTreeMap<PathBuf, Entry> {
        let mut tree = tree_of(self.repo.path(), &[".git", ".refine-loop"]);
        tree.retain(|path, _| path.starts_with("src") || path.starts_with("new"));
        tree
    }

    fn git_folder(&self) -> BTreeMap<PathBuf, Entry> {
        let mut tree = tree_of(
            &self.repo.join(".git"),
            &["objects", "refine-loop", "index", "logs"],
        );
        // The run's own record (its private ref) is the one thing it adds.
        tree.retain(|path, entry| {
            !matches!(entry, Entry::Folder { .. }) && !path.starts_with("refs/refine-loop")
        });
        tree
    }

    fn report(&self) -> String {
        std::fs::read_to_string(
            self.repo
                .join(".refine-loop/cycle-1/delegate-reports/fix-lint.md"),
        )
        .unwrap()
    }

    fn findings(&self) -> String {
        std::fs::read_to_string(self.repo.join("findings.txt")).unwrap()
    }
}

/// Runs one fault; checks that the user's work, the git folder and (when the gate or the watch
/// rejects the change) the library are as before, and that the report says `says`. Each fault
/// runs twice: with the kernel's watch on the tree, and with it off (every look a scan).
fn inject(fault: &str, says: &str, library_kept: bool) -> Scene {
    inject_with(fault, says, library_kept, "5s")
}

fn inject_with(fault: &str, says: &str, library_kept: bool, idle_timeout: &str) -> Scene {
    inject_once(fault, says, library_kept, idle_timeout, "off");
    inject_once(fault, says, library_kept, idle_timeout, "on")
}

fn inject_once(
    fault: &str,
    says: &str,
    library_kept: bool,
    idle_timeout: &str,
    watch: &str,
) -> Scene {
    let scene = Scene::new(fault, idle_timeout);
    let (work, library, git) = (scene.user_work(), scene.library(), scene.git_folder());
    let output = scene
        .repo
        .command(&["run", "--max-cycles", "1"])
        .env("REFINE_LOOP_WATCH", watch)
        .output()
        .unwrap();
    let fault = &format!("{fault} (watch {watch})");
    assert!(
        matches!(output.status.code(), Some(1 | 3)),
        "{fault}: {output:?}"
    );
    assert_eq!(scene.user_work(), work, "{fault}: the user's work changed");
    let changed: Vec<_> = scene
        .git_folder()
        .into_iter()
        .filter(|(path, entry)| git.get(path) != Some(entry))
        .map(|(path, _)| path)
        .chain(
            git.keys()
                .filter(|p| !scene.git_folder().contains_key(*p))
                .cloned(),
        )
        .collect();
    assert!(
        changed.is_empty(),
        "{fault}: the git folder changed: {changed:?}"
    );
    if !library_kept {
        assert_eq!(scene.library(), library, "{fault}: not rolled back");
        assert_eq!(scene.findings(), FINDINGS, "{fault}: not rolled back");
    }
    let report = scene.report();
    assert!(
        report.contains(says),
        "{fault}: the report lacks {says:?}:\n{report}"
    );
    json(&scene.repo, "trend.json");
    assert!(!scene.repo.join(".git/refine-loop/snapshots").exists());
    scene
}

#[test]
fn a_delegate_that_edits_the_users_work_has_that_edit_undone_and_the_rest_judged() {
    let scene = inject(
        "echo clobbered > docs/guide.md; chmod 644 scratch.txt; echo more >> scratch.txt; rm -r wip",
        "which held the user's own work before the run: put back as it was",
        true,
    );
    // Its lint fix was judged on its own, and kept.
    assert_eq!(scene.findings(), "src/lib.txt:2:1: error: two\n");
    assert!(scene.report().contains("- result: kept"));
}

#[test]
fn deleting_tracked_files_is_rolled_back() {
    inject("rm -r src", "- result: rolled back", false);
}

#[test]
fn files_created_in_new_folders_are_removed_with_their_folders() {
    let scene = inject(
        "mkdir -p new/deep/er src/sub; echo x > new/deep/er/file; echo y > src/sub/extra.txt",
        "- result: rolled back",
        false,
    );
    assert!(!scene.repo.join("new").exists());
    assert!(!scene.repo.join("src/sub").exists());
}

#[test]
fn a_mode_change_is_rolled_back() {
    inject(
        "chmod -x src/tool.sh; chmod +x src/lib.txt",
        "mode 644 → file",
        false,
    );
}

#[test]
fn the_modes_of_the_top_and_of_the_users_folders_are_put_back() {
    let mode =
        |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o7777;
    let scene = inject(
        "chmod 700 .; chmod 777 wip",
        "changed the mode of the tree's top folder (0700",
        true,
    );
    assert_eq!(mode(scene.repo.path()), 0o755);
    assert!(
        scene
            .report()
            .contains("changed the mode of the folder `wip`")
    );
}

/// Who owns what: git keeps no owner, so a `chown` is in no diff. A delegate run by root that
/// gives the tree's top, the library, the user's files and a folder of them to other users has
/// every owner put back, and the report says so; its fix is judged on its own.
#[test]
fn the_owners_a_delegate_changed_are_put_back() {
    use std::os::unix::fs::MetadataExt;
    let root = nix::unistd::geteuid().is_root();
    let owners = |scene: &Scene| -> BTreeMap<PathBuf, (u32, u32)> {
        tree_of(scene.repo.path(), &[".git", ".refine-loop"])
            .into_keys()
            .chain([PathBuf::new()])
            .map(|path| {
                let meta = std::fs::symlink_metadata(scene.repo.path().join(&path)).unwrap();
                (path, (meta.uid(), meta.gid()))
            })
            .collect()
    };
    let fault = "chown 4242:4242 . src src/lib.txt src/tool.sh docs/guide.md scratch.txt; \
                 chown -R 4343:4343 wip";
    let expected = BTreeMap::from_iter(
        [PathBuf::new(), "src/lib.txt".into(), "wip/draft.md".into()].map(|path| {
            (
                path,
                (
                    nix::unistd::geteuid().as_raw(),
                    nix::unistd::getegid().as_raw(),
                ),
            )
        }),
    );
    // Only root gives a file away; anyone else's chown fails, and there is nothing to put back.
    let says = if root {
        "changed the owner of the tree's top folder (4242:4242; it was"
    } else {
        "- result: kept"
    };
    let scene = inject(fault, says, true);
    let now = owners(&scene);
    for (path, owner) in &expected {
        assert_eq!(now.get(path), Some(owner), "{}", path.display());
    }
    assert!(
        now.values().all(|owner| !matches!(owner.0, 4242 | 4343)),
        "{now:?}"
    );
    if root {
        let report = scene.report();
        for path in [
            "src/lib.txt",
            "docs/guide.md",
            "scratch.txt",
            "wip",
            "wip/draft.md",
        ] {
            assert!(
                report.contains(&format!("changed the owner of `{path}`")),
                "{path}:\n{report}"
            );
        }
        assert!(report.contains("- result: kept"), "{report}");
    }
}

#[test]
fn a_rename_is_rolled_back() {
    inject(
        "mv src/lib.txt src/renamed.txt",
        "`src/renamed.txt`: absent →",
        false,
    );
}

#[test]
fn a_symlink_out_of_the_repository_is_hostile() {
    let scene = inject(
        "rm src/lib.txt; ln -s $OUTSIDE/secret.txt src/lib.txt",
        "a symlink out of the repository",
        false,
    );
    assert_eq!(
        std::fs::read_to_string(scene.outside.path().join("secret.txt")).unwrap(),
        "outside the repository\n"
    );
}

#[test]
fn writing_into_the_git_folder_is_put_back_and_hostile() {
    let scene = inject(
        "printf '#!/bin/sh\\nexit 0\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; \
         git config user.name mallory; echo staged >> src/lib.txt; git add src/lib.txt",
        "wrote into the git folder",
        false,
    );
    // The staged edit did not hide from the scan: the index holds the committed library again.
    let staged = std::process::Command::new("git")
        .args(["diff", "--cached", "--quiet"])
        .current_dir(scene.repo.path())
        .status()
        .unwrap();
    assert!(staged.success());
}

#[test]
fn a_delegate_that_crashes_halfway_through_a_write_is_rolled_back() {
    inject(
        "printf 'half a li' > src/lib.txt; head -c 4096 /dev/urandom > src/data.bin; kill -9 $$",
        "killed by signal 9",
        false,
    );
}

#[test]
fn a_hanging_delegate_is_stopped_and_rolled_back() {
    let scene = inject_with(
        "echo $$ > $OUTSIDE/pid; echo partial >> src/lib.txt; sleep 300",
        "idle timeout",
        false,
        "1s",
    );
    let pid: i32 = std::fs::read_to_string(scene.outside.path().join("pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(live_members_of_group(pid), Vec::<i32>::new());
}

#[test]
fn a_background_writer_left_behind_is_stopped_before_the_rollback() {
    let scene = inject(
        "echo $$ > $OUTSIDE/pid; (while true; do echo more >> src/lib.txt; sleep 0.01; done) & sleep 0.2",
        "- result: rolled back",
        false,
    );
    let pid: i32 = std::fs::read_to_string(scene.outside.path().join("pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(live_members_of_group(pid), Vec::<i32>::new());
    let library = scene.library();
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(scene.library(), library, "something still writes");
}

#[test]
fn writing_the_loops_own_files_in_the_state_dir_is_hostile_and_recorded() {
    inject(
        "echo junk > \"$REFINE_LOOP_STATE_DIR/cycle-0/gate-summary.json\"; echo x > \"$REFINE_LOOP_STATE_DIR/stray.txt\"",
        "changed the loop's own file",
        false,
    );
}

#[test]
fn a_file_put_where_the_users_folder_was_goes_before_the_users_work_comes_back() {
    inject(
        "rm -rf wip; echo x > wip",
        "which held the user's own work before the run: put back as it was",
        true,
    );
}

#[test]
fn moving_the_users_work_elsewhere_is_undone_and_never_recorded() {
    let scene = inject(
        "mv docs documentation",
        "carried the user's own work in `docs/guide.md` to `documentation/guide.md`",
        true,
    );
    // The moved folder itself stays behind, empty: git cannot see it, and it was not made now.
    assert!(!scene.repo.join("documentation/guide.md").exists());
    let patch = std::fs::read_to_string(scene.repo.join(".refine-loop/refine-loop.patch")).unwrap();
    assert!(!patch.contains("the user's edit"), "{patch}");
}

#[test]
fn folder_chains_beyond_gits_reach_are_set_aside_and_the_users_work_put_back() {
    // Chains the git library cannot walk, made beneath a folder of the library with the user's
    // draft hidden at the bottom: too deep (its listing fails), too long (it passes them by).
    for (levels, name) in [("150", "d"), ("20", &"x".repeat(250) as &str)] {
        let fault = format!(
            "top=$PWD; (cd src && for i in $(seq {levels}); do mkdir {name} && cd {name}; done; \
             echo 'rm -rf ~' > planted.sh; mv \"$top/wip/draft.md\" .)"
        );
        let scene = inject(
            &fault,
            "which held the user's own work before the run: put back as it was",
            true,
        );
        let planted = std::process::Command::new("find")
            // Set aside in the git folder, out of the gate's reach; nowhere in the tree.
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
            .current_dir(scene.repo.path())
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&planted.stdout), "", "{levels}");
        assert!(!scene.repo.join("src").join(name).exists(), "{levels}");
        let last =
            std::fs::read_to_string(scene.repo.join(".refine-loop/REFINE-LOOP-FINAL.md")).unwrap();
        assert!(last.contains("beyond git's reach"), "{levels}: {last}");
    }
}

#[test]
fn staged_work_is_the_users_too() {
    let scene = Scene::new("echo more >> docs/guide.md", "5s");
    scene.repo.git(&["add", "docs/guide.md"]);
    let work = scene.user_work();
    let output = scene.repo.run(&["run", "--max-cycles", "1"]);
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    assert_eq!(scene.user_work(), work);
    assert!(
        scene
            .report()
            .contains("`docs/guide.md`, which held the user's own work")
    );
    let patch = std::fs::read_to_string(scene.repo.join(".refine-loop/refine-loop.patch")).unwrap();
    assert!(!patch.contains("guide"), "{patch}");
}

/// A local edit to a tracked file hidden with `--assume-unchanged` or `--skip-worktree` (local
/// config kept out of `git status`) is the user's work too, though git shows it clean: a
/// delegate that overwrites it has it put back, whether its change is kept or rolled back.
#[test]
fn edits_git_is_told_to_ignore_are_the_users_too() {
    // (what the delegate does after its fix: only the overwrite (kept), or worse too)
    let cases = [
        (
            "echo HOSTILE > docs/guide.md; echo HOSTILE > src/tool.sh",
            true,
        ),
        (
            "echo HOSTILE > docs/guide.md; echo HOSTILE > src/tool.sh; echo worse > src/lib.txt",
            false,
        ),
    ];
    for (fault, kept) in cases {
        let scene = Scene::new(fault, "5s");
        // Committed, then edited and hidden from git's status.
        scene.repo.commit("the user's guide");
        scene
            .repo
            .write("docs/guide.md", "the guide\nthe user's hidden edit\n");
        scene
            .repo
            .git(&["update-index", "--assume-unchanged", "docs/guide.md"]);
        scene
            .repo
            .write("src/tool.sh", "#!/bin/sh\necho the user's local tool\n");
        scene
            .repo
            .git(&["update-index", "--skip-worktree", "src/tool.sh"]);
        let status = crate::support::git_in(scene.repo.path(), &["status", "--porcelain"]);
        assert_eq!(status, "", "{fault}: git shows the edits");
        let output = scene.repo.run(&["run", "--max-cycles", "1"]);
        assert!(
            matches!(output.status.code(), Some(1 | 3)),
            "{fault}: {output:?}"
        );
        assert_eq!(
            std::fs::read_to_string(scene.repo.join("docs/guide.md")).unwrap(),
            "the guide\nthe user's hidden edit\n",
            "{fault}"
        );
        assert_eq!(
            std::fs::read_to_string(scene.repo.join("src/tool.sh")).unwrap(),
            "#!/bin/sh\necho the user's local tool\n",
            "{fault}"
        );
        let report = scene.report();
        assert!(
            report.contains("`docs/guide.md`, which held the user's own work"),
            "{fault}: {report}"
        );
        assert_eq!(report.contains("- result: kept"), kept, "{fault}: {report}");
    }
}

/// Git lists no folder, so the user's empty ones (a `var/run` a tool expects, mode 700) are
/// theirs to keep though no status shows them: a delegate that removes them has them made
/// again, with their modes, whether its change is kept or rolled back.
#[test]
fn the_users_empty_folders_come_back() {
    use std::os::unix::fs::PermissionsExt;
    // (what the delegate does after its fix, kept)
    let cases = [
        ("rm -rf empty var", true),
        ("rm -rf empty var; echo worse > src/lib.txt", false),
    ];
    for (fault, kept) in cases {
        let scene = Scene::new(fault, "5s");
        std::fs::create_dir_all(scene.repo.join("empty/inner")).unwrap();
        std::fs::create_dir_all(scene.repo.join("var/run")).unwrap();
        std::fs::set_permissions(
            scene.repo.join("var/run"),
            std::fs::Permissions::from_mode(0o700),
        )
        .unwrap();
        let output = scene.repo.run(&["run", "--max-cycles", "1"]);
        assert!(
            matches!(output.status.code(), Some(1 | 3)),
            "{fault}: {output:?}"
        );
        assert!(scene.repo.join("empty/inner").is_dir(), "{fault}");
        let mode = std::fs::metadata(scene.repo.join("var/run"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o7777, 0o700, "{fault}");
        let report = scene.report();
        assert_eq!(report.contains("- result: kept"), kept, "{fault}: {report}");
        assert!(
            report.contains("`var/run`, which held the user's own work"),
            "{fault}: {report}"
        );
    }
}

#[test]
fn a_repository_made_inside_the_tree_is_removed_with_the_rest() {
    let scene = inject(
        "git init -q new/repo; echo x > new/repo/file",
        "- result: rolled back",
        false,
    );
    assert!(!scene.repo.join("new").exists());
}

#[test]
fn a_file_turned_into_a_folder_of_ignored_output_is_put_back() {
    inject(
        "rm src/lib.txt; mkdir src/lib.txt; echo cache > src/lib.txt/build.log",
        "- result: rolled back",
        false,
    );
}

#[test]
fn hiding_an_edit_behind_skip_worktree_does_not_hide_it() {
    inject(
        "git update-index --skip-worktree src/lib.txt; echo hidden >> src/lib.txt",
        "wrote into the git folder (`.git/index`): put back",
        false,
    );
}

#[test]
fn writing_through_a_symlink_to_a_folder_outside_is_hostile() {
    let scene = inject(
        "echo changed >> shared/secret.txt",
        "wrote outside the repository through the symlink `shared`",
        false,
    );
    // Outside the repository is not the loop's to put back; the report says what happened.
    assert!(
        std::fs::read_to_string(scene.outside.path().join("secret.txt"))
            .unwrap()
            .ends_with("changed\n")
    );
}

#[test]
fn a_tracked_or_symlinked_state_dir_is_refused_before_anything_is_written() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("keep.txt"), "someone else's\n").unwrap();
    let repo = Repo::new();
    repo.write("findings.txt", "src/lib.rs:1:1: error: one\n");
    repo.write("docs/guide.md", "the user's guide\n");
    repo.write(
        "refine-loop.toml",
        &format!("{GATE}\n[[delegate]]\nrun = \"rm -f findings.txt\"\n"),
    );
    // A committed state dir that is a link out of the repository.
    std::os::unix::fs::symlink(outside.path(), repo.join(".refine-loop")).unwrap();
    repo.commit("a linked state dir");
    let before = tree_of(repo.path(), &[]);
    let outside_before = tree_of(outside.path(), &[]);
    // (arguments, what the refusal names)
    let cases: [(&[&str], &str); 4] = [
        (&["run"], "symbolic link"),
        (&["check"], "symbolic link"),
        (&["run", "--state-dir", "docs"], "tracks (docs/guide.md)"),
        (&["check", "--state-dir", "docs"], "tracks (docs/guide.md)"),
    ];
    for (args, reason) in cases {
        let output = repo.run(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(reason), "{args:?}: {stderr}");
        assert_eq!(tree_of(repo.path(), &[]), before, "{args:?}");
        assert_eq!(tree_of(outside.path(), &[]), outside_before, "{args:?}");
    }
}

#[test]
fn a_second_run_or_check_on_a_state_dir_in_use_is_refused_and_touches_nothing() {
    let repo = Repo::new();
    repo.write("findings.txt", "src/lib.rs:1:1: error: one\n");
    repo.write(".gitignore", "/.refine-loop\n/started\n/release\n");
    // The delegate says it started, then waits to be released: the first run holds the dir.
    repo.write(
        "refine-loop.toml",
        &format!(
            "{GATE}\n[[delegate]]\nrun = \"touch started; while [ ! -e release ]; do sleep 0.05; done; rm -f findings.txt\"\n"
        ),
    );
    repo.commit("a slow delegate");
    let first = repo
        .command(&["run", "--max-cycles", "1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    crate::support::wait_for(&repo.join("started"), "the first run's delegate started");
    let state = repo.join(".refine-loop");
    let before = tree_of(&state, &[]);
    for args in [&["run", "--max-cycles", "1"][..], &["check"][..]] {
        let second = repo.run(args);
        assert_eq!(second.status.code(), Some(4), "{args:?}: {second:?}");
        let stderr = String::from_utf8_lossy(&second.stderr);
        assert!(stderr.contains(".lock"), "{args:?}: {stderr}");
        assert_eq!(
            tree_of(&state, &[]),
            before,
            "{args:?}: the first run's files"
        );
    }
    std::fs::write(repo.join("release"), "").unwrap();
    let first = first.wait_with_output().unwrap();
    assert_eq!(first.status.code(), Some(0), "{first:?}");
    assert!(!repo.join("findings.txt").exists());
}
