//! The one report every mode ends in (`check`, `run` with any preset, `merge`), and its
//! renderers, one a file: the final and campaign reports, the step summary and annotations, the
//! step's outputs, JUnit, SARIF, GitLab Code Quality, the console table, each delegate's report.

mod annotations;
mod baseline_md;
mod campaign_md;
mod ci;
pub mod codequality;
mod delegate_md;
mod final_md;
#[cfg(test)]
pub(crate) mod fixture;
pub mod junit;
mod merge_md;
mod outputs;
pub mod sarif;
mod step_summary;
mod sweep_md;
mod table;

use std::path::{Path, PathBuf};

pub use annotations::annotations;
pub use ci::{CiReportError, ParserDocs, config_anchor, parser_docs, repository_prefix};
pub use delegate_md::{DelegateReport, delegate_report};
pub use final_md::where_changes_are;
pub use outputs::outputs;
pub use step_summary::{CategoryChange, step_summary};
pub use sweep_md::{summary_lines as sweep_summary_lines, sweep_section};
pub use table::render_table;

use crate::campaign::books::Backlog;
use crate::deliver::DeliveryNote;
use crate::model::{
    BaselineNotes, CategoryHistory, CheckRecord, Diagnostic, GateSummary, Outcome, Preset,
    StopReason, Trend,
};
use crate::state::Layout;
use crate::sweep::Sweep;

/// Which command the report is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One run of the gate.
    Check,
    /// The loop, with its preset.
    Run(Preset),
    /// Shards of matrix jobs, merged.
    Merge,
}

/// What a command leaves for a person and a CI system.
#[derive(Debug, Clone)]
pub struct Report {
    pub mode: Mode,
    pub outcome: Outcome,
    /// Why a run stopped (`None` for `check` and `merge`).
    pub stop_reason: Option<StopReason>,
    /// The repository (or folder) the gate ran in.
    pub target: PathBuf,
    /// Where the report's files are.
    pub layout: Layout,
    /// The file, relative to the target, that findings without a path are reported against.
    pub anchor: String,
    /// The target relative to the repository root (see [`repository_prefix`]).
    pub prefix: String,
    /// The gate at the start (cycle 0) and the state left at the end.
    pub baseline: GateSummary,
    pub last: GateSummary,
    pub trend: Trend,
    pub history: CategoryHistory,
    /// The findings that remain (not those the baseline excused as flaky).
    pub findings: Vec<Diagnostic>,
    /// Each check of the state left, with every finding it reported (JUnit, SARIF, Code
    /// Quality).
    pub checks: Vec<CheckFindings>,
    /// A run's own part.
    pub run: Option<RunPart>,
    /// A campaign's part (refine and improve).
    pub campaign: Option<CampaignPart>,
    /// The open surface, when the campaign swept it.
    pub sweep: Option<Sweep>,
    /// `merge`: one row per shard.
    pub shards: Vec<ShardRow>,
    /// A run that ended in an error: what went wrong.
    pub error: Option<String>,
    /// What is known of the checks' parsers (SARIF's rule descriptions).
    pub parsers: ParserDocs,
    /// SARIF's `automationDetails.id`: the job and matrix leg.
    pub automation_id: String,
    /// Pull-request mode (`--new-since`): the base its findings are new or pre-existing by.
    pub new_since: Option<crate::model::NewSinceNote>,
}

impl Report {
    /// What the run's delegates spent, as its ledger has it (`None` for `check` and `merge`).
    pub fn spent(&self) -> Option<crate::model::Spend> {
        self.run.as_ref().and_then(|run| run.notes.spent)
    }

    /// A report of `mode` for the gate `settings` describe, at `baseline` (also its last state)
    /// and nothing more yet: no trend, no findings, no run, campaign or shards. The caller
    /// fills in what it has.
    pub fn new(
        mode: Mode,
        outcome: Outcome,
        settings: &crate::config::Settings,
        baseline: GateSummary,
    ) -> Self {
        Self {
            anchor: config_anchor(&settings.target, &settings.config_file),
            prefix: repository_prefix(&settings.target),
            parsers: parser_docs(&settings.parsers, &settings.gate.checks),
            automation_id: crate::ci::automation_id(settings.gate.shard),
            ..Self::bare(
                mode,
                outcome,
                settings.target.clone(),
                Layout::new(&settings.state_dir),
                baseline,
            )
        }
    }

    /// A report without settings (`merge`): findings without a path go against the default
    /// config file's name, and no parser is described.
    pub fn bare(
        mode: Mode,
        outcome: Outcome,
        target: PathBuf,
        layout: Layout,
        baseline: GateSummary,
    ) -> Self {
        Self {
            mode,
            outcome,
            stop_reason: None,
            target,
            layout,
            anchor: crate::config::defaults::CONFIG_FILE.to_string(),
            prefix: String::new(),
            last: baseline.clone(),
            baseline,
            trend: Trend::default(),
            history: CategoryHistory::default(),
            findings: Vec::new(),
            checks: Vec::new(),
            run: None,
            campaign: None,
            sweep: None,
            shards: Vec::new(),
            error: None,
            parsers: ParserDocs::new(),
            automation_id: crate::ci::automation_id(None),
            new_since: None,
        }
    }
}

