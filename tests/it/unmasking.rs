//! Unmasking is not regression: the real `cargo clippy --fix` fixes a library lint that, under
//! `-D warnings`, kept the integration tests from being checked at all; the tests' own lints
//! then show. The fix is kept, its report says "unmasked", and the next cycle works them.

use crate::run_loop::{failed_counts, json, run};
use crate::support::Repo;

/// The tests' lints clippy cannot fix: two helpers with eight arguments.
const TESTS: &str =
    "fn sum(a: i32, b: i32, c: i32, d: i32, e: i32, f: i32, g: i32, h: i32) -> i32 {
    a + b + c + d + e + f + g + h
}

fn product(a: i32, b: i32, c: i32, d: i32, e: i32, f: i32, g: i32, h: i32) -> i32 {
    a * b * c * d * e * f * g * h
}

#[test]
fn answers() {
    assert_eq!(unmasked::answer(), 42);
    assert_eq!(sum(1, 1, 1, 1, 1, 1, 1, 1), 8);
    assert_eq!(product(1, 1, 1, 1, 1, 1, 1, 1), 1);
}
";

/// The same tests, as a person (or an agent) would fix them.
const TESTS_FIXED: &str = "fn sum(values: &[i32]) -> i32 {
    values.iter().sum()
}

fn product(values: &[i32]) -> i32 {
    values.iter().product()
}

#[test]
fn answers() {
    assert_eq!(unmasked::answer(), 42);
    assert_eq!(sum(&[1; 8]), 8);
    assert_eq!(product(&[1; 8]), 1);
}
";

fn crate_repo(accept: &str) -> Repo {
    let repo = Repo::new();
    repo.write(
        "Cargo.toml",
        "[package]\nname = \"unmasked\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    );
    repo.write(
        "src/lib.rs",
        "pub fn answer() -> i32 {\n    return 42;\n}\n",
    );
    repo.write("tests/it.rs", TESTS);
    repo.write("fixed-tests.rs", TESTS_FIXED);
    repo.write(".gitignore", "/target\n/.refine-loop\n");
    // The fixer: the tests' lint when it is given it (as an agent would be), else clippy's fixes.
    repo.write(
        "refine-loop.toml",
        &format!(
            r#"[loop]
accept = "{accept}"

[[gate.check]]
name = "clippy"
category = "lint"
run = "cargo clippy --all-targets --message-format=short -- -D warnings"
parser = "clippy"

[[delegate]]
categories = ["lint"]
run = '''
if grep -q 'tests/it.rs' "$REFINE_LOOP_FINDINGS_FILE"; then cp fixed-tests.rs tests/it.rs
else cargo clippy --fix --allow-dirty --allow-staged --all-targets; fi
'''
"#
        ),
    );
    repo.commit("crate");
    repo
}

#[test]
fn a_fix_that_lets_the_tests_compile_is_kept_and_their_lints_worked_next() {
    let repo = crate_repo("unmask");
    let output = run(&repo, &["--max-cycles", "4"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(failed_counts(&repo), [1, 2, 0]);
    let trend = json(&repo, "trend.json");
    assert_eq!(trend["cycles"][1]["accepted"], true);
    assert_eq!(trend["cycles"][1]["unmasked"], 2, "{trend}");
    assert!(trend["cycles"][2].get("unmasked").is_none(), "{trend}");
    let report =
        std::fs::read_to_string(repo.join(".refine-loop/cycle-1/delegate-reports/fix-lint.md"))
            .unwrap();
    assert!(report.contains("- result: kept; unmasked: 2 "), "{report}");
    assert!(report.contains("tests/it.rs"), "{report}");
    let final_report =
        std::fs::read_to_string(repo.join(".refine-loop/REFINE-LOOP-FINAL.md")).unwrap();
    assert!(final_report.contains("Unmasked: 2:"), "{final_report}");
    let code = std::fs::read_to_string(repo.join("src/lib.rs")).unwrap();
    assert!(
        code.contains("    42\n") && !code.contains("return"),
        "{code}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("tests/it.rs")).unwrap(),
        TESTS_FIXED
    );
}

#[test]
fn under_the_strict_rule_the_same_fix_is_rolled_back() {
    let repo = crate_repo("strict");
    let output = run(&repo, &["--max-cycles", "1"]);
    assert!(matches!(output.status.code(), Some(1 | 3)), "{output:?}");
    let trend = json(&repo, "trend.json");
    assert_eq!(trend["cycles"][1]["accepted"], false, "{trend}");
    let code = std::fs::read_to_string(repo.join("src/lib.rs")).unwrap();
    assert!(code.contains("return 42;"), "{code}");
}
