//! Resolved settings: every layer applied, every default filled in, every path absolute.

use std::path::PathBuf;
use std::time::Duration;

use crate::parse::Catalogue;

/// The refine preset's lenses, as `focus=` and a discover delegate's `lens` name them.
pub const LENSES: [&str; 4] = ["architecture", "usability", "production", "refactoring"];

/// Defaults that apply when no layer says otherwise.
pub mod defaults {
    use std::time::Duration;

    pub const CONFIG_FILE: &str = "refine-loop.toml";
    pub const STATE_DIR: &str = ".refine-loop";
    pub const CHECK_TIMEOUT: Duration = Duration::from_secs(30 * 60);
    pub const KILL_GRACE: Duration = Duration::from_secs(10);
    pub const LOG_LIMIT: u64 = 64 << 20;
    pub const PARSER: &str = "exit-code";
    pub const MAX_CYCLES: u32 = 5;
    /// The most cycles a run may be given.
    pub const MAX_CYCLES_LIMIT: u32 = 10;
    pub const DELEGATE_TIMEOUT: Duration = Duration::from_secs(10 * 60);
    pub const DELEGATE_IDLE_TIMEOUT: Duration = Duration::from_secs(3 * 60);
    /// An http delegate's reply, in tokens.
    pub const HTTP_MAX_TOKENS: u32 = 4096;
    /// Files an http delegate sends along.
    pub const HTTP_MAX_FILES: usize = 8;
    /// Runs whose ref and `runs/` folder are kept, this one counted.
    pub const KEEP_RUNS: u32 = 10;
    pub const KEEP_RUNS_LIMIT: u32 = 1000;
    /// Runs again of a check failing at the baseline.
    pub const CONFIRM_RUNS: u32 = 1;
    pub const CONFIRM_RUNS_LIMIT: u32 = 5;
    /// The largest file an http delegate sends.
    pub const HTTP_MAX_FILE_BYTES: u64 = 64 * 1024;
    /// Bytes of ignored files kept for the run.
    pub const PROTECT_IGNORED_MAX: u64 = 16 << 20;
    /// Folders whose ignored files are never kept: build output and caches.
    pub const PROTECT_IGNORED_SKIP: &[&str] = &[
        "target",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".cache",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        ".gradle",
        ".next",
        "build",
        "dist",
    ];
    /// The refactoring loop's order: what blocks the most first.
    pub const PRIORITY: &[&str] = &[
        "syntax",
        "factory",
        "file-size",
        "types",
        "tests",
        "lint",
        "complexity",
    ];
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
    pub delegates: Vec<crate::delegate::DelegateSpec>,
    pub run: RunSettings,
    /// Sweep the GitHub open surface once at the start of a campaign.
    pub sweep: bool,
    pub campaign: CampaignSettings,
    /// The catalogue of moves that make the gate see less, what the project allows of them, and
    /// the gate's own files.
    pub integrity: IntegritySettings,
}

/// Gate integrity, resolved (`[integrity]`).
#[derive(Debug)]
pub struct IntegritySettings {
    pub catalogue: crate::integrity::Catalogue,
    pub allow: Vec<crate::integrity::Allow>,
    pub gate_files: crate::integrity::GateFiles,
}

/// `[campaign]`: earlier work that is not in HEAD, and the budget across runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CampaignSettings {
    pub pending: crate::campaign::history::PendingMode,
    pub max_segments: Option<u32>,
    pub max_lifetime_rounds: Option<u32>,
    /// `max_lifetime_cost` / `max_lifetime_tokens`.
    pub lifetime_cap: crate::spending::Cap,
}

impl Settings {
    /// Variables no check or command delegate may see: the API keys of the http delegates
    /// (model-written code runs in the gate).
    pub fn private_variables(&self) -> Vec<String> {
        self.delegates
            .iter()
            .filter_map(|delegate| match &delegate.launch {
                crate::delegate::Launch::Http(http) => http.api_key_env.clone(),
                crate::delegate::Launch::Command(_) | crate::delegate::Launch::Reapply(_) => None,
            })
            .collect()
    }
}

