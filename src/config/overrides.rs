//! The layers above `refine-loop.toml`: what flags and `REFINE_LOOP_*` variables set.

use std::path::PathBuf;

use super::settings::{Isolate, Shard, Verify};
use super::units::{ByteSize, ConfigDuration};

/// The layers above the file: each value came from a flag or a `REFINE_LOOP_*` variable (clap
/// merges those two, the flag winning, and treats an empty variable as unset).
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    pub target: Option<PathBuf>,
    pub config: Option<PathBuf>,
    pub state_dir: Option<PathBuf>,
    pub gate_timeout: Option<ConfigDuration>,
    pub kill_grace: Option<ConfigDuration>,
    pub log_limit: Option<ByteSize>,
    pub max_cycles: Option<u32>,
    /// `REFINE_LOOP_WATCH`: `off` scans the tree at every look instead of watching it.
    pub watch: Option<bool>,
    /// `IMPROVE_LOOP_MAX_CYCLES`: the improve campaign's cycle limit.
    pub improve_max_cycles: Option<u32>,
    pub time_budget: Option<ConfigDuration>,
    pub verify: Option<Verify>,
    pub isolate: Option<Isolate>,
    /// `--scope`: replaces `[loop] scope`.
    pub scope: Option<Vec<String>>,
    /// `--new-since REF`: pull-request mode against REF (or `auto`).
    pub new_since: Option<String>,
    /// `--priority`: replaces `[loop] priority`.
    pub priority: Option<Vec<String>>,
    /// No network: what needs it is refused.
    pub offline: bool,
    /// `--shard K/N`: this matrix leg runs the K-th of N slices of the gate's checks.
    pub shard: Option<Shard>,
    /// `--config-from-ref REF`: the config and what it names are read from that commit.
    pub config_from_ref: Option<String>,
}
