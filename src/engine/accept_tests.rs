use std::collections::BTreeMap;

use super::*;
use crate::model::CategorySummary;

/// A failing finding: `category:file:text`, the file left out when it is empty.
fn finding(spec: &str) -> Diagnostic {
    let mut parts = spec.splitn(3, ':');
    let (category, file, text) = (
        parts.next().unwrap(),
        parts.next().unwrap(),
        parts.next().unwrap(),
    );
    Diagnostic {
        file: (!file.is_empty()).then(|| file.to_string()),
        category: Some(category.to_string()),
        message: text.to_string(),
        fingerprint: format!("{category}|{file}|{text}"),
        line: Some(1),
        column: None,
        end_line: None,
        end_column: None,
        severity: Severity::Error,
        code: None,
        outside_target: false,
        body: None,
    }
}

/// The findings, and the summary they make, with `passed` categories present at 0.
fn side(specs: &[&str], passed: &[&str]) -> (GateSummary, Vec<Diagnostic>) {
    let findings: Vec<Diagnostic> = specs.iter().map(|s| finding(s)).collect();
    let mut categories: BTreeMap<String, CategorySummary> = BTreeMap::new();
    for name in passed {
        categories.entry((*name).to_string()).or_default();
    }
    for d in &findings {
        let entry = categories
            .entry(d.category.clone().unwrap_or_default())
            .or_default();
        entry.failures += 1;
    }
    for c in categories.values_mut() {
        c.passed = c.failures == 0;
    }
    (GateSummary::of_categories(1, categories), findings)
}

/// The rule's verdict on going from `before` to `after`.
fn judged(
    rule: Accept,
    before: &(GateSummary, Vec<Diagnostic>),
    after: &(GateSummary, Vec<Diagnostic>),
    changed: &dyn Fn(&str) -> bool,
) -> Verdict {
    // Each finding's check is its category's.
    let checks = |findings: &[Diagnostic]| -> Vec<String> {
        findings
            .iter()
            .map(|d| d.category.clone().unwrap_or_default())
            .collect()
    };
    let (before_checks, after_checks) = (checks(&before.1), checks(&after.1));
    judge(
        rule,
        Side {
            summary: &before.0,
            findings: &before.1,
            checks: &before_checks,
        },
        Side {
            summary: &after.0,
            findings: &after.1,
            checks: &after_checks,
        },
        changed,
    )
}

struct Case {
    what: &'static str,
    before: &'static [&'static str],
    after: &'static [&'static str],
    /// Categories present and passing, before and after.
    passed: &'static [&'static str],
    changed: &'static [&'static str],
    /// (kept, unmasked) under the default rule; under `strict`, kept.
    unmask: (bool, usize),
    strict: bool,
}

