//! The catalogue's table tests: every case in `tests/fixtures/integrity/cases/*.toml` is a
//! change (each file before and after, and what the gate saw) and the moves it must be found to
//! make; an honest case (a real fixer's output from `tests/fixtures/integrity/real/`, or a
//! person's fix) must be found to make none.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::*;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseFile {
    case: Vec<Case>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    /// A folder of `real/` whose `before/` and `after/` are the change.
    real: Option<String>,
    #[serde(default)]
    file: Vec<FileCase>,
    /// `class rule@line: text`, or `class rule: text` for a move without a line.
    #[serde(default)]
    expect: Vec<String>,
    /// Files where a test failed before the change.
    #[serde(default)]
    failing_tests: Vec<String>,
    /// Failing findings per file, before and after.
    #[serde(default)]
    findings_before: BTreeMap<String, u64>,
    #[serde(default)]
    findings_after: BTreeMap<String, u64>,
    /// Files the gate's commands name.
    #[serde(default)]
    gate_files: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileCase {
    path: String,
    before: Option<String>,
    after: Option<String>,
    /// What is there after when it is not a file: `symlink`, `folder`.
    after_is: Option<String>,
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/integrity")
}

fn sha(bytes: &[u8]) -> String {
    crate::encoding::hex_digest(Sha256::new_with_prefix(bytes))
}

/// The files below `dir`, relative to it, `/`-separated.
fn files_below(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                found.push(
                    path.strip_prefix(dir)
                        .unwrap()
                        .to_string_lossy()
                        .replace('\\', "/"),
                );
            }
        }
    }
    found.sort();
    found
}

/// One file of a case: its path, its bytes before and after, and what is there after when it
/// is not a file.
type Sides<'c> = (String, Option<Vec<u8>>, Option<Vec<u8>>, Option<&'c str>);

/// The files of `case`: those of its `real` folder, then its own.
fn files_of(case: &Case) -> Vec<Sides<'_>> {
    let mut files = Vec::new();
    if let Some(real) = &case.real {
        let dir = fixtures().join("real").join(real);
        let mut paths = files_below(&dir.join("before"));
        paths.extend(files_below(&dir.join("after")));
        paths.sort();
        paths.dedup();
        for path in paths {
            let read = |side: &str| std::fs::read(dir.join(side).join(&path)).ok();
            files.push((path.clone(), read("before"), read("after"), None));
        }
    }
    for file in &case.file {
        files.push((
            file.path.clone(),
            file.before.as_ref().map(|t| t.clone().into_bytes()),
            file.after.as_ref().map(|t| t.clone().into_bytes()),
            file.after_is.as_deref(),
        ));
    }
    files
}

/// The change of `case`: its subjects, and the bytes by hash.
fn change_of(case: &Case) -> (Vec<Subject>, BTreeMap<String, Vec<u8>>) {
    let mut store = BTreeMap::new();
    let mut state = |bytes: &Option<Vec<u8>>, other: Option<&str>| match (bytes, other) {
        (_, Some("symlink")) => State::Other { what: "symlink" },
        (_, Some(_)) => State::Other { what: "folder" },
        (Some(bytes), None) => {
            let sha = sha(bytes);
            store.insert(sha.clone(), bytes.clone());
            State::File { sha256: sha }
        }
        (None, None) => State::Absent,
    };
    let mut subjects = Vec::new();
    for (path, before, after, after_is) in files_of(case) {
        let before = state(&before, None);
        let after = state(&after, after_is);
        if before != after {
            subjects.push(Subject {
                path,
                before,
                after,
            });
        }
    }
    (subjects, store)
}

fn shown(found: &Move) -> String {
    let place = match found.line {
        Some(line) => format!("{}@{line}", found.rule),
        None => found.rule.clone(),
    };
    format!("{} {place}: {}", found.class.name(), found.text)
}

fn check_view(findings: &BTreeMap<String, u64>, failing: &[String]) -> GateView<'static> {
    GateView {
        checks: &[],
        findings: findings.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        failing_tests: failing.iter().cloned().collect(),
    }
}

fn run_case(catalogue: &Catalogue, origin: &str, case: &Case) -> Result<(), String> {
    let (subjects, store) = change_of(case);
    let gate_files = GateFiles::of_paths(&case.gate_files);
    let before = check_view(&case.findings_before, &case.failing_tests);
    let after = check_view(&case.findings_after, &[]);
    let inspection = Inspection {
        catalogue,
        gate_files: &gate_files,
        before: &before,
        after: &after,
    };
    let moves = inspect(&inspection, &subjects, &|sha| store.get(sha).cloned());
    let mut found: Vec<String> = moves.iter().map(shown).collect();
    found.sort();
    let mut expected = case.expect.clone();
    expected.sort();
    if found == expected {
        Ok(())
    } else {
        Err(format!(
            "{origin}: {}:\n  expected: {expected:#?}\n  found:    {found:#?}",
            case.name
        ))
    }
}