/// When the gate runs again during a cycle (`--verify`, `REFINE_LOOP_VERIFY`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Verify {
    /// The gate runs once per cycle, after all its delegates.
    PerCycle,
    /// The gate runs after every delegate.
    PerDelegate,
}

/// How a verifying gate run is judged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Accept {
    /// New findings outside the files a change touched, in categories that failed already,
    /// are unmasked (brought to light), not a regression.
    #[default]
    Unmask,
    /// Any category with more failures is a regression.
    Strict,
}

/// Where the run works (`--isolate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Isolate {
    /// Work in the target itself.
    None,
    /// Work in a linked worktree made from HEAD; the user's tree is not written.
    Worktree,
}

/// The loop's limits and order.
#[derive(Debug, Clone)]
pub struct RunSettings {
    pub max_cycles: u32,
    /// The tree is watched (`REFINE_LOOP_WATCH`, on by default), not scanned at every look.
    pub watch: bool,
    /// The improve campaign's cycle limit (`IMPROVE_LOOP_MAX_CYCLES`).
    pub improve_max_cycles: u32,
    pub time_budget: Option<Duration>,
    /// `[loop] max_cost` / `max_tokens`: what the delegates may spend in the run (segment).
    pub spending: crate::spending::Cap,
    pub verify: Verify,
    /// How a verifying gate run is judged (`[loop] accept`).
    pub accept: Accept,
    /// What a change that makes the gate see less comes to (`[loop] integrity`).
    pub integrity: crate::integrity::Mode,
    pub priority: Vec<String>,
    pub isolate: Isolate,
    /// Folders (relative to the repository root) a worktree shares with the user's tree.
    pub share: Vec<String>,
    /// What the delegates may change.
    pub scope: crate::scope::Scope,
    /// `--new-since REF` as given (`auto` too); `None`: a full run.
    pub new_since: Option<String>,
    /// How a finding is judged new (`[loop] new_since`).
    pub new_since_mode: crate::new_since::Mode,
    /// The change since the base, once resolved at the start of the run (see
    /// `crate::engine::resolve_new_since`); `None`: a full run.
    pub since: Option<crate::new_since::Since>,
    /// Why `--new-since auto` left a full run (no pull request in the environment, its base not
    /// in the clone, a campaign).
    pub new_since_skipped: Option<String>,
    /// How the kernel confines command delegates.
    pub confine: crate::confine::ConfineMode,
    /// Folders a confined delegate may write beside the work tree, as written (`~/`, `$NAME`);
    /// `None`: the defaults.
    pub writable: Option<Vec<String>>,
    /// Bytes of ignored files kept and put back when a delegate deletes or changes them.
    pub protect_ignored_max: u64,
    /// Folder names whose ignored files are not kept.
    pub protect_ignored_skip: Vec<String>,
    /// Runs whose private ref and `runs/<id>/` folder are kept, this one counted
    /// (`[loop] keep_runs`).
    pub keep_runs: u32,
}

#[derive(Debug, Clone)]
pub struct GateSettings {
    pub checks: Vec<CheckSettings>,
    pub kill_grace: Duration,
    pub log_limit: u64,
    /// How many times a check failing at the baseline runs again.
    pub confirm_runs: u32,
    /// `--shard K/N`: the slice of the checks this matrix leg runs.
    pub shard: Option<Shard>,
}

impl GateSettings {
    /// `sha256:` and 16 hex digits over what decides the gate's verdict: each check's name,
    /// category, command, parser, working directory, environment and success codes, in order.
    /// The tools' versions are not known to the loop, so they are not in it.
    pub fn fingerprint(&self) -> String {
        use sha2::Digest as _;
        let mut hasher = sha2::Sha256::new();
        let mut field = |bytes: &[u8]| {
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        };
        for check in &self.checks {
            field(check.name.as_bytes());
            field(check.category.as_bytes());
            field(check.run.as_bytes());
            field(check.parser.as_bytes());
            field(check.cwd_relative.as_bytes());
            field(check.env.len().to_string().as_bytes());
            for (name, value) in &check.env {
                field(name.as_bytes());
                field(value.as_bytes());
            }
            field(format!("{:?}", check.success_codes).as_bytes());
            field(b"end of check");
        }
        let digest = crate::encoding::hex_digest(hasher);
        format!("sha256:{}", &digest[..16])
    }
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
    /// Installs the check's tool when it is missing.
    pub install: Option<String>,
    /// Output that says the check's tool is missing.
    pub missing_tool: Option<regex::Regex>,
    /// Re-runs one test alone; `{test}` is its id.
    pub rerun: Option<String>,
}

