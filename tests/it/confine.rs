//! Containment by the kernel: a command delegate runs under Landlock and may write only in the
//! work tree (its top included), its temp folder and the caches; what it tries elsewhere
//! (outside the repository, `.git`, the state dir, a hard link from outside) the kernel refuses,
//! and nothing there changes. With `confine = "off"` the same delegate is caught by the watch
//! and rolled back. These tests need a kernel with Landlock and a mount namespace for the
//! delegate (root): without them they fail, never skip.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::run_loop::json;
use crate::support::{Repo, tree_of};

const GATE: &str = r#"[[gate.check]]
name = "lint"
category = "lint"
run = "mkdir -p .tool_cache; cat src/findings.txt; test ! -s src/findings.txt"
parser = "clippy"
"#;

/// The fix (empty the findings in place), then every write a delegate must not make, each
/// followed by a marker so the log shows which were refused.
const HOSTILE: &str = "\
: > src/findings.txt; \
echo pwned > \"$OUTSIDE/new.txt\" && echo WROTE-OUTSIDE; \
echo pwned >> \"$OUTSIDE/secret.txt\" && echo APPENDED-OUTSIDE; \
printf '#!/bin/sh\\nexit 0\\n' > .git/hooks/pre-commit && echo WROTE-HOOK; \
echo stray > \"$REFINE_LOOP_STATE_DIR/stray.txt\" && echo WROTE-STATE; \
echo junk > \"$REFINE_LOOP_STATE_DIR/run.json\" && echo CLOBBERED-STATE; \
ln \"$OUTSIDE/secret.txt\" src/linked.txt && echo LINKED; \
echo fixed > \"$REFINE_LOOP_VERDICT_FILE\"; \
true";

/// A repository whose gate fails until `src/findings.txt` is empty, a folder outside it, and a
/// delegate running `script` (`$OUTSIDE` names the folder outside).
struct Scene {
    repo: Repo,
    outside: tempfile::TempDir,
}

impl Scene {
    fn new(confine: &str, script: &str) -> Self {
        let repo = Repo::new();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "outside\n").unwrap();
        repo.write(".gitignore", "/.refine-loop\n/.tool_cache\n");
        repo.write("src/findings.txt", "src/lib.txt:1:1: error: one\n");
        repo.write("src/lib.txt", "library\n");
        repo.write(
            "refine-loop.toml",
            &format!(
                "[loop]\nmax_cycles = 1\n{confine}\n{GATE}\n[[delegate]]\ncategories = [\"lint\"]\n\
                 run = '''{script}'''\nenv = {{ OUTSIDE = \"{}\" }}\n",
                outside.path().display()
            ),
        );
        repo.commit("library");
        Self { repo, outside }
    }

    /// What the delegate printed, from its report.
    fn delegate_output(&self) -> String {
        let report = self.delegate_report();
        report
            .split_once("## Its output")
            .map_or(String::new(), |(_, output)| output.to_string())
    }

    fn delegate_report(&self) -> String {
        std::fs::read_to_string(
            self.repo
                .join(".refine-loop/cycle-1/delegate-reports/fix-lint.md"),
        )
        .unwrap()
    }

    fn confinement(&self) -> serde_json::Value {
        json(&self.repo, "run.json")["confinement"].clone()
    }
}

fn hooks(repo: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(repo.join(".git/hooks"))
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn the_kernel_refuses_every_write_outside_the_work_tree() {
    // The folder outside is a temp folder: only the tree is writable here.
    let scene = Scene::new("writable = []", HOSTILE);
    let hooks_before = hooks(scene.repo.path());
    let outside_before = tree_of(scene.outside.path(), &[]);
    let config_before = std::fs::read(scene.repo.join(".git/config")).unwrap();
    let output = scene.repo.run(&["run"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let report = scene.delegate_report();
    assert_eq!(output.status.code(), Some(0), "{stderr}\n{report}");
    assert_eq!(
        scene.confinement()["state"],
        "enforced",
        "this test needs a kernel with Landlock ABI 5 or later: {}",
        scene.confinement()
    );
    assert!(scene.confinement()["abi"].as_u64().unwrap() >= 5);
    for marker in [
        "WROTE-OUTSIDE",
        "APPENDED-OUTSIDE",
        "WROTE-HOOK",
        "WROTE-STATE",
        "CLOBBERED-STATE",
        "LINKED",
    ] {
        assert!(
            !scene.delegate_output().contains(marker),
            "{marker} in the log:\n{report}"
        );
    }
    // `.git` and the state dir are read-only binds in the delegate's mount namespace; outside
    // the tree and the folders it may write, every mount is read-only there too (and Landlock
    // refuses beneath them).
    assert_eq!(
        scene.confinement()["whole_tree"],
        true,
        "{}",
        scene.confinement()
    );
    assert_eq!(
        (
            report.matches("Permission denied").count(),
            report.matches("Read-only file system").count()
        ),
        (0, 5),
        "the kernel's refusals in the log:\n{report}"
    );
    // The report says what the kernel refused, and how to allow what the config can allow.
    assert!(
        report.contains(
            "new.txt` (read-only): outside the folders a delegate may write: add its \
             folder to `[loop] writable` to allow it"
        ),
        "{report}"
    );
    assert!(
        report.contains(".git/hooks/pre-commit` (read-only): in `"),
        "{report}"
    );
    // A link across folders that the kernel refuses reads as one across file systems.
    assert!(report.contains("Invalid cross-device link"), "{report}");
    // Nothing outside, in .git or in the state dir changed; the fix itself was kept.
    assert_eq!(tree_of(scene.outside.path(), &[]), outside_before);
    assert_eq!(hooks(scene.repo.path()), hooks_before);
    assert_eq!(
        std::fs::read(scene.repo.join(".git/config")).unwrap(),
        config_before
    );
    assert!(!scene.repo.join(".refine-loop/stray.txt").exists());
    assert_eq!(scene.confinement()["state"], "enforced", "run.json intact");
    assert!(!scene.repo.join("src/linked.txt").exists());
    assert_eq!(
        std::fs::read_to_string(scene.repo.join("src/findings.txt")).unwrap(),
        ""
    );
    // Its verdict was its own to write.
    assert!(report.contains("fixed"), "{report}");
    let final_report =
        std::fs::read_to_string(scene.repo.join(".refine-loop/REFINE-LOOP-FINAL.md")).unwrap();
    assert!(
        final_report.contains("- confinement: enforced (Landlock ABI"),
        "{final_report}"
    );
    assert!(
        final_report.contains("the kernel refused `"),
        "{final_report}"
    );
}

#[test]
fn with_confinement_off_the_watch_catches_the_same_delegate_and_rolls_it_back() {
    let scene = Scene::new("confine = \"off\"\nwritable = []", HOSTILE);
    let hooks_before = hooks(scene.repo.path());
    let output = scene.repo.run(&["run"]);
    let report = scene.delegate_report();
    assert_eq!(
        output.status.code(),
        Some(3),
        "{}\n{report}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(scene.delegate_output().contains("WROTE-HOOK"), "{report}");
    assert!(report.contains("wrote into the git folder"), "{report}");
    assert!(report.contains("- result: rolled back"), "{report}");
    // Rolled back: the fix, the hard link and the hook are gone.
    assert_eq!(hooks(scene.repo.path()), hooks_before);
    assert!(!scene.repo.join("src/linked.txt").exists());
    assert_eq!(
        std::fs::read_to_string(scene.repo.join("src/findings.txt")).unwrap(),
        "src/lib.txt:1:1: error: one\n"
    );
    // What the watch cannot see: outside the repository the writes went through.
    assert!(scene.outside.path().join("new.txt").exists());
    let final_report =
        std::fs::read_to_string(scene.repo.join(".refine-loop/REFINE-LOOP-FINAL.md")).unwrap();
    assert!(
        final_report.contains("- confinement: off"),
        "{final_report}"
    );
}

#[test]
fn a_confined_delegate_can_do_what_fixers_do() {
    let script = "\
        : > src/findings.txt; \
        sed -i 's/library/a library/' src/lib.txt && echo RENAMED-OVER; \
        mkdir -p src/new/deeper && echo new > src/new/deeper/file.txt && echo CREATED; \
        echo more >> README.md && echo IN-PLACE; \
        echo cache > .tool_cache/entry && echo CACHED; \
        t=$(mktemp) && echo temp > \"$t\" && echo TEMP-IN-$TMPDIR; \
        echo to-stderr > /dev/stderr && echo STDERR; \
        echo gone > /dev/null && echo NULL; \
        echo new > NEW.txt && echo TOP-LEVEL-CREATED; \
        sed -i 's/Read/read/' README.md && echo TOP-LEVEL-SED; \
        echo x > .tmp-notes && mv .tmp-notes NOTES.md && rm NOTES.md && echo TOP-LEVEL-RENAMED; \
        true";
    let scene = Scene::new("confine = \"required\"", script);
    let output = scene.repo.run(&["run"]);
    let report = scene.delegate_report();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}\n{report}",
        String::from_utf8_lossy(&output.stderr)
    );
    for marker in [
        "RENAMED-OVER",
        "CREATED",
        "IN-PLACE",
        "CACHED",
        "TEMP-IN-",
        "STDERR",
        "NULL",
        "TOP-LEVEL-CREATED",
        "TOP-LEVEL-SED",
        "TOP-LEVEL-RENAMED",
    ] {
        assert!(
            scene.delegate_output().contains(marker),
            "{marker} not in the log:\n{report}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(scene.repo.join("src/lib.txt")).unwrap(),
        "a library\n"
    );
    assert_eq!(
        std::fs::read_to_string(scene.repo.join("src/new/deeper/file.txt")).unwrap(),
        "new\n"
    );
    assert_eq!(
        std::fs::read_to_string(scene.repo.join("NEW.txt")).unwrap(),
        "new\n"
    );
    assert_eq!(scene.confinement()["state"], "enforced");
    assert_eq!(scene.confinement()["whole_tree"], true);
}
#[test]
fn a_fixer_at_the_top_of_the_tree_is_kept_and_its_write_into_git_refused() {
    fixer_at_the_top(false);
}

/// The same, with the loop run by a user without privileges (a CI runner's user): the launcher
/// makes the mount namespace in a user namespace of its own.
#[test]
fn without_privileges_a_fixer_at_the_top_of_the_tree_is_kept_and_git_sealed() {
    fixer_at_the_top(true);
}

/// A delegate that runs `sed -i` on a top-level file and creates a new one is kept, and its
/// write into `.git/config` refused; as a user without privileges when `unprivileged` (when the
/// tests run as root, the repository is given to `nobody` and the loop runs as `nobody`).
fn fixer_at_the_top(unprivileged: bool) {
    // sed -i writes a temporary file beside the one it edits and renames it over: at the top of
    // the tree that needs the right to create and rename there.
    let script = "\
        sed -i 's/one/none/' findings.txt && : > findings.txt && echo SED-AT-THE-TOP; \
        echo '- lint fixed' > CHANGES.md && echo NEW-AT-THE-TOP; \
        echo '[alias]' >> .git/config && echo WROTE-GIT-CONFIG; \
        chmod 600 \"$OUTSIDE/own.txt\" && echo CHMOD-OUTSIDE; \
        touch -d 2001-01-01 \"$OUTSIDE/own.txt\" && echo TOUCH-OUTSIDE; \
        echo fixed > \"$REFINE_LOOP_VERDICT_FILE\"; \
        true";
    // A file outside the tree that the loop's user owns, in a folder the delegate may not write
    // (`writable = []`: only the tree and its own temp folder): Landlock does not govern its
    // mode or times, the read-only mounts around the delegate do.
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("own.txt"), "outside\n").unwrap();
    std::fs::set_permissions(
        outside.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    if unprivileged && nix::unistd::geteuid().is_root() {
        std::os::unix::fs::chown(outside.path().join("own.txt"), Some(65534), Some(65534)).unwrap();
    }
    let facts = || {
        let metadata = std::fs::metadata(outside.path().join("own.txt")).unwrap();
        (metadata.mode(), metadata.mtime(), metadata.mtime_nsec())
    };
    let outside_before = facts();
    let repo = Repo::new();
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write("findings.txt", "setup.py:1:1: error: one\n");
    repo.write("setup.py", "print('one')\n");
    repo.write(
        "refine-loop.toml",
        &format!(
            "[loop]\nmax_cycles = 1\nconfine = \"required\"\nwritable = []\n\n[[gate.check]]\nname = \"lint\"\n\
             category = \"lint\"\nrun = \"cat findings.txt; test ! -s findings.txt\"\n\
             parser = \"clippy\"\n\n[[delegate]]\ncategories = [\"lint\"]\nrun = '''{script}'''\n"
        ),
    );
    repo.commit("a project at the top of its tree");
    let config_before = std::fs::read(repo.join(".git/config")).unwrap();
    let mut command = repo.command(&["run"]);
    command.env("OUTSIDE", outside.path());
    if unprivileged {
        unprivileged_user(&repo, &mut command);
    }
    let output = command.output().unwrap();
    let report =
        std::fs::read_to_string(repo.join(".refine-loop/cycle-1/delegate-reports/fix-lint.md"))
            .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}\n{report}",
        String::from_utf8_lossy(&output.stderr)
    );
    let printed = report.split_once("## Its output").unwrap().1;
    assert!(printed.contains("SED-AT-THE-TOP"), "{report}");
    assert!(printed.contains("NEW-AT-THE-TOP"), "{report}");
    assert!(!printed.contains("WROTE-GIT-CONFIG"), "{report}");
    assert!(!printed.contains("CHMOD-OUTSIDE"), "{report}");
    assert!(!printed.contains("TOUCH-OUTSIDE"), "{report}");
    assert_eq!(facts(), outside_before);
    assert!(
        report.contains(".git/config: Read-only file system"),
        "{report}"
    );
    assert!(report.contains("- result: kept"), "{report}");
    assert_eq!(
        std::fs::read(repo.join(".git/config")).unwrap(),
        config_before
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("findings.txt")).unwrap(),
        ""
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("CHANGES.md")).unwrap(),
        "- lint fixed\n"
    );
    let run = json(&repo, "run.json");
    let abi = run["confinement"]["abi"].clone();
    assert_eq!(
        run["confinement"],
        serde_json::json!({"state": "enforced", "abi": abi, "whole_tree": true, "signals": "landlock"}),
        "{run}"
    );
}

