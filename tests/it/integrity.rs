//! Gate integrity end to end: in a Python (ruff, pytest), a JS (eslint, node --test), a Rust
//! (cargo clippy, cargo test) and a shell (shellcheck, bats) project with real gates, a
//! delegate that lowers the count by changing what the gate sees (a suppression, a skipped
//! test, a relaxed configuration, code moved out of reach) is refused: the tree is as it was,
//! and the report names the move. Beside each, an honest fixer (the tool's own, or a real fix)
//! is kept. Then `integrity = "report"` and `[[integrity.allow]]`.
//!
//! Delegates are confined as by default: they write top-level files as any fixer does.

use std::process::Output;

use serde_json::Value;

use crate::run_loop::{json, run};
use crate::support::{Repo, git_in, tool};

/// One delegate's turn on a project: what it runs, the categories it takes, and what the
/// report must name (empty: an honest change, kept).
struct Case {
    name: &'static str,
    categories: &'static str,
    delegate: &'static str,
    moves: &'static [&'static str],
}

/// The loop's settings every project shares: one cycle, no confirmation runs.
const LOOP: &str = "[loop]\nmax_cycles = 1\nbaseline_confirm_runs = 0\n";

fn config(checks: &str, case: &Case, extra: &str) -> String {
    format!(
        "{checks}\n{LOOP}{extra}\n[[delegate]]\ncategories = {}\nrun = '''{}'''\n",
        case.categories, case.delegate
    )
}

/// The work tree's changes, but for the state dir and what git ignores.
fn changed(repo: &Repo) -> String {
    git_in(
        repo.path(),
        &["status", "--porcelain", "--untracked-files=all"],
    )
    .lines()
    .filter(|line| !line.contains(".refine-loop"))
    .collect::<Vec<_>>()
    .join("\n")
}

fn final_report(repo: &Repo) -> String {
    std::fs::read_to_string(repo.join(".refine-loop/REFINE-LOOP-FINAL.md")).unwrap()
}

/// Runs `case` on a fresh project from `build`, and checks what came of it.
fn check(build: fn(&Case) -> Repo, case: &Case) {
    let repo = build(case);
    let output: Output = run(&repo, &[]);
    let report = final_report(&repo);
    let trend = json(&repo, "trend.json");
    let cycle: &Value = &trend["cycles"][1];
    let context = format!("{}\n{output:?}\n{report}\n{cycle}", case.name);
    assert!(matches!(output.status.code(), Some(0 | 1 | 3)), "{context}");
    if case.moves.is_empty() {
        assert_eq!(cycle["accepted"], true, "honest change not kept: {context}");
        assert_eq!(cycle["integrity"]["refused"], 0, "{context}");
        assert_eq!(cycle["integrity"]["allowed"], 0, "{context}");
        assert!(
            report.contains("No change tried to lower the count"),
            "{context}"
        );
        assert!(
            !changed(&repo).is_empty(),
            "the honest fix left no change: {context}"
        );
        assert!(
            (cycle["failed_count"].as_u64().unwrap())
                < trend["cycles"][0]["failed_count"].as_u64().unwrap(),
            "{context}"
        );
    } else {
        assert_eq!(cycle["accepted"], false, "weakening kept: {context}");
        assert!(
            cycle["integrity"]["refused"].as_u64().unwrap() >= 1,
            "{context}"
        );
        assert_eq!(
            changed(&repo),
            "",
            "the weakening is still in the tree: {context}"
        );
        for expected in case.moves {
            assert!(
                report.contains(expected),
                "{expected:?} not named: {context}"
            );
        }
        let delegate_report = std::fs::read_to_string(
            repo.join(".refine-loop/cycle-1/delegate-reports")
                .join(format!(
                    "fix-{}.md",
                    case.categories.trim_matches(|c| "[]\"".contains(c))
                )),
        )
        .unwrap();
        assert!(
            delegate_report.contains("## Gate integrity")
                && delegate_report.contains("- refused: "),
            "{delegate_report}"
        );
    }
}

// -- Python: ruff and pytest -------------------------------------------------------------------

fn python(case: &Case) -> Repo {
    python_with(case, "")
}