/// One of N slices of the gate's checks, for a matrix leg: check `i` (0-based, in the config's
/// order) belongs to slice `i % N + 1`. `merge` puts the legs back together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 1-based.
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// `K/N`, with 1 <= K <= N.
    pub fn parse(text: &str) -> Result<Self, String> {
        let invalid = || format!("\"{text}\" is not a shard K/N with 1 <= K <= N (like 2/3)");
        let (index, count) = text.trim().split_once('/').ok_or_else(invalid)?;
        let (Ok(index), Ok(count)) = (index.trim().parse::<u32>(), count.trim().parse::<u32>())
        else {
            return Err(invalid());
        };
        if index == 0 || index > count {
            return Err(invalid());
        }
        Ok(Self { index, count })
    }

    /// Whether check number `position` (0-based) is in this slice.
    pub fn holds(self, position: usize) -> bool {
        u32::try_from(position).is_ok_and(|position| position % self.count + 1 == self.index)
    }
}

#[cfg(test)]
mod shard_tests {
    use super::Shard;

    #[test]
    fn a_shard_is_k_of_n_and_the_slices_cover_every_check_once() {
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", "-1/3", ""] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Shard::parse(" 2/3 "), Ok(Shard { index: 2, count: 3 }));
        for count in 1..=4 {
            for position in 0..10 {
                let holders = (1..=count)
                    .filter(|&index| Shard { index, count }.holds(position))
                    .count();
                assert_eq!(holders, 1, "check {position} of {count} slices");
            }
        }
    }
}

#[cfg(test)]
mod fingerprint_tests {
    use std::path::PathBuf;
    use std::time::Duration;

    use super::{CheckSettings, GateSettings};

    fn check(name: &str, run: &str) -> CheckSettings {
        CheckSettings {
            name: name.to_string(),
            category: "lint".to_string(),
            run: run.to_string(),
            parser: "clippy".to_string(),
            timeout: Duration::from_secs(60),
            cwd: PathBuf::from("/somewhere"),
            cwd_relative: String::new(),
            env: Vec::new(),
            success_codes: vec![0],
            install: None,
            missing_tool: None,
            rerun: None,
        }
    }

    fn gate(checks: Vec<CheckSettings>) -> GateSettings {
        GateSettings {
            checks,
            kill_grace: Duration::from_secs(5),
            log_limit: 1024,
            confirm_runs: 0,
            shard: None,
        }
    }

    #[test]
    fn the_fingerprint_follows_what_decides_the_verdict_only() {
        let plain = gate(vec![check("lint", "cargo clippy")]).fingerprint();
        assert!(
            plain.starts_with("sha256:") && plain.len() == 7 + 16,
            "{plain}"
        );
        // Where the target lies, timeouts and the log limit do not change the gate.
        let mut moved = gate(vec![check("lint", "cargo clippy")]);
        moved.checks[0].cwd = PathBuf::from("/elsewhere");
        moved.checks[0].timeout = Duration::from_secs(1);
        moved.log_limit = 1;
        assert_eq!(moved.fingerprint(), plain);
        // The command, the parser, the environment and the order do.
        let mut changed = vec![gate(vec![check("lint", "cargo clippy -- -D warnings")])];
        let mut parser = gate(vec![check("lint", "cargo clippy")]);
        parser.checks[0].parser = "generic".to_string();
        changed.push(parser);
        let mut env = gate(vec![check("lint", "cargo clippy")]);
        env.checks[0].env = vec![("A".to_string(), "B".to_string())];
        changed.push(env);
        let two = gate(vec![check("a", "x"), check("b", "y")]);
        let swapped = gate(vec![check("b", "y"), check("a", "x")]);
        assert_ne!(two.fingerprint(), swapped.fingerprint());
        for other in changed {
            assert_ne!(other.fingerprint(), plain, "{other:?}");
        }
    }
}
