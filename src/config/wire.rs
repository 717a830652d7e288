//! The shape of `refine-loop.toml` as written: every field optional, unknown keys refused.
//!
//! The doc comments of these types are also the descriptions of `refine-loop.schema.json`
//! (generated from them in tests: `src/config/schema.rs`), which editors show on a key: they
//! are written for the user of the file.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use super::units::{ByteSize, ConfigDuration, Usd};

/// refine-loop's configuration: the quality gate it runs, the delegates that fix what the gate
/// finds, and the loop's limits. Unknown keys are errors.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(title = "refine-loop.toml"))]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// Where runs keep their files, relative to the target (default `".refine-loop"`).
    pub state_dir: Option<PathBuf>,
    /// Folders of extra parser definitions (`*.toml`), relative to this file.
    pub parser_dirs: Option<Vec<PathBuf>>,
    /// The quality gate: its checks, and the limits they share.
    pub gate: Option<GateFile>,
    /// The loop's limits: cycles, time, verification, isolation and what delegates may touch.
    #[serde(rename = "loop")]
    pub loop_settings: Option<LoopFile>,
    /// The delegates: commands (or model endpoints) that fix the findings of their categories.
    #[serde(default)]
    pub delegate: Vec<DelegateFile>,
    /// Campaigns: sweep the GitHub open surface (read-only) once at the start (default false).
    pub sweep: Option<bool>,
    /// Campaigns (`refine`, `improve`) that go on across runs: earlier work, and their budget.
    pub campaign: Option<CampaignFile>,
    /// Gate integrity: what a project allows of the moves that make the gate see less, and its
    /// own catalogue entries. Whether such a change is refused is `[loop] integrity`.
    pub integrity: Option<IntegrityFile>,
}

/// Gate integrity: a change that lowers the count by changing what the gate sees (a
/// suppression, a skipped or deleted test, a relaxed config, a file out of reach) is no fix.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct IntegrityFile {
    /// Folders of extra catalogue entries (`*.toml`), relative to this file; an entry with the
    /// name of a built-in one takes its place.
    pub dirs: Option<Vec<PathBuf>>,
    /// Moves the project allows: one is let through when it meets every condition an entry
    /// sets. It is still listed in the report.
    #[serde(default)]
    pub allow: Vec<AllowFile>,
}

/// A kind of move the project allows (at least one condition).
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct AllowFile {
    /// The class of move: `"suppression"`, `"tests"`, `"config"` or `"evasion"`.
    #[cfg_attr(test, schemars(extend("enum" = ["suppression", "tests", "config", "evasion"])))]
    pub class: Option<String>,
    /// The catalogue's rule, as the report names it (`python/type-ignore`); `*` matches any
    /// run of characters (`python/*`).
    pub rule: Option<String>,
    /// A regex searched in what was found: the pragma, the line, or the key and its values
    /// (`'type: ignore\[import-untyped\]'`).
    pub pattern: Option<String>,
    /// Globs of the files (relative to the target) where the move is allowed.
    pub paths: Option<Vec<String>>,
    /// Why the project allows it, shown in the report.
    pub reason: Option<String>,
}

/// A campaign across runs (a nightly job): what to do with earlier accepted work that is not
/// in HEAD, and the budget of the whole campaign.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CampaignFile {
    /// Earlier runs' accepted work that is not in HEAD and still applies: `"skip"` leaves those
    /// families alone (no second pull request for the same fix; the default), `"reapply"`
    /// applies the earlier series first, verified by the gate, and builds on it.
    pub pending: Option<crate::campaign::history::PendingMode>,
    /// Segments at most (each `--continue` starts one); then the campaign is finished.
    pub max_segments: Option<u32>,
    /// Rounds (cycles) at most over the campaign's whole life, all segments together.
    pub max_lifetime_rounds: Option<u32>,
    /// What the delegates may spend over the campaign's whole life, like `"20 USD"`; once
    /// spent, the run ends `cost-budget` and a continuation finds the campaign finished.
    pub max_lifetime_cost: Option<Usd>,
    /// Tokens the delegates may spend over the campaign's whole life.
    #[cfg_attr(test, schemars(range(min = 1)))]
    pub max_lifetime_tokens: Option<u64>,
}

