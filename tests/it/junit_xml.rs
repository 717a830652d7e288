//! `junit.xml` from a real gate run (real ruff and pytest, a path with a space, non-ASCII and
//! XML's special characters, a finding without a file, a tool that is not installed) is valid
//! against junit-10.xsd, the JUnit schema of Jenkins' xunit plugin, and reads back with the
//! suites, cases and texts GitLab shows.

use quick_junit::{NonSuccessKind, Report, TestCaseStatus};

use crate::support::{Repo, assert_valid_junit, python_module, stderr, tool};

#[test]
fn a_real_ruff_and_pytest_run_writes_junit_xml_the_junit_10_xsd_accepts() {
    python_module("pytest");
    let ruff = tool("ruff");
    let repo = Repo::new();
    repo.write(
        "pyproject.toml",
        "[tool.ruff.lint]\nselect = [\"F401\", \"E711\"]\n",
    );
    repo.write(
        "src/my app/grüße & <co>.py",
        "import os\n\nx = None\nprint(x == None)\n",
    );
    repo.write(
        "tests/test_cart.py",
        "def test_total():\n    assert \"<&>\" == \"'\\\"'\"\n",
    );
    repo.write(
        ".gitignore",
        "/.refine-loop\n.ruff_cache/\n.pytest_cache/\n__pycache__/\n",
    );
    repo.write(
        "refine-loop.toml",
        &format!(
            "[[gate.check]]\nname = \"ruff\"\ncategory = \"lint\"\n\
             run = \"{ruff} check --no-cache --output-format=concise .\"\nparser = \"ruff\"\n\n\
             [[gate.check]]\nname = \"pytest\"\ncategory = \"tests\"\n\
             run = \"python3 -m pytest -p no:cacheprovider tests\"\nparser = \"pytest\"\n\n\
             [[gate.check]]\nname = \"no file\"\ncategory = \"lint\"\n\
             run = \"echo 'error: no file here'; exit 1\"\nparser = \"clippy\"\n\n\
             [[gate.check]]\nname = \"missing\"\ncategory = \"types\"\n\
             run = \"refine-loop-no-such-checker .\"\n"
        ),
    );
    repo.commit("a gate that fails every way");
    let output = repo.command(&["check"]).env("CI", "true").output().unwrap();
    // The missing tool is an infrastructure failure; the reports are written all the same.
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    let file = repo.join(".refine-loop/junit.xml");
    assert_valid_junit(&file);

    let report = Report::deserialize_from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!((report.tests, report.failures, report.errors), (8, 7, 1));
    let names: Vec<&str> = report.test_suites.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["infra", "lint", "tests"]);
    let cases = |suite: usize| -> Vec<(&str, &str, Option<&str>)> {
        report.test_suites[suite]
            .test_cases
            .iter()
            .map(|case| {
                let message = match &case.status {
                    TestCaseStatus::NonSuccess { message, .. } => message.as_deref(),
                    _ => None,
                };
                (
                    case.name.as_str(),
                    case.classname.as_deref().unwrap_or_default(),
                    message,
                )
            })
            .collect()
    };
    let infra = &report.test_suites[0].test_cases[0];
    assert!(matches!(
        infra.status,
        TestCaseStatus::NonSuccess {
            kind: NonSuccessKind::Error,
            ..
        }
    ));
    assert_eq!(infra.system_out.as_deref(), Some("exit code: 127"));
    assert_eq!(
        cases(1),
        [
            (
                "ruff",
                "lint",
                Some("exited with code 1: 2 errors, 0 warnings")
            ),
            (
                "no file",
                "lint",
                Some("exited with code 1: 1 error, 0 warnings")
            ),
            (
                "src/my app/grüße & <co>.py: F401",
                "ruff",
                Some("`os` imported but unused")
            ),
            (
                "src/my app/grüße & <co>.py: E711",
                "ruff",
                Some("Comparison to `None` should be `cond is None`")
            ),
            ("(no file): no file", "no file", Some("no file here")),
        ]
    );
    let tests = cases(2);
    assert_eq!(tests[0].0, "pytest");
    assert_eq!(tests[1].1, "pytest");
    assert!(
        tests[1].0.contains("tests/test_cart.py::test_total"),
        "{tests:?}"
    );
    assert!(tests[1].2.unwrap().contains("<&>"), "{tests:?}");
}