/// One check and the findings it reported.
#[derive(Debug, Clone)]
pub struct CheckFindings {
    pub record: CheckRecord,
    pub findings: Vec<Diagnostic>,
    /// Pull-request mode: beside each finding, whether it was there before the change; empty
    /// in a full run.
    pub preexisting: Vec<bool>,
}

impl Report {
    /// The run is in pull-request mode (`--new-since`): its findings are new or pre-existing.
    pub fn new_since(&self) -> Option<&crate::model::NewSinceNote> {
        self.new_since.as_ref()
    }
}

/// What only a run has.
#[derive(Debug, Clone)]
pub struct RunPart {
    /// Checks in the gate, and the cycle limit.
    pub checks_configured: usize,
    pub max_cycles: u32,
    pub notes: BaselineNotes,
    pub scope: ScopePart,
    /// Files git ignores, as the run protected them.
    pub ignored: IgnoredPart,
    pub delivery: DeliveryNote,
    /// Lessons the run drew from its record.
    pub heuristics: Vec<String>,
    /// Folders rollbacks set aside (never deleted), and where they are.
    pub set_aside: Vec<String>,
    /// Why the loop scanned the whole tree instead of following the kernel's account of what
    /// changed (empty: the watch told every change).
    pub full_scans: Vec<String>,
    /// The run worked in a linked worktree: its changes are not in the user's tree.
    pub in_worktree: bool,
    /// Why each failing category's findings remain.
    pub remaining: Vec<Remaining>,
    /// Changes that made the gate see less, and what came of them.
    pub integrity: IntegrityPart,
    /// Earlier runs whose accepted changes the work tree held, uncommitted, when this run
    /// began (it built on them), newest first.
    pub earlier: Vec<EarlierRun>,
}

/// An earlier run whose accepted changes are in the work tree, uncommitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EarlierRun {
    pub id: String,
    /// Its `refine-loop.patch`, set aside under `runs/<id>/` (none when its patch was refused).
    pub patch: Option<PathBuf>,
    /// `refs/refine-loop/<id>`.
    pub reference: String,
}

/// Gate integrity over a run: every move found that makes the gate see less, one line each
/// (the cycle, the delegate, the move), by what came of it; and per delegate, how often.
#[derive(Debug, Clone, Default)]
pub struct IntegrityPart {
    pub mode: crate::integrity::Mode,
    pub refused: Vec<String>,
    pub allowed: Vec<String>,
    /// Found, but judged as any change (`integrity = "report"`).
    pub reported: Vec<String>,
    pub delegates: Vec<DelegateIntegrity>,
}

/// How often one delegate tried to weaken the gate.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DelegateIntegrity {
    pub delegate: String,
    /// Its changes rolled back for it.
    pub changes_refused: u32,
    /// Its moves, by what came of them.
    pub refused: u32,
    pub allowed: u32,
    pub reported: u32,
    /// Refused so often it was barred for the rest of the run.
    pub barred: bool,
}

/// A category still failing at the end of a run, and why its findings remain.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Remaining {
    pub category: String,
    pub failures: u64,
    /// In the user's own uncommitted files: protected, so no fixer may change them.
    pub protected: u64,
    /// Brought to light by a kept fix during the run.
    pub unmasked: u64,
    /// A fix delegate takes the category.
    pub fixer: bool,
    /// Its fix attempts that left no kept change.
    pub tried: u32,
}

/// Files git ignored at the baseline: put back after a delegate deleted or changed them, or not
/// protected (over `protect_ignored_max`).
#[derive(Debug, Clone, Default)]
pub struct IgnoredPart {
    /// One line each: the cycle and the path.
    pub restored: Vec<String>,
    /// One line each: the path and its size.
    pub not_protected: Vec<String>,
}

/// The run's scope, as the report tells it.
#[derive(Debug, Clone, Default)]
pub struct ScopePart {
    /// The scope in words (`only these paths: src`).
    pub description: String,
    /// The scope is the whole target.
    pub everything: bool,
    /// Findings outside the scope, reported and not worked.
    pub outside: usize,
    /// Changes delegates made outside it, each undone.
    pub violations: Vec<String>,
}

/// A campaign's state at the end of the run, and this run's cards.
#[derive(Debug, Clone)]
pub struct CampaignPart {
    pub intent: String,
    pub backlog: Backlog,
    pub cards: Vec<String>,
    /// What opening the campaign found: its identity, a restored state set aside, where the
    /// earlier runs' work went.
    pub notes: Vec<String>,
    /// The backlog's candidates from this index on are this run's (the earlier ones, an earlier
    /// run's, whose work is under "Earlier runs' work").
    pub first_candidate: usize,
    /// The run was asked to go on by itself (`--continue=auto`, a scheduled job).
    pub scheduled: bool,
}

