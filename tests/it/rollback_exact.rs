//! Byte-exact rollback of clean tracked files whose bytes on disk are not their blob's: line
//! endings set by attributes or `core.autocrlf`, a smudge filter run by real git, attributes
//! the delegate rewrites in the same change, and an edit git's status does not show. In each,
//! the delegate fixes one finding and edits a file the gate checks byte for byte; the gate
//! rejects the change, and the tree must come back byte- and mode-identical.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use crate::support::{Entry, Repo, tree_of};

/// A repository whose `lint` check fails until a finding is fixed and whose `exact` check fails
/// unless every file in `data/` has the bytes it had when the scene was set up.
struct Scene {
    repo: Repo,
    /// Holds the sums of `data/`, outside the repository (`$SUMS_DIR` in a fault).
    sums: tempfile::TempDir,
}

impl Scene {
    /// `setup` commits the files of `data/` (and whatever attributes or config it needs) and
    /// leaves them checked out as git writes them; the delegate fixes the finding, then does
    /// `fault`.
    fn new(setup: impl FnOnce(&Repo), fault: &str) -> Self {
        let repo = Repo::new();
        let sums = tempfile::tempdir().unwrap();
        let fault = fault.replace("$SUMS_DIR", &sums.path().display().to_string());
        let sums_file = sums.path().join("data.sha256");
        repo.write(".gitignore", "/.refine-loop\n");
        repo.write("findings.out", "findings.out:1:1: error: one\n");
        repo.write(
            "refine-loop.toml",
            &format!(
                r#"# The watch on its own: what the loop finds and undoes when the kernel does not
# prevent it (tests/it/confine.rs shows the kernel preventing it). Confined, the delegate could
# not write .git/index.
[loop]
confine = "off"

[[gate.check]]
name = "lint"
category = "lint"
run = "cat findings.out; test ! -s findings.out"
parser = "clippy"

[[gate.check]]
name = "exact"
category = "exact"
run = "cd data && sha256sum --quiet -c {}"

[[delegate]]
categories = ["lint"]
run = '''sed -i 1d findings.out; {fault}'''
"#,
                sums_file.display()
            ),
        );
        repo.commit("gate");
        setup(&repo);
        settle(&repo);
        let output = Command::new("sh")
            .args(["-c", "sha256sum *"])
            .current_dir(repo.join("data"))
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        std::fs::write(&sums_file, output.stdout).unwrap();
        Self { repo, sums }
    }

    fn tree(&self) -> BTreeMap<PathBuf, Entry> {
        tree_of(self.repo.path(), &[".git", ".refine-loop"])
    }

    /// Runs one cycle: the change is rolled back, and the tree is as it was, to the byte.
    fn run_and_roll_back(&self) -> String {
        let before = self.tree();
        let output = self.repo.run(&["run", "--max-cycles", "1"]);
        assert!(matches!(output.status.code(), Some(1 | 3)), "{output:?}");
        let report = std::fs::read_to_string(
            self.repo
                .join(".refine-loop/cycle-1/delegate-reports/fix-lint.md"),
        )
        .unwrap();
        assert!(report.contains("- result: rolled back"), "{report}");
        // Clean files, not the user's work: their earlier bytes come from the loop's record.
        assert!(!report.contains("user's own work"), "{report}");
        let after = self.tree();
        for (path, entry) in &before {
            assert_eq!(after.get(path), Some(entry), "{} changed", path.display());
        }
        assert_eq!(after.len(), before.len(), "{:?}", after.keys());
        report
    }

    fn sums_dir(&self) -> &std::path::Path {
        self.sums.path()
    }

    fn bytes(&self, relative: &str) -> Vec<u8> {
        std::fs::read(self.repo.join(relative)).unwrap()
    }
}

/// Dates every file in `data/` back and lets git refresh the index: no file is newer than the
/// index (racily clean), so git trusts each one's recorded identity, as in a checkout made
/// some time before the run.
fn settle(repo: &Repo) {
    let status = Command::new("sh")
        .args([
            "-c",
            "touch -d @1600000000 data/* && git update-index -q --refresh",
        ])
        .current_dir(repo.path())
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(
        crate::support::git_in(repo.path(), &["status", "--porcelain"]),
        ""
    );
}

/// Removes `paths` and checks them out again, as git writes them under the attributes and
/// config now in force.
fn check_out_again(repo: &Repo, paths: &[&str]) {
    for path in paths {
        std::fs::remove_file(repo.join(path)).unwrap();
    }
    let mut args = vec!["checkout", "--"];
    args.extend(paths);
    repo.git(&args);
}

/// `data/a.txt` and `data/b.txt` committed with LF line endings, written with CRLF by git under
/// `* text eol=crlf`.
fn crlf_by_attributes(repo: &Repo) {
    repo.write(".gitattributes", "*.txt text eol=crlf\n");
    repo.write("data/a.txt", "one\ntwo\n");
    repo.write("data/b.txt", "three\n");
    repo.commit("data");
    check_out_again(repo, &["data/a.txt", "data/b.txt"]);
}