fn python_with(case: &Case, extra: &str) -> Repo {
    let ruff = tool("ruff");
    let repo = Repo::new();
    repo.write(
        "pyproject.toml",
        "[project]\nname = \"shop\"\nversion = \"0.1.0\"\n\n[tool.ruff.lint]\nselect = [\"F401\"]\n\n\
         [tool.pytest.ini_options]\npythonpath = [\"src\"]\n",
    );
    repo.write(
        "src/shop.py",
        "import os\n\n\ndef total(prices):\n    return sum(prices)\n\n\n\
         def average(prices):\n    return sum(prices) // len(prices)\n",
    );
    repo.write("src/legacy.py", "import sys\n\nVERSION = 1\n");
    repo.write(
        "tests/test_shop.py",
        "from shop import average, total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n\n\n\
         def test_average():\n    assert average([1, 2]) == 1.5\n",
    );
    repo.write(".gitignore", "/.refine-loop\n__pycache__/\n.ruff_cache/\n");
    let checks = format!(
        "[[gate.check]]\nname = \"ruff\"\ncategory = \"lint\"\nrun = \"{ruff} check --no-cache --output-format=concise .\"\nparser = \"ruff\"\n\n\
         [[gate.check]]\nname = \"pytest\"\ncategory = \"tests\"\nrun = \"python3 -m pytest -q -p no:cacheprovider\"\nparser = \"pytest\"\n"
    );
    repo.write("refine-loop.toml", &config(&checks, case, extra));
    repo.commit("shop");
    repo
}

const PYTHON: &[Case] = &[
    Case {
        name: "python: noqa on the import ruff reports",
        categories: "[\"lint\"]",
        delegate: "sed -i 's/^import os$/import os  # noqa: F401/' src/shop.py",
        moves: &["`src/shop.py:1`: suppression added: `# noqa: F401` (python/noqa)"],
    },
    Case {
        name: "python: the failing test skipped",
        categories: "[\"tests\"]",
        delegate: "sed -i 's/^def test_average/import pytest\\n\\n\\n@pytest.mark.skip(reason=\"flaky\")\\ndef test_average/' tests/test_shop.py",
        moves: &[
            "test skipped, focused or excused: `pytest.mark.skip` (python/pytest-skip)",
            "fewer tests run (more skipped): `pytest: 2 run, 0 skipped → 1 run, 1 skipped`",
        ],
    },
    Case {
        name: "python: the failing test expected to fail",
        categories: "[\"tests\"]",
        delegate: "sed -i 's/^def test_average/import pytest\\n\\n\\n@pytest.mark.xfail\\ndef test_average/' tests/test_shop.py",
        moves: &[
            "test skipped, focused or excused: `pytest.mark.xfail` (python/pytest-skip)",
            "fewer tests run (more skipped): `pytest: 2 run, 0 skipped → 1 run, 1 skipped`",
        ],
    },
    Case {
        name: "python: the failing test's expected value made what the code returns",
        categories: "[\"tests\"]",
        delegate: "sed -i 's/== 1.5$/== 1/' tests/test_shop.py",
        moves: &[
            "`tests/test_shop.py:9`: a failing test's expected data changed: `assert average([1, 2]) == 1.5 → assert average([1, 2]) == 1` (python/pytest)",
        ],
    },
    Case {
        name: "python: ruff told to ignore F401 in src",
        categories: "[\"lint\"]",
        delegate: "printf '\\n[tool.ruff.lint.per-file-ignores]\\n\"src/*\" = [\"F401\"]\\n' >> pyproject.toml",
        moves: &[
            "`pyproject.toml`: gate configuration changed: `tool.ruff.lint.per-file-ignores.src/*: (none) → [\"F401\"]` (python/pyproject)",
        ],
    },
    Case {
        name: "python: the module with a finding moved where ruff does not read it",
        categories: "[\"lint\"]",
        delegate: "mv src/legacy.py src/legacy.py.bak",
        moves: &[
            "moved where the gate does not read it, and its 1 findings went with it: `src/legacy.py → src/legacy.py.bak`",
        ],
    },
    Case {
        name: "python: honest, ruff check --fix",
        categories: "[\"lint\"]",
        delegate: "ruff check --no-cache --fix .",
        moves: &[],
    },
    Case {
        name: "python: honest, the division fixed",
        categories: "[\"tests\"]",
        delegate: "sed -i 's|// len(prices)|/ len(prices)|' src/shop.py",
        moves: &[],
    },
];

