//! The fixtures every renderer's snapshot test uses: a small gate result (two categories, a
//! failed and a passed check, three findings: one without a line, one with a non-ASCII message
//! and path, one with characters that XML and JSON escape), and one rich report built on it, of
//! each mode: a refactoring run of three cycles with a regression, a scope violation, flaky
//! tests, an install, a lesson and its record; a refine and an improve campaign; a merge; a
//! check.

use std::path::PathBuf;

use super::{CampaignPart, CheckFindings, Mode, ParserDocs, Report, RunPart, ScopePart, ShardRow};
use crate::campaign::books::{Backlog, Candidate, Cooldown, Counters, Handoff};
use crate::deliver::DeliveryNote;
use crate::model::{
    BaselineNotes, CategoryHistory, CheckRecord, CheckStatus, Diagnostic, FlakyTestNote,
    GateSummary, Installed, Outcome, Preset, Severity, SeverityCounts, StopReason, Trend,
};
use crate::state::Layout;

pub fn records() -> Vec<CheckRecord> {
    let record = |name: &str, category: &str, status, exit_code, duration_ms| CheckRecord {
        name: name.into(),
        category: category.into(),
        parser: name.into(),
        status,
        exit_code: Some(exit_code),
        signal: None,
        duration_ms,
        timed_out: false,
        counts: SeverityCounts::default(),
        expected_count: None,
        tests: None,
        unparsed: false,
        failing_exit: None,
        output_bytes: 0,
        lines_cut: 0,
        infra_reason: None,
        leftover_processes_stopped: false,
        output_abandoned: false,
        flaky: false,
        excused: Vec::new(),
        wrote_tracked: Vec::new(),
    };
    vec![
        CheckRecord {
            counts: SeverityCounts {
                error: 1,
                warning: 1,
                note: 1,
            },
            ..record("ruff", "lint", CheckStatus::Failed, 1, 1500)
        },
        record("pytest", "tests", CheckStatus::Passed, 0, 2250),
    ]
}

pub fn findings() -> Vec<Diagnostic> {
    let diagnostic =
        |file: Option<&str>, line, column, severity, code: Option<&str>, message: &str| {
            Diagnostic {
                file: file.map(Into::into),
                line,
                column,
                end_line: None,
                end_column: None,
                severity,
                code: code.map(Into::into),
                message: message.into(),
                category: None,
                fingerprint: Diagnostic::compute_fingerprint("ruff", code, file, message),
                outside_target: false,
                body: None,
            }
        };
    vec![
        diagnostic(
            Some("src/app.py"),
            Some(12),
            Some(5),
            Severity::Error,
            Some("E711"),
            r#"comparison to None: use `x is None`, not `x == None` <&> "quoted" 'single'"#,
        ),
        diagnostic(
            Some("docs/grüße.py"),
            Some(7),
            None,
            Severity::Warning,
            Some("E501"),
            "Zeile zu lang (120 > 88): „Grüße“ 🚀",
        ),
        diagnostic(
            Some("pyproject.toml"),
            None,
            None,
            Severity::Note,
            None,
            "project declares no license",
        ),
    ]
}

/// A report of the first two `records`, the first with `findings`, for the CI renderers.
pub fn input(records: &[CheckRecord], findings: &[Diagnostic]) -> Report {
    let checks = vec![
        (records[0].clone(), findings.to_vec()),
        (records[1].clone(), Vec::new()),
    ];
    checks_report(checks, parsers(records))
}

/// A report of `checks`, each with its findings, for the CI renderers.
pub fn checks_report(checks: Vec<(CheckRecord, Vec<Diagnostic>)>, parsers: ParserDocs) -> Report {
    Report {
        checks: checks
            .into_iter()
            .map(|(record, findings)| CheckFindings {
                record,
                findings,
                preexisting: Vec::new(),
            })
            .collect(),
        parsers,
        automation_id: AUTOMATION_ID.into(),
        ..Report::bare(
            Mode::Check,
            Outcome::NeedsFix,
            PathBuf::new(),
            Layout::new("/nonexistent"),
            GateSummary::empty(0),
        )
    }
}

/// The fixture's `automationDetails.id`: a matrix leg of a GitHub job.
pub const AUTOMATION_ID: &str = "refine-loop/CI:lint/os:ubuntu-latest/";

/// What the built-in catalogue knows of the parsers `records` name.
pub fn parsers(records: &[CheckRecord]) -> ParserDocs {
    let catalogue = crate::parse::Catalogue::built_in().expect("the built-in parsers compile");
    super::ci::docs_of(
        &catalogue,
        records.iter().map(|record| record.parser.as_str()),
    )
}

