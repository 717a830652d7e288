//! Delegates run as real processes: what they are given, and how they are stopped.

use std::time::Duration;

use super::*;
use crate::model::Severity;
use crate::process::Interruption;

fn spec(run: &str) -> DelegateSpec {
    DelegateSpec {
        role: Role::Fix,
        lens: None,
        categories: vec!["lint".into()],
        launch: Launch::Command(run.into()),
        template: DEFAULT_TEMPLATE.into(),
        prompt_on_stdin: false,
        timeout: Duration::from_secs(60),
        idle_timeout: None,
        env: vec![("EXTRA".into(), "yes".into())],
        on_paths: None,
        whole_tree: false,
        usage: None,
        cap: crate::spending::Cap::default(),
    }
}

fn diagnostic() -> Diagnostic {
    Diagnostic {
        file: Some("src/a.rs".into()),
        line: Some(2),
        column: Some(5),
        end_line: None,
        end_column: None,
        severity: Severity::Error,
        code: Some("clippy::needless_return".into()),
        message: "unneeded `return` statement".into(),
        category: Some("lint".into()),
        fingerprint: "f".repeat(64),
        outside_target: false,
        body: None,
    }
}

fn run(spec: &DelegateSpec, dir: &Path) -> DelegateRun {
    let diagnostics = [diagnostic()];
    let details = ["src/a.rs:2:5: unneeded `return` statement".to_string()];
    let reports = dir.join("state/cycle-1/delegate-reports");
    let assignment = Assignment {
        category: "lint",
        cycle: 1,
        scope: &crate::scope::Scope::default(),
        diagnostics: &diagnostics,
        files: &[],
        details: &details,
        target: dir,
        state_dir: &dir.join("state"),
        reports_dir: &reports,
        refused: &[],
    };
    run_delegate(
        spec,
        &assignment,
        Limits {
            kill_grace: Duration::from_secs(1),
            protected: &BTreeMap::new(),
            private: &[],
            confiner: None,
            allowance: crate::spending::Allowance::default(),
        },
        &Cancel::default(),
    )
    .unwrap()
}

/// Live processes whose command line contains `marker`.
fn processes_with(marker: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|entry| {
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                return false;
            };
            let alive = stat
                .rfind(')')
                .is_some_and(|i| !stat[i + 1..].trim_start().starts_with('Z'));
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            alive && String::from_utf8_lossy(&cmdline).contains(marker)
        })
        .count()
}

#[test]
fn a_delegate_gets_its_prompt_findings_and_variables() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = spec(
        "printf '%s %s %s' \"$REFINE_LOOP_CATEGORY\" \"$REFINE_LOOP_CYCLE\" \"$EXTRA\" > seen.txt; \
         cp \"$REFINE_LOOP_FINDINGS_FILE\" findings.json; head -n 1; \
         printf 'needs-fix src/a.rs:2 changes behaviour\\n' > \"$REFINE_LOOP_VERDICT_FILE\"",
    );
    spec.prompt_on_stdin = true;
    let done = run(&spec, dir.path());
    assert_eq!(done.end.exit_code, Some(0));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("seen.txt")).unwrap(),
        "lint 1 yes"
    );
    let findings: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("findings.json")).unwrap()).unwrap();
    assert_eq!(findings[0]["code"], "clippy::needless_return");
    assert_eq!(
        crate::gate::last_lines(&done.output, 1),
        ["# Fix the `lint` failures"]
    );
    assert_eq!(
        done.verdict,
        Some(Verdict::NeedsFix(vec![
            "src/a.rs:2 changes behaviour".into()
        ]))
    );
    assert!(
        done.files
            .prompt
            .ends_with("state/cycle-1/delegate-reports/fix-lint.prompt.md")
    );
}

#[test]
fn a_silent_delegate_is_stopped_at_its_idle_timeout_and_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("refine-loop-idle-{}", std::process::id());
    let mut spec = spec(&format!(
        "echo working; sh -c 'sleep 300; : {marker}' & sh -c 'sleep 300; : {marker}'"
    ));
    spec.idle_timeout = Some(Duration::from_secs(1));
    let done = run(&spec, dir.path());
    assert_eq!(done.end.stopped, Some(Interruption::Idle));
    assert_eq!(processes_with(&marker), 0);
    assert_eq!(done.verdict, None);
}

#[test]
fn crashes_garbage_and_missing_commands_are_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let crashed = run(
        &spec("head -c 3000 /dev/urandom; kill -SEGV $$"),
        dir.path(),
    );
    assert_eq!(crashed.end.signal, Some(11));
    assert!(crashed.output.total() >= 3000);
    let missing = run(&spec("no-such-fixer-xyz --fix"), dir.path());
    assert_eq!(missing.end.exit_code, Some(127));
    let unparsable = run(
        &spec("echo 'all good!' > \"$REFINE_LOOP_VERDICT_FILE\""),
        dir.path(),
    );
    assert_eq!(unparsable.verdict, None);
}

#[test]
fn categories_it_handles() {
    let mut any = spec("true");
    any.categories = vec!["*".into()];
    assert!(any.handles("types"));
    let lint = spec("true");
    assert!(lint.handles("lint") && !lint.handles("tests"));
    let files = DelegateFiles::for_category(Path::new("r"), "file size/../x");
    assert_eq!(files.report, Path::new("r/fix-file_size____x.md"));
}