/// The loop's limits.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct LoopFile {
    /// The most fix-and-verify cycles a run makes, 1 to 10 (default 5).
    #[cfg_attr(test, schemars(range(min = 1, max = super::settings::defaults::MAX_CYCLES_LIMIT)))]
    pub max_cycles: Option<u32>,
    /// No cycle starts that would not fit in this time, like `"45m"`; no limit when left out.
    pub time_budget: Option<ConfigDuration>,
    /// What the delegates may spend in a run (a campaign's segment), like `"5 USD"`, as their
    /// `usage` readers report it: a streaming reader's delegate is stopped as soon as it passes
    /// it, and no turn starts after it is spent (the run ends BUDGET, `cost-budget`).
    pub max_cost: Option<Usd>,
    /// Tokens the delegates may spend in a run (a campaign's segment), held as `max_cost` is.
    #[cfg_attr(test, schemars(range(min = 1)))]
    pub max_tokens: Option<u64>,
    /// When the gate runs again: `"per-cycle"` (default), or `"per-delegate"` after each one.
    #[cfg_attr(test, schemars(extend("enum" = ["per-cycle", "per-delegate"])))]
    pub verify: Option<String>,
    /// How a change is judged: `"unmask"` (default): new findings in files it did not touch, in
    /// categories that failed already, were hidden (behind an error it fixed) and are taken as
    /// the new baseline; `"strict"`: any category with more failures rolls the change back.
    #[cfg_attr(test, schemars(extend("enum" = ["unmask", "strict"])))]
    pub accept: Option<String>,
    /// Categories in the order they are worked; the rest follow by name.
    pub priority: Option<Vec<String>>,
    /// `"none"` (default): run in the target itself; `"worktree"`: in a linked worktree.
    #[cfg_attr(test, schemars(extend("enum" = ["none", "worktree"])))]
    pub isolate: Option<String>,
    /// Paths and globs (relative to the target) the delegates may change; all when left out.
    pub scope: Option<Vec<String>>,
    /// With `--new-since REF`, how a finding is judged new: `"lines"` (default), when it lies on
    /// a line the change added or modified; `"gate"`, when the gate run once on REF did not
    /// report it.
    #[cfg_attr(test, schemars(extend("enum" = ["lines", "gate"])))]
    pub new_since: Option<String>,
    /// Earlier runs whose private ref (`refs/refine-loop/<run-id>`) and folder in the state
    /// dir's `runs/` are kept, this run counted, 1 to 1000 (default 10); older ones are pruned,
    /// never one whose changes the work tree still holds uncommitted.
    #[cfg_attr(test, schemars(range(min = 1, max = super::settings::defaults::KEEP_RUNS_LIMIT)))]
    pub keep_runs: Option<u32>,
    /// How many times a check that fails at the baseline runs again, 0 (never) to 5 (default 1).
    #[cfg_attr(test, schemars(range(max = super::settings::defaults::CONFIRM_RUNS_LIMIT)))]
    pub baseline_confirm_runs: Option<u32>,
    /// Ignored folders (relative to the repository root) the worktree shares by symlink.
    pub share: Option<Vec<String>>,
    /// The kernel's confinement of command delegates: `"auto"` (default), `"off"` or
    /// `"required"`.
    #[cfg_attr(test, schemars(extend("enum" = ["auto", "off", "required"])))]
    pub confine: Option<String>,
    /// Folders a confined delegate may write beside the work tree (`~/`, `$NAME` expanded);
    /// replaces the default list.
    pub writable: Option<Vec<String>>,
    /// Bytes of ignored files (`.env`, local config) kept and put back when a delegate deletes
    /// or changes them (default `"16MiB"`).
    pub protect_ignored_max: Option<ByteSize>,
    /// Folder names (at any depth) whose ignored files are never kept: build output, caches.
    pub protect_ignored_skip: Option<Vec<String>>,
    /// A change that makes the gate see less (a suppression, a skipped or deleted test, the
    /// gate's configuration relaxed, a file moved out of its reach): `"refuse"` (default) rolls
    /// it back and strikes its delegate; `"report"` judges it as any change and lists each
    /// move; `"off"` does not look.
    #[cfg_attr(test, schemars(extend("enum" = ["refuse", "report", "off"])))]
    pub integrity: Option<String>,
}