#[test]
fn every_case_of_every_entry() {
    let catalogue = Catalogue::built_in().unwrap();
    let dir = fixtures().join("cases");
    let mut failures = Vec::new();
    let mut cases = 0;
    let mut honest = 0;
    for file in files_below(&dir) {
        let text = std::fs::read_to_string(dir.join(&file)).unwrap();
        let parsed: CaseFile = toml::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        for case in &parsed.case {
            cases += 1;
            honest += usize::from(case.expect.is_empty());
            if let Err(failure) = run_case(&catalogue, &file, case) {
                failures.push(failure);
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {cases} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        cases >= 60 && honest >= 20,
        "{cases} cases, {honest} honest"
    );
}

/// Every entry with markers has cases beside it, cheating and honest.
#[test]
fn every_entry_has_cheating_and_honest_cases() {
    let catalogue = Catalogue::built_in().unwrap();
    let dir = fixtures().join("cases");
    for entry in catalogue.entries() {
        let path = dir.join(format!("{}.toml", entry.name));
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|_| panic!("{}: no cases for entry {}", path.display(), entry.name));
        let parsed: CaseFile = toml::from_str(&text).unwrap();
        assert!(
            parsed.case.iter().any(|c| c.expect.is_empty()),
            "{}: no honest case",
            entry.name
        );
        assert!(
            parsed.case.iter().any(|c| !c.expect.is_empty()),
            "{}: no cheating case",
            entry.name
        );
        for marker in &entry.markers {
            let rule = format!("{}/{}", entry.name, marker.name);
            assert!(
                parsed.case.iter().any(|c| c
                    .expect
                    .iter()
                    .any(|e| e.contains(&format!(" {rule}@")) || e.contains(&format!(" {rule}:")))),
                "{}: no case finds {rule}",
                entry.name
            );
        }
    }
}

fn counts(passed: u64, failed: u64, skipped: u64) -> Option<TestCounts> {
    Some(TestCounts {
        passed,
        failed,
        skipped,
    })
}

/// The record of a test runner `name` that counted `tests`.
fn record(name: &str, tests: Option<TestCounts>) -> CheckRecord {
    let mut pytest = crate::report::fixture::records().remove(1);
    pytest.name = name.into();
    pytest.tests = tests;
    pytest
}

use crate::model::{CheckRecord, TestCounts};

#[test]
fn the_runners_totals_must_not_drop() {
    let table: [(Option<TestCounts>, Option<TestCounts>, Option<&str>); 8] = [
        // A failing test fixed: as many tests, as many run.
        (counts(4, 1, 0), counts(5, 0, 0), None),
        // A new test.
        (counts(4, 1, 0), counts(6, 0, 0), None),
        // A collection error fixed: more tests than before.
        (counts(0, 0, 0), counts(5, 0, 0), None),
        // The failing test skipped.
        (
            counts(4, 1, 0),
            counts(4, 0, 1),
            Some("fewer tests run (more skipped): pytest: 5 run, 0 skipped → 4 run, 1 skipped"),
        ),
        // The failing test deleted.
        (
            counts(4, 1, 0),
            counts(4, 0, 0),
            Some("fewer tests collected: pytest: 5 tests → 4"),
        ),
        // The runner broken: no count where there was one.
        (
            counts(4, 1, 0),
            None,
            Some("the test runner no longer reports its tests: pytest: 5 tests → none reported"),
        ),
        // No count before: nothing to compare.
        (None, counts(1, 0, 0), None),
        // A skipped test unskipped and passing.
        (counts(4, 0, 1), counts(5, 0, 0), None),
    ];
    for (before, after, expected) in table {
        let moves =
            test_code::runner_totals(&[record("pytest", before)], &[record("pytest", after)]);
        let found: Vec<String> = moves
            .iter()
            .map(|m| format!("{}: {}", m.what, m.text))
            .collect();
        assert_eq!(
            found,
            expected.map(str::to_string).into_iter().collect::<Vec<_>>(),
            "{before:?} → {after:?}"
        );
    }
}

#[test]
fn allow_entries_let_their_pattern_through_and_say_so() {
    let spec = AllowSpec {
        class: Some("suppression"),
        pattern: Some(r"type: ignore\[import-untyped\]"),
        reason: Some("stubs are missing upstream"),
        ..AllowSpec::default()
    };
    let allows = vec![Allow::new(1, &spec).unwrap()];
    let found = |text: &str, class: Class| Move {
        class,
        rule: "python/type-ignore".into(),
        path: Some("src/a.py".into()),
        line: Some(1),
        what: "suppression added".into(),
        text: text.into(),
        allowed_by: None,
    };
    let mut moves = vec![
        found("# type: ignore[import-untyped]", Class::Suppression),
        found("# type: ignore[attr-defined]", Class::Suppression),
        found("# type: ignore[import-untyped]", Class::Config),
    ];
    apply_allows(&allows, &mut moves);
    let allowed: Vec<Option<&str>> = moves.iter().map(|m| m.allowed_by.as_deref()).collect();
    assert_eq!(
        allowed,
        vec![
            Some("[[integrity.allow]] #1 (stubs are missing upstream)"),
            None,
            None
        ]
    );
    assert!(
        moves[0]
            .describe()
            .ends_with("; allowed by [[integrity.allow]] #1 (stubs are missing upstream)")
    );
    let table: [(AllowSpec<'_>, &str); 3] = [
        (AllowSpec::default(), "class"),
        (
            AllowSpec {
                class: Some("lint"),
                ..AllowSpec::default()
            },
            "class",
        ),
        (
            AllowSpec {
                pattern: Some("("),
                ..AllowSpec::default()
            },
            "pattern",
        ),
    ];
    for (spec, key) in table {
        assert_eq!(Allow::new(1, &spec).unwrap_err().0, key, "{spec:?}");
    }
}

#[test]
fn a_move_reads_as_one_line() {
    let found = Move {
        class: Class::Suppression,
        rule: "javascript/eslint-disable".into(),
        path: Some("src/a b.js".into()),
        line: Some(3),
        what: "suppression added".into(),
        text: "/* eslint-disable */ `x`".into(),
        allowed_by: None,
    };
    assert_eq!(
        found.describe(),
        "`src/a b.js:3`: suppression added: `` /* eslint-disable */ `x` `` (javascript/eslint-disable)"
    );
}
