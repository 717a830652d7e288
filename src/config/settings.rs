//! Resolved settings: every layer applied, every default filled in, every path absolute.

use std::path::PathBuf;
use std::time::Duration;

use crate::parse::Catalogue;

/// Defaults that apply when no layer says otherwise.
pub mod defaults {
    use std::time::Duration;

    pub const CONFIG_FILE: &str = "refine-loop.toml";
    pub const STATE_DIR: &str = ".refine-loop";
    pub const CHECK_TIMEOUT: Duration = Duration::from_secs(30 * 60);
    pub const KILL_GRACE: Duration = Duration::from_secs(10);
    pub const LOG_LIMIT: u64 = 64 << 20;
    pub const PARSER: &str = "exit-code";
}

/// Everything a command needs to know, after the layers are merged.
#[derive(Debug)]
pub struct Settings {
    /// The repository the gate runs in (canonical).
    pub target: PathBuf,
    pub config_file: PathBuf,
    pub state_dir: PathBuf,
    pub gate: GateSettings,
    pub parsers: Catalogue,
}

#[derive(Debug, Clone)]
pub struct GateSettings {
    pub checks: Vec<CheckSettings>,
    pub kill_grace: Duration,
    pub log_limit: u64,
}

/// One check of the gate, ready to run.
#[derive(Debug, Clone)]
pub struct CheckSettings {
    pub name: String,
    pub category: String,
    pub run: String,
    pub parser: String,
    pub timeout: Duration,
    /// Absolute working directory.
    pub cwd: PathBuf,
    /// The working directory relative to the target, `/`-separated; empty for the target itself.
    pub cwd_relative: String,
    pub env: Vec<(String, String)>,
    pub success_codes: Vec<i32>,
}
