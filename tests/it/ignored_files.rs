//! Files git ignores that were there before the run (`.env`, local config): a delegate that
//! deletes or changes them has them put back to the byte, within `protect_ignored_max`; the
//! report names what was put back and what was too big to protect.

use std::os::unix::fs::PermissionsExt;

use crate::run_loop::json;
use crate::support::{Entry, Repo, build_repo, tree_of};

#[test]
fn git_clean_fdx_takes_nothing_the_budget_protects() {
    let repo = build_repo(
        "[loop]\nprotect_ignored_max = \"1KiB\"\n\n[[delegate]]\n\
         run = \"git clean -fdqx -e /.refine-loop; printf changed > local/settings.toml; touch fixed.txt\"\n",
    );
    repo.write(
        ".gitignore",
        "/.refine-loop\n.env\nlocal/\nbig.bin\ntarget/\n",
    );
    repo.commit("ignore");
    repo.write(".env", "API_TOKEN=user-secret\n");
    std::fs::set_permissions(repo.join(".env"), std::fs::Permissions::from_mode(0o600)).unwrap();
    repo.write("local/settings.toml", "mine = true\n");
    std::os::unix::fs::symlink("settings.toml", repo.join("local/link")).unwrap();
    // Over the budget (1 KiB in all), and a build folder: neither is protected.
    repo.write("big.bin", &"x".repeat(2048));
    repo.write("target/out.o", "built\n");
    let tree = |repo: &Repo| {
        let mut tree = tree_of(repo.path(), &[".git", ".refine-loop"]);
        tree.retain(|path, _| path.starts_with(".env") || path.starts_with("local"));
        tree
    };
    let before = tree(&repo);
    assert_eq!(before.len(), 4, "{before:?}");

    let output = repo.run(&["run", "--max-cycles", "1"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");

    assert_eq!(tree(&repo), before);
    assert!(matches!(
        tree_of(repo.path(), &[]).get(std::path::Path::new(".env")),
        Some(Entry::File { mode: 0o600, .. })
    ));
    assert!(!repo.join("big.bin").exists());
    // The build folder was the delegate's own to write where it could be made so (see
    // tests/it/confine.rs): what it removed there is back; elsewhere, it is gone.
    let private = json(&repo, "run.json")["confinement"]["private"].to_string();
    assert_eq!(
        repo.join("target/out.o").exists(),
        private.contains("/target")
    );
    let delegate =
        std::fs::read_to_string(repo.join(".refine-loop/cycle-1/delegate-reports/fix-build.md"))
            .unwrap();
    // In a folder git ignores, the delegate's deletions were in its own layer (where one can be
    // made): nothing to put back there.
    let local_private = private.contains("/local");
    for (path, in_folder) in [
        (".env", false),
        ("local/settings.toml", true),
        ("local/link", true),
    ] {
        assert_eq!(
            delegate.contains(&format!("deleted or changed `{path}`, a file git ignores")),
            !(in_folder && local_private),
            "{path}: {delegate}"
        );
    }
    let report = std::fs::read_to_string(repo.join(".refine-loop/REFINE-LOOP-FINAL.md")).unwrap();
    assert!(report.contains("## Ignored files"), "{report}");
    assert!(
        report.contains("put back after a delegate deleted or changed it: `.env` (cycle 1)"),
        "{report}"
    );
    assert!(
        report.contains("not protected (over `protect_ignored_max`): `big.bin` (2048 bytes)"),
        "{report}"
    );
    assert!(!report.contains("target/out.o"), "{report}");
}

#[test]
fn files_hidden_behind_ignore_rules_the_delegate_wrote_do_not_survive_its_rollback() {
    // Table: a folder that ignores itself; a pattern appended to the root .gitignore. Each also
    // writes a log that a rule of the user's ignores: beside a folder's own rules it is what the
    // delegate made that git ignores, cleared before the gate runs; under a .gitignore the
    // delegate changed, it is part of its change. Either way it is gone.
    for (fault, hidden) in [
        (
            "mkdir -p hidden/deeper && printf '*\\\\n' > hidden/.gitignore && echo planted > hidden/deeper/conftest.py",
            "hidden",
        ),
        (
            "printf '*.secret\\\\n' >> .gitignore && echo planted > notes.secret",
            "notes.secret",
        ),
    ] {
        // The gate fails when what was hidden is there: the change is rolled back.
        let repo = build_repo(&format!(
            "[[gate.check]]\nname = \"clean\"\nrun = \"test ! -e {hidden}\"\n\n\
             [[delegate]]\nrun = \"{fault}; echo output > debug.log\"\n"
        ));
        repo.write(".gitignore", "/.refine-loop\n*.log\n");
        repo.commit("ignore");
        let before = tree_of(repo.path(), &[".git", ".refine-loop"]);

        let output = repo.run(&["run", "--max-cycles", "1"]);
        assert_eq!(output.status.code(), Some(3), "{fault}: {output:?}");

        let delegate = std::fs::read_to_string(
            repo.join(".refine-loop/cycle-1/delegate-reports/fix-build.md"),
        )
        .unwrap();
        assert!(
            delegate.contains("- result: rolled back"),
            "{fault}: {delegate}"
        );
        assert!(
            delegate.contains(&format!("`{hidden}")),
            "{fault}: {delegate}"
        );
        assert!(!repo.join(hidden).exists(), "{fault}: {hidden} survived");
        let mut after = tree_of(repo.path(), &[".git", ".refine-loop"]);
        let log = after.remove(std::path::Path::new("debug.log"));
        assert!(log.is_none(), "{fault}: {delegate}");
        assert_eq!(after, before, "{fault}");
    }
}

#[test]
fn what_the_gate_wrote_in_earlier_cycles_is_not_hidden_by_a_later_rule() {
    // Every gate run leaves a new log that the user's rules ignore. The second cycle's delegate
    // also adds an ignore rule: the logs of the earlier runs are not its change.
    let repo = Repo::new();
    repo.write(".gitignore", "/.refine-loop\n*.log\n");
    repo.write("src/a.rs", "fn a() {}\n// FIXME one\n// FIXME two\n");
    repo.write(
        "refine-loop.toml",
        "[[gate.check]]\nname = \"lint\"\ncategory = \"lint\"\n\
         run = \"date +%s%N > run-$$.log; grep -Hn FIXME src/a.rs | awk -F: '{print $1\\\":\\\"$2\\\":1: error: fixme\\\"}'; ! grep -q FIXME src/a.rs\"\n\
         parser = \"gcc\"\n\n\
         [[delegate]]\ncategories = [\"lint\"]\n\
         run = \"sed -i '0,/FIXME/{/FIXME/d}' src/a.rs; if ! grep -q FIXME src/a.rs; then printf '*.tmp\\\\n' >> .gitignore; fi\"\n",
    );
    repo.commit("fixmes");
    let output = repo.run(&["run", "--max-cycles", "2"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let patch = std::fs::read_to_string(repo.join(".refine-loop/refine-loop.patch")).unwrap();
    assert!(patch.contains(".gitignore"), "{patch}");
    assert!(!patch.contains("diff --git a/run-"), "{patch}");
    assert!(
        std::fs::read_dir(repo.path())
            .unwrap()
            .flatten()
            .any(|entry| entry.file_name().to_string_lossy().ends_with(".log")),
        "the gate's logs were deleted"
    );
}

/// A dotfile setup: the user's ignored `.env` is a hard link to a file outside the tree. A
/// delegate that writes it in place reaches that file too; the rollback puts both back, for it
/// writes the same file in place rather than a new one under the tree's name.
#[test]
fn an_ignored_file_hard_linked_from_outside_is_put_back_in_place() {
    let repo = build_repo(
        "[[delegate]]\nrun = \"echo stolen > .env; echo stolen >> local.toml; touch fixed.txt\"\n",
    );
    repo.write(".gitignore", "/.refine-loop\n.env\nlocal.toml\n");
    repo.commit("ignore");
    let outside = tempfile::tempdir().unwrap();
    for name in [".env", "local.toml"] {
        std::fs::write(outside.path().join(name), format!("{name} of the user\n")).unwrap();
        std::fs::hard_link(outside.path().join(name), repo.join(name)).unwrap();
    }
    let output = repo.run(&["run", "--max-cycles", "1"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    for name in [".env", "local.toml"] {
        let expected = format!("{name} of the user\n");
        assert_eq!(
            std::fs::read_to_string(outside.path().join(name)).unwrap(),
            expected
        );
        assert_eq!(std::fs::read_to_string(repo.join(name)).unwrap(), expected);
        use std::os::unix::fs::MetadataExt;
        assert_eq!(
            std::fs::metadata(repo.join(name)).unwrap().ino(),
            std::fs::metadata(outside.path().join(name)).unwrap().ino(),
            "{name}: still the same file"
        );
    }
}