#[test]
fn the_rule_at_its_boundaries() {
    let table = [
        Case {
            what: "a fix, nothing new",
            before: &["lint:a.rs:E1", "lint:a.rs:E2"],
            after: &["lint:a.rs:E2"],
            passed: &[],
            changed: &["a.rs"],
            unmask: (true, 0),
            strict: true,
        },
        Case {
            what: "no change in the count",
            before: &["lint:a.rs:E1"],
            after: &["lint:a.rs:E1"],
            passed: &[],
            changed: &["a.rs"],
            unmask: (true, 0),
            strict: true,
        },
        Case {
            what: "a compile error fixed lets the tests compile: their lints are unmasked",
            before: &["lint:src/lib.rs:E0308"],
            after: &[
                "lint:tests/t.rs:L1",
                "lint:tests/t.rs:L2",
                "lint:tests/u.rs:L1",
            ],
            passed: &[],
            changed: &["src/lib.rs"],
            unmask: (true, 3),
            strict: false,
        },
        Case {
            what: "a new finding in a file the change touched is a regression",
            before: &["lint:a.rs:E1", "lint:b.rs:E2"],
            after: &["lint:b.rs:E2", "lint:a.rs:E3", "lint:a.rs:E4"],
            passed: &[],
            changed: &["a.rs"],
            unmask: (false, 0),
            strict: false,
        },
        Case {
            what: "a swap inside a touched file is no worse",
            before: &["lint:a.rs:E1"],
            after: &["lint:a.rs:E3"],
            passed: &[],
            changed: &["a.rs"],
            unmask: (true, 0),
            strict: true,
        },
        Case {
            what: "unmasked elsewhere and a swap in the touched file",
            before: &["lint:a.rs:E1"],
            after: &["lint:a.rs:E9", "lint:b.rs:N1", "lint:b.rs:N2"],
            passed: &[],
            changed: &["a.rs"],
            unmask: (true, 2),
            strict: false,
        },
        Case {
            what: "a category that passed now fails, in a file not touched",
            before: &["lint:a.rs:E1"],
            after: &["tests:t.rs:T1"],
            passed: &["tests"],
            changed: &["a.rs"],
            unmask: (false, 0),
            strict: false,
        },
        Case {
            what: "a new category that was not there at all",
            before: &["lint:a.rs:E1", "lint:a.rs:E2"],
            after: &["lint:a.rs:E2", "types:b.rs:T1"],
            passed: &[],
            changed: &["a.rs"],
            unmask: (false, 0),
            strict: false,
        },
        Case {
            what: "new findings that name no file are not unmasked",
            before: &["lint:a.rs:E1", "lint:b.rs:E2"],
            after: &["lint:b.rs:E2", "lint::X", "lint::Y"],
            passed: &[],
            changed: &["a.rs"],
            unmask: (false, 0),
            strict: false,
        },
        Case {
            what: "findings elsewhere while removing none: not unmasking, worse",
            before: &["lint:a.rs:E1"],
            after: &["lint:a.rs:E1", "lint:b.rs:N1"],
            passed: &[],
            changed: &["a.rs"],
            unmask: (false, 0),
            strict: false,
        },
        Case {
            what: "a repeat of a finding counts as new",
            before: &["lint:a.rs:E1", "lint:b.rs:E1"],
            after: &["lint:b.rs:E1", "lint:b.rs:E1", "lint:b.rs:E1"],
            passed: &[],
            changed: &["a.rs"],
            unmask: (true, 2),
            strict: false,
        },
        Case {
            what: "a fix in one check unmasks nothing in another: a new test failure is a regression",
            before: &["lint:a.rs:E1", "tests:t.rs:T1"],
            after: &["tests:t.rs:T1", "tests:u.rs:T2"],
            passed: &[],
            changed: &["a.rs"],
            unmask: (false, 0),
            strict: false,
        },
        Case {
            what: "everything fixed",
            before: &["lint:a.rs:E1", "tests:t.rs:T1"],
            after: &[],
            passed: &["lint", "tests"],
            changed: &["a.rs", "t.rs"],
            unmask: (true, 0),
            strict: true,
        },
    ];
    for case in &table {
        let before = side(case.before, case.passed);
        let after = side(case.after, case.passed);
        let changed = |file: &str| case.changed.contains(&file);
        let verdict = judged(Accept::Unmask, &before, &after, &changed);
        assert_eq!(
            (verdict.reasons.is_empty(), verdict.unmasked.len()),
            case.unmask,
            "{}: {:?}",
            case.what,
            verdict.reasons
        );
        let verdict = judged(Accept::Strict, &before, &after, &changed);
        assert_eq!(
            verdict.reasons.is_empty(),
            case.strict,
            "strict, {}: {:?}",
            case.what,
            verdict.reasons
        );
        assert!(verdict.unmasked.is_empty());
    }
}

#[test]
fn infra_is_never_kept() {
    let before = side(&["lint:a.rs:E1"], &[]);
    let mut after = side(&[], &["lint"]);
    let infra = CategorySummary {
        failures: 1,
        ..CategorySummary::default()
    };
    after.0.categories.insert(INFRA_CATEGORY.to_string(), infra);
    for rule in [Accept::Unmask, Accept::Strict] {
        let verdict = judged(rule, &before, &after, &|_| true);
        assert!(!verdict.reasons.is_empty(), "{rule:?}");
    }
}

