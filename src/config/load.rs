//! Reads `refine-loop.toml`, applies the environment and flag layers, and validates the result.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::checks::resolve_checks;
use super::error::{ConfigError, invalid};
use super::loop_settings::{parse_verify, resolve_delegates, resolve_run};
use super::overrides::Overrides;
use super::settings::{
    CampaignSettings, GateSettings, IntegritySettings, Settings, Shard, defaults,
};
use super::units::{ByteSize, ConfigDuration};
use super::wire::{ConfigFile, GateFile};
use crate::parse::Catalogue;

impl Overrides {
    /// Fills what the flags left unset from the `REFINE_LOOP_*` environment layer.
    pub fn with_environment(mut self) -> Result<Self, ConfigError> {
        if self.gate_timeout.is_none() {
            self.gate_timeout =
                from_environment("REFINE_LOOP_GATE_TIMEOUT", ConfigDuration::parse)?;
        }
        if self.kill_grace.is_none() {
            self.kill_grace = from_environment("REFINE_LOOP_KILL_GRACE", ConfigDuration::parse)?;
        }
        if self.log_limit.is_none() {
            self.log_limit = from_environment("REFINE_LOOP_LOG_LIMIT", ByteSize::parse)?;
        }
        if self.max_cycles.is_none() {
            self.max_cycles = from_environment("REFINE_LOOP_MAX_CYCLES", |text| {
                text.parse::<u32>()
                    .map_err(|_| format!("\"{text}\" is not a number of cycles"))
            })?;
        }
        if self.watch.is_none() {
            self.watch = from_environment("REFINE_LOOP_WATCH", |text| match text.trim() {
                "on" => Ok(true),
                "off" => Ok(false),
                other => Err(format!("\"{other}\" is neither on nor off")),
            })?;
        }
        if self.improve_max_cycles.is_none() {
            self.improve_max_cycles = from_environment("IMPROVE_LOOP_MAX_CYCLES", |text| {
                text.trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|cycles| *cycles > 0)
                    .ok_or_else(|| format!("\"{text}\" is not a positive number of cycles"))
            })?;
        }
        if self.time_budget.is_none() {
            self.time_budget = from_environment("REFINE_LOOP_TIME_BUDGET", ConfigDuration::parse)?;
        }
        if self.verify.is_none() {
            self.verify = from_environment("REFINE_LOOP_VERIFY", parse_verify)?;
        }
        if self.shard.is_none() {
            self.shard = from_environment("REFINE_LOOP_SHARD", Shard::parse)?;
        }
        Ok(self)
    }
}