/// The gate at the baseline and after each of the two cycles: lint 3 → 1 → 1 (cycle 2 rolled
/// back), tests 0 → 1 (a regression) → 0.
fn gates() -> [GateSummary; 3] {
    let mut baseline = GateSummary::with_failures(0, &[("lint", 3), ("tests", 0)]);
    let mut first = GateSummary::with_failures(1, &[("lint", 1), ("tests", 1)]);
    let mut last = GateSummary::with_failures(2, &[("lint", 1), ("tests", 0)]);
    for summary in [&mut baseline, &mut first, &mut last] {
        summary.checks = records();
        let lint = summary.categories.get_mut("lint").unwrap();
        lint.details = findings()
            .iter()
            .take(usize::try_from(lint.failures).unwrap_or(0))
            .map(Diagnostic::detail)
            .collect();
        lint.warnings = 1;
        summary.warning_count = 1;
    }
    [baseline, first, last]
}

/// The rich report of `mode`.
pub fn report(mode: Mode) -> Report {
    let [baseline, first, last] = gates();
    let mut trend = Trend::default();
    let mut history = CategoryHistory::default();
    trend.push(&baseline, None, false);
    history.push(&baseline);
    trend.push(&first, Some(true), false);
    history.push(&first);
    trend.push(&last, Some(false), true);
    history.push(&last);
    trend.cycles[2].attempt_failed_count = Some(4);
    let reason = match mode {
        Mode::Run(Preset::Refine) => StopReason::PlateauWithHandoffs,
        Mode::Run(Preset::Improve) => StopReason::NoProgress,
        _ => StopReason::MaxCycles,
    };
    trend.finish(reason);
    let run = matches!(mode, Mode::Run(_)).then(run_part);
    let campaign = matches!(mode, Mode::Run(Preset::Refine | Preset::Improve)).then(campaign_part);
    let findings = findings();
    Report {
        mode,
        outcome: match mode {
            Mode::Run(_) => reason.outcome(),
            Mode::Check | Mode::Merge => Outcome::NeedsFix,
        },
        stop_reason: matches!(mode, Mode::Run(_)).then_some(reason),
        target: PathBuf::from("/work/shop"),
        layout: Layout::new("/work/shop/.refine-loop"),
        anchor: "refine-loop.toml".into(),
        prefix: String::new(),
        baseline,
        last,
        trend,
        history,
        checks: vec![
            CheckFindings {
                record: records()[0].clone(),
                findings: findings.clone(),
                preexisting: Vec::new(),
            },
            CheckFindings {
                record: records()[1].clone(),
                findings: Vec::new(),
                preexisting: Vec::new(),
            },
        ],
        findings,
        run,
        campaign,
        sweep: None,
        shards: if mode == Mode::Merge {
            vec![
                ShardRow {
                    dir: "shards/api".into(),
                    cycles: 2,
                    first_failed: 2,
                    last_failed: 1,
                },
                ShardRow {
                    dir: "shards/web|ui".into(),
                    cycles: 1,
                    first_failed: 1,
                    last_failed: 0,
                },
            ]
        } else {
            Vec::new()
        },
        error: None,
        parsers: parsers(&records()),
        automation_id: AUTOMATION_ID.into(),
        new_since: None,
    }
}