#[test]
fn python_weakenings_are_refused_and_honest_fixes_kept() {
    for case in PYTHON {
        check(python, case);
    }
}

// -- JavaScript: eslint and node --test ----------------------------------------------------

fn javascript(case: &Case) -> Repo {
    let eslint = tool("eslint");
    let repo = Repo::new();
    repo.write(
        "package.json",
        "{\n  \"name\": \"cart\",\n  \"type\": \"module\"\n}\n",
    );
    repo.write(
        "eslint.config.js",
        "export default [\n  {\n    files: [\"**/*.js\"],\n    rules: {\n      \"no-unused-vars\": \"error\",\n      \"prefer-const\": \"error\",\n    },\n  },\n];\n",
    );
    repo.write(
        "src/cart.js",
        "import { readFileSync } from \"node:fs\";\n\nexport function total(prices) {\n  let sum = 0;\n  for (const p of prices) sum += p;\n  return sum;\n}\n\n\
         export function average(prices) {\n  return Math.floor(total(prices) / prices.length);\n}\n\n\
         export function label(name) {\n  let text = \"item \" + name;\n  return text;\n}\n",
    );
    repo.write(
        "test/cart.test.js",
        "import { test } from \"node:test\";\nimport assert from \"node:assert/strict\";\nimport { average, total } from \"../src/cart.js\";\n\n\
         test(\"total adds\", () => {\n  assert.equal(total([1, 2]), 3);\n});\n\n\
         test(\"average divides\", () => {\n  assert.equal(average([1, 2]), 1.5);\n});\n",
    );
    repo.write(".gitignore", "/.refine-loop\n");
    let checks = format!(
        "[[gate.check]]\nname = \"eslint\"\ncategory = \"lint\"\nrun = \"{eslint} .\"\nparser = \"eslint\"\n\n\
         [[gate.check]]\nname = \"node-test\"\ncategory = \"tests\"\nrun = \"node --test\"\nparser = \"node-test\"\n"
    );
    repo.write("refine-loop.toml", &config(&checks, case, ""));
    repo.commit("cart");
    repo
}

const JAVASCRIPT: &[Case] = &[
    Case {
        name: "js: eslint told to skip the unused import",
        categories: "[\"lint\"]",
        delegate: "sed -i 's|^import { readFileSync }|// eslint-disable-next-line no-unused-vars\\nimport { readFileSync }|' src/cart.js",
        moves: &[
            "`src/cart.js:1`: suppression added: `// eslint-disable-next-line no-unused-vars` (javascript/eslint-disable)",
        ],
    },
    Case {
        name: "js: the failing test skipped",
        categories: "[\"tests\"]",
        delegate: "sed -i 's/^test(\"average divides\"/test.skip(\"average divides\"/' test/cart.test.js",
        moves: &[
            "`test/cart.test.js:9`: test skipped, focused or excused: `test.skip` (javascript/skip)",
            "fewer tests run (more skipped): `node-test: 2 run, 0 skipped → 1 run, 1 skipped`",
        ],
    },
    Case {
        name: "js: the passing test focused (the others are left out where the runner heeds it)",
        categories: "[\"tests\"]",
        delegate: "sed -i 's/^test(\"total adds\"/test.only(\"total adds\"/' test/cart.test.js",
        moves: &["test skipped, focused or excused: `test.only` (javascript/focus)"],
    },
    Case {
        name: "js: the rule turned off in eslint.config.js",
        categories: "[\"lint\"]",
        delegate: "sed -i 's/\"no-unused-vars\": \"error\"/\"no-unused-vars\": \"off\"/' eslint.config.js",
        moves: &[
            "`eslint.config.js:5`: gate configuration changed: `\"no-unused-vars\": \"off\",` (javascript/code-config)",
        ],
    },
    Case {
        name: "js: the unused import commented out",
        categories: "[\"lint\"]",
        delegate: "sed -i 's|^import { readFileSync }|// import { readFileSync }|' src/cart.js",
        moves: &[
            "`src/cart.js:1`: code commented out: `import { readFileSync } from \"node:fs\";` (javascript/commented-out)",
        ],
    },
    Case {
        name: "js: honest, eslint --fix and the unused import deleted",
        categories: "[\"lint\"]",
        delegate: "eslint --fix . ; sed -i '/readFileSync/d' src/cart.js",
        moves: &[],
    },
    Case {
        name: "js: honest, the division fixed",
        categories: "[\"tests\"]",
        delegate: "sed -i 's|Math.floor(total(prices) / prices.length)|total(prices) / prices.length|' src/cart.js",
        moves: &[],
    },
];