/// A value of the environment layer: unset or empty is `None` (CI systems pass unset inputs as
/// empty strings); a bad value is an error naming the variable.
pub fn from_environment<T>(
    name: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<Option<T>, ConfigError> {
    match std::env::var(name) {
        Ok(value) if value.is_empty() => Ok(None),
        Ok(value) => parse(&value)
            .map(Some)
            .map_err(|reason| ConfigError::InvalidOverride {
                source_name: format!("environment {name}"),
                reason,
            }),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(ConfigError::InvalidOverride {
            source_name: format!("environment {name}"),
            reason: "not valid UTF-8".into(),
        }),
    }
}

/// Loads and validates the configuration for `overrides.target` (default: the current directory).
pub fn load(overrides: &Overrides) -> Result<Settings, ConfigError> {
    let target = resolve_target(overrides.target.as_deref(), overrides.config.is_some())?;
    let config_file = overrides
        .config
        .clone()
        .unwrap_or_else(|| target.join(defaults::CONFIG_FILE));
    // From a commit, when asked: written out to a folder of its own, read from there. Messages
    // and reports still name the work tree's file.
    let from_ref = (overrides.config_from_ref.as_deref())
        .map(|reference| super::from_ref::materialize(&target, &config_file, reference))
        .transpose()?;
    let read_from = from_ref.as_ref().map_or(config_file.as_path(), |from_ref| {
        from_ref.config_file.as_path()
    });
    let text = read_config(read_from)?;
    let file = crate::parse::from_toml::<ConfigFile>(read_from, &text)?;

    let config_dir = read_from
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let parser_dirs: Vec<PathBuf> = (file.parser_dirs.iter().flatten())
        .map(|dir| config_dir.join(dir))
        .collect();
    let mut parsers = Catalogue::load(&parser_dirs)?;

    let gate_file = file.gate.unwrap_or_default();
    let limits = GateLimits::resolve(overrides, &gate_file);
    let mut checks = resolve_checks(
        &config_file,
        &target,
        &mut parsers,
        gate_file.check,
        limits.default_timeout,
    )?;
    let mut delegate_files = file.delegate;
    let on_paths = super::fix_mode::derive_from_checks(&config_file, &mut delegate_files, &checks)?;
    if let Some(shard) = overrides.shard {
        let mut position = 0;
        checks.retain(|_| {
            position += 1;
            shard.holds(position - 1)
        });
        if checks.is_empty() {
            tracing::warn!(
                shard = format!("{}/{}", shard.index, shard.count),
                "this shard holds none of the gate's checks"
            );
        }
    }

    let derived: Vec<bool> = (delegate_files.iter())
        .map(|delegate| delegate.from_check.is_some())
        .collect();
    let mut delegates = resolve_delegates(&config_file, &config_dir, delegate_files)?;
    for ((delegate, on_paths), derived) in delegates.iter_mut().zip(on_paths).zip(derived) {
        delegate.whole_tree = derived && on_paths.is_none();
        delegate.on_paths = on_paths;
        // The check's own tool in its fix mode runs here, and spends nothing.
        if derived && delegate.usage.is_none() {
            delegate.usage = Some(crate::delegate::UsageReader::None);
        }
    }
    let loop_file = file.loop_settings.unwrap_or_default();
    let confirm_runs = resolve_confirm_runs(&config_file, loop_file.baseline_confirm_runs)?;
    let run = resolve_run(&config_file, &target, overrides, loop_file)?;

    let sweep = file.sweep.unwrap_or(false);
    if overrides.offline {
        refuse_network(&config_file, &delegates, sweep)?;
    }

    let campaign = resolve_campaign(&config_file, file.campaign.unwrap_or_default())?;
    refuse_uncapped(
        &config_file,
        &delegates,
        run.spending,
        campaign.lifetime_cap,
    )?;
    let state_dir = resolve_state_dir(
        &target,
        overrides.state_dir.as_deref(),
        file.state_dir.as_deref(),
    )?;

    let integrity = IntegritySettings::resolve(
        &config_file,
        &target,
        file.integrity.unwrap_or_default(),
        &checks,
        &parser_dirs,
    )?;

    Ok(Settings {
        integrity,
        target,
        config_file,
        state_dir,
        gate: GateSettings {
            checks,
            kill_grace: limits.kill_grace,
            log_limit: limits.log_limit,
            confirm_runs,
            shard: overrides.shard,
        },
        parsers,
        delegates,
        run,
        sweep,
        campaign,
    })
}

/// The gate's limits for every check, each from the flags and environment, else `[gate]`, else
/// its default.
#[derive(Debug, Clone, Copy)]
struct GateLimits {
    /// The deadline of a check that sets none of its own.
    default_timeout: Duration,
    kill_grace: Duration,
    log_limit: u64,
}

impl GateLimits {
    /// Takes each limit from the highest layer that sets it.
    fn resolve(overrides: &Overrides, gate_file: &GateFile) -> Self {
        Self {
            default_timeout: overrides
                .gate_timeout
                .or(gate_file.timeout)
                .map_or(defaults::CHECK_TIMEOUT, |d| d.0),
            kill_grace: overrides
                .kill_grace
                .or(gate_file.kill_grace)
                .map_or(defaults::KILL_GRACE, |d| d.0),
            log_limit: overrides
                .log_limit
                .or(gate_file.log_limit)
                .map_or(defaults::LOG_LIMIT, |s| s.0),
        }
    }
}

/// `[loop] baseline_confirm_runs`: its default when left out, and never above the limit.
fn resolve_confirm_runs(config_file: &Path, given: Option<u32>) -> Result<u32, ConfigError> {
    let confirm_runs = given.unwrap_or(defaults::CONFIRM_RUNS);
    if confirm_runs > defaults::CONFIRM_RUNS_LIMIT {
        return Err(invalid(
            config_file,
            "loop.baseline_confirm_runs",
            format!(
                "{confirm_runs} is more than {}",
                defaults::CONFIRM_RUNS_LIMIT
            ),
        ));
    }
    Ok(confirm_runs)
}

/// Where runs keep their files: `--state-dir` (made absolute), else `state_dir` in the file
/// (relative to the target), else the default folder in the target.
fn resolve_state_dir(
    target: &Path,
    flag: Option<&Path>,
    file: Option<&Path>,
) -> Result<PathBuf, ConfigError> {
    Ok(match (flag, file) {
        (Some(dir), _) => absolute(dir)?,
        (None, Some(dir)) => target.join(dir),
        (None, None) => target.join(defaults::STATE_DIR),
    })
}

/// `--offline`: an http delegate or the sweep would reach the network; say which and how to go on.
fn refuse_network(
    config_file: &Path,
    delegates: &[crate::delegate::DelegateSpec],
    sweep: bool,
) -> Result<(), ConfigError> {
    if let Some(index) = delegates
        .iter()
        .position(|d| matches!(d.launch, crate::delegate::Launch::Http(_)))
    {
        return Err(invalid(
            config_file,
            format!("delegate[{index}].kind"),
            "\"http\" reaches the network, and --offline (REFINE_LOOP_OFFLINE) forbids it; drop --offline or this delegate",
        ));
    }
    if sweep {
        return Err(invalid(
            config_file,
            "sweep",
            "the sweep reads the GitHub API, and --offline (REFINE_LOOP_OFFLINE) forbids it; drop --offline or set sweep = false",
        ));
    }
    Ok(())
}

/// A cap can hold only what the delegates report: under a cap in US dollars every delegate must
/// report its cost, under one in tokens its tokens, unless it says `usage = "none"` (it spends
/// nothing, on purpose). Caps of 0 tokens are refused as typos.
fn refuse_uncapped(
    config_file: &Path,
    delegates: &[crate::delegate::DelegateSpec],
    run: crate::spending::Cap,
    lifetime: crate::spending::Cap,
) -> Result<(), ConfigError> {
    use crate::delegate::{Launch, UsageReader};
    if run.tokens == Some(0) {
        return Err(invalid(
            config_file,
            "loop.max_tokens",
            "must be at least 1",
        ));
    }
    let caps = [run, lifetime];
    for (index, delegate) in delegates.iter().enumerate() {
        if delegate.cap.tokens == Some(0) {
            return Err(invalid(
                config_file,
                format!("delegate[{index}].max_tokens"),
                "must be at least 1",
            ));
        }
        let on_cost =
            delegate.cap.cost_usd.is_some() || caps.iter().any(|cap| cap.cost_usd.is_some());
        let on_tokens =
            delegate.cap.tokens.is_some() || caps.iter().any(|cap| cap.tokens.is_some());
        if !(on_cost || on_tokens) {
            continue;
        }
        let cap = if on_cost { "a cost cap" } else { "a token cap" };
        let reason = match (&delegate.launch, delegate.usage) {
            (Launch::Reapply(_), _) | (_, Some(UsageReader::None)) => continue,
            (Launch::Http(_), _) if on_cost => format!(
                "an endpoint reports tokens, not cost, so {cap} cannot hold it; cap it with [loop] max_tokens instead"
            ),
            (Launch::Http(_), _) => continue,
            (Launch::Command(_), None) => format!(
                "it reports nothing the loop can read, so {cap} cannot hold it: set `usage` to the reader of its output ({}), or usage = \"none\" if it spends nothing",
                crate::delegate::USAGE_READERS.join(", ")
            ),
            (Launch::Command(_), Some(reader)) if on_cost && !reader.reads_cost() => format!(
                "the `{}` reader reads tokens, not cost, so {cap} cannot hold it; cap it with max_tokens instead",
                reader.name()
            ),
            (Launch::Command(_), Some(_)) => continue,
        };
        let key = if matches!(delegate.launch, Launch::Http(_)) {
            "kind"
        } else {
            "usage"
        };
        return Err(invalid(
            config_file,
            format!("delegate[{index}].{key}"),
            reason,
        ));
    }
    Ok(())
}

/// The target: the one given, else the current folder, or (when no config is named either) the
/// nearest folder above it with a config, up to the repository's root, as git and cargo find
/// theirs.
fn resolve_target(target: Option<&Path>, config_named: bool) -> Result<PathBuf, ConfigError> {
    if target.is_none()
        && !config_named
        && let Ok(here) = Path::new(".").canonicalize()
        && let Some(found) = with_config_above(&here)
    {
        return Ok(found);
    }
    let given = target.unwrap_or(Path::new("."));
    if !given.is_dir() {
        return Err(ConfigError::TargetNotDirectory {
            path: given.to_path_buf(),
        });
    }
    given
        .canonicalize()
        .map_err(|_| ConfigError::TargetNotDirectory {
            path: given.to_path_buf(),
        })
}

/// The nearest folder from `start` up that holds a config, not above the first that is a
/// repository's root (holds `.git`).
fn with_config_above(start: &Path) -> Option<PathBuf> {
    for folder in start.ancestors() {
        if folder.join(defaults::CONFIG_FILE).is_file() {
            return Some(folder.to_path_buf());
        }
        if folder.join(".git").exists() {
            return None;
        }
    }
    None
}

fn absolute(path: &Path) -> Result<PathBuf, ConfigError> {
    std::path::absolute(path).map_err(|source| ConfigError::InvalidOverride {
        source_name: "--state-dir".into(),
        reason: format!("{}: {source}", path.display()),
    })
}

fn read_config(path: &Path) -> Result<String, ConfigError> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes).map_err(|error| {
            invalid(
                path,
                "(file)",
                format!(
                    "not valid UTF-8 (at byte {})",
                    error.utf8_error().valid_up_to()
                ),
            )
        }),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Err(ConfigError::Missing {
            path: path.to_path_buf(),
        }),
        Err(source) => Err(ConfigError::Unreadable {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// `[campaign]` of `config_file` as written; each limit at least 1.
fn resolve_campaign(
    config_file: &Path,
    file: super::wire::CampaignFile,
) -> Result<CampaignSettings, ConfigError> {
    for (key, value) in [
        ("campaign.max_segments", file.max_segments.map(u64::from)),
        (
            "campaign.max_lifetime_rounds",
            file.max_lifetime_rounds.map(u64::from),
        ),
        ("campaign.max_lifetime_tokens", file.max_lifetime_tokens),
    ] {
        if value == Some(0) {
            return Err(invalid(config_file, key, "must be at least 1"));
        }
    }
    Ok(CampaignSettings {
        pending: file.pending.unwrap_or_default(),
        max_segments: file.max_segments,
        max_lifetime_rounds: file.max_lifetime_rounds,
        lifetime_cap: crate::spending::Cap {
            cost_usd: file.max_lifetime_cost.map(|cost| cost.0),
            tokens: file.max_lifetime_tokens,
        },
    })
}
