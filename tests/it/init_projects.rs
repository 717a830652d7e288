//! `init`, then `run`, with no edits, on projects shaped like real ones (tests/fixtures/projects/
//! init): a Python package whose pyproject.toml says `fix = true`, a crate with a nightly-only
//! benchmark, an ESLint flat config with a prettier step. With the real tools, each run ends with
//! fewer failures than its baseline, and no gate check writes a tracked file. The config init
//! writes is a snapshot.

use std::path::Path;
use std::process::Command;

use crate::support::{git_in, path_with_tools, python_path_with_tools, tool};

/// A new repository holding the fixture project `name`, committed.
fn project(name: &str) -> tempfile::TempDir {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/projects/init")
        .join(name);
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&source, dir.path());
    if name == "javascript" {
        // The project's own node_modules: eslint and prettier as scripts/test pins them.
        let modules = Path::new(&tool("eslint"))
            .ancestors()
            .nth(2)
            .unwrap()
            .to_path_buf();
        std::os::unix::fs::symlink(modules, dir.path().join("node_modules")).unwrap();
    }
    git_in(dir.path(), &["init", "-q", "-b", "main"]);
    git_in(dir.path(), &["add", "-A"]);
    git_in(
        dir.path(),
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "commit",
            "-q",
            "-m",
            "project",
        ],
    );
    dir
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn refine_loop(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(crate::support::binary())
        .args(args)
        .current_dir(dir)
        .env("PATH", path_with_tools())
        .env("PYTHONPATH", python_path_with_tools())
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env_remove("RUSTFLAGS")
        .env_remove("GITHUB_WORKSPACE")
        .env_remove("CI_PROJECT_DIR")
        .output()
        .unwrap()
}

/// `init` then `run` on the fixture `name`: the config, and what the run did.
fn init_then_run(name: &str) -> tempfile::TempDir {
    let dir = project(name);
    let output = refine_loop(dir.path(), &["init"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let config = std::fs::read_to_string(dir.path().join("refine-loop.toml")).unwrap();
    insta::assert_snapshot!(format!("init_{name}"), config);
    let output = refine_loop(dir.path(), &["run"]);
    assert!(
        matches!(output.status.code(), Some(0 | 1 | 3)),
        "{output:?}"
    );
    let json = |file: &str| -> serde_json::Value {
        let text = std::fs::read_to_string(dir.path().join(".refine-loop").join(file)).unwrap();
        serde_json::from_str(&text).unwrap()
    };
    let counts: Vec<u64> = (json("trend.json")["cycles"].as_array().unwrap().iter())
        .map(|c| c["failed_count"].as_u64().unwrap())
        .collect();
    assert!(
        counts.len() >= 2 && counts.last() < counts.first(),
        "{name}: {counts:?}\n{output:?}"
    );
    // The real fixers' changes make no move that weakens the gate: the integrity check took no
    // fix away, so the counts are those of a run without it.
    for cycle in json("trend.json")["cycles"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
    {
        assert_eq!(
            cycle["integrity"],
            serde_json::json!({"refused": 0, "allowed": 0}),
            "{name}: {cycle}"
        );
    }
    let report =
        std::fs::read_to_string(dir.path().join(".refine-loop/REFINE-LOOP-FINAL.md")).unwrap();
    assert!(
        report.contains("No change tried to lower the count"),
        "{name}: {report}"
    );
    // No gate check wrote a tracked file, in any cycle.
    for cycle in 0..counts.len() {
        let summary = json(&format!("cycle-{cycle}/gate-summary.json"));
        for check in summary["checks"].as_array().unwrap() {
            assert!(check.get("wrote_tracked").is_none(), "{name}: {check}");
        }
    }
    dir
}

#[test]
fn a_python_package_whose_ruff_config_fixes() {
    tool("ruff");
    let dir = init_then_run("python");
    let code = std::fs::read_to_string(dir.path().join("src/prix/__init__.py")).unwrap();
    // ruff's safe fixes, as the project's rules select them (UP004, I001).
    assert!(code.contains("class Basket:"), "{code}");
}

#[test]
fn a_crate_with_a_nightly_only_benchmark() {
    let dir = init_then_run("rust");
    let code = std::fs::read_to_string(dir.path().join("src/lib.rs")).unwrap();
    assert!(!code.contains("return total;"), "{code}");
}

#[test]
fn an_eslint_flat_config_with_a_prettier_step() {
    tool("prettier");
    let dir = init_then_run("javascript");
    let code = std::fs::read_to_string(dir.path().join("src/cart.js")).unwrap();
    assert!(code.starts_with("const items = [];\n"), "{code}");
}