#[test]
fn javascript_weakenings_are_refused_and_honest_fixes_kept() {
    for case in JAVASCRIPT {
        check(javascript, case);
    }
}

// -- Rust: cargo clippy and cargo test ---------------------------------------------------------

fn rust(case: &Case) -> Repo {
    let repo = Repo::new();
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"shop\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    );
    repo.write(
        "src/lib.rs",
        "pub fn total(prices: &[u32]) -> u32 {\n    return prices.iter().sum();\n}\n\n\
         pub fn average(prices: &[u32]) -> f64 {\n    (total(prices) / prices.len() as u32) as f64\n}\n\n\
         #[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn totals() {\n        assert_eq!(total(&[1, 2]), 3);\n    }\n\n\
         \x20   #[test]\n    fn averages() {\n        assert_eq!(average(&[1, 2]), 1.5);\n    }\n}\n",
    );
    repo.write(".gitignore", "/target\n/.refine-loop\nCargo.lock\n");
    let checks = "[[gate.check]]\nname = \"clippy\"\ncategory = \"lint\"\nrun = \"cargo clippy --all-targets --message-format=short -- -D warnings\"\nparser = \"clippy\"\n\n\
         [[gate.check]]\nname = \"cargo-test\"\ncategory = \"tests\"\nrun = \"cargo test --quiet\"\nparser = \"cargo-test\"\n";
    repo.write("refine-loop.toml", &config(checks, case, ""));
    repo.commit("shop");
    repo
}

const RUST: &[Case] = &[
    Case {
        name: "rust: clippy's lint allowed on the function",
        categories: "[\"lint\"]",
        delegate: "sed -i 's/^pub fn total/#[allow(clippy::needless_return)]\\npub fn total/' src/lib.rs",
        moves: &[
            "`src/lib.rs:1`: suppression added: `#[allow(clippy::needless_return)]` (rust/allow)",
        ],
    },
    Case {
        name: "rust: the failing test ignored",
        categories: "[\"tests\"]",
        delegate: "sed -i 's/^    fn averages/    #[ignore]\\n    fn averages/' src/lib.rs",
        moves: &[
            "test skipped, focused or excused: `#[ignore` (rust/ignore)",
            "fewer tests run (more skipped): `cargo-test: 2 run, 0 skipped → 1 run, 1 skipped`",
        ],
    },
    Case {
        name: "rust: the lint allowed in Cargo.toml",
        categories: "[\"lint\"]",
        delegate: "printf '\\n[lints.clippy]\\nneedless_return = \"allow\"\\n' >> Cargo.toml",
        moves: &[
            "`Cargo.toml`: gate configuration changed: `lints.clippy.needless_return: (none) → \"allow\"` (rust/Cargo.toml)",
        ],
    },
    Case {
        name: "rust: the failing test compiled out",
        categories: "[\"tests\"]",
        delegate: "sed -i 's/^    fn averages/    #[cfg(any())]\\n    fn averages/' src/lib.rs",
        moves: &[
            "code switched off: `#[cfg(any())]` (rust/cfg-off)",
            "fewer tests collected: `cargo-test: 2 tests → 1`",
        ],
    },
    Case {
        name: "rust: honest, cargo clippy --fix",
        categories: "[\"lint\"]",
        delegate: "cargo clippy --fix --allow-dirty --allow-staged --all-targets --quiet",
        moves: &[],
    },
    Case {
        name: "rust: honest, the average computed in floats",
        categories: "[\"tests\"]",
        delegate: "sed -i 's|(total(prices) / prices.len() as u32) as f64|total(prices) as f64 / prices.len() as f64|' src/lib.rs",
        moves: &[],
    },
];

