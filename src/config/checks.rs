//! Resolves the `[[gate.check]]` tables into checks ready to run, refusing the first wrong field.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use super::error::ConfigError;
use super::error::{Entry, invalid};
use super::settings::{CheckSettings, defaults};
use super::wire::CheckFile;
use crate::parse::{Catalogue, Parser};

/// What every check is resolved against: the file its errors name, the target its `cwd` is
/// inside, the parsers it may name, and the gate's timeout for a check that sets none.
#[derive(Debug, Clone, Copy)]
struct CheckContext<'a> {
    config_file: &'a Path,
    target: &'a Path,
    parsers: &'a Catalogue,
    default_timeout: Duration,
}

/// Resolves the gate's checks in the order written; there must be at least one, and the first
/// wrong check stops with its error.
pub(super) fn resolve_checks(
    config_file: &Path,
    target: &Path,
    parsers: &mut Catalogue,
    checks: Vec<CheckFile>,
    default_timeout: Duration,
) -> Result<Vec<CheckSettings>, ConfigError> {
    // `parser = "ruff,pytest"`: both parsers read the check's output.
    for (index, check) in checks.iter().enumerate() {
        if let Some(names) = check.parser.as_deref().filter(|name| name.contains(',')) {
            let at = Entry {
                config_file,
                array: "gate.check",
                index,
            };
            parsers
                .add_combination(names)
                .map_err(|reason| at.invalid("parser", format!("\"{names}\": {reason}")))?;
        }
    }
    let parsers = &*parsers;
    if checks.is_empty() {
        return Err(invalid(
            config_file,
            "gate.check",
            "the gate has no checks; add at least one [[gate.check]] with a name and a run command",
        ));
    }
    let context = CheckContext {
        config_file,
        target,
        parsers,
        default_timeout,
    };
    let mut names = BTreeSet::new();
    checks
        .into_iter()
        .enumerate()
        .map(|(index, check)| resolve_check(context, &mut names, index, check))
        .collect()
}

/// Resolves one check: its fields are checked in the order they are written here, and what it
/// leaves out takes its default. `names` holds the names of the checks before it.
fn resolve_check(
    context: CheckContext<'_>,
    names: &mut BTreeSet<String>,
    index: usize,
    check: CheckFile,
) -> Result<CheckSettings, ConfigError> {
    let at = Entry {
        config_file: context.config_file,
        array: "gate.check",
        index,
    };
    check_name(at, names, &check.name)?;
    check_run(at, &check.run)?;
    let parser_name = check.parser.as_deref().unwrap_or(defaults::PARSER);
    let parser = find_parser(at, context.parsers, parser_name)?;
    let category = resolve_category(at, check.category, parser, &check.name)?;
    let (cwd, cwd_relative) = resolve_cwd(
        context.config_file,
        context.target,
        &at.key("cwd"),
        check.cwd,
    )?;
    let success_codes = resolve_success_codes(at, check.success_codes)?;
    check_env(at, &check.env)?;
    let install = non_empty(context.config_file, &at.key("install"), check.install)?;
    let missing_tool = compile_missing_tool(at, check.missing_tool)?;
    let rerun = resolve_rerun(at, check.rerun)?;
    Ok(CheckSettings {
        name: check.name,
        category,
        run: check.run,
        parser: parser_name.to_string(),
        timeout: check.timeout.map_or(context.default_timeout, |d| d.0),
        cwd,
        cwd_relative,
        env: check.env.into_iter().collect(),
        success_codes,
        install,
        missing_tool,
        rerun,
    })
}

/// A check's name is not empty and no check before it has taken it.
fn check_name(at: Entry<'_>, names: &mut BTreeSet<String>, name: &str) -> Result<(), ConfigError> {
    if name.trim().is_empty() {
        return Err(at.invalid("name", "must not be empty"));
    }
    if !names.insert(name.to_string()) {
        return Err(at.invalid(
            "name",
            format!("\"{name}\" is used by another check; names must be unique"),
        ));
    }
    Ok(())
}