#[test]
fn a_new_warning_is_not_a_failure() {
    let before = side(&["lint:a.rs:E1"], &[]);
    let mut after = side(&[], &["lint"]);
    after.1.push(Diagnostic {
        severity: Severity::Warning,
        ..finding("lint:a.rs:W1")
    });
    let verdict = judged(Accept::Unmask, &before, &after, &|_| true);
    assert!(verdict.reasons.is_empty(), "{:?}", verdict.reasons);
}

/// A check that stops reporting (it crashes on a file a change added, before it prints a
/// finding) fails with nothing its parser can read: one failure where there were several. That
/// is no improvement: its result cannot be compared.
#[test]
fn a_check_that_fails_with_nothing_to_read_where_it_had_findings_is_no_improvement() {
    let parsed = |failures: u64, unparsed: bool| {
        let mut categories = BTreeMap::new();
        categories.insert(
            "lint".to_string(),
            CategorySummary {
                passed: failures == 0,
                failures,
                unparsed,
                ..CategorySummary::default()
            },
        );
        GateSummary::of_categories(1, categories)
    };
    // (before, after, rejected)
    let cases = [
        (parsed(3, false), parsed(1, true), true),
        (parsed(1, true), parsed(1, true), false),
        (parsed(3, false), parsed(2, false), false),
        (parsed(1, true), parsed(0, false), false),
    ];
    for (before, after, rejected) in cases {
        let reasons = reasons_to_reject(&before, &after, &HashMap::new());
        assert_eq!(
            reasons
                .iter()
                .any(|r| r.contains("nothing its parser could read")),
            rejected,
            "{before:?} → {after:?}: {reasons:?}"
        );
    }
}

/// Pull-request mode: the findings of `specs` that count, those the baseline held pre-existing
/// (`before`, by key) left out, as the gate's summary and the engine's findings leave them out.
fn counted_side(
    specs: &[&str],
    before: &crate::new_since::Preexisting,
) -> (GateSummary, Vec<Diagnostic>) {
    let all = side(specs, &["lint"]).1;
    let marks = before.mark("lint", &all, &|_| false);
    let counted: Vec<&str> = specs
        .iter()
        .zip(marks)
        .filter(|(_, preexisting)| !preexisting)
        .map(|(spec, _)| *spec)
        .collect();
    side(&counted, &["lint"])
}

#[test]
fn in_pull_request_mode_only_new_findings_count_and_a_worse_preexisting_one_is_a_regression() {
    let old = "lint:old.py:`os` imported but unused";
    let new = "lint:new.py:`sys` imported but unused";
    let preexisting =
        crate::new_since::Preexisting::of([crate::new_since::finding_key("lint", &finding(old))]);
    let baseline = counted_side(&[old, new], &preexisting);
    assert_eq!(baseline.0.failed_count, 1, "only the new one counts");
    let everything = |_: &str| true;
    // (after the change, kept)
    let cases: [(&[&str], bool); 4] = [
        // The new one fixed, the pre-existing one left: kept, and the gate passes.
        (&[old], true),
        // The pre-existing one fixed too (out of scope: undone elsewhere, not judged here).
        (&[], true),
        // The new one fixed, but the pre-existing one now twice: the count holds (the judge
        // keeps it; `Preexisting::worse` refuses it in `verify::judged`).
        (&[old, old], true),
        // Nothing fixed, the pre-existing one worse: a regression.
        (&[old, old, new], false),
    ];
    for (after, kept) in cases {
        let after = counted_side(after, &preexisting);
        let verdict = judged(Accept::Unmask, &baseline, &after, &everything);
        assert_eq!(
            verdict.reasons.is_empty(),
            kept,
            "{after:?}: {:?}",
            verdict.reasons
        );
    }
}