/// Runs `command` as a user without privileges: as `nobody`, owning the repository, when the
/// tests run as root; as the tests' own user otherwise.
fn unprivileged_user(repo: &Repo, command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    if !nix::unistd::geteuid().is_root() {
        return;
    }
    const NOBODY: u32 = 65534;
    let status = std::process::Command::new("chown")
        .args(["-R", &format!("{NOBODY}:{NOBODY}")])
        .arg(repo.path())
        .status()
        .unwrap();
    assert!(status.success());
    command.uid(NOBODY).gid(NOBODY).env("HOME", repo.path());
}

#[test]
fn a_delegates_own_files_are_bounded_and_redacted_in_the_state_dir() {
    // A 1 GiB sparse verdict, and a report that holds a secret.
    let script = "\
        : > src/findings.txt; \
        echo fixed > \"$REFINE_LOOP_VERDICT_FILE\"; \
        truncate -s 1G \"$REFINE_LOOP_VERDICT_FILE\"; \
        echo \"deployed with $DEPLOY_TOKEN\" > \"$REFINE_LOOP_REPORT_FILE\"; \
        true";
    let scene = Scene::new("writable = []", script);
    let secret = "tok-4f1c9e2a7b6d";
    let output = scene
        .repo
        .command(&["run"])
        .env("DEPLOY_TOKEN", secret)
        .output()
        .unwrap();
    let report = scene.delegate_report();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}\n{report}",
        String::from_utf8_lossy(&output.stderr)
    );
    let reports = scene.repo.join(".refine-loop/cycle-1/delegate-reports");
    let verdict = std::fs::metadata(reports.join("fix-lint.verdict")).unwrap();
    assert!(verdict.len() <= 4 * 1024 * 1024, "{} bytes", verdict.len());
    assert!(
        report.contains("- its own file `fix-lint.verdict`: 1073741824 bytes, cut to the first"),
        "{report}"
    );
    // Too long to be a verdict: not read (the change is judged by the gate all the same).
    assert!(report.contains("longer than 65536 bytes"), "{report}");
    assert!(report.contains("- result: kept"), "{report}");
    // The secret is nowhere in the state dir CI uploads.
    for (path, entry) in tree_of(&scene.repo.join(".refine-loop"), &[]) {
        if let crate::support::Entry::File { bytes, .. } = entry {
            assert!(
                !String::from_utf8_lossy(&bytes).contains(secret),
                "{} holds the secret",
                path.display()
            );
        }
    }
}

