//! The loop's part of the configuration: `[loop]` limits and `[[delegate]]` definitions.

use std::path::Path;

use super::error::ConfigError;
use super::load::{Overrides, invalid};
use super::settings::{Isolate, RunSettings, Verify, defaults};
use super::wire::{DelegateFile, LoopFile};
use crate::delegate::{DEFAULT_TEMPLATE, DelegateSpec, Role};

/// The refine preset's lenses, as `focus=` and a discover delegate's `lens` name them.
pub const LENSES: [&str; 4] = ["architecture", "usability", "production", "refactoring"];

/// `per-cycle` or `per-delegate`.
pub fn parse_verify(text: &str) -> Result<Verify, String> {
    match text {
        "per-cycle" => Ok(Verify::PerCycle),
        "per-delegate" => Ok(Verify::PerDelegate),
        _ => Err(format!(
            "\"{text}\" is not a verify mode; expected per-cycle or per-delegate"
        )),
    }
}

/// `none` or `worktree`.
pub fn parse_isolate(text: &str) -> Result<Isolate, String> {
    match text {
        "none" => Ok(Isolate::None),
        "worktree" => Ok(Isolate::Worktree),
        _ => Err(format!(
            "\"{text}\" is not an isolation; expected none or worktree"
        )),
    }
}

pub(super) fn resolve_run(
    config_file: &Path,
    overrides: &Overrides,
    file: LoopFile,
) -> Result<RunSettings, ConfigError> {
    let max_cycles = overrides
        .max_cycles
        .or(file.max_cycles)
        .unwrap_or(defaults::MAX_CYCLES);
    if !(1..=defaults::MAX_CYCLES_LIMIT).contains(&max_cycles) {
        return Err(ConfigError::InvalidOverride {
            source_name: "max-cycles".into(),
            reason: format!(
                "{max_cycles} is out of range; expected 1 to {}",
                defaults::MAX_CYCLES_LIMIT
            ),
        });
    }
    let verify = match (overrides.verify, file.verify) {
        (Some(verify), _) => verify,
        (None, Some(text)) => {
            parse_verify(&text).map_err(|reason| invalid(config_file, "loop.verify", reason))?
        }
        (None, None) => Verify::PerCycle,
    };
    let priority = file
        .priority
        .unwrap_or_else(|| defaults::PRIORITY.iter().map(|c| c.to_string()).collect());
    let isolate = match (overrides.isolate, file.isolate) {
        (Some(isolate), _) => isolate,
        (None, Some(text)) => {
            parse_isolate(&text).map_err(|reason| invalid(config_file, "loop.isolate", reason))?
        }
        (None, None) => Isolate::None,
    };
    let share = file.share.unwrap_or_default();
    if let Some(bad) = share.iter().find(|folder| {
        let path = Path::new(folder.as_str());
        folder.is_empty()
            || path.is_absolute()
            || path
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
    }) {
        return Err(invalid(
            config_file,
            "loop.share",
            format!("\"{bad}\" is not a folder inside the repository"),
        ));
    }
    Ok(RunSettings {
        max_cycles,
        time_budget: overrides.time_budget.or(file.time_budget).map(|d| d.0),
        verify,
        priority,
        isolate,
        share,
        github_groups: false,
    })
}

pub(super) fn resolve_delegates(
    config_file: &Path,
    config_dir: &Path,
    delegates: Vec<DelegateFile>,
) -> Result<Vec<DelegateSpec>, ConfigError> {
    delegates
        .into_iter()
        .enumerate()
        .map(|(index, delegate)| {
            let key = |field: &str| format!("delegate[{index}].{field}");
            if delegate.run.trim().is_empty() || delegate.run.contains('\0') {
                return Err(invalid(
                    config_file,
                    key("run"),
                    "must be the command that runs this delegate",
                ));
            }
            let categories = delegate.categories.unwrap_or_else(|| vec!["*".to_string()]);
            if categories.is_empty() || categories.iter().any(|c| c.trim().is_empty()) {
                return Err(invalid(
                    config_file,
                    key("categories"),
                    "must name at least one category, or \"*\" for all",
                ));
            }
            let role = match delegate.role.as_deref() {
                None | Some("fix") => Role::Fix,
                Some("discover") => Role::Discover,
                Some("execute") => Role::Execute,
                Some("reviewer") => Role::Reviewer,
                Some(other) => {
                    return Err(invalid(
                        config_file,
                        key("role"),
                        format!(
                            "\"{other}\" is not a role; expected fix, discover, execute or reviewer"
                        ),
                    ));
                }
            };
            let lens = match delegate.lens {
                None => None,
                Some(lens) if LENSES.contains(&lens.as_str()) && role == Role::Discover => {
                    Some(lens)
                }
                Some(lens) => {
                    return Err(invalid(
                        config_file,
                        key("lens"),
                        format!(
                            "\"{lens}\": a lens is for a discover delegate, one of {}",
                            LENSES.join(", ")
                        ),
                    ));
                }
            };
            let prompt_on_stdin = match delegate.stdin.as_deref() {
                None => false,
                Some("prompt") => true,
                Some(other) => {
                    return Err(invalid(
                        config_file,
                        key("stdin"),
                        format!("\"{other}\" is not supported; expected \"prompt\""),
                    ));
                }
            };
            let template = match delegate.template {
                None => DEFAULT_TEMPLATE.to_string(),
                Some(path) => {
                    let full = config_dir.join(&path);
                    std::fs::read_to_string(&full)
                        .map_err(|source| ConfigError::Unreadable { path: full, source })?
                }
            };
            Ok(DelegateSpec {
                categories,
                role,
                lens,
                run: delegate.run,
                template,
                prompt_on_stdin,
                timeout: delegate.timeout.map_or(defaults::DELEGATE_TIMEOUT, |d| d.0),
                idle_timeout: Some(
                    delegate
                        .idle_timeout
                        .map_or(defaults::DELEGATE_IDLE_TIMEOUT, |d| d.0),
                ),
                env: delegate.env.into_iter().collect(),
            })
        })
        .collect()
}
