//! A run's own facts, as `run.json` keeps them (the baseline's notes), and the preset it ran.

use serde::{Deserialize, Serialize};

/// The presets: the three seed loops on one engine (`--preset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// Every failing category each cycle, to a passing gate (the default).
    Refactoring,
    /// Behaviour-preserving refinements, one at a time, ranked by ROI, reviewed; a campaign.
    Refine,
    /// An open P0/P1 backlog worked to a green gate, confirmed twice; a campaign.
    Improve,
}

impl Preset {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Refactoring => "refactoring",
            Self::Refine => "refine",
            Self::Improve => "improve",
        }
    }

    /// Whether it runs as a campaign (state kept across runs).
    pub fn is_campaign(self) -> bool {
        self != Self::Refactoring
    }
}

/// What the baseline found beside the gate's findings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BaselineNotes {
    pub format_version: u32,
    pub recorded_at: String,
    /// 1, 5 and 15 minutes, from `/proc/loadavg`.
    pub load_average: Option<[f64; 3]>,
    pub cpus: usize,
    pub confirm_runs: u32,
    /// The run's scope; empty for the whole target.
    pub scope: Vec<String>,
    pub installed: Vec<Installed>,
    /// Checks whose result changed between runs.
    pub flaky_checks: Vec<String>,
    /// Tests that failed in their suite and passed alone.
    pub flaky_tests: Vec<FlakyTestNote>,
    /// What the loop did after a gate run, before judging anything: the processes a check left
    /// running (killed), and the user's work or git's hooks, config, index and `info/` changed
    /// while the gate ran (put back, or at the baseline taken as the gate's own output).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after_gate: Vec<String>,
    /// What the delegates spent in this run, as their readers reported it (written when the
    /// run ends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spent: Option<super::Spend>,
    /// Why a spending cap ended the run (`cost-budget`): which cap, and what was spent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spending_cap: Option<String>,
    /// How the kernel held the command delegates (left out by runs before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confinement: Option<ConfinementNote>,
    /// Pull-request mode (`--new-since`): the base and the change the findings were split by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_since: Option<NewSinceNote>,
    /// `--new-since auto` found no pull request in the environment: why the run was a full one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_since_skipped: Option<String>,
}

/// Pull-request mode, as `run.json` keeps it (CI examples read these keys).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewSinceNote {
    /// What the user gave: `auto`, a branch, a commit.
    #[serde(rename = "ref")]
    pub reference: String,
    /// The base commit it resolved to.
    pub base: String,
    /// `given`, `github`, `gitlab` or `jenkins`.
    pub source: String,
    /// `lines` or `gate`.
    pub mode: String,
    /// The files changed since the base, relative to the target: the delegates' scope.
    pub changed_files: Vec<String>,
    /// The baseline's failures new since the base, and those there before.
    #[serde(default)]
    pub new_count: u64,
    #[serde(default)]
    pub preexisting_count: u64,
}

/// How the command delegates were confined, as `run.json` keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfinementNote {
    pub state: ConfinementState,
    /// The kernel's Landlock ABI, when it has one and confinement is not off.
    pub abi: Option<u32>,
    /// The write rights the kernel cannot hold delegates to (`partial`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// The whole work tree was writable, its top included: `.git`, the state dir and the store
    /// were read-only binds in each delegate's own mount namespace. Without (no namespace could
    /// be made), no entry at the tree's top could be created, removed or renamed.
    #[serde(default)]
    pub whole_tree: bool,
    /// The gate's tools, read-only to every delegate: dependency folders and environments in
    /// the tree (relative to it), folders on the search paths and toolchains (absolute).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// What kept the delegates' signals, and their traces, from the loop's processes.
    #[serde(default)]
    pub signals: SignalBoundary,
    /// The caches whose writes each delegate kept to itself (a layer of its own, gone when it
    /// ended), absolute.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub private: Vec<String>,
    /// The files of the work tree that an earlier run's delegates wrote and nobody committed:
    /// the baseline's gate run, which runs them, was confined as the runs after it are.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier_work: Vec<String>,
}

/// What kept a confined delegate from signalling the loop, the gate or the user's shell.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SignalBoundary {
    /// Landlock's signal scoping (ABI 6), and a PID namespace of each delegate's own.
    Landlock,
    /// A PID namespace of each delegate's own, where the loop's processes have no id.
    PidNamespace,
    /// Nothing: no scoping in the kernel, and no namespace could be made (or not confined).
    #[default]
    None,
}

/// Whether the kernel held the command delegates to their folders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConfinementState {
    /// Every write right held by Landlock.
    Enforced,
    /// Landlock holds some rights; the kernel's ABI lacks the others (`missing`).
    Partial,
    /// The kernel has no Landlock: the watch alone.
    Unavailable,
    /// `confine = "off"`: the watch alone.
    Off,
}

/// A test that failed in its suite and passed alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlakyTestNote {
    pub check: String,
    pub file: Option<String>,
    pub test: String,
}

/// A missing tool's install, as it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Installed {
    pub check: String,
    pub tool: String,
    pub command: String,
    pub exit_code: Option<i32>,
    /// The end of its output (redacted).
    pub output: String,
}