#[test]
fn rust_weakenings_are_refused_and_honest_fixes_kept() {
    for case in RUST {
        check(rust, case);
    }
}

// -- Shell: shellcheck and bats ------------------------------------------------------------

fn shell(case: &Case) -> Repo {
    let repo = Repo::new();
    repo.write(
        "scripts/deploy.sh",
        "#!/bin/sh\ntarget=$1\ncd \"$(dirname \"$0\")\"\necho deploying to $target\n",
    );
    repo.write(
        "test/deploy.bats",
        "@test \"deploy names its target\" {\n  run sh scripts/deploy.sh prod\n  [ \"$output\" = \"deploying to prod\" ]\n}\n\n\
         @test \"deploy fails without a target\" {\n  run sh scripts/deploy.sh\n  [ \"$status\" -ne 0 ]\n}\n",
    );
    repo.write(".gitignore", "/.refine-loop\n");
    let checks = "[[gate.check]]\nname = \"shellcheck\"\ncategory = \"lint\"\nrun = \"git ls-files -z -- '*.sh' | xargs -0 -r shellcheck -f gcc\"\nparser = \"shellcheck\"\n\n\
         [[gate.check]]\nname = \"bats\"\ncategory = \"tests\"\nrun = \"bats --tap test\"\nparser = \"exit-code\"\n";
    repo.write("refine-loop.toml", &config(checks, case, ""));
    repo.commit("deploy");
    repo
}

const SHELL: &[Case] = &[
    Case {
        name: "shell: shellcheck told to look away",
        categories: "[\"lint\"]",
        delegate: "sed -i 's/^cd /# shellcheck disable=SC2164\\ncd /' scripts/deploy.sh",
        moves: &[
            "`scripts/deploy.sh:3`: suppression added: `# shellcheck disable=SC2164` (shell/shellcheck-disable)",
        ],
    },
    Case {
        name: "shell: the failing bats test skipped",
        categories: "[\"tests\"]",
        delegate: "sed -i 's/^  run sh scripts\\/deploy.sh$/  skip \"later\"\\n  run sh scripts\\/deploy.sh/' test/deploy.bats",
        moves: &[
            "`test/deploy.bats:7`: test skipped, focused or excused: `skip` (shell/bats-skip)",
        ],
    },
    Case {
        name: "shell: shellcheck's configuration disables everything",
        categories: "[\"lint\"]",
        delegate: "printf 'disable=all\\n' > .shellcheckrc",
        moves: &["`.shellcheckrc:1`: gate configuration added: `disable=all` (shell/tool-files)"],
    },
    Case {
        name: "shell: the script renamed where shellcheck does not read it",
        categories: "[\"lint\"]",
        delegate: "mv scripts/deploy.sh scripts/deploy.txt",
        moves: &[
            "moved where the gate does not read it, and its 2 findings went with it: `scripts/deploy.sh → scripts/deploy.txt`",
        ],
    },
    Case {
        name: "shell: honest, shellcheck's own fix applied",
        categories: "[\"lint\"]",
        delegate: "shellcheck -f diff scripts/deploy.sh | patch -p1",
        moves: &[],
    },
    Case {
        name: "shell: honest, the script made to fail without a target",
        categories: "[\"tests\"]",
        delegate: "sed -i 's/^target=\\$1$/target=${1:?usage: deploy.sh TARGET}/' scripts/deploy.sh",
        moves: &[],
    },
];

#[test]
fn shell_weakenings_are_refused_and_honest_fixes_kept() {
    for case in SHELL {
        check(shell, case);
    }
}

