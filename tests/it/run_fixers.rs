//! `refine-loop run` and `demo` with real fixers on real packages: cargo clippy --fix and
//! cargo fmt, ruff check --fix, eslint --fix. Each ends SUCCESS with a descending trend.

use std::process::{Command, Output};

use crate::run_loop::{failed_counts, json, run};
use crate::support::{Repo, tool};

fn assert_descends_to_success(repo: &Repo, output: &Output) {
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let counts = failed_counts(repo);
    assert!(
        counts.len() >= 2 && counts[0] > 0 && *counts.last().unwrap() == 0,
        "{counts:?}"
    );
    assert!(counts.windows(2).all(|w| w[1] <= w[0]), "{counts:?}");
    assert_eq!(json(repo, "trend.json")["outcome"], "SUCCESS");
    let history = json(repo, "category-history.json");
    for (name, cycles) in history["categories"].as_object().unwrap() {
        assert_eq!(
            cycles.as_array().unwrap().last().unwrap()["passed"],
            true,
            "{name}"
        );
    }
}

#[test]
fn rust_clippy_fix_and_cargo_fmt_harden_a_crate() {
    let repo = Repo::new();
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"hardened\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    );
    repo.write(
        "src/lib.rs",
        "pub fn answer() -> i32 {\n    return 42;\n}\n\npub fn   spaced( a:i32 )->i32{ a+1 }\n",
    );
    repo.write(".gitignore", "/target\n/.refine-loop\n");
    repo.write(
        "refine-loop.toml",
        r#"[[gate.check]]
name = "clippy"
category = "lint"
run = "cargo clippy --all-targets --message-format=short -- -D warnings"
parser = "clippy"

[[gate.check]]
name = "fmt"
category = "format"
run = "cargo fmt --check"
parser = "rustfmt"

[[delegate]]
categories = ["lint"]
run = "cargo clippy --fix --allow-dirty --allow-staged --all-targets"

[[delegate]]
categories = ["format"]
run = "cargo fmt"
"#,
    );
    repo.commit("crate");
    let output = run(&repo, &[]);
    assert_descends_to_success(&repo, &output);
    let code = std::fs::read_to_string(repo.join("src/lib.rs")).unwrap();
    assert!(
        code.contains("    42\n") && code.contains("pub fn spaced(a: i32) -> i32"),
        "{code}"
    );
}

/// A Python package with three findings `ruff check --fix` fixes, a ruff gate and a ruff fixer.
pub fn python_package_with_ruff_findings() -> Repo {
    let ruff = tool("ruff");
    let repo = Repo::new();
    repo.write(
        "pyproject.toml",
        "[tool.ruff.lint]\nselect = [\"F401\", \"F541\"]\n",
    );
    repo.write(
        "pkg/util.py",
        "import os\nimport sys\n\n\ndef greet(name):\n    return f\"hello\" + name\n",
    );
    repo.write(".gitignore", "/.refine-loop\n.ruff_cache/\n");
    repo.write(
        "refine-loop.toml",
        &format!(
            "[[gate.check]]\nname = \"ruff\"\ncategory = \"lint\"\nrun = \"{ruff} check --no-cache --output-format=concise .\"\nparser = \"ruff\"\n\n\
             [[delegate]]\ncategories = [\"lint\"]\nrun = \"{ruff} check --no-cache --fix .\"\n"
        ),
    );
    repo.commit("package");
    repo
}

#[test]
fn python_ruff_fix_cleans_a_package() {
    let repo = python_package_with_ruff_findings();
    let output = run(&repo, &[]);
    assert_descends_to_success(&repo, &output);
    assert_eq!(failed_counts(&repo)[0], 3);
}

#[test]
fn javascript_eslint_fix_cleans_a_package() {
    let eslint = tool("eslint");
    let repo = Repo::new();
    repo.write(
        "eslint.config.cjs",
        "module.exports = [{ files: [\"**/*.js\"], rules: { \"prefer-const\": \"error\", \"no-var\": \"error\" } }];\n",
    );
    repo.write(
        "src/app.js",
        "var total = 1;\nlet name = \"x\";\nconsole.log(total, name);\n",
    );
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write(
        "refine-loop.toml",
        &format!(
            "[[gate.check]]\nname = \"eslint\"\ncategory = \"lint\"\nrun = \"{eslint} .\"\nparser = \"eslint\"\n\n\
             [[delegate]]\ncategories = [\"lint\"]\nrun = \"{eslint} --fix .\"\n"
        ),
    );
    repo.commit("package");
    let output = run(&repo, &[]);
    assert_descends_to_success(&repo, &output);
    assert_eq!(
        std::fs::read_to_string(repo.join("src/app.js")).unwrap(),
        "const total = 1;\nconst name = \"x\";\nconsole.log(total, name);\n"
    );
}

#[test]
fn the_demo_hardens_its_crate_with_the_real_fixers() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("demo");
    let output = Command::new(crate::support::binary())
        .args(["demo", "--dir"])
        .arg(&target)
        .env("CARGO_TARGET_DIR", dir.path().join("target"))
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("SUCCESS: gate-passed"), "{stdout}");
    assert!(target.join(".refine-loop/REFINE-LOOP-FINAL.md").is_file());
    let again = Command::new(crate::support::binary())
        .args(["demo", "--dir"])
        .arg(&target)
        .output()
        .unwrap();
    assert_eq!(
        again.status.code(),
        Some(2),
        "a second demo into the same folder is refused"
    );
}
