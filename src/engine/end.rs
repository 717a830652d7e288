//! A run's end as the one report, and the state files every preset leaves: the state's summary
//! and findings, `trend.json`, `category-history.json` and `heuristics.json`.

use super::EngineEnd;
use crate::config::Settings;
use crate::deliver::DeliveryNote;
use crate::gate::CheckResult;
use crate::model::{Diagnostic, FindingsFile, GateSummary, Preset};
use crate::report::{CheckFindings, Mode, Report, RunPart, ScopePart};
use crate::state::{self, StateError};

impl EngineEnd {
    /// The report of a run of `preset` that ended here, with the record it left. Its findings
    /// are placed on HEAD's lines (the commit CI checked out), since the run's changes are not
    /// committed.
    pub fn report(
        &self,
        settings: &Settings,
        preset: Preset,
        delivery: DeliveryNote,
        repo: &git2::Repository,
    ) -> Report {
        let mut report = self.report_of_tree(settings, preset, delivery);
        super::head_lines::place_on_head(repo, &settings.target, &mut report.findings);
        for check in &mut report.checks {
            super::head_lines::place_on_head(repo, &settings.target, &mut check.findings);
        }
        report
    }

    /// The report with the findings as the tree has them.
    fn report_of_tree(
        &self,
        settings: &Settings,
        preset: Preset,
        delivery: DeliveryNote,
    ) -> Report {
        let scope = &settings.run.scope;
        let mut last = self.kept.summary.clone();
        last.cycle = self.trend.cycles.last().map_or(0, |c| c.cycle);
        Report {
            stop_reason: Some(self.reason),
            last,
            trend: self.trend.clone(),
            history: self.history.clone(),
            findings: self.kept.diagnostics.clone(),
            checks: check_findings(&self.kept.summary, &self.kept.checks, &self.flaky),
            run: Some(RunPart {
                checks_configured: settings.gate.checks.len(),
                max_cycles: settings.run.max_cycles,
                notes: self.notes.clone(),
                scope: ScopePart {
                    description: scope.describe(),
                    everything: scope.is_everything(),
                    outside: self
                        .kept
                        .diagnostics
                        .iter()
                        .filter(|d| !super::in_scope(scope, d))
                        .count(),
                    violations: self.scope_violations.clone(),
                },
                ignored: crate::report::IgnoredPart {
                    restored: self.ignored_restored.clone(),
                    not_protected: self.ignored_not_protected.clone(),
                },
                delivery,
                heuristics: self
                    .heuristics
                    .heuristics
                    .iter()
                    .map(|h| h.message.clone())
                    .collect(),
                set_aside: Vec::new(),
                full_scans: Vec::new(),
                in_worktree: settings.run.isolate == crate::config::Isolate::Worktree,
                remaining: self.remaining.clone(),
                integrity: self.integrity.clone(),
                earlier: Vec::new(),
            }),
            new_since: self.notes.new_since.clone(),
            ..Report::new(
                Mode::Run(preset),
                self.reason.outcome(),
                settings,
                self.baseline.clone(),
            )
        }
    }

    /// Ends the run as `preset`'s report: with the workspace's part and what `add` adds, its
    /// state files and every report written.
    pub(super) fn conclude(
        &self,
        settings: &Settings,
        preset: Preset,
        delivery: DeliveryNote,
        workspace: &crate::workspace::Workspace,
        add: impl FnOnce(&mut Report),
    ) -> Result<Report, super::RunError> {
        let mut report = self.report(settings, preset, delivery, workspace.repository());
        if let Some(run) = report.run.as_mut() {
            run.set_aside = workspace.set_aside();
            run.full_scans = workspace.full_scan_reasons();
        }
        add(&mut report);
        self.write_state_files(&report)?;
        crate::report::write_report_files(&report)?;
        Ok(report)
    }

    /// Writes the state files of the run: the state it left (`gate-summary.json`,
    /// `findings.json`), `trend.json`, `category-history.json` and `heuristics.json`.
    pub fn write_state_files(&self, report: &Report) -> Result<(), StateError> {
        let layout = &report.layout;
        state::write_json(&layout.summary(), &report.last)?;
        write_findings(
            &layout.findings(),
            &self.kept.diagnostics,
            &self.kept.checks,
        )?;
        state::write_json(&layout.trend(), &report.trend)?;
        state::write_json(&layout.history(), &report.history)?;
        state::write_json(&layout.heuristics(), &self.heuristics)
    }
}

/// `findings.json` of a gate run: its findings that count, and whether that is all of them.
pub fn write_findings(
    path: &std::path::Path,
    findings: &[Diagnostic],
    checks: &[CheckResult],
) -> Result<(), StateError> {
    let complete = checks.iter().all(|check| check.findings.omitted == 0);
    state::write_json(path, &FindingsFile::new(findings.to_vec(), complete))
}

/// Each check of a summary with the findings of the result it was made from, and (pull-request
/// mode) which of them `flaky` holds pre-existing.
pub fn check_findings(
    summary: &GateSummary,
    results: &[CheckResult],
    flaky: &crate::gate::Flaky,
) -> Vec<CheckFindings> {
    summary
        .checks
        .iter()
        .zip(results)
        .map(|(record, result)| CheckFindings {
            record: record.clone(),
            findings: result.findings.diagnostics().to_vec(),
            preexisting: match flaky.preexisting {
                Some(_) => flaky.preexisting(&record.name, result.findings.diagnostics()),
                None => Vec::new(),
            },
        })
        .collect()
}

/// Why each category still failing in `engine`'s kept state has findings left: how many are in
/// the user's protected files, how many were unmasked, whether a fixer takes it, and how often
/// one tried without a kept change.
pub(super) fn remaining(engine: &super::Engine<'_>) -> Vec<crate::report::Remaining> {
    let reach = engine.reach();
    let kept = &engine.kept;
    (kept.summary.categories.iter())
        .filter(|(name, c)| !c.passed && name.as_str() != crate::gate::INFRA_CATEGORY)
        .map(|(name, c)| {
            let failing = || {
                (kept.diagnostics.iter()).filter(|d| {
                    d.category.as_deref() == Some(name)
                        && d.severity == crate::model::Severity::Error
                })
            };
            crate::report::Remaining {
                category: name.clone(),
                failures: c.failures,
                protected: failing().filter(|d| reach.protects(d)).count() as u64,
                unmasked: failing()
                    .filter(|d| engine.unmasked_prints.contains(&d.fingerprint))
                    .count() as u64,
                fixer: engine.settings.delegates.iter().any(|d| d.handles(name)),
                tried: engine.tried.get(name).copied().unwrap_or(0),
            }
        })
        .collect()
}