#[test]
fn a_file_checked_out_with_crlf_by_its_attributes_comes_back_with_crlf() {
    let scene = Scene::new(crlf_by_attributes, "printf 'edited\\n' > data/a.txt");
    assert_eq!(scene.bytes("data/a.txt"), b"one\r\ntwo\r\n");
    scene.run_and_roll_back();
    assert_eq!(scene.bytes("data/a.txt"), b"one\r\ntwo\r\n");
}

#[test]
fn attributes_the_delegate_rewrites_do_not_change_what_comes_back() {
    // Table: each way of changing the attributes in the same change as the edit.
    for attributes in [
        "printf '*.txt -text\\n' > .gitattributes",
        "rm .gitattributes",
        "printf '*.txt text eol=lf\\n' > .gitattributes",
        "printf '* -text\\n' > data/.gitattributes",
    ] {
        let scene = Scene::new(
            crlf_by_attributes,
            &format!("{attributes}; printf 'edited\\n' > data/a.txt; rm data/b.txt"),
        );
        scene.run_and_roll_back();
        assert_eq!(scene.bytes("data/a.txt"), b"one\r\ntwo\r\n", "{attributes}");
        assert_eq!(scene.bytes("data/b.txt"), b"three\r\n", "{attributes}");
    }
}

#[test]
fn a_file_checked_out_with_crlf_by_core_autocrlf_comes_back_with_crlf() {
    let scene = Scene::new(
        |repo| {
            repo.write("data/a.txt", "one\ntwo\n");
            repo.commit("data");
            repo.git(&["config", "core.autocrlf", "true"]);
            check_out_again(repo, &["data/a.txt"]);
        },
        "printf 'edited\\n' > data/a.txt",
    );
    assert_eq!(scene.bytes("data/a.txt"), b"one\r\ntwo\r\n");
    scene.run_and_roll_back();
    assert_eq!(scene.bytes("data/a.txt"), b"one\r\ntwo\r\n");
}

#[test]
fn a_file_written_by_a_smudge_filter_comes_back_as_the_filter_wrote_it() {
    let scene = Scene::new(
        |repo| {
            // A filter run by real git (libgit2 cannot run it): the tree holds what it wrote.
            repo.git(&["config", "filter.mark.smudge", "sed 's/^/smudged: /'"]);
            repo.git(&["config", "filter.mark.clean", "sed 's/^smudged: //'"]);
            repo.write(".gitattributes", "*.dat filter=mark\n");
            repo.write("data/a.dat", "one\ntwo\n");
            repo.commit("data");
            check_out_again(repo, &["data/a.dat"]);
        },
        "printf 'edited\\n' > data/a.dat; chmod +x data/a.dat",
    );
    assert_eq!(scene.bytes("data/a.dat"), b"smudged: one\nsmudged: two\n");
    scene.run_and_roll_back();
    assert_eq!(scene.bytes("data/a.dat"), b"smudged: one\nsmudged: two\n");
}

#[test]
fn an_edit_hidden_by_rewriting_only_the_index_file_times_is_found_and_rolled_back() {
    // The delegate edits a file (same size, an old mtime so git does not find it racy), then
    // has git refresh the index through a clean filter that gives back the old bytes: the entry
    // keeps its blob and takes the new file's times, so `git status` calls the edit clean. Only
    // the index's file times changed.
    let scene = Scene::new(
        |repo| {
            repo.write("data/a.txt", "one\ntwo\n");
            repo.commit("data");
        },
        "old=$(mktemp); attributes=$(mktemp); cp data/a.txt \"$old\"; \
         printf 'ONE\\nTWO\\n' > data/a.txt; touch -d @1600000000 data/a.txt; \
         echo 'data/a.txt filter=hide' > \"$attributes\"; \
         git -c core.attributesFile=\"$attributes\" -c filter.hide.clean=\"cat $old\" \
             update-index -q --really-refresh; \
         git status --porcelain -- data > $SUMS_DIR/status",
    );
    let report = scene.run_and_roll_back();
    assert_eq!(
        std::fs::read_to_string(scene.sums_dir().join("status")).unwrap(),
        "",
        "git status still showed the edit: the test hid nothing"
    );
    assert!(report.contains("`data/a.txt`"), "{report}");
    assert_eq!(scene.bytes("data/a.txt"), b"one\ntwo\n");
    assert_eq!(
        crate::support::git_in(scene.repo.path(), &["status", "--porcelain"]),
        ""
    );
}

#[test]
fn a_hard_link_to_a_file_outside_is_hostile_and_rolled_back() {
    // Without the kernel's confinement nothing stops the write through the link; the loop finds
    // the link, undoes the whole change and says what it could not undo.
    let scene = Scene::new(
        |repo| {
            repo.write("data/a.txt", "one\ntwo\n");
            repo.commit("data");
        },
        "printf 'outside\\n' > $SUMS_DIR/victim; rm data/a.txt; \
         ln $SUMS_DIR/victim data/a.txt; printf 'through the link\\n' >> data/a.txt",
    );
    let report = scene.run_and_roll_back();
    assert!(
        report.contains("made `data/a.txt` a hard link to a file elsewhere (2 names)"),
        "{report}"
    );
    let metadata = std::fs::metadata(scene.repo.join("data/a.txt")).unwrap();
    assert_eq!(std::os::unix::fs::MetadataExt::nlink(&metadata), 1);
    assert_eq!(scene.bytes("data/a.txt"), b"one\ntwo\n");
}