/// A check's `run` is a shell command: no NUL, not empty.
fn check_run(at: Entry<'_>, run: &str) -> Result<(), ConfigError> {
    if run.contains('\0') {
        return Err(at.invalid("run", "must not contain a NUL character"));
    }
    if run.trim().is_empty() {
        return Err(at.invalid(
            "run",
            "must not be empty: expected the shell command that runs this check",
        ));
    }
    Ok(())
}

/// The parser a check names, which must be one of the catalogue's.
fn find_parser<'p>(
    at: Entry<'_>,
    parsers: &'p Catalogue,
    parser_name: &str,
) -> Result<&'p dyn Parser, ConfigError> {
    parsers.get(parser_name).ok_or_else(|| {
        at.invalid(
            "parser",
            format!(
                "unknown parser \"{parser_name}\"; expected one of: {}",
                parsers.names().collect::<Vec<_>>().join(", ")
            ),
        )
    })
}

/// A check's category: the one it gives (not empty), else its parser's, else its name.
fn resolve_category(
    at: Entry<'_>,
    category: Option<String>,
    parser: &dyn Parser,
    name: &str,
) -> Result<String, ConfigError> {
    match category {
        Some(category) if category.trim().is_empty() => {
            Err(at.invalid("category", "must not be empty"))
        }
        Some(category) => Ok(category),
        None => Ok(parser
            .category()
            .map_or_else(|| name.to_string(), str::to_string)),
    }
}

/// The exit codes that mean a check passed: `[0]` when left out, never an empty list.
fn resolve_success_codes(
    at: Entry<'_>,
    success_codes: Option<Vec<i32>>,
) -> Result<Vec<i32>, ConfigError> {
    let success_codes = success_codes.unwrap_or_else(|| vec![0]);
    if success_codes.is_empty() {
        return Err(at.invalid(
            "success_codes",
            "must list at least one exit code, like [0]",
        ));
    }
    Ok(success_codes)
}

/// A check's `env`: every name a valid variable name, then every value free of NUL.
fn check_env(at: Entry<'_>, env: &BTreeMap<String, String>) -> Result<(), ConfigError> {
    if let Some(bad) = env.keys().find(|k| k.is_empty() || k.contains(['=', '\0'])) {
        return Err(at.invalid(
            "env",
            format!("{bad:?} is not a valid environment variable name"),
        ));
    }
    if let Some((name, _)) = env.iter().find(|(_, value)| value.contains('\0')) {
        return Err(at.invalid(&format!("env.{name}"), "must not contain a NUL character"));
    }
    Ok(())
}

/// Compiles a check's `missing_tool` pattern, when it gives one.
fn compile_missing_tool(
    at: Entry<'_>,
    pattern: Option<String>,
) -> Result<Option<regex::Regex>, ConfigError> {
    pattern
        .map(|pattern| {
            regex::Regex::new(&pattern)
                .map_err(|error| at.invalid("missing_tool", format!("not a regex: {error}")))
        })
        .transpose()
}

/// A check's `rerun`, when it gives one: a shell command naming the test with a bare `{test}`.
fn resolve_rerun(at: Entry<'_>, rerun: Option<String>) -> Result<Option<String>, ConfigError> {
    match non_empty(at.config_file, &at.key("rerun"), rerun)? {
        Some(rerun) if !rerun.contains("{test}") => Err(at.invalid(
            "rerun",
            "must name the test with {test}, like \"pytest {test}\"",
        )),
        Some(rerun) if rerun.contains("'{test}'") || rerun.contains("\"{test}\"") => Err(at
            .invalid(
                "rerun",
                "{test} is quoted for the shell already; write it bare, like \"pytest {test}\"",
            )),
        rerun => Ok(rerun),
    }
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

/// A check's working directory: the target when left out, else a directory inside it. Returns
/// the absolute path and the path relative to the target, `/`-separated.
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