/// One shard of a merge.
#[derive(Debug, Clone)]
pub struct ShardRow {
    pub dir: PathBuf,
    pub cycles: usize,
    pub first_failed: u64,
    pub last_failed: u64,
}

impl Report {
    /// The path of the report a person reads first: the final report of a run or merge, the
    /// gate summary of a check.
    pub fn main_file(&self) -> PathBuf {
        match self.mode {
            Mode::Check => self.layout.cycle_summary(0),
            Mode::Run(_) | Mode::Merge => self.layout.final_report(),
        }
    }

    /// The outcome as the summary and the outputs name it: a run's (`NEEDS-FIX`), or for
    /// `check` the gate's verdict (`PASSED`, `FAILED`, `ERROR (INFRASTRUCTURE FAILURE)`,
    /// `CANCELLED`).
    pub fn outcome_label(&self) -> String {
        use crate::model::Outcome;
        match (self.mode, self.outcome) {
            (Mode::Check | Mode::Merge, Outcome::Success) => "PASSED".into(),
            (Mode::Check | Mode::Merge, Outcome::NeedsFix | Outcome::Budget) => "FAILED".into(),
            (Mode::Check | Mode::Merge, Outcome::Error) => "ERROR (INFRASTRUCTURE FAILURE)".into(),
            (_, outcome) => outcome.as_str().into(),
        }
    }

    /// Each category's failures at the start and at the end.
    pub fn category_changes(&self) -> Vec<CategoryChange> {
        let mut names: Vec<&String> = self
            .baseline
            .categories
            .keys()
            .chain(self.last.categories.keys())
            .collect();
        names.sort();
        names.dedup();
        names
            .into_iter()
            .map(|name| CategoryChange {
                name: name.clone(),
                before: self.baseline.categories.get(name).map_or(0, |c| c.failures),
                after: self.last.categories.get(name).map_or(0, |c| c.failures),
            })
            .collect()
    }

    /// Cycles run after the baseline.
    pub fn cycles(&self) -> usize {
        self.trend.cycles.len().saturating_sub(1)
    }
}

/// Writes the report's files into its state dir: the final (or campaign, or merged) report,
/// JUnit, SARIF and Code Quality. `check` writes no final report: its gate summary is the one.
pub fn write_report_files(report: &Report) -> Result<(), CiReportError> {
    if report.mode != Mode::Check {
        crate::state::write_redacted(
            &report.layout.final_report(),
            final_report(report).as_bytes(),
        )?;
    }
    write_ci_reports(report.layout.dir(), report)
}

/// Renders the three CI reports of `report` and writes them into `dir` (created if missing),
/// each atomically. The findings' text is redacted before it is escaped into XML or JSON (an
/// escaped secret would no longer be recognised), and their paths made relative to the
/// repository's root, where code scanning and GitLab look; each file is redacted whole again
/// when it is written.
pub fn write_ci_reports(dir: &Path, report: &Report) -> Result<(), CiReportError> {
    std::fs::create_dir_all(dir).map_err(|source| CiReportError::CreateDir {
        path: dir.to_path_buf(),
        source,
    })?;
    let redact = |text: &str| {
        String::from_utf8_lossy(&crate::secrets::redacted(text.as_bytes())).into_owned()
    };
    let mut safe = report.clone();
    for finding in safe.checks.iter_mut().flat_map(|check| &mut check.findings) {
        finding.message = redact(&finding.message);
        finding.file = finding.file.as_deref().map(|file| {
            if finding.outside_target || file.starts_with('/') {
                redact(file)
            } else {
                redact(&ci::rooted(&report.prefix, &report.target, file))
            }
        });
        finding.code = finding.code.as_deref().map(redact);
    }
    safe.anchor = ci::rooted(&report.prefix, &report.target, &report.anchor);
    safe.prefix = String::new();
    let junit = junit::render_junit(&safe)?;
    let sarif = sarif::render_sarif(&safe)?;
    let code_quality = codequality::render_code_quality(&safe)?;
    crate::state::write_redacted(&dir.join(crate::state::JUNIT_FILE), &junit)?;
    crate::state::write_redacted(&dir.join(crate::state::SARIF_FILE), &sarif)?;
    crate::state::write_redacted(&dir.join(crate::state::CODE_QUALITY_FILE), &code_quality)?;
    Ok(())
}

/// The final report of `report`, by its mode.
pub fn final_report(report: &Report) -> String {
    if let Some(error) = &report.error {
        return final_md::error_report(report, error);
    }
    match (report.mode, &report.run) {
        (Mode::Merge, _) => merge_md::merged_report(report),
        (Mode::Run(Preset::Refine | Preset::Improve), _) => campaign_md::campaign_report(report),
        (Mode::Run(Preset::Refactoring), Some(run)) => final_md::refactoring_report(report, run),
        (Mode::Check | Mode::Run(Preset::Refactoring), _) => final_md::gate_report(report),
    }
}
