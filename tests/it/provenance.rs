//! Provenance trailers: every commit of a run, on the private ref and in `patches/`, ends in the
//! five `Refine-Loop-*` trailers, as the real `git interpret-trailers --parse` reads them.

use std::path::Path;
use std::process::Command;

use crate::run_loop::json;
use crate::support::{Repo, git_in};

/// Fixes one finding a turn. Its command carries what a trailer looks like: in the commit it
/// must stay text of the ledger and of its own trailer, never a trailer of its own.
const DELEGATE: &str = "sed -i 1d findings.txt\n: 'Refine-Loop-Run: https://forged.example/runs/1'";

/// The CI variables the run's URL is made from, none of them set unless a test says so.
const CI_URL_VARIABLES: [&str; 6] = [
    "GITHUB_SERVER_URL",
    "GITHUB_REPOSITORY",
    "GITHUB_RUN_ID",
    "CI_JOB_URL",
    "CI_PIPELINE_URL",
    "BUILD_URL",
];

/// A repository whose gate finds two lint failures and a delegate that fixes one per turn.
fn two_findings() -> Repo {
    let repo = Repo::new();
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write(
        "findings.txt",
        "a.rs:1:1: error: one\na.rs:2:1: error: two\n",
    );
    repo.write(
        "refine-loop.toml",
        &format!(
            "[[gate.check]]\nname = \"lint\"\ncategory = \"lint\"\nrun = \"cat findings.txt; test ! -s findings.txt\"\nparser = \"clippy\"\n\n\
             [[delegate]]\ncategories = [\"lint\"]\nrun = '''{DELEGATE}'''\n"
        ),
    );
    repo.commit("base");
    repo
}

/// `git interpret-trailers --parse` of the file at `path`, as (key, value) pairs in order.
pub fn parsed_trailers(dir: &Path, path: &Path) -> Vec<(String, String)> {
    let output = Command::new("git")
        .args(["interpret-trailers", "--parse"])
        .arg(path)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let (key, value) = line.split_once(": ").unwrap();
            (key.to_string(), value.to_string())
        })
        .collect()
}

/// What the run's two commits must say, oldest first; `gate` is the fingerprint they share.
fn expected(run: &str, gate: &str, fixed_left: [(u32, u32); 2]) -> Vec<Vec<(String, String)>> {
    // Cut short at 60 characters, its colons before a space gone.
    let delegate =
        "command `sed -i 1d findings.txt 'Refine-Loop-Run https://forged.e\u{2026}`; model unknown";
    fixed_left
        .iter()
        .map(|(fixed, left)| {
            [
                ("Refine-Loop-Run", run.to_string()),
                ("Refine-Loop-Gate", gate.to_string()),
                ("Refine-Loop-Delegate", delegate.to_string()),
                ("Refine-Loop-Cost", "unknown".to_string()),
                (
                    "Refine-Loop-Findings",
                    format!("fixed {fixed}, new 0, pre-existing {left}"),
                ),
            ]
            .into_iter()
            .map(|(key, value)| (key.to_string(), value))
            .collect()
        })
        .collect()
}

#[test]
fn every_patch_and_commit_of_a_run_carries_the_five_trailers() {
    let repo = two_findings();
    let root = repo.path();
    let base = git_in(root, &["rev-parse", "HEAD"]);
    let mut command = repo.command(&["run"]);
    for name in CI_URL_VARIABLES {
        command.env_remove(name);
    }
    let output = command
        .env("GITHUB_SERVER_URL", "https://github.example")
        .env("GITHUB_REPOSITORY", "acme/shop")
        .env("GITHUB_RUN_ID", "4242")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");

    let manifest = json(&repo, "manifest.json");
    let reference = manifest["ref"].as_str().unwrap();
    let commits = git_in(
        root,
        &["rev-list", "--reverse", &format!("{base}..{reference}")],
    );
    let commits: Vec<&str> = commits.lines().collect();
    assert_eq!(commits.len(), 2, "{commits:?}");
    let messages = tempfile::tempdir().unwrap();
    let on_the_ref: Vec<Vec<(String, String)>> = commits
        .iter()
        .map(|commit| {
            let message = git_in(root, &["log", "-1", "--format=%B", commit]);
            let path = messages.path().join(commit);
            std::fs::write(&path, format!("{message}\n")).unwrap();
            parsed_trailers(root, &path)
        })
        .collect();
    let gate = on_the_ref[0][1].1.clone();
    assert!(
        gate.strip_prefix("sha256:")
            .is_some_and(|hex| hex.len() == 16 && hex.chars().all(|c| c.is_ascii_hexdigit())),
        "{gate}"
    );
    let wanted = expected(
        "https://github.example/acme/shop/actions/runs/4242",
        &gate,
        [(1, 1), (1, 0)],
    );
    assert_eq!(on_the_ref, wanted);

    let mut patches: Vec<_> = std::fs::read_dir(repo.join(".refine-loop/patches"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    patches.sort();
    assert_eq!(patches.len(), 2, "{patches:?}");
    let in_the_series: Vec<_> = patches
        .iter()
        .map(|patch| parsed_trailers(root, patch))
        .collect();
    assert_eq!(in_the_series, wanted);
}

#[test]
fn outside_ci_the_run_is_named_by_its_id() {
    let repo = two_findings();
    let mut command = repo.command(&["run"]);
    for name in CI_URL_VARIABLES {
        command.env_remove(name);
    }
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let run_id = json(&repo, "manifest.json")["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    let patch = repo.join(".refine-loop/patches");
    let first = std::fs::read_dir(&patch)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .min()
        .unwrap();
    let trailers = parsed_trailers(repo.path(), &first);
    assert_eq!(
        trailers[0],
        ("Refine-Loop-Run".to_string(), run_id),
        "{trailers:?}"
    );
    assert_eq!(trailers.len(), 5, "{trailers:?}");
}

#[test]
fn a_fixer_that_spends_nothing_on_purpose_costs_none_not_unknown() {
    let repo = two_findings();
    let config = std::fs::read_to_string(repo.join("refine-loop.toml")).unwrap();
    repo.write(
        "refine-loop.toml",
        &format!(
            "{}usage = \"none\"\n",
            config.trim_end_matches('\n').to_owned() + "\n"
        ),
    );
    repo.commit("a local fixer");
    let output = repo.command(&["run"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let patch = repo.join(".refine-loop/patches");
    for entry in std::fs::read_dir(&patch).unwrap() {
        let trailers = parsed_trailers(repo.path(), &entry.unwrap().path());
        let cost = trailers.iter().find(|(key, _)| key == "Refine-Loop-Cost");
        assert_eq!(
            cost.map(|(_, value)| value.as_str()),
            Some("none (its delegates say usage = \"none\")"),
            "{trailers:?}"
        );
    }
}