/// A delegate: a command, or a model endpoint, that fixes the findings of its categories.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct DelegateFile {
    /// The categories it fixes; `["*"]` (all) when left out.
    #[cfg_attr(test, schemars(length(min = 1)))]
    pub categories: Option<Vec<String>>,
    /// `"command"` (the default): `run` in a shell; `"http"`: a chat-completions endpoint.
    #[cfg_attr(test, schemars(extend("enum" = ["command", "http"])))]
    pub kind: Option<String>,
    /// The shell command that runs the delegate (kind `command`).
    pub run: Option<String>,
    /// The name of a gate check whose own command, in its tool's fix mode, is this delegate's
    /// `run` (the same rules, config and targets as the gate reads).
    pub from_check: Option<String>,
    /// Kind `http`: the `/v1/chat/completions` URL.
    pub endpoint: Option<String>,
    /// Kind `http`: the model to ask.
    pub model: Option<String>,
    /// Kind `http`: the name of the variable holding the API key (never the key itself).
    pub api_key_env: Option<String>,
    /// Kind `http`: the most tokens each reply may use (default 4096). Kind `command`: the
    /// tokens this delegate may spend in a run, as its `usage` reader reports them.
    #[cfg_attr(test, schemars(range(min = 1)))]
    pub max_tokens: Option<u32>,
    /// What this delegate may spend in a run, like `"1 USD"`, as its `usage` reader reports it.
    pub max_cost: Option<Usd>,
    /// Kind `http`: the most files (named by the findings) sent along (default 8).
    #[cfg_attr(test, schemars(range(min = 1)))]
    pub max_files: Option<usize>,
    /// Kind `http`: a file larger than this is not sent (default `"64KiB"`).
    pub max_file_bytes: Option<ByteSize>,
    /// `"fix"` (the default), or for the refine preset `"discover"`, `"execute"`, `"reviewer"`.
    #[cfg_attr(test, schemars(extend("enum" = ["fix", "discover", "execute", "reviewer"])))]
    pub role: Option<String>,
    /// A discover delegate's lens.
    #[cfg_attr(test, schemars(extend("enum" = super::settings::LENSES)))]
    pub lens: Option<String>,
    /// A prompt template, relative to this file; the built-in one when left out.
    pub template: Option<PathBuf>,
    /// `"prompt"`: the rendered prompt on the command's stdin; nothing when left out.
    #[cfg_attr(test, schemars(extend("enum" = ["prompt"])))]
    pub stdin: Option<String>,
    /// How long the delegate may take, like `"10m"` (the default).
    pub timeout: Option<ConfigDuration>,
    /// A command delegate that prints nothing for this long is stopped (default `"3m"`).
    pub idle_timeout: Option<ConfigDuration>,
    /// Environment variables set for the command.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// How the command's output tells what it spent (tokens, cost, turns): `"claude-json"`,
    /// `"claude-stream-json"`, `"codex-json"`, `"aider"`, or `"none"` (it reports nothing, on
    /// purpose). Left out, its usage is unknown.
    #[cfg_attr(test, schemars(extend("enum" = crate::delegate::USAGE_READERS)))]
    pub usage: Option<String>,
}

/// The quality gate: its checks, and the limits every check shares.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct GateFile {
    /// Deadline for a check that sets none of its own, like `"30m"` (the default).
    pub timeout: Option<ConfigDuration>,
    /// Time between SIGTERM and SIGKILL when a check is stopped (default `"10s"`).
    pub kill_grace: Option<ConfigDuration>,
    /// Bytes of each check's output written to `gate-output.txt` before the middle is cut
    /// (default `"64MiB"`).
    pub log_limit: Option<ByteSize>,
    /// The gate's checks, run in the order written; a gate needs at least one.
    #[serde(default)]
    pub check: Vec<CheckFile>,
}

/// One check of the gate: a shell command, and the parser that reads its output into findings.
#[derive(Debug, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CheckFile {
    /// The check's name, unique in the gate.
    #[cfg_attr(test, schemars(length(min = 1)))]
    pub name: String,
    /// The category of its findings (`lint`, `tests`, ...), which delegates are bound to; the
    /// parser's category when left out, else the check's name.
    pub category: Option<String>,
    /// The shell command that runs the check (`sh -c`).
    #[cfg_attr(test, schemars(length(min = 1)))]
    pub run: String,
    /// The parser that reads its output (`refine-loop parsers` lists them); several,
    /// comma-separated (`"ruff,pytest"`), read one output together. Default `"exit-code"`.
    pub parser: Option<String>,
    /// This check's deadline, like `"20m"`; the gate's `timeout` when left out.
    pub timeout: Option<ConfigDuration>,
    /// Working directory, relative to the target.
    pub cwd: Option<PathBuf>,
    /// Environment variables set for the check.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The exit codes that mean the check passed (default `[0]`).
    #[cfg_attr(test, schemars(length(min = 1)))]
    pub success_codes: Option<Vec<i32>>,
    /// Installs the check's tool when it is missing (run once, then the check again).
    pub install: Option<String>,
    /// A regex of the check's output that says its tool is missing (`No module named (\w+)`);
    /// its first group, when it has one, names the tool.
    pub missing_tool: Option<String>,
    /// Re-runs one failing test alone at the baseline: `{test}` is the test's id (`pytest {test}`).
    pub rerun: Option<String>,
}