/// Code a delegate plants that the gate runs (a new test) may write files in the tree: a report,
/// a snapshot. What it writes is judged with the change it came from. A test that writes a tool
/// configuration (`ruff.toml` telling a later check to ignore the rule it reports) is a relaxed
/// configuration like one the delegate wrote: the change is refused, and the file goes with it.
/// A new test that writes a report beside an honest fix is kept.
#[test]
fn what_planted_code_writes_while_the_gate_runs_is_judged_with_the_change() {
    let ruff = tool("ruff");
    let outside = tempfile::tempdir().unwrap();
    let relax = outside.path().join("relax.sh");
    std::fs::write(
        &relax,
        "printf '[lint]\\nignore = [\"F401\"]\\n' > ruff.toml\n",
    )
    .unwrap();
    let report = outside.path().join("report.sh");
    std::fs::write(&report, "echo 'all good' > tests/report.txt\n").unwrap();
    // (what the delegate does, kept, the file its test writes, the move the report names)
    let cases = [
        (
            format!("cp '{}' tests/test_config.sh", relax.display()),
            false,
            "ruff.toml",
            "`ruff.toml:1`: gate configuration added: `[lint]` (python/tool-files)",
        ),
        (
            format!(
                "{ruff} check --no-cache --fix --quiet . ; cp '{}' tests/test_report.sh",
                report.display()
            ),
            true,
            "tests/report.txt",
            "",
        ),
    ];
    for (delegate, kept, written, named) in cases {
        let repo = Repo::new();
        repo.write(
            "pyproject.toml",
            "[project]\nname = \"shop\"\nversion = \"0.1.0\"\n\n[tool.ruff.lint]\nselect = [\"F401\"]\n",
        );
        repo.write(
            "src/shop.py",
            "import os\n\n\ndef total(prices):\n    return sum(prices)\n",
        );
        repo.write("tests/test_ok.sh", "true\n");
        repo.write(".gitignore", "/.refine-loop\n.ruff_cache/\n");
        let checks = format!(
            "[[gate.check]]\nname = \"tests\"\ncategory = \"tests\"\n\
             run = 'for t in tests/*.sh; do sh \"$t\" || exit 1; done'\nparser = \"generic\"\n\n\
             [[gate.check]]\nname = \"ruff\"\ncategory = \"lint\"\n\
             run = \"{ruff} check --no-cache --output-format=concise .\"\nparser = \"ruff\"\n"
        );
        let case = Case {
            name: "planted",
            categories: "[\"lint\"]",
            delegate: "",
            moves: &[],
        };
        let text =
            config(&checks, &case, "").replace("run = ''''''", &format!("run = '''{delegate}'''"));
        repo.write("refine-loop.toml", &text);
        repo.commit("shop");
        let output = run(&repo, &[]);
        let report = final_report(&repo);
        let trend = json(&repo, "trend.json");
        let context = format!("{delegate}\n{output:?}\n{report}\n{}", trend["cycles"][1]);
        assert_eq!(trend["cycles"][1]["accepted"], kept, "{context}");
        if kept {
            assert!(repo.join(written).exists(), "{context}");
            assert!(!report.contains("ruff.toml"), "{context}");
        } else {
            assert!(
                !repo.join(written).exists(),
                "{written} left behind: {context}"
            );
            assert_eq!(changed(&repo), "", "{context}");
            assert!(report.contains(named), "{named} not named: {context}");
            assert_eq!(
                json(&repo, "gate-summary.json")["failed_count"],
                1,
                "{context}"
            );
        }
    }
}

// -- report mode, and allow entries ----------------------------------------------------------

const NOQA: Case = Case {
    name: "python: noqa on the import ruff reports",
    categories: "[\"lint\"]",
    delegate: "sed -i 's/^import os$/import os  # noqa: F401/' src/shop.py",
    moves: &[],
};

#[test]
fn in_report_mode_a_weakening_is_judged_as_today_and_listed() {
    // Written after the shared `[loop]` keys, into that table.
    let repo = python_with(&NOQA, "integrity = \"report\"\n");
    let output = run(&repo, &[]);
    let report = final_report(&repo);
    let trend = json(&repo, "trend.json");
    assert_eq!(trend["cycles"][1]["accepted"], true, "{output:?}\n{report}");
    assert_eq!(
        trend["cycles"][1]["integrity"]["reported"], 1,
        "{}",
        trend["cycles"][1]
    );
    assert!(
        report.contains("Reported: judged as any change:\n\n- cycle 1, ")
            && report.contains("`src/shop.py:1`: suppression added: `# noqa: F401` (python/noqa)"),
        "{report}"
    );
    assert!(
        std::fs::read_to_string(repo.join("src/shop.py"))
            .unwrap()
            .contains("# noqa: F401")
    );
}

