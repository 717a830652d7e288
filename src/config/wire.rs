//! The shape of `refine-loop.toml` as written: every field optional, unknown keys refused.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use super::units::{ByteSize, ConfigDuration};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// Where runs keep their files; relative to the target.
    pub state_dir: Option<PathBuf>,
    /// Folders of extra parser definitions; relative to the config file.
    pub parser_dirs: Option<Vec<PathBuf>>,
    pub gate: Option<GateFile>,
    /// The loop's limits.
    #[serde(rename = "loop")]
    pub loop_settings: Option<LoopFile>,
    #[serde(default)]
    pub delegate: Vec<DelegateFile>,
    /// Sweep the GitHub open surface (read-only) once at the start of a campaign.
    pub sweep: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopFile {
    pub max_cycles: Option<u32>,
    pub time_budget: Option<ConfigDuration>,
    pub verify: Option<String>,
    /// `"unmask"` (the default) or `"strict"`: how a change's gate run is judged.
    pub accept: Option<String>,
    /// Categories in the order they are worked; the rest follow by name.
    pub priority: Option<Vec<String>>,
    /// `"worktree"`: run in a linked worktree; `"none"`: in the target itself.
    pub isolate: Option<String>,
    /// Paths and globs (relative to the target) the delegates may change; all when left out.
    pub scope: Option<Vec<String>>,
    /// How many times a check that fails at the baseline runs again (0: never).
    pub baseline_confirm_runs: Option<u32>,
    /// Ignored folders (relative to the repository root) the worktree shares by symlink.
    pub share: Option<Vec<String>>,
    /// `"auto"`, `"off"` or `"required"`: the kernel's confinement of command delegates.
    pub confine: Option<String>,
    /// Folders a confined delegate may write beside the work tree (`~/`, `$NAME` expanded);
    /// replaces the default list.
    pub writable: Option<Vec<String>>,
    /// Bytes of ignored files (`.env`, local config) kept and put back when a delegate deletes
    /// or changes them.
    pub protect_ignored_max: Option<ByteSize>,
    /// Folder names (at any depth) whose ignored files are never kept: build output, caches.
    pub protect_ignored_skip: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DelegateFile {
    /// The categories it fixes; `["*"]` when left out.
    pub categories: Option<Vec<String>>,
    /// `"command"` (the default): `run` in a shell; `"http"`: a chat-completions endpoint.
    pub kind: Option<String>,
    /// The command (kind `command`).
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
    /// Kind `http`: the most tokens the reply may use.
    pub max_tokens: Option<u32>,
    /// Kind `http`: the most files (named by the findings) sent along.
    pub max_files: Option<usize>,
    /// Kind `http`: a file larger than this is not sent.
    pub max_file_bytes: Option<ByteSize>,
    /// `fix` (the default), or for the refine preset `discover`, `execute`, `reviewer`.
    pub role: Option<String>,
    /// A discover delegate's lens: `architecture`, `usability`, `production`, `refactoring`.
    pub lens: Option<String>,
    /// A prompt template, relative to the config file.
    pub template: Option<PathBuf>,
    /// `"prompt"`: the rendered prompt on stdin.
    pub stdin: Option<String>,
    pub timeout: Option<ConfigDuration>,
    pub idle_timeout: Option<ConfigDuration>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateFile {
    /// Deadline for a check that sets none of its own.
    pub timeout: Option<ConfigDuration>,
    /// Time between SIGTERM and SIGKILL when a check is stopped.
    pub kill_grace: Option<ConfigDuration>,
    /// Bytes of each check's output written to `gate-output.txt` before the middle is cut.
    pub log_limit: Option<ByteSize>,
    #[serde(default)]
    pub check: Vec<CheckFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckFile {
    pub name: String,
    pub category: Option<String>,
    pub run: String,
    pub parser: Option<String>,
    pub timeout: Option<ConfigDuration>,
    /// Working directory, relative to the target.
    pub cwd: Option<PathBuf>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub success_codes: Option<Vec<i32>>,
    /// Installs the check's tool when it is missing (run once, then the check again).
    pub install: Option<String>,
    /// A regex of the check's output that says its tool is missing (`No module named (\w+)`);
    /// its first group, when it has one, names the tool.
    pub missing_tool: Option<String>,
    /// Re-runs one failing test alone at the baseline: `{test}` is the test's id (`pytest {test}`).
    pub rerun: Option<String>,
}