fn run_part() -> RunPart {
    RunPart {
        integrity: super::IntegrityPart {
            mode: crate::integrity::Mode::Refuse,
            refused: vec![
                "cycle 1, `claude -p` on lint: `src/cart.py:3`: suppression added: `# noqa: F401` (python/noqa)".into(),
                "cycle 1, `claude -p` on lint: `tests/test_cart.py:8`: test skipped, focused or excused: `pytest.mark.skip` (python/pytest-skip)".into(),
            ],
            allowed: vec![
                "cycle 2, `claude -p` on types: `src/cart.py:1`: suppression added: `# type: ignore[import-untyped]` (python/type-ignore); allowed by [[integrity.allow]] #1 (stubs are missing upstream)".into(),
            ],
            reported: Vec::new(),
            delegates: vec![super::DelegateIntegrity {
                delegate: "claude -p".into(),
                changes_refused: 1,
                refused: 2,
                allowed: 1,
                reported: 0,
                barred: false,
            }],
        },
        in_worktree: false,
        earlier: Vec::new(),
        remaining: Vec::new(),
        checks_configured: 2,
        max_cycles: 2,
        notes: BaselineNotes {
            spent: Some(crate::model::Spend {
                tokens: 37_513,
                cost_usd: 0.028_354_1,
                turns: 2,
                ..crate::model::Spend::default()
            }),
            spending_cap: None,
            format_version: 1,
            recorded_at: "2026-12-01T12:00:00Z".into(),
            load_average: Some([0.52, 0.41, 0.3]),
            cpus: 2,
            confirm_runs: 1,
            scope: vec!["src".into()],
            installed: vec![Installed {
                check: "ruff".into(),
                tool: "ruff".into(),
                command: "pip install ruff".into(),
                exit_code: Some(0),
                output: "Successfully installed ruff".into(),
            }],
            flaky_checks: vec!["integration".into()],
            flaky_tests: vec![FlakyTestNote {
                check: "pytest".into(),
                file: Some("tests/test_cart.py".into()),
                test: "tests/test_cart.py::test_total".into(),
            }],
            after_gate: Vec::new(),
            confinement: Some(crate::model::ConfinementNote {
                state: crate::model::ConfinementState::Enforced,
                abi: Some(7),
                missing: vec![],
                whole_tree: true,
                tools: vec![".venv".into()],
                signals: crate::model::SignalBoundary::Landlock,
                private: vec!["/home/runner/.cargo".into()],
                earlier_work: Vec::new(),
            }),
            new_since: None,
            new_since_skipped: None,
        },
        ignored: super::IgnoredPart::default(),
        scope: ScopePart {
            description: "only these paths: src".into(),
            everything: false,
            outside: 1,
            violations: vec![
                "cycle 1, `ruff check --fix .` on lint: changed `tools/build.py`, outside the scope: a scope violation, undone".into(),
            ],
        },
        delivery: DeliveryNote {
            reference: Some("refs/refine-loop/20261201-120000-42".into()),
            commits: 1,
            refused: None,
        },
        heuristics: vec![
            "lint kept failing after two cycles of `ruff check --fix .`: it needs another fixer or a person".into(),
        ],
        set_aside: Vec::new(),
        full_scans: Vec::new(),
    }
}

fn campaign_part() -> CampaignPart {
    let candidate = |id: &str, status: &str, roi: f64, note: &str| Candidate {
        id: id.into(),
        family: format!("tidy/{id}"),
        title: format!("{id} the helpers"),
        paths: vec!["src/app.py".into()],
        impact: 4,
        confidence: 4,
        effort: 2,
        roi,
        status: status.into(),
        round: 1,
        note: note.into(),
    };
    CampaignPart {
        intent: "tidy the shop's helpers".into(),
        backlog: Backlog {
            counters: Counters {
                segment: 1,
                round: 3,
                plateau_count: 3,
                lifetime_rounds: 3,
                outcome: Some("NEEDS-FIX".into()),
                stop_reason: Some("plateau with handoffs".into()),
                ..Counters::default()
            },
            candidates: vec![
                candidate("rename", "accepted", 8.0, "checks and reviewer passed"),
                candidate(
                    "split",
                    "rolled-back",
                    4.0,
                    "reviewer: renames a public function",
                ),
                candidate("inline", "parked", 1.5, "ROI below theta"),
                candidate(
                    "move",
                    "blocked",
                    8.0,
                    "touches a path that held the user's own work before the run",
                ),
            ],
            handoffs: vec![Handoff {
                family: "behaviour/total".into(),
                title: "total() rounds half-cents down".into(),
                severity: "high".into(),
                evidence: "cart.py:12 uses int()\nsecond line".into(),
                critical: false,
                round: 2,
            }],
            cooldowns: vec![Cooldown {
                family: "tidy/split".into(),
                since_round: 3,
                reason: "no accepted refinement in 3 rounds running".into(),
            }],
            rollbacks: vec!["round 2: tidy/split: reviewer: renames a public function".into()],
            open_items: vec!["- [ ] P1: lint: 1 failure(s) — first: src/app.py:12:5: E711".into()],
            deferred: vec!["- [ ] P2: lint: 1 warning(s)".into()],
            ..Backlog::default()
        },
        cards: vec![
            "refine-loop round 1 · accepted tidy/rename · plateau 0/3 · failures 0/3 · handoffs 0"
                .into(),
            "refine-loop round 2 · accepted none · plateau 1/3 · failures 0/3 · handoffs 1".into(),
        ],
        notes: Vec::new(),
        first_candidate: 0,
        scheduled: false,
    }
}