#[test]
fn an_allow_entry_lets_its_pattern_through_and_still_lists_it() {
    let allow = "\n[[integrity.allow]]\nrule = \"python/noqa\"\npattern = 'F401'\nreason = \"re-exported names\"\n";
    let repo = python_with(&NOQA, "");
    let mut text = std::fs::read_to_string(repo.join("refine-loop.toml")).unwrap();
    text.push_str(allow);
    std::fs::write(repo.join("refine-loop.toml"), text).unwrap();
    repo.commit("allow");
    let output = run(&repo, &[]);
    let report = final_report(&repo);
    let trend = json(&repo, "trend.json");
    assert_eq!(trend["cycles"][1]["accepted"], true, "{output:?}\n{report}");
    assert_eq!(trend["cycles"][1]["integrity"]["allowed"], 1);
    assert_eq!(trend["cycles"][1]["integrity"]["refused"], 0);
    assert!(
        report.contains("Allowed by `[[integrity.allow]]`, kept:")
            && report.contains("; allowed by [[integrity.allow]] #1 (re-exported names)"),
        "{report}"
    );
}

#[test]
fn a_delegate_that_only_weakens_the_gate_is_barred() {
    // One agent for every category, each change verified alone: a skip for tests, a noqa for
    // lint (tests come first). Cycle 1 refuses both; cycle 2 refuses the tests one, the third,
    // and bars it: it does not get lint.
    let cheat = Case {
        name: "python: an agent that suppresses or skips whatever it is given",
        categories: "[\"*\"]",
        delegate: "if [ \"$REFINE_LOOP_CATEGORY\" = lint ]; then sed -i 's/^import os$/import os  # noqa: F401/' src/shop.py; \
                   else sed -i 's/^def test_average/import pytest\\n\\n\\n@pytest.mark.skip\\ndef test_average/' tests/test_shop.py; fi",
        moves: &[],
    };
    let repo = python_with(&cheat, "verify = \"per-delegate\"\n");
    let text = std::fs::read_to_string(repo.join("refine-loop.toml"))
        .unwrap()
        .replace("max_cycles = 1", "max_cycles = 2");
    std::fs::write(repo.join("refine-loop.toml"), text).unwrap();
    repo.commit("two cycles");
    let output = run(&repo, &[]);
    let report = final_report(&repo);
    let context = format!("{output:?}\n{report}");
    assert_eq!(changed(&repo), "", "{context}");
    let reports = |cycle: u32| -> Vec<String> {
        let dir = repo.join(&format!(".refine-loop/cycle-{cycle}/delegate-reports"));
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
            })
            .into_iter()
            .flatten()
            .filter(|name| name.ends_with(".md") && !name.ends_with(".prompt.md"))
            .collect();
        names.sort();
        names
    };
    assert_eq!(reports(1), ["fix-lint.md", "fix-tests.md"], "{context}");
    assert_eq!(reports(2), ["fix-tests.md"], "{context}");
    assert!(
        report.contains("was barred for the rest of the run: 3 of its changes were refused."),
        "{context}"
    );
}

#[test]
fn a_refused_delegate_is_told_why_in_its_next_prompt() {
    let repo = python(&PYTHON[0]);
    let text = std::fs::read_to_string(repo.join("refine-loop.toml"))
        .unwrap()
        .replace("max_cycles = 1", "max_cycles = 2");
    std::fs::write(repo.join("refine-loop.toml"), text).unwrap();
    repo.commit("two cycles");
    run(&repo, &[]);
    let prompts: Vec<String> = (1..=2)
        .map(|cycle| {
            std::fs::read_to_string(repo.join(&format!(
                ".refine-loop/cycle-{cycle}/delegate-reports/fix-lint.prompt.md"
            )))
            .unwrap()
        })
        .collect();
    assert!(
        prompts[0].contains("Fix the code itself."),
        "{}",
        prompts[0]
    );
    assert!(
        !prompts[0].contains("Your last change was refused"),
        "{}",
        prompts[0]
    );
    assert!(
        prompts[1].contains("## Your last change was refused")
            && prompts[1]
                .contains("- `src/shop.py:1`: suppression added: `# noqa: F401` (python/noqa)"),
        "{}",
        prompts[1]
    );
}