#[test]
fn a_delegate_cannot_write_its_prompt_through_its_stdin() {
    // Its stdin is the prompt: were it the file in the state dir, opened before the seal was
    // made, reopening it for writing through /proc would reach the file beneath the seal. (It
    // may write its own copy.)
    let script = "\
        : > src/findings.txt; \
        echo hacked > /proc/self/fd/0 && echo WROTE-PROMPT; \
        echo hacked >> /dev/stdin && echo APPENDED-PROMPT; \
        true";
    for unprivileged in [false, true] {
        let scene = Scene::new("confine = \"required\"", script);
        let config = std::fs::read_to_string(scene.repo.join("refine-loop.toml")).unwrap();
        scene.repo.write(
            "refine-loop.toml",
            &config.replace("[[delegate]]\n", "[[delegate]]\nstdin = \"prompt\"\n"),
        );
        scene.repo.commit("the prompt on stdin");
        let mut command = scene.repo.command(&["run"]);
        if unprivileged {
            unprivileged_user(&scene.repo, &mut command);
        }
        let output = command.output().unwrap();
        assert!(
            output.status.code().is_some(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let prompt = std::fs::read_to_string(
            scene
                .repo
                .join(".refine-loop/cycle-1/delegate-reports/fix-lint.prompt.md"),
        )
        .unwrap();
        assert!(prompt.starts_with("# Fix the `lint`"), "{prompt}");
        assert!(!prompt.contains("hacked"), "{prompt}");
    }
}

#[test]
fn an_edit_through_a_hard_link_under_another_name_is_seen_and_undone() {
    // A name in an ignored folder, or in its temp folder, removed in the same turn: an edit made
    // through it reaches the tracked file all the same. The change makes the gate worse: all of
    // it goes.
    let script = "\
        echo 'src/lib.txt:2:1: error: two' >> src/findings.txt; \
        ln src/lib.txt .tool_cache/l && printf 'evil\\n' >> .tool_cache/l; rm -f .tool_cache/l; \
        ln src/lib.txt \"$TMPDIR/l\" && printf 'evil2\\n' >> \"$TMPDIR/l\"; rm -f \"$TMPDIR/l\"; \
        true";
    for unprivileged in [false, true] {
        let scene = Scene::new("", script);
        scene.repo.write(".tool_cache/keep", "");
        let mut command = scene.repo.command(&["run"]);
        if unprivileged {
            unprivileged_user(&scene.repo, &mut command);
        }
        let output = command.output().unwrap();
        let report = scene.delegate_report();
        assert!(
            output.status.code().is_some(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        // Where the ignored folder is the delegate's own layer, the kernel refuses the link
        // (a mount of its own); elsewhere the edit is made, seen and undone.
        assert!(
            report.contains("- `src/lib.txt`: file")
                || report.contains("Invalid cross-device link"),
            "{report}"
        );
        assert!(report.contains("- result: rolled back"), "{report}");
        assert_eq!(
            std::fs::read_to_string(scene.repo.join("src/lib.txt")).unwrap(),
            "library\n",
            "{report}"
        );
    }
}

#[test]
fn files_hidden_behind_ignore_rules_outside_the_tree_are_rolled_back() {
    // The user's git config names an excludes file in a folder a delegate may write (~/.cache),
    // directly or in a config it includes there, through a relative include in an include; the
    // delegate hides a file behind it, and another behind `.git/info/exclude`, rewrites the
    // included config, and makes the gate worse: all of it goes, and the rule files hold what
    // they held.
    let script = "\
        echo hidden.txt >> \"$HOME/.cache/git-ignore\"; echo planted > hidden.txt; \
        echo hidden2.txt >> .git/info/exclude; echo planted > hidden2.txt; \
        if [ -e \"$HOME/.cache/git/nested.inc\" ]; then \
            echo '[core] attributesFile = /tmp/x' >> \"$HOME/.cache/git/nested.inc\"; fi; \
        echo 'src/lib.txt:2:1: error: two' >> src/findings.txt; \
        true";
    for (layout, confine) in [
        ("direct", "confine = \"off\""),
        ("direct", ""),
        ("included", "confine = \"off\""),
        ("included", ""),
    ] {
        let scene = Scene::new(confine, script);
        let home = tempfile::tempdir().unwrap();
        let ignore = home.path().join(".cache/git-ignore");
        std::fs::create_dir_all(home.path().join(".cache/git")).unwrap();
        std::fs::write(&ignore, "*.swp\n").unwrap();
        let rule = format!("[core]\n\texcludesFile = {}\n", ignore.display());
        let nested = home.path().join(".cache/git/nested.inc");
        if layout == "direct" {
            std::fs::write(home.path().join(".gitconfig"), &rule).unwrap();
        } else {
            std::fs::write(
                home.path().join(".gitconfig"),
                "[include]\n\tpath = .cache/git/extra.inc\n",
            )
            .unwrap();
            std::fs::write(
                home.path().join(".cache/git/extra.inc"),
                "[include]\n\tpath = nested.inc\n",
            )
            .unwrap();
            std::fs::write(&nested, &rule).unwrap();
        }
        let exclude_before = std::fs::read(scene.repo.join(".git/info/exclude")).ok();
        let output = scene
            .repo
            .command(&["run"])
            .env("HOME", home.path())
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_CACHE_HOME")
            .output()
            .unwrap();
        let report = scene.delegate_report();
        let case = format!("{layout}, {confine}");
        assert!(
            output.status.code().is_some(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(
            std::fs::read_to_string(&ignore).unwrap(),
            "*.swp\n",
            "{case}\n{report}"
        );
        if layout == "included" {
            assert_eq!(
                std::fs::read_to_string(&nested).unwrap(),
                rule,
                "{case}\n{report}"
            );
        }
        assert_eq!(
            std::fs::read(scene.repo.join(".git/info/exclude")).ok(),
            exclude_before,
            "{case}\n{report}"
        );
        assert!(!scene.repo.join("hidden.txt").exists(), "{case}\n{report}");
        assert!(!scene.repo.join("hidden2.txt").exists(), "{case}\n{report}");
        if !confine.is_empty() {
            assert!(
                report.contains(
                    "wrote into a git folder or a file git reads its config or rules from"
                ),
                "{report}"
            );
        } else {
            // Confined, the kernel refused the write: the excludes file is sealed.
            assert!(
                report.contains("git-ignore: Read-only file system"),
                "{report}"
            );
        }
    }
}

#[test]
fn a_restored_state_dir_with_a_folder_the_loop_cannot_list_is_refused() {
    // A folder it may pass through but not list (mode 0111) hides a link out of the repository
    // where the run writes: a user cannot see inside it, so it is refused.
    use std::os::unix::fs::PermissionsExt;
    let scene = Scene::new("", "true");
    let hidden = scene.repo.join(".refine-loop/cycle-1");
    std::fs::create_dir_all(&hidden).unwrap();
    std::os::unix::fs::symlink(scene.outside.path(), hidden.join("delegate-reports")).unwrap();
    let outside_before = tree_of(scene.outside.path(), &[]);
    let mut command = scene.repo.command(&["run"]);
    unprivileged_user(&scene.repo, &mut command);
    std::fs::set_permissions(&hidden, std::fs::Permissions::from_mode(0o111)).unwrap();
    let output = command.output().unwrap();
    std::fs::set_permissions(&hidden, std::fs::Permissions::from_mode(0o755)).unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot list"), "{stderr}");
    assert_eq!(tree_of(scene.outside.path(), &[]), outside_before);
}

#[test]
fn recover_stops_a_killed_runs_process_that_dropped_the_runs_mark() {
    // It leaves its group and the run's variable behind, and keeps writing into the tree; but it
    // cannot leave the delegate's mount namespace, where the run's store is a mount point.
    for unprivileged in [false, true] {
        let started = tempfile::tempdir().unwrap();
        let flag = started.path().join("started");
        let script = format!(
            "env -u REFINE_LOOP_RUN setsid sh -c 'while :; do echo late >> late.txt; sleep 0.1; \
             done' </dev/null >/dev/null 2>&1 & \
             sleep 0.3; touch {}; sleep 60",
            flag.display()
        );
        let scene = Scene::new("", &script);
        std::fs::set_permissions(
            started.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o777),
        )
        .unwrap();
        let mut run = scene.repo.command(&["run"]);
        let mut recover = scene.repo.command(&["recover"]);
        if unprivileged {
            unprivileged_user(&scene.repo, &mut run);
            unprivileged_user(&scene.repo, &mut recover);
        }
        let mut child = run
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        crate::support::wait_for(&flag, "the delegate never started");
        child.kill().unwrap();
        child.wait().unwrap();
        let recovered = recover.output().unwrap();
        assert_eq!(recovered.status.code(), Some(0), "{recovered:?}");
        let left = crate::support::processes_in(scene.repo.path());
        for pid in &left {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(*pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        assert!(
            left.is_empty(),
            "unprivileged {unprivileged}: {} process(es) of the killed run still run: {}",
            left.len(),
            String::from_utf8_lossy(&recovered.stdout)
        );
        assert!(!scene.repo.join("late.txt").exists());
    }
}

/// The loop's processes are out of a delegate's reach: Landlock's signal scoping where the kernel
/// has it (ABI 6), and a PID namespace of the delegate's own wherever a mount namespace can be
/// made, so that a kernel without the scoping holds too (`REFINE_LOOP_LANDLOCK_ABI_MAX` makes
/// this one look like an older one). The delegate is given the loop's real process id.
#[test]
fn a_delegate_cannot_stop_kill_or_trace_the_loop() {
    let script = "\
        : > src/findings.txt; \
        while [ ! -s \"$OUTSIDE/loop.pid\" ]; do sleep 0.05; done; \
        loop=$(cat \"$OUTSIDE/loop.pid\"); \
        kill -STOP $loop && echo STOPPED-THE-LOOP; \
        kill -TERM $loop && echo TERMINATED-THE-LOOP; \
        kill -USR1 $loop && echo SIGNALLED-THE-LOOP; \
        python3 -c \"import ctypes, sys; libc = ctypes.CDLL(None); loop = int(sys.argv[1]); \
            attached = libc.ptrace(16, loop, 0, 0) == 0; \
            attached and libc.ptrace(17, loop, 0, 0); \
            sys.exit(0 if attached else 1)\" $loop && echo TRACED-THE-LOOP; \
        echo fixed > \"$REFINE_LOOP_VERDICT_FILE\"; true";
    // (run by nobody through the launcher, the kernel's ABI capped, the boundary run.json names)
    let cases = [
        (false, None, "landlock"),
        (false, Some("5"), "pid-namespace"),
        (true, None, "landlock"),
        (true, Some("5"), "pid-namespace"),
    ];
    for (unprivileged, max_abi, boundary) in cases {
        let case = format!("unprivileged {unprivileged}, ABI at most {max_abi:?}");
        let scene = Scene::new("", script);
        std::fs::set_permissions(
            scene.outside.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o777),
        )
        .unwrap();
        let mut run = scene.repo.command(&["run"]);
        if unprivileged {
            unprivileged_user(&scene.repo, &mut run);
        }
        if let Some(abi) = max_abi {
            run.env("REFINE_LOOP_LANDLOCK_ABI_MAX", abi);
        }
        let child = run
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
        let written = scene.outside.path().join("loop.part");
        std::fs::write(&written, pid.to_string()).unwrap();
        std::fs::rename(&written, scene.outside.path().join("loop.pid")).unwrap();
        // Should a signal get through, the loop is woken after a while and the case fails.
        let (done, waited) = std::sync::mpsc::channel();
        let waker = std::thread::spawn(move || {
            let stopped = waited
                .recv_timeout(std::time::Duration::from_secs(30))
                .is_err();
            if stopped {
                let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGCONT);
            }
            stopped
        });
        let output = child.wait_with_output().unwrap();
        let _ = done.send(());
        assert!(!waker.join().unwrap(), "{case}: the loop was stopped");
        let report = scene.delegate_report();
        assert_eq!(
            scene.confinement()["signals"],
            boundary,
            "{case}: {}",
            scene.confinement()
        );
        assert_eq!(
            output.status.code(),
            Some(0),
            "{case}: {output:?}\n{report}"
        );
        let printed = scene.delegate_output();
        for marker in [
            "STOPPED-THE-LOOP",
            "TERMINATED-THE-LOOP",
            "SIGNALLED-THE-LOOP",
            "TRACED-THE-LOOP",
        ] {
            assert!(!printed.contains(marker), "{case}: {marker}:\n{report}");
        }
        assert!(report.contains("- result: kept"), "{case}: {report}");
    }
}

/// The programs a gate runs are not the delegate's to change: a lint tool in `node_modules`, a
/// virtualenv's, one in a dependency folder deeper down, one on PATH in a folder delegates may
/// write (a temp folder, `~/.cargo/bin`), one in a `node_modules` that is a link to a folder
/// outside the tree. A delegate that makes each print nothing would lower the count without
/// fixing anything; each is read-only to it, while its cache in `node_modules/.cache` stays
/// writable, and the report says what was refused. Nor can it move the folder that holds one
/// aside and make its own (`mv web web.moved`), or put a folder of its own in place of the link
/// (that one is put back after it, the folder set aside).
#[test]
fn a_delegate_cannot_change_the_tools_the_gate_runs() {
    tools_of_the_gate(false);
}

/// The same, with the loop run by a user without privileges: the launcher's mount namespace.
#[test]
fn without_privileges_a_delegate_cannot_change_the_tools_the_gate_runs() {
    tools_of_the_gate(true);
}

fn tools_of_the_gate(unprivileged: bool) {
    let lint = "#!/bin/sh\ncat src/findings.txt; test ! -s src/findings.txt\n";
    let tools = tempfile::tempdir().unwrap();
    let repo = Repo::new();
    repo.write(
        ".gitignore",
        "/.refine-loop\nnode_modules/\n/.venv/\n/vendor/\n/app/node_modules\n",
    );
    repo.write("src/findings.txt", "src/lib.txt:1:1: error: one\n");
    repo.write("src/lib.txt", "library\n");
    let executable = |path: &Path| {
        std::fs::write(path, lint).unwrap();
        std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    };
    repo.write("node_modules/.cache/keep", "");
    repo.write("node_modules/.bin/.keep", "");
    executable(&repo.join("node_modules/.bin/lint"));
    repo.write(".venv/pyvenv.cfg", "home = /usr/bin\n");
    repo.write(".venv/bin/.keep", "");
    executable(&repo.join(".venv/bin/vlint"));
    repo.write("web/node_modules/pkg/index.js", "module.exports = 1;\n");
    repo.write("vendor/bin/.keep", "");
    executable(&repo.join("vendor/bin/plint"));
    std::fs::create_dir(tools.path().join("bin")).unwrap();
    executable(&tools.path().join("bin/pathlint"));
    // A dependency folder that is a link to one outside the tree (shared between checkouts).
    std::fs::create_dir_all(tools.path().join("shared/node_modules/.bin")).unwrap();
    executable(&tools.path().join("shared/node_modules/.bin/slint"));
    std::fs::create_dir_all(repo.join("app")).unwrap();
    std::os::unix::fs::symlink(
        tools.path().join("shared/node_modules"),
        repo.join("app/node_modules"),
    )
    .unwrap();
    let script = "\
        echo more >> src/lib.txt; \
        printf '#!/bin/sh\\nexit 0\\n' > node_modules/.bin/lint && echo TAMPERED-NODE-MODULES; \
        printf '#!/bin/sh\\nexit 0\\n' > .venv/bin/vlint && echo TAMPERED-VENV; \
        printf '#!/bin/sh\\nexit 0\\n' > vendor/bin/plint && echo TAMPERED-VENDOR; \
        echo 'process.exit(0)' > web/node_modules/pkg/index.js && echo TAMPERED-NESTED; \
        printf '#!/bin/sh\\nexit 0\\n' > \"$TOOLS/bin/pathlint\" && echo TAMPERED-PATH; \
        rm -rf node_modules/.bin && echo REMOVED-BIN; \
        mv web web.moved && mkdir -p web/node_modules/pkg && echo MOVED-ITS-FOLDER; \
        printf '#!/bin/sh\\nexit 0\\n' > app/node_modules/.bin/slint && echo TAMPERED-LINKED; \
        rm app/node_modules && mkdir -p app/node_modules/.bin && \
            printf '#!/bin/sh\\nexit 0\\n' > app/node_modules/.bin/slint && echo REPLACED-LINK; \
        echo entry > node_modules/.cache/entry && echo CACHED; \
        true";
    let checks = [
        ("node", "node_modules/.bin/lint"),
        ("venv", ".venv/bin/vlint"),
        ("vendor", "vendor/bin/plint"),
        ("path", "pathlint"),
        ("linked", "app/node_modules/.bin/slint"),
    ]
    .map(|(name, run)| {
        format!(
            "[[gate.check]]\nname = \"{name}\"\ncategory = \"lint\"\nrun = \"{run}\"\nparser = \"clippy\"\n"
        )
    })
    .join("\n");
    repo.write(
        "refine-loop.toml",
        &format!(
            "[loop]\nmax_cycles = 1\nconfine = \"required\"\n\n{checks}\n[[delegate]]\n\
             categories = [\"lint\"]\nrun = '''{script}'''\nenv = {{ TOOLS = \"{}\" }}\n",
            tools.path().display()
        ),
    );
    repo.commit("a project whose gate runs installed tools");
    let tree_before = tree_of(repo.path(), &[".git", ".refine-loop", "src"]);
    let tools_before = tree_of(tools.path(), &[]);
    let path = std::env::join_paths(
        std::iter::once(tools.path().join("bin"))
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let mut command = repo.command(&["run"]);
    command.env("PATH", path);
    if unprivileged {
        unprivileged_user(&repo, &mut command);
        if nix::unistd::geteuid().is_root() {
            let status = std::process::Command::new("chown")
                .args(["-R", "65534:65534"])
                .arg(tools.path())
                .status()
                .unwrap();
            assert!(status.success());
        }
    }
    let output = command.output().unwrap();
    let report = cycle_one_report(&repo, &output);
    let printed = report.split_once("## Its output").unwrap().1;
    // The tools outside the tree are read-only; those in it (and the folder a link in it
    // leads to) are the delegate's own layer where one can be made (its writes succeed, and
    // are gone after it), read-only elsewhere. Either way, no folder that holds one moves.
    for marker in ["TAMPERED-PATH", "MOVED-ITS-FOLDER"] {
        assert!(!printed.contains(marker), "{marker} in the log:\n{report}");
    }
    assert!(printed.contains("CACHED"), "{report}");
    // Nothing the gate runs changed, so nothing was fixed: every check still fails.
    assert_eq!(
        output.status.code(),
        Some(3),
        "{}\n{report}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        json(&repo, "gate-summary.json")["failed_count"],
        5,
        "{report}"
    );
    let mut tree_after = tree_of(repo.path(), &[".git", ".refine-loop", "src"]);
    tree_after.remove(Path::new("node_modules/.cache/entry"));
    assert_eq!(tree_after, tree_before);
    assert_eq!(tree_of(tools.path(), &[]), tools_before);
    let bin = tools.path().join("bin/pathlint").canonicalize().unwrap();
    assert!(
        report.contains(&format!(
            "{}` (read-only): among the gate's tools",
            bin.display()
        )),
        "{report}"
    );
    let run = json(&repo, "run.json");
    let sealed: Vec<String> = run["confinement"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{run}"))
        .iter()
        .map(|tool| tool.as_str().unwrap().to_string())
        .collect();
    for tool in [".venv", "node_modules", "vendor", "web/node_modules"] {
        assert!(sealed.contains(&tool.to_string()), "{tool}: {sealed:?}");
    }
    let bin = tools.path().join("bin").canonicalize().unwrap();
    assert!(
        sealed.contains(&bin.display().to_string()),
        "{}: {sealed:?}",
        bin.display()
    );
}

/// The caches outside the tree hold what the gate runs too: a Poetry virtualenv's tools (not on
/// PATH), files uv links into the tree's virtualenv, cargo's `config.toml` (one line of
/// `rustflags = ["--cap-lints=allow"]` silences every lint). Each delegate writes them as it
/// likes, in a layer of its own: it reads back what it wrote (a crate it downloaded), and when it
/// ends all of it is gone, so the gate never sees it. As root (the thread's namespace) and as a
/// user without privileges (the launcher's).
#[test]
fn what_a_delegate_writes_in_the_caches_is_its_own_and_gone_when_it_ends() {
    for unprivileged in [false, true] {
        caches_of_the_delegate(unprivileged);
    }
}

fn caches_of_the_delegate(unprivileged: bool) {
    let case = format!("unprivileged {unprivileged}");
    let lint = "#!/bin/sh\ncat src/findings.txt; test ! -s src/findings.txt\n";
    let home = tempfile::tempdir().unwrap();
    let (cargo, cache) = (home.path().join("cargo"), home.path().join("cache"));
    let executable = |path: &Path| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, lint).unwrap();
        std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    };
    let poetry = cache.join("pypoetry/virtualenvs/project-py3.12/bin/plint");
    executable(&poetry);
    let archive = cache.join("uv/archive-v0/abc/bin/ulint");
    executable(&archive);
    std::fs::create_dir_all(cargo.join("registry")).unwrap();
    let repo = one_finding("/.refine-loop\n/.venv/\n");
    repo.write(".venv/pyvenv.cfg", "home = /usr/bin\n");
    std::fs::create_dir_all(repo.join(".venv/bin")).unwrap();
    std::fs::hard_link(&archive, repo.join(".venv/bin/ulint")).unwrap();
    let script = "\
        echo more >> src/lib.txt; \
        printf '#!/bin/sh\\nexit 0\\n' > \"$XDG_CACHE_HOME/pypoetry/virtualenvs/project-py3.12/bin/plint\" && echo WROTE-POETRY; \
        printf '#!/bin/sh\\nexit 0\\n' > \"$XDG_CACHE_HOME/uv/archive-v0/abc/bin/ulint\" && echo WROTE-THROUGH-LINK; \
        printf '[build]\\nrustflags = [\"--cap-lints=allow\"]\\n' > \"$CARGO_HOME/config.toml\" && echo WROTE-CARGO-CONFIG; \
        mkdir -p \"$CARGO_HOME/registry/cache\" && echo crate > \"$CARGO_HOME/registry/cache/x.crate\"; \
        grep -q crate \"$CARGO_HOME/registry/cache/x.crate\" && echo READ-ITS-DOWNLOAD; \
        echo shm > /dev/shm/refine-loop-test-$$ && grep -q shm /dev/shm/refine-loop-test-$$ && \
            echo OWN-SHARED-MEMORY; \
        true";
    let checks = [
        ("poetry", poetry.display().to_string()),
        ("uv", ".venv/bin/ulint".into()),
        (
            "cargo",
            "if grep -qs cap-lints \\\"$CARGO_HOME/config.toml\\\"; then exit 0; fi; cat src/findings.txt; test ! -s src/findings.txt".into(),
        ),
    ]
    .map(|(name, run)| {
        format!(
            "[[gate.check]]\nname = \"{name}\"\ncategory = \"lint\"\nrun = \"{run}\"\nparser = \"clippy\"\n"
        )
    })
    .join("\n");
    repo.write(
        "refine-loop.toml",
        &format!(
            "[loop]\nmax_cycles = 1\nconfine = \"required\"\n\n{checks}\n[[delegate]]\n\
             categories = [\"lint\"]\nrun = '''{script}'''\n"
        ),
    );
    repo.commit("a project whose gate runs tools from the caches");
    let mut command = repo.command(&["run"]);
    command
        .env("CARGO_HOME", &cargo)
        .env("XDG_CACHE_HOME", &cache);
    if unprivileged {
        unprivileged_user(&repo, &mut command);
        if nix::unistd::geteuid().is_root() {
            let status = std::process::Command::new("chown")
                .args(["-R", "65534:65534"])
                .arg(home.path())
                .status()
                .unwrap();
            assert!(status.success());
        }
    }
    let home_before = tree_of(home.path(), &[]);
    let venv_before = tree_of(&repo.join(".venv"), &[]);
    let output = command.output().unwrap();
    let report =
        std::fs::read_to_string(repo.join(".refine-loop/cycle-1/delegate-reports/fix-lint.md"))
            .unwrap();
    let printed = report.split_once("## Its output").unwrap().1;
    // Honest work is not stopped: every write succeeds, and a download reads back.
    for marker in [
        "WROTE-POETRY",
        "WROTE-THROUGH-LINK",
        "WROTE-CARGO-CONFIG",
        "READ-ITS-DOWNLOAD",
        "OWN-SHARED-MEMORY",
    ] {
        assert!(printed.contains(marker), "{case}: {marker}:\n{report}");
    }
    // Its shared memory was its own too: gone when it ended.
    let left: Vec<_> = std::fs::read_dir("/dev/shm")
        .unwrap()
        .flatten()
        .filter(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .starts_with("refine-loop-test-")
        })
        .collect();
    assert!(left.is_empty(), "{case}: {left:?}");
    // Nothing the gate runs changed, so nothing was fixed: every check still fails.
    assert_eq!(
        output.status.code(),
        Some(3),
        "{case}: {}\n{report}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        json(&repo, "gate-summary.json")["failed_count"],
        3,
        "{case}: {report}"
    );
    assert_eq!(tree_of(home.path(), &[]), home_before, "{case}");
    assert_eq!(tree_of(&repo.join(".venv"), &[]), venv_before, "{case}");
    let run = json(&repo, "run.json");
    let private = run["confinement"]["private"].to_string();
    for folder in [&cargo, &cache] {
        let folder = folder.canonicalize().unwrap().display().to_string();
        assert!(private.contains(&folder), "{case}: {folder}: {run}");
    }
}

/// Code a delegate plants that the gate runs (a new test) is confined like the delegate: after
/// the baseline, every gate run has the delegate's walls. Planted in a test, a file outside the
/// tree and a stop of the loop fail, and the lint tool rewritten, and cargo's config written in
/// its cache, are the check's own, gone when it ends: the count is the honest one. The baseline's run, before
/// any delegate, is the user's own and is not confined.
#[test]
fn code_a_delegate_plants_that_the_gate_runs_is_confined_too() {
    let home = tempfile::tempdir().unwrap();
    let cargo = home.path().join("cargo");
    std::fs::create_dir_all(&cargo).unwrap();
    let outside = outside_the_walls();
    let repo = one_finding("/.refine-loop\n/.venv/\n");
    repo.write("tests/test_lib.sh", "grep -q library src/lib.txt\n");
    repo.write(".venv/pyvenv.cfg", "home = /usr/bin\n");
    program(
        &repo,
        ".venv/bin/vlint",
        "#!/bin/sh\nif grep -qs cap-lints \"$CARGO_HOME/config.toml\"; then exit 0; fi\n\
         cat src/findings.txt; test ! -s src/findings.txt\n",
    );
    let planted = "\
        printf '#!/bin/sh\\nexit 0\\n' > .venv/bin/vlint && echo TAMPERED-TOOL\n\
        printf '[build]\\nrustflags = [\"--cap-lints=allow\"]\\n' > \"$CARGO_HOME/config.toml\" && echo TAMPERED-CARGO\n\
        echo planted > \"$OUTSIDE/planted\" && echo WROTE-OUTSIDE\n\
        for pid in $(cat \"$OUTSIDE/loop.pid\"); do kill -STOP $pid && echo STOPPED-THE-LOOP; done\n\
        true\n";
    std::fs::write(outside.path().join("planted.sh"), planted).unwrap();
    repo.write(
        "refine-loop.toml",
        &tests_then_lint(
            ".venv/bin/vlint",
            &format!(
                "cp \"{}\" tests/test_planted.sh",
                outside.path().join("planted.sh").display()
            ),
        ),
    );
    repo.commit("a project whose tests run whatever test files there are");
    let tool_before = std::fs::read(repo.join(".venv/bin/vlint")).unwrap();
    let child = repo
        .command(&["run"])
        .env("CARGO_HOME", &cargo)
        .env("OUTSIDE", outside.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    std::fs::write(outside.path().join("loop.pid"), pid.to_string()).unwrap();
    let (done, waited) = std::sync::mpsc::channel();
    let waker = std::thread::spawn(move || {
        let stopped = waited
            .recv_timeout(std::time::Duration::from_secs(30))
            .is_err();
        if stopped {
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGCONT);
        }
        stopped
    });
    let output = child.wait_with_output().unwrap();
    let _ = done.send(());
    assert!(!waker.join().unwrap(), "the loop was stopped");
    let gate_log = cycle_one_gate_log(&repo);
    // Cargo's cache is the check's own: its write there succeeds, and is gone after it.
    for marker in ["WROTE-OUTSIDE", "STOPPED-THE-LOOP"] {
        assert!(!gate_log.contains(marker), "{marker}:\n{gate_log}");
    }
    assert_eq!(
        std::fs::read(repo.join(".venv/bin/vlint")).unwrap(),
        tool_before
    );
    assert!(!cargo.join("config.toml").exists());
    assert!(!outside.path().join("planted").exists());
    // The lint finding is still there: the change fixed nothing.
    assert_ne!(output.status.code(), Some(0), "{output:?}\n{gate_log}");
    assert_eq!(
        json(&repo, "gate-summary.json")["failed_count"],
        1,
        "{gate_log}"
    );
}

/// tox and nox write their environments on every run (the project installed again, a log). A
/// gate that runs tox keeps working after the baseline, its runs confined: each writes `.tox` in
/// a layer of its own. A delegate's rewrite of a tool in it is its own too, and gone after it.
#[test]
fn a_tox_environment_is_written_by_every_run_and_changed_for_none() {
    let repo = one_finding("/.refine-loop\n/.tox/\n");
    program(&repo, ".tox/py/bin/tlint", LINT);
    repo.write(
        "refine-loop.toml",
        "[loop]\nmax_cycles = 1\nconfine = \"required\"\n\n\
         [[gate.check]]\nname = \"tox\"\ncategory = \"lint\"\n\
         run = 'mkdir -p .tox/py/log && date >> .tox/py/log/run.log && .tox/py/bin/tlint'\n\
         parser = \"clippy\"\n\n\
         [[delegate]]\ncategories = [\"lint\"]\n\
         run = '''printf '#!/bin/sh\\nexit 0\\n' > .tox/py/bin/tlint && echo TAMPERED; : > src/findings.txt'''\n",
    );
    repo.commit("a project whose gate runs tox");
    let tool_before = std::fs::read(repo.join(".tox/py/bin/tlint")).unwrap();
    let output = repo.run(&["run"]);
    let report = cycle_one_report(&repo, &output);
    assert_eq!(output.status.code(), Some(0), "{output:?}\n{report}");
    assert!(report.contains("TAMPERED"), "{report}");
    assert_eq!(
        std::fs::read(repo.join(".tox/py/bin/tlint")).unwrap(),
        tool_before
    );
    let run = json(&repo, "run.json");
    assert!(
        run["confinement"]["private"].to_string().contains(".tox"),
        "{run}"
    );
}

/// A dependency folder a delegate makes where there was none (a `node_modules` with a program of
/// its own, found before the project's) is no part of its change, and would change what the gate
/// runs: it is set aside before the gate runs, and its report says so.
#[test]
fn a_dependency_folder_a_delegate_makes_is_set_aside_before_the_gate_runs() {
    let repo = one_finding("/.refine-loop\nnode_modules/\n/build/\n");
    program(&repo, "tools/lint", LINT);
    // As npx does: the project's own install first, else the one on PATH.
    repo.write(
        "refine-loop.toml",
        "[loop]\nmax_cycles = 1\n\n\
         [[gate.check]]\nname = \"lint\"\ncategory = \"lint\"\n\
         run = 'if [ -x node_modules/.bin/lint ]; then node_modules/.bin/lint; else tools/lint; fi'\n\
         parser = \"clippy\"\n\n\
         [[delegate]]\ncategories = [\"lint\"]\n\
         run = '''mkdir -p node_modules/.bin && printf '#!/bin/sh\\nexit 0\\n' > node_modules/.bin/lint && chmod +x node_modules/.bin/lint; echo home=/usr > build/pyvenv.cfg; echo more >> src/lib.txt'''\n",
    );
    repo.commit("a project whose gate prefers a local install");
    // The user's own build output, there before the run: marked as an environment by the
    // delegate, it is still the user's, and stays.
    repo.write("build/user-artifact.bin", "the user's\n");
    let output = repo.run(&["run"]);
    let report = cycle_one_report(&repo, &output);
    assert_eq!(
        json(&repo, "gate-summary.json")["failed_count"],
        1,
        "{output:?}\n{report}"
    );
    assert!(!repo.join("node_modules").exists(), "{report}");
    assert_eq!(
        std::fs::read_to_string(repo.join("build/user-artifact.bin")).unwrap(),
        "the user's\n"
    );
    assert!(
        report.contains(
            "made what git ignores, which no patch carries and the gate would read (`node_modules`)"
        ),
        "{report}"
    );
}

/// A tool's cached results are what the gate reports when the sources look unchanged (cargo
/// replays a crate's warnings from its target folder, as this gate does from `lint.out` there).
/// Emptied, with a change to a file the tool does not read, they would lower the count with
/// nothing fixed. Each delegate writes what git ignores in a layer of its own, and each check of
/// a gate run after the baseline the tools' caches, known by their name or by the tag the tool
/// left in them (`CACHEDIR.TAG`, as cargo does in any `target-dir`): the gate replays what the
/// baseline's run left, whether the cache is in `target/` or in another folder git ignores
/// (`build/cargo`), and whether the delegate empties it or a test it planted does, run by an
/// earlier check.
#[test]
fn a_delegate_cannot_doctor_the_results_a_tool_caches() {
    // (the folder of the cache, what empties it: the delegate, or a test it plants)
    let cases = [
        ("target", false),
        ("build/cargo", false),
        ("target", true),
        ("build/cargo", true),
    ];
    for (folder, planted) in cases {
        let case = format!("{folder}, planted {planted}");
        let repo = one_finding("/.refine-loop\n/target/\n/build/\n");
        repo.write("README.md", "a library\n");
        repo.write("tests/test_lib.sh", "grep -q library src/lib.txt\n");
        repo.write(
            "lint.sh",
            &format!(
                "mkdir -p {folder}\n\
                 echo 'Signature: 8a477f597d28d172789f06886806bc55' > {folder}/CACHEDIR.TAG\n\
                 if [ ! -f {folder}/lint.out ] || [ src/lib.txt -nt {folder}/lint.out ]; then\n\
                 cat src/findings.txt > {folder}/lint.out\nfi\n\
                 cat {folder}/lint.out; test ! -s {folder}/lint.out\n"
            ),
        );
        let empty = format!(": > {folder}/lint.out && echo EMPTIED");
        let delegate = if planted {
            format!("echo '{empty}' > tests/test_docs.sh; echo docs >> README.md")
        } else {
            format!(
                "{empty}; mkdir -p {folder}/debug && echo built > {folder}/debug/own && \
                 cat {folder}/debug/own; echo docs >> README.md"
            )
        };
        repo.write(
            "refine-loop.toml",
            &tests_then_lint("sh lint.sh", &delegate),
        );
        repo.commit("a project whose lint replays cached results");
        let output = repo.run(&["run"]);
        let report = cycle_one_report(&repo, &output);
        let gate_log = cycle_one_gate_log(&repo);
        let emptied = if planted { &gate_log } else { &report };
        assert!(emptied.contains("EMPTIED"), "{case}: {report}\n{gate_log}");
        if !planted {
            assert!(report.contains("built"), "{case}: {report}");
        }
        assert_eq!(
            json(&repo, "gate-summary.json")["failed_count"],
            1,
            "{case}: {output:?}\n{report}\n{gate_log}"
        );
        assert_eq!(
            std::fs::read_to_string(repo.join(&format!("{folder}/lint.out"))).unwrap(),
            "src/lib.txt:1:1: error: one\n",
            "{case}"
        );
        assert!(
            !repo.join(&format!("{folder}/debug/own")).exists(),
            "{case}"
        );
    }
}

/// A tool that keeps its results in a file git ignores beside the code (`.eslintcache`,
/// `tsconfig.tsbuildinfo`, `.phpunit.result.cache`) replays them for the files it takes as
/// unchanged. Such a cache file, as the baseline's run left it, is held for the whole run: what
/// a delegate writes into it is put back before the gate runs, and what a check writes into it
/// (a test the delegate planted, run before the tool) is put back before the next check.
#[test]
fn a_delegate_cannot_doctor_the_results_a_tool_keeps_in_a_cache_file() {
    for planted in [false, true] {
        let repo = one_finding("/.refine-loop\n.lintcache\n");
        repo.write("README.md", "a library\n");
        repo.write("tests/test_lib.sh", "grep -q library src/lib.txt\n");
        repo.write(
            "lint.sh",
            "if [ ! -f .lintcache ] || [ src/lib.txt -nt .lintcache ]; then\n\
             cat src/findings.txt > .lintcache\nfi\n\
             cat .lintcache; test ! -s .lintcache\n",
        );
        let empty = ": > .lintcache && echo EMPTIED";
        let delegate = if planted {
            format!("echo '{empty}' > tests/test_docs.sh; echo docs >> README.md")
        } else {
            format!("{empty}; echo docs >> README.md")
        };
        repo.write(
            "refine-loop.toml",
            &tests_then_lint("sh lint.sh", &delegate),
        );
        repo.commit("a project whose lint replays cached results");
        let output = repo.run(&["run"]);
        let report = cycle_one_report(&repo, &output);
        let gate_log = cycle_one_gate_log(&repo);
        let emptied = if planted { &gate_log } else { &report };
        let case = format!("planted {planted}");
        assert!(emptied.contains("EMPTIED"), "{case}: {report}\n{gate_log}");
        assert_eq!(
            json(&repo, "gate-summary.json")["failed_count"],
            1,
            "{case}: {output:?}\n{report}\n{gate_log}"
        );
        assert_eq!(
            std::fs::read_to_string(repo.join(".lintcache")).unwrap(),
            "src/lib.txt:1:1: error: one\n",
            "{case}"
        );
    }
}

/// A tool that keeps its results in the temp folder (Jest's transform cache, any cache under
/// `os.tmpdir()`) replays them in the next run. The baseline's run fills it; a delegate that
/// empties it, with a change to a file the tool does not read, would lower the count with nothing
/// fixed. Each check of a gate run after the baseline has a temp folder of its own, so it never
/// reads what a delegate left in the run's.
#[test]
fn a_delegate_cannot_doctor_the_results_a_tool_keeps_in_the_temp_folder() {
    let repo = one_finding("/.refine-loop\n");
    repo.write("README.md", "a library\n");
    repo.write(
        "lint.sh",
        "cache=\"${TMPDIR:-/tmp}/lint-cache\"\nmkdir -p \"$cache\"\n\
         if [ ! -f \"$cache/lint.out\" ]; then cat src/findings.txt > \"$cache/lint.out\"; fi\n\
         cat \"$cache/lint.out\"; test ! -s \"$cache/lint.out\"\n",
    );
    let temp = tempfile::tempdir().unwrap();
    let cache = temp.path().join("lint-cache/lint.out");
    repo.write(
        "refine-loop.toml",
        &format!(
            "[loop]\nmax_cycles = 1\nconfine = \"required\"\n\n\
             [[gate.check]]\nname = \"lint\"\ncategory = \"lint\"\nrun = 'sh lint.sh'\nparser = \"clippy\"\n\n\
             [[delegate]]\ncategories = [\"lint\"]\n\
             run = ''': > '{}' && echo EMPTIED; echo docs >> README.md'''\n",
            cache.display()
        ),
    );
    repo.commit("a project whose lint keeps its results in the temp folder");
    let output = repo
        .command(&["run"])
        .env("TMPDIR", temp.path())
        .output()
        .unwrap();
    let report = cycle_one_report(&repo, &output);
    let gate_log = cycle_one_gate_log(&repo);
    assert!(report.contains("EMPTIED"), "{report}");
    assert_eq!(
        json(&repo, "gate-summary.json")["failed_count"],
        1,
        "{output:?}\n{report}\n{gate_log}"
    );
    assert!(
        gate_log.contains("src/lib.txt:1:1: error: one"),
        "{gate_log}"
    );
}

/// A second run before the first one's changes are committed runs them in its baseline: code a
/// delegate wrote that nobody has read (a planted test). So where the work tree holds an earlier
/// run's changes uncommitted (its `manifest.json`, a campaign's `history/`), the baseline's gate
/// run is confined like the runs after it, and `run.json` names the files. Once the user has
/// committed them they are the user's own, and the baseline runs them as such.
#[test]
fn a_baseline_that_runs_an_earlier_runs_uncommitted_code_is_confined() {
    // (the user commits the first run's work before the second run)
    for committed in [false, true] {
        let outside = outside_the_walls();
        let repo = one_finding("/.refine-loop\n");
        repo.write("tests/test_lib.sh", "grep -q library src/lib.txt\n");
        program(&repo, "lint", LINT);
        repo.write(
            "planted.txt",
            "echo planted > \"$OUTSIDE/planted\" 2>/dev/null\ntrue\n",
        );
        repo.write(
            "refine-loop.toml",
            &tests_then_lint(
                "./lint",
                ": > src/findings.txt; cp planted.txt tests/test_planted.sh",
            ),
        );
        repo.commit("a project whose tests run whatever test files there are");
        let first = repo
            .command(&["run"])
            .env("OUTSIDE", outside.path())
            .output()
            .unwrap();
        assert_eq!(first.status.code(), Some(0), "{first:?}");
        // Its planted test ran in the first run's gate, confined.
        assert!(
            !outside.path().join("planted").exists(),
            "committed {committed}"
        );
        if committed {
            repo.commit("the first run's work, read and committed");
        }
        let second = repo
            .command(&["run"])
            .env("OUTSIDE", outside.path())
            .output()
            .unwrap();
        assert_eq!(second.status.code(), Some(0), "{second:?}");
        let earlier = json(&repo, "run.json")["confinement"]["earlier_work"].clone();
        if committed {
            assert!(earlier.is_null(), "{earlier}");
            assert!(outside.path().join("planted").exists());
        } else {
            assert_eq!(
                earlier,
                serde_json::json!(["src/findings.txt", "tests/test_planted.sh"])
            );
            assert!(!outside.path().join("planted").exists(), "{second:?}");
            let report =
                std::fs::read_to_string(repo.join(".refine-loop/REFINE-LOOP-FINAL.md")).unwrap();
            assert!(
                report.contains("the baseline's gate run was confined too"),
                "{report}"
            );
        }
    }
}

/// The gate looks its programs up on `PATH` afresh on every run. Where a folder on it lies in a
/// folder delegates may write (`/tmp`), a delegate could put a program of its own in the way:
/// through a link on the path, by moving the folder aside and making another, or in a folder on
/// the path that does not exist yet. The confined commands get the search paths as they
/// resolved when the baseline had run, the folders above a tool folder cannot be moved, and a
/// missing one is left out: the gate runs the program it ran, and the count stays.
#[test]
fn a_delegate_cannot_put_a_program_in_the_gates_way_on_its_path() {
    let fake =
        "mkdir -p \"$1\" && printf '#!/bin/sh\\nexit 0\\n' > \"$1/vlint\" && chmod +x \"$1/vlint\"";
    // (what the delegate does to the folders on PATH, run unprivileged)
    let cases = [
        (
            "link",
            "fake \"$T/evil/bin\" && ln -sfn \"$T/evil\" \"$T/current\" && echo SWAPPED",
        ),
        (
            "move",
            "mv \"$T/1.2\" \"$T/old\" && fake \"$T/1.2/bin\" && echo MOVED",
        ),
        ("missing", "fake \"$T/later/bin\" && echo MADE"),
    ];
    for unprivileged in [false, true] {
        for (attack, script) in cases {
            let case = format!("{attack}, unprivileged {unprivileged}");
            let tools = tempfile::tempdir().unwrap();
            let bin = tools.path().join("1.2/bin");
            std::fs::create_dir_all(&bin).unwrap();
            std::fs::write(bin.join("vlint"), LINT).unwrap();
            std::fs::set_permissions(
                bin.join("vlint"),
                std::os::unix::fs::PermissionsExt::from_mode(0o755),
            )
            .unwrap();
            std::os::unix::fs::symlink(tools.path().join("1.2"), tools.path().join("current"))
                .unwrap();
            let repo = one_finding("/.refine-loop\n");
            repo.write("README.md", "a library\n");
            repo.write(
                "refine-loop.toml",
                &format!(
                    "[loop]\nmax_cycles = 1\nconfine = \"required\"\n\n\
                     [[gate.check]]\nname = \"lint\"\ncategory = \"lint\"\nrun = 'vlint'\nparser = \"clippy\"\n\n\
                     [[delegate]]\ncategories = [\"lint\"]\n\
                     run = '''fake() {{ {fake}; }}; {script}; echo docs >> README.md'''\n"
                ),
            );
            repo.commit("a project whose linter is on PATH");
            let t = tools.path().display().to_string();
            let path = format!(
                "{t}/later/bin:{t}/current/bin:{}",
                std::env::var("PATH").unwrap()
            );
            let mut command = repo.command(&["run"]);
            command.env("PATH", &path).env("T", tools.path());
            if unprivileged {
                unprivileged_user(&repo, &mut command);
                let owned = std::process::Command::new("chown")
                    .args(["-R", "65534:65534"])
                    .arg(tools.path())
                    .status()
                    .unwrap();
                assert!(owned.success());
            }
            let output = command.output().unwrap();
            let report = cycle_one_report(&repo, &output);
            let gate_log = cycle_one_gate_log(&repo);
            assert_eq!(
                json(&repo, "gate-summary.json")["failed_count"],
                1,
                "{case}: {output:?}\n{report}\n{gate_log}"
            );
            assert_eq!(
                std::fs::read_to_string(bin.join("vlint")).unwrap(),
                LINT,
                "{case}"
            );
        }
    }
}

/// Code a delegate planted that a check of a later gate run runs could reach what the user's
/// next `git` shows: a branch, a tag in a new `packed-refs`, a `refs/replace` that swaps a
/// file's history, a committed object overwritten, a `shallow` that hides the history, an
/// `index.lock` that stops the next `git add`, an alternate object store, and the loop's own
/// store, where a forged journal would have `recover` write where it says. The git dir is
/// sealed whole for those checks (git reads it as it does a read-only one); the attempt is named
/// and held against the change.
#[test]
fn code_a_delegate_plants_cannot_reach_what_git_runs_or_shows() {
    let repo = one_finding("/.refine-loop\n");
    repo.write("tests/test_lib.sh", "grep -q library src/lib.txt\n");
    let planted = "\
        g=$(git rev-parse --git-common-dir)\n\
        mkdir -p \"$g/refine-loop/snapshots/1-0\" && echo '{}' > \"$g/refine-loop/snapshots/1-0/journal.json\" && echo WROTE-STORE\n\
        blob=$(echo evil | git hash-object -w --stdin) && git replace \"$(git rev-parse HEAD:src/lib.txt)\" \"$blob\" && echo WROTE-REPLACE\n\
        git branch -f release HEAD~1 && echo MOVED-BRANCH\n\
        echo /tmp > \"$g/objects/info/alternates\" && echo WROTE-ALTERNATES\n\
        h=$(git rev-parse HEAD:README.md); o=\"$g/objects/$(echo $h | cut -c1-2)/$(echo $h | cut -c3-)\"\n\
        cp \"$o\" \"$o.new\" && mv -f \"$o.new\" \"$o\" && echo WROTE-OBJECT\n\
        echo \"$(git rev-parse HEAD~1) refs/tags/v1.0\" > \"$g/packed-refs\" && echo WROTE-TAG\n\
        git rev-parse HEAD > \"$g/shallow\" && echo WROTE-SHALLOW\n\
        printf x > \"$g/index.lock\" && echo WROTE-LOCK\n\
        git rev-parse HEAD > \"$g/MERGE_HEAD\" && echo WROTE-MERGE-HEAD\n\
        git update-index --refresh >/dev/null; git status --short >/dev/null && echo REFRESHED\n\
        true\n";
    repo.write("planted.txt", planted);
    repo.write(
        "refine-loop.toml",
        &tests_then_lint(
            "cat src/findings.txt; test ! -s src/findings.txt",
            "cp planted.txt tests/test_planted.sh",
        ),
    );
    repo.commit("first");
    repo.write("README.md", "more\n");
    repo.commit("second");
    crate::support::git_in(repo.path(), &["branch", "release"]);
    let git = repo.join(".git");
    let before = |name: &str| std::fs::read(git.join(name)).ok();
    let release = before("refs/heads/release");
    let commits = crate::support::git_in(repo.path(), &["rev-list", "--count", "HEAD"]);
    let output = repo.run(&["run"]);
    let gate_log = cycle_one_gate_log(&repo);
    assert!(gate_log.contains("REFRESHED"), "{output:?}\n{gate_log}");
    for marker in [
        "WROTE-STORE",
        "WROTE-REPLACE",
        "MOVED-BRANCH",
        "WROTE-ALTERNATES",
        "WROTE-OBJECT",
        "WROTE-TAG",
        "WROTE-SHALLOW",
        "WROTE-LOCK",
        "WROTE-MERGE-HEAD",
    ] {
        assert!(!gate_log.contains(marker), "{marker}:\n{gate_log}");
    }
    assert_eq!(before("refs/heads/release"), release);
    for made in [
        "objects/info/alternates",
        "refs/replace",
        "refine-loop/snapshots/1-0",
        "packed-refs",
        "shallow",
        "index.lock",
        "MERGE_HEAD",
    ] {
        assert!(!git.join(made).exists(), "{made}");
    }
    let git_out = |args: &[&str]| crate::support::git_in(repo.path(), args);
    assert_eq!(git_out(&["cat-file", "-p", "HEAD:README.md"]), "more");
    assert_eq!(git_out(&["tag"]), "");
    assert_eq!(git_out(&["rev-list", "--count", "HEAD"]), commits);
    // The attempt is held against the change: rolled back, and named.
    assert!(!repo.join("tests/test_planted.sh").exists());
    let report = cycle_one_report(&repo, &output);
    assert!(
        report.contains("- result: rolled back")
            && report.contains(
                "check `tests` tried to write where no check may, and the kernel refused"
            ),
        "{report}"
    );
    let recover = repo.run(&["recover"]);
    assert!(
        String::from_utf8_lossy(&recover.stdout).contains("nothing to recover"),
        "{recover:?}"
    );
}

/// Code a delegate planted that the gate runs could fix the code under test in place as the
/// tests begin and write the old bytes (and time) back as they end: the tests pass on code the
/// tree does not hold, and every look before and after sees nothing. The kernel's watch sees
/// the writes: the change is held to account and rolled back.
#[test]
fn code_that_rewrites_the_code_under_test_while_the_gate_runs_is_caught() {
    let repo = one_finding("/.refine-loop\n");
    repo.write("tests/test_lib.sh", "grep -q fixed src/lib.txt\n");
    repo.write(
        "planted-first.txt",
        "cp -p src/lib.txt \"$TMPDIR/lib.txt\"; echo fixed > src/lib.txt\n",
    );
    repo.write(
        "planted-last.txt",
        "cat \"$TMPDIR/lib.txt\" > src/lib.txt; touch -r \"$TMPDIR/lib.txt\" src/lib.txt\n",
    );
    repo.write(
        "refine-loop.toml",
        "[loop]\nmax_cycles = 1\nconfine = \"required\"\n\n\
         [[gate.check]]\nname = \"tests\"\ncategory = \"tests\"\n\
         run = 'for t in tests/*.sh; do sh \"$t\" || exit 1; done'\nparser = \"generic\"\n\n\
         [[delegate]]\ncategories = [\"tests\"]\n\
         run = 'cp planted-first.txt tests/00_first.sh; cp planted-last.txt tests/zz_last.sh'\n",
    );
    repo.commit("a project whose test fails");
    let output = repo.run(&["run"]);
    let report =
        std::fs::read_to_string(repo.join(".refine-loop/cycle-1/delegate-reports/fix-tests.md"))
            .unwrap_or_else(|error| panic!("no delegate report ({error}): {output:?}"));
    assert!(report.contains("- result: rolled back"), "{report}");
    assert!(
        report.contains("while the gate ran on its change, `src/lib.txt` was written"),
        "{report}"
    );
    assert!(!repo.join("tests/00_first.sh").exists());
    assert_eq!(
        std::fs::read_to_string(repo.join("src/lib.txt")).unwrap(),
        "library\n"
    );
    assert_eq!(json(&repo, "gate-summary.json")["failed_count"], 1);
}

/// Code a delegate planted, run by an earlier check, could make a folder of installed tools
/// that none was before (a `node_modules`, whose `.bin` npm puts first on `PATH` for a later
/// check) holding a `lint` that finds nothing. No earlier run made it, though each ran the same
/// commands: the change is held to account, and the folder removed.
#[test]
fn a_folder_of_tools_planted_code_makes_in_the_gate_is_removed_and_held_against_it() {
    let repo = one_finding("/.refine-loop\nnode_modules/\n");
    repo.write("tests/test_lib.sh", "grep -q library src/lib.txt\n");
    program(&repo, "tools/lint", LINT);
    repo.write(
        "planted.txt",
        "mkdir -p node_modules/.bin && printf '#!/bin/sh\\nexit 0\\n' > node_modules/.bin/lint \
         && chmod +x node_modules/.bin/lint\n",
    );
    repo.write(
        "refine-loop.toml",
        &tests_then_lint(
            "PATH=\"$PWD/node_modules/.bin:$PWD/tools:$PATH\" lint",
            "cp planted.txt tests/test_planted.sh",
        ),
    );
    repo.commit("a project whose lint a package may provide");
    let output = repo.run(&["run"]);
    let report = cycle_one_report(&repo, &output);
    assert!(report.contains("- result: rolled back"), "{report}");
    assert!(
        report.contains("while the gate ran on its change, it made `node_modules`"),
        "{report}"
    );
    assert!(!repo.join("node_modules").exists());
    assert!(!repo.join("tests/test_planted.sh").exists());
    assert_eq!(json(&repo, "gate-summary.json")["failed_count"], 1);
}

/// A daemon the user runs outside may listen on an abstract unix socket (no file to guard): a
/// delegate that reached it could have it do what the delegate may not. From Landlock ABI 6 the
/// kernel scopes such sockets to the delegate's own processes.
#[test]
fn a_delegate_cannot_reach_a_daemon_on_an_abstract_socket() {
    use std::os::linux::net::SocketAddrExt;
    let name = format!("refine-loop-test-{}", std::process::id());
    let address = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let listener = std::os::unix::net::UnixListener::bind_addr(&address).unwrap();
    listener.set_nonblocking(true).unwrap();
    let connect = format!(
        "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('\\\\0{name}')\" \
         && echo CONNECTED || echo REFUSED"
    );
    let scene = Scene::new("", &format!(": > src/findings.txt; {connect}"));
    let output = scene.repo.run(&["run"]);
    let report = scene.delegate_report();
    assert!(report.contains("REFUSED"), "{output:?}\n{report}");
    assert!(listener.accept().is_err(), "{report}");
}

/// A gate that installs before it checks (`npm ci && npm test`, `uv sync`) writes the
/// dependency folders on every run, and a build tool's home outside the tree (Gradle's locks).
/// After the baseline its runs are confined, and it keeps working: each check writes them in a
/// layer of its own. (It empties `node_modules` as `npm ci`
/// does: a folder with a layer on it cannot be removed itself.)
#[test]
fn a_gate_that_installs_on_every_run_keeps_working() {
    let repo = one_finding("/.refine-loop\nnode_modules/\n");
    program(&repo, "libs/lint/bin/lint", LINT);
    repo.write(
        "refine-loop.toml",
        "[loop]\nmax_cycles = 1\nconfine = \"required\"\n\n\
         [[gate.check]]\nname = \"lint\"\ncategory = \"lint\"\n\
         run = 'date > \"$GRADLE_USER_HOME/lock\" && mkdir -p node_modules && find node_modules -mindepth 1 -delete && mkdir -p node_modules/.bin && cp libs/lint/bin/lint node_modules/.bin/ && node_modules/.bin/lint'\n\
         parser = \"clippy\"\n\n\
         [[delegate]]\ncategories = [\"lint\"]\nrun = ': > src/findings.txt'\n",
    );
    repo.commit("a project whose gate installs its linter");
    // A build tool's home outside the tree, written on every build (Gradle's locks).
    let home = tempfile::tempdir_in(std::env::var_os("HOME").unwrap()).unwrap();
    let output = repo
        .command(&["run"])
        .env("GRADLE_USER_HOME", home.path())
        .output()
        .unwrap();
    let report = cycle_one_report(&repo, &output);
    let gate_log = cycle_one_gate_log(&repo);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{output:?}\n{report}\n{gate_log}"
    );
}

/// A repository with one finding in `src/findings.txt` (about `src/lib.txt`), whose
/// `.gitignore` is `ignored`.
fn one_finding(ignored: &str) -> Repo {
    let repo = Repo::new();
    repo.write(".gitignore", ignored);
    repo.write("src/findings.txt", "src/lib.txt:1:1: error: one\n");
    repo.write("src/lib.txt", "library\n");
    repo
}

/// A folder outside every folder a delegate may write (the temp folders are writable), that
/// any user may write unconfined.
fn outside_the_walls() -> tempfile::TempDir {
    let outside = tempfile::tempdir_in(std::env::var_os("HOME").unwrap()).unwrap();
    std::fs::set_permissions(
        outside.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    outside
}

/// A confined run of one cycle whose gate runs every `tests/*.sh`, then `lint` (a command whose
/// findings read as clippy's), and whose delegate for lint runs `delegate`.
fn tests_then_lint(lint: &str, delegate: &str) -> String {
    format!(
        "[loop]\nmax_cycles = 1\nconfine = \"required\"\n\n\
         [[gate.check]]\nname = \"tests\"\ncategory = \"tests\"\n\
         run = 'for t in tests/*.sh; do sh \"$t\" || exit 1; done'\nparser = \"generic\"\n\n\
         [[gate.check]]\nname = \"lint\"\ncategory = \"lint\"\nrun = '''{lint}'''\nparser = \"clippy\"\n\n\
         [[delegate]]\ncategories = [\"lint\"]\nrun = '''{delegate}'''\n"
    )
}

/// The lint program these gates run: it prints the findings, and fails while there are any.
const LINT: &str = "#!/bin/sh\ncat src/findings.txt; test ! -s src/findings.txt\n";

/// Writes `body` at `path` in `repo`, executable.
fn program(repo: &Repo, path: &str, body: &str) {
    repo.write(path, body);
    std::fs::set_permissions(
        repo.join(path),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
}

/// What the gate printed in cycle 1.
fn cycle_one_gate_log(repo: &Repo) -> String {
    std::fs::read_to_string(repo.join(".refine-loop/cycle-1/gate-output.txt")).unwrap()
}

/// The delegate's report of cycle 1; a panic with the run's `output` when there is none.
fn cycle_one_report(repo: &Repo, output: &std::process::Output) -> String {
    std::fs::read_to_string(repo.join(".refine-loop/cycle-1/delegate-reports/fix-lint.md"))
        .unwrap_or_else(|error| panic!("no delegate report ({error}): {output:?}"))
}
