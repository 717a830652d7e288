//! Reads `refine-loop.toml`, applies the environment and flag layers, and validates the result.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use super::error::ConfigError;
use super::loop_settings::{parse_verify, resolve_delegates, resolve_run};
use super::settings::{CheckSettings, GateSettings, Isolate, Settings, Verify, defaults};
use super::units::{ByteSize, ConfigDuration};
use super::wire::{CheckFile, ConfigFile};
use crate::parse::Catalogue;

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
    pub time_budget: Option<ConfigDuration>,
    pub verify: Option<Verify>,
    pub isolate: Option<Isolate>,
    /// `--scope`: replaces `[loop] scope`.
    pub scope: Option<Vec<String>>,
    /// `--priority`: replaces `[loop] priority`.
    pub priority: Option<Vec<String>>,
    /// No network: what needs it is refused.
    pub offline: bool,
}

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
        if self.time_budget.is_none() {
            self.time_budget = from_environment("REFINE_LOOP_TIME_BUDGET", ConfigDuration::parse)?;
        }
        if self.verify.is_none() {
            self.verify = from_environment("REFINE_LOOP_VERIFY", parse_verify)?;
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
    let target = resolve_target(overrides.target.as_deref())?;
    let config_file = overrides
        .config
        .clone()
        .unwrap_or_else(|| target.join(defaults::CONFIG_FILE));
    let text = read_config(&config_file)?;
    let file = parse_file(&config_file, &text)?;

    let config_dir = config_file
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let parser_dirs: Vec<PathBuf> = file
        .parser_dirs
        .iter()
        .flatten()
        .map(|dir| config_dir.join(dir))
        .collect();
    let parsers = Catalogue::load(&parser_dirs)?;

    let gate_file = file.gate.unwrap_or_default();
    let default_timeout = overrides
        .gate_timeout
        .or(gate_file.timeout)
        .map_or(defaults::CHECK_TIMEOUT, |d| d.0);
    let kill_grace = overrides
        .kill_grace
        .or(gate_file.kill_grace)
        .map_or(defaults::KILL_GRACE, |d| d.0);
    let log_limit = overrides
        .log_limit
        .or(gate_file.log_limit)
        .map_or(defaults::LOG_LIMIT, |s| s.0);

    let checks = resolve_checks(
        &config_file,
        &target,
        &parsers,
        gate_file.check,
        default_timeout,
    )?;

    let delegates = resolve_delegates(&config_file, &config_dir, file.delegate)?;
    let loop_file = file.loop_settings.unwrap_or_default();
    let confirm_runs = loop_file
        .baseline_confirm_runs
        .unwrap_or(defaults::CONFIRM_RUNS);
    if confirm_runs > defaults::CONFIRM_RUNS_LIMIT {
        return Err(invalid(
            &config_file,
            "loop.baseline_confirm_runs",
            format!(
                "{confirm_runs} is more than {}",
                defaults::CONFIRM_RUNS_LIMIT
            ),
        ));
    }
    let run = resolve_run(&config_file, &target, overrides, loop_file)?;

    let sweep = file.sweep.unwrap_or(false);
    if overrides.offline {
        refuse_network(&config_file, &delegates, sweep)?;
    }

    let state_dir = match (&overrides.state_dir, &file.state_dir) {
        (Some(dir), _) => absolute(dir)?,
        (None, Some(dir)) => target.join(dir),
        (None, None) => target.join(defaults::STATE_DIR),
    };

    Ok(Settings {
        target,
        config_file,
        state_dir,
        gate: GateSettings {
            checks,
            kill_grace,
            log_limit,
            confirm_runs,
        },
        parsers,
        delegates,
        run,
        sweep,
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

fn resolve_target(target: Option<&Path>) -> Result<PathBuf, ConfigError> {
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

fn absolute(path: &Path) -> Result<PathBuf, ConfigError> {
    std::path::absolute(path).map_err(|source| ConfigError::InvalidOverride {
        source_name: "--state-dir".into(),
        reason: format!("{}: {source}", path.display()),
    })
}

fn read_config(path: &Path) -> Result<String, ConfigError> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes).map_err(|error| {
            ConfigError::invalid_at(
                path,
                "",
                None,
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

/// Parses the TOML text into the wire types; errors carry the key path and position.
fn parse_file(path: &Path, text: &str) -> Result<ConfigFile, ConfigError> {
    let deserializer = toml::de::Deserializer::parse(text).map_err(|error| {
        ConfigError::invalid_at(path, text, error.span(), "(syntax)", error.message())
    })?;
    serde_path_to_error::deserialize(deserializer).map_err(|error| {
        let key = match error.path().to_string() {
            key if key == "." => "(top level)".to_string(),
            key => key,
        };
        let inner = error.into_inner();
        ConfigError::invalid_at(path, text, inner.span(), key, inner.message())
    })
}

fn resolve_checks(
    config_file: &Path,
    target: &Path,
    parsers: &Catalogue,
    checks: Vec<CheckFile>,
    default_timeout: Duration,
) -> Result<Vec<CheckSettings>, ConfigError> {
    if checks.is_empty() {
        return Err(invalid(
            config_file,
            "gate.check",
            "the gate has no checks; add at least one [[gate.check]] with a name and a run command",
        ));
    }
    let mut names = BTreeSet::new();
    checks
        .into_iter()
        .enumerate()
        .map(|(index, check)| {
            let key = |field: &str| format!("gate.check[{index}].{field}");
            if check.name.trim().is_empty() {
                return Err(invalid(config_file, key("name"), "must not be empty"));
            }
            if !names.insert(check.name.clone()) {
                return Err(invalid(
                    config_file,
                    key("name"),
                    format!(
                        "\"{}\" is used by another check; names must be unique",
                        check.name
                    ),
                ));
            }
            if check.run.contains('\0') {
                return Err(invalid(
                    config_file,
                    key("run"),
                    "must not contain a NUL character",
                ));
            }
            if check.run.trim().is_empty() {
                return Err(invalid(
                    config_file,
                    key("run"),
                    "must not be empty: expected the shell command that runs this check",
                ));
            }
            let parser_name = check.parser.as_deref().unwrap_or(defaults::PARSER);
            let Some(parser) = parsers.get(parser_name) else {
                return Err(invalid(
                    config_file,
                    key("parser"),
                    format!(
                        "unknown parser \"{parser_name}\"; expected one of: {}",
                        parsers.names().collect::<Vec<_>>().join(", ")
                    ),
                ));
            };
            let category = match check.category {
                Some(category) if category.trim().is_empty() => {
                    return Err(invalid(config_file, key("category"), "must not be empty"));
                }
                Some(category) => category,
                None => parser
                    .category()
                    .map_or_else(|| check.name.clone(), str::to_string),
            };
            let (cwd, cwd_relative) = resolve_cwd(config_file, target, &key("cwd"), check.cwd)?;
            let success_codes = check.success_codes.unwrap_or_else(|| vec![0]);
            if success_codes.is_empty() {
                return Err(invalid(
                    config_file,
                    key("success_codes"),
                    "must list at least one exit code, like [0]",
                ));
            }
            if let Some(bad) = check
                .env
                .keys()
                .find(|k| k.is_empty() || k.contains(['=', '\0']))
            {
                return Err(invalid(
                    config_file,
                    key("env"),
                    format!("{bad:?} is not a valid environment variable name"),
                ));
            }
            if let Some((name, _)) = check.env.iter().find(|(_, value)| value.contains('\0')) {
                return Err(invalid(
                    config_file,
                    key(&format!("env.{name}")),
                    "must not contain a NUL character",
                ));
            }
            Ok(CheckSettings {
                name: check.name,
                category,
                run: check.run,
                parser: parser_name.to_string(),
                timeout: check.timeout.map_or(default_timeout, |d| d.0),
                cwd,
                cwd_relative,
                env: check.env.into_iter().collect(),
                success_codes,
                install: non_empty(config_file, &key("install"), check.install)?,
                missing_tool: check
                    .missing_tool
                    .map(|pattern| {
                        regex::Regex::new(&pattern).map_err(|error| {
                            invalid(
                                config_file,
                                key("missing_tool"),
                                format!("not a regex: {error}"),
                            )
                        })
                    })
                    .transpose()?,
                rerun: match non_empty(config_file, &key("rerun"), check.rerun)? {
                    Some(rerun) if !rerun.contains("{test}") => {
                        return Err(invalid(
                            config_file,
                            key("rerun"),
                            "must name the test with {test}, like \"pytest {test}\"",
                        ));
                    }
                    Some(rerun) if rerun.contains("'{test}'") || rerun.contains("\"{test}\"") => {
                        return Err(invalid(
                            config_file,
                            key("rerun"),
                            "{test} is quoted for the shell already; write it bare, like \"pytest {test}\"",
                        ));
                    }
                    rerun => rerun,
                },
            })
        })
        .collect()
}

/// A command that, when given, is not empty and holds no NUL.
fn non_empty(
    config_file: &Path,
    key: &str,
    command: Option<String>,
) -> Result<Option<String>, ConfigError> {
    match command {
        Some(command) if command.trim().is_empty() || command.contains('\0') => Err(invalid(
            config_file,
            key,
            "must be a shell command (not empty, no NUL)",
        )),
        command => Ok(command),
    }
}

fn resolve_cwd(
    config_file: &Path,
    target: &Path,
    key: &str,
    cwd: Option<PathBuf>,
) -> Result<(PathBuf, String), ConfigError> {
    let Some(cwd) = cwd else {
        return Ok((target.to_path_buf(), String::new()));
    };
    let escapes = cwd.is_absolute()
        || cwd
            .components()
            .any(|c| matches!(c, Component::ParentDir | Component::Prefix(_)));
    if escapes {
        return Err(invalid(
            config_file,
            key,
            format!(
                "\"{}\" must be a relative path inside the target",
                cwd.display()
            ),
        ));
    }
    let absolute = target.join(&cwd);
    if !absolute.is_dir() {
        return Err(invalid(
            config_file,
            key,
            format!("\"{}\" is not a directory inside the target", cwd.display()),
        ));
    }
    let relative = cwd
        .components()
        .filter_map(|c| match c {
            Component::Normal(part) => Some(part.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/");
    Ok((absolute, relative))
}

pub(super) fn invalid(path: &Path, key: impl Into<String>, reason: impl AsRef<str>) -> ConfigError {
    ConfigError::invalid_at(path, "", None, key, reason)
}
