//! The state dir's layout: every file a run, a campaign, `check`, `merge` or `sweep` writes
//! there, by name, and the `format_version` of every persisted type. Nothing else names them.

use std::path::{Path, PathBuf};

/// The `format_version` each persisted file is written with; a reader accepts its own version
/// and older ones (new fields have defaults).
pub mod format {
    /// `gate-summary.json` (and `cycle-N/gate-summary.json`).
    pub const GATE_SUMMARY: u32 = 1;
    /// `trend.json`.
    pub const TREND: u32 = 1;
    /// `category-history.json`.
    pub const CATEGORY_HISTORY: u32 = 1;
    /// `heuristics.json`.
    pub const HEURISTICS: u32 = 1;
    /// `run.json`.
    pub const RUN: u32 = 1;
    /// `manifest.json`.
    pub const MANIFEST: u32 = 1;
    /// `sweep.json`.
    pub const SWEEP: u32 = 1;
    /// `findings.json`.
    pub const FINDINGS: u32 = 1;
    /// The campaign's state (the JSON block of `REFINE-BACKLOG.md`).
    pub const CAMPAIGN: u32 = 1;
    /// `refine-loop parse --format json`.
    pub const PARSE: u32 = 1;
    /// `merge.json` (a merged folder's shards).
    pub const MERGE: u32 = 1;
}

pub const SUMMARY_FILE: &str = "gate-summary.json";
pub const OUTPUT_FILE: &str = "gate-output.txt";
pub const FINDINGS_FILE: &str = "findings.json";
pub const TREND_FILE: &str = "trend.json";
pub const HISTORY_FILE: &str = "category-history.json";
pub const HEURISTICS_FILE: &str = "heuristics.json";
pub const RUN_FILE: &str = "run.json";
pub const FINAL_REPORT_FILE: &str = "REFINE-LOOP-FINAL.md";
pub const PATCH_FILE: &str = "refine-loop.patch";
pub const PATCHES_DIR: &str = "patches";
pub const MANIFEST_FILE: &str = "manifest.json";
pub const JUNIT_FILE: &str = "junit.xml";
pub const SARIF_FILE: &str = "report.sarif";
pub const CODE_QUALITY_FILE: &str = "codequality.json";
pub const SWEEP_FILE: &str = "sweep.json";
pub const GOAL_FILE: &str = "REFINE-GOAL.md";
pub const BACKLOG_FILE: &str = "REFINE-BACKLOG.md";
pub const WORKLOG_FILE: &str = "REFINE-WORKLOG.md";
pub const DELEGATE_REPORTS_DIR: &str = "delegate-reports";
pub const MERGE_FILE: &str = "merge.json";
/// The earlier runs' files, one folder each, named by run id.
pub const RUNS_DIR: &str = "runs";

/// The paths of one state dir.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    dir: PathBuf,
}

impl Layout {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `cycle-N/` (0 is the baseline).
    pub fn cycle(&self, cycle: u32) -> PathBuf {
        self.dir.join(format!("cycle-{cycle}"))
    }

    pub fn cycle_summary(&self, cycle: u32) -> PathBuf {
        self.cycle(cycle).join(SUMMARY_FILE)
    }

    pub fn cycle_findings(&self, cycle: u32) -> PathBuf {
        self.cycle(cycle).join(FINDINGS_FILE)
    }

    /// `cycle-N/delegate-reports/`.
    pub fn delegate_reports(&self, cycle: u32) -> PathBuf {
        self.cycle(cycle).join(DELEGATE_REPORTS_DIR)
    }

    /// The state the run left.
    pub fn summary(&self) -> PathBuf {
        self.dir.join(SUMMARY_FILE)
    }

    /// The findings of the state the run left.
    pub fn findings(&self) -> PathBuf {
        self.dir.join(FINDINGS_FILE)
    }

    pub fn trend(&self) -> PathBuf {
        self.dir.join(TREND_FILE)
    }

    pub fn history(&self) -> PathBuf {
        self.dir.join(HISTORY_FILE)
    }

    pub fn heuristics(&self) -> PathBuf {
        self.dir.join(HEURISTICS_FILE)
    }

    pub fn run_json(&self) -> PathBuf {
        self.dir.join(RUN_FILE)
    }

    pub fn final_report(&self) -> PathBuf {
        self.dir.join(FINAL_REPORT_FILE)
    }

    pub fn patch(&self) -> PathBuf {
        self.dir.join(PATCH_FILE)
    }

    pub fn patches(&self) -> PathBuf {
        self.dir.join(PATCHES_DIR)
    }

    pub fn manifest(&self) -> PathBuf {
        self.dir.join(MANIFEST_FILE)
    }

    /// A campaign's `REFINE-GOAL.md`: there, the campaign exists.
    pub fn goal(&self) -> PathBuf {
        self.dir.join(GOAL_FILE)
    }

    /// `runs/`: the earlier runs' files, one folder each (see [`super::set_aside`]).
    pub fn runs(&self) -> PathBuf {
        self.dir.join(RUNS_DIR)
    }

    pub fn sweep(&self) -> PathBuf {
        self.dir.join(SWEEP_FILE)
    }
}
