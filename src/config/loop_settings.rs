//! The loop's part of the configuration: `[loop]` limits and `[[delegate]]` definitions.

use std::path::{Path, PathBuf};

use super::error::ConfigError;
use super::error::{Entry, invalid};
use super::loop_guards as guards;
use super::overrides::Overrides;
use super::settings::{Accept, Isolate, LENSES, RunSettings, Verify, defaults};
use super::wire::{DelegateFile, LoopFile};
use crate::delegate::{DEFAULT_TEMPLATE, DelegateSpec, HttpSpec, Launch, Role, UsageReader};

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

/// `[loop] share`: folders inside the repository, named relative to it.
fn resolve_share(
    config_file: &Path,
    share: Option<Vec<String>>,
) -> Result<Vec<String>, ConfigError> {
    let share = share.unwrap_or_default();
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
    Ok(share)
}

pub(super) fn resolve_run(
    config_file: &Path,
    target: &Path,
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
    let accept = match file.accept.as_deref() {
        None | Some("unmask") => Accept::Unmask,
        Some("strict") => Accept::Strict,
        Some(other) => {
            return Err(invalid(
                config_file,
                "loop.accept",
                format!("\"{other}\" is not an accept rule; expected unmask or strict"),
            ));
        }
    };
    let integrity = match file.integrity.as_deref() {
        None => crate::integrity::Mode::default(),
        Some(text) => crate::integrity::Mode::parse(text).ok_or_else(|| {
            invalid(
                config_file,
                "loop.integrity",
                format!("\"{text}\" is not an integrity mode; expected refuse, report or off"),
            )
        })?,
    };
    let priority = overrides
        .priority
        .clone()
        .or(file.priority)
        .unwrap_or_else(|| defaults::PRIORITY.iter().map(|c| c.to_string()).collect());
    let patterns = overrides.scope.clone().or(file.scope).unwrap_or_default();
    let scope = crate::scope::Scope::new(target, &patterns).map_err(|reason| {
        let key = if overrides.scope.is_some() {
            "--scope"
        } else {
            "loop.scope"
        };
        invalid(config_file, key, reason)
    })?;
    let new_since_mode = parse_new_since(config_file, file.new_since.as_deref())?;
    let isolate = match (overrides.isolate, file.isolate) {
        (Some(isolate), _) => isolate,
        (None, Some(text)) => {
            parse_isolate(&text).map_err(|reason| invalid(config_file, "loop.isolate", reason))?
        }
        (None, None) => Isolate::None,
    };
    let keep_runs = file.keep_runs.unwrap_or(defaults::KEEP_RUNS);
    if !(1..=defaults::KEEP_RUNS_LIMIT).contains(&keep_runs) {
        return Err(invalid(
            config_file,
            "loop.keep_runs",
            format!(
                "{keep_runs} is out of range; expected 1 (this run's alone) to {}",
                defaults::KEEP_RUNS_LIMIT
            ),
        ));
    }
    let share = resolve_share(config_file, file.share)?;
    let (confine, writable) = guards::resolve_confine(config_file, file.confine, file.writable)?;
    let (protect_ignored_max, protect_ignored_skip) = guards::resolve_protect_ignored(
        config_file,
        file.protect_ignored_max,
        file.protect_ignored_skip,
    )?;
    Ok(RunSettings {
        protect_ignored_max,
        protect_ignored_skip,
        max_cycles,
        watch: overrides.watch.unwrap_or(true),
        improve_max_cycles: overrides
            .improve_max_cycles
            .unwrap_or(crate::stop::IMPROVE_MAX_CYCLES),
        time_budget: overrides.time_budget.or(file.time_budget).map(|d| d.0),
        spending: crate::spending::Cap {
            cost_usd: file.max_cost.map(|cost| cost.0),
            tokens: file.max_tokens,
        },
        verify,
        accept,
        integrity,
        priority,
        isolate,
        share,
        scope,
        new_since: overrides
            .new_since
            .clone()
            .filter(|given| !given.trim().is_empty()),
        new_since_mode,
        since: None,
        new_since_skipped: None,
        confine,
        writable,
        keep_runs,
    })
}

/// `[loop] new_since`: how a finding is judged new (`lines` when left out).
fn parse_new_since(
    config_file: &Path,
    text: Option<&str>,
) -> Result<crate::new_since::Mode, ConfigError> {
    match text {
        None => Ok(crate::new_since::Mode::default()),
        Some(text) => crate::new_since::Mode::parse(text).ok_or_else(|| {
            invalid(
                config_file,
                "loop.new_since",
                format!("\"{text}\" is not a way to judge findings new; expected lines or gate"),
            )
        }),
    }
}

/// Resolves the `[[delegate]]` tables in the order written; the first wrong one stops with its
/// error.
pub(super) fn resolve_delegates(
    config_file: &Path,
    config_dir: &Path,
    delegates: Vec<DelegateFile>,
) -> Result<Vec<DelegateSpec>, ConfigError> {
    delegates
        .into_iter()
        .enumerate()
        .map(|(index, delegate)| {
            let at = Entry {
                config_file,
                array: "delegate",
                index,
            };
            resolve_delegate(at, config_dir, delegate)
        })
        .collect()
}

/// Resolves one delegate: its fields are checked in the order they are written here, and what it
/// leaves out takes its default. Its template is read relative to `config_dir`.
fn resolve_delegate(
    at: Entry<'_>,
    config_dir: &Path,
    delegate: DelegateFile,
) -> Result<DelegateSpec, ConfigError> {
    let categories = resolve_categories(at, delegate.categories.clone())?;
    let role = parse_role(at, delegate.role.as_deref())?;
    let launch = resolve_launch(at, &delegate, role)?;
    let lens = resolve_lens(at, delegate.lens, role)?;
    let prompt_on_stdin = parse_stdin(at, delegate.stdin.as_deref())?;
    let usage = parse_usage(at, delegate.usage.as_deref())?;
    let cap = crate::spending::Cap {
        cost_usd: delegate.max_cost.map(|cost| cost.0),
        // An http delegate's `max_tokens` is each reply's.
        tokens: matches!(launch, Launch::Command(_))
            .then_some(delegate.max_tokens)
            .flatten()
            .map(u64::from),
    };
    let template = read_template(config_dir, delegate.template)?;
    crate::delegate::check_template(&template)
        .map_err(|error| at.invalid("template", error.to_string()))?;
    Ok(DelegateSpec {
        categories,
        role,
        lens,
        launch,
        template,
        prompt_on_stdin,
        timeout: delegate.timeout.map_or(defaults::DELEGATE_TIMEOUT, |d| d.0),
        idle_timeout: Some(
            delegate
                .idle_timeout
                .map_or(defaults::DELEGATE_IDLE_TIMEOUT, |d| d.0),
        ),
        env: delegate.env.into_iter().collect(),
        on_paths: None,
        whole_tree: false,
        usage,
        cap,
    })
}

/// A command delegate's `usage` reader, by name; a name that is none of them is refused, with
/// the nearest one when it looks like a typo.
fn parse_usage(at: Entry<'_>, usage: Option<&str>) -> Result<Option<UsageReader>, ConfigError> {
    let Some(name) = usage else {
        return Ok(None);
    };
    UsageReader::named(name).map(Some).ok_or_else(|| {
        let guess = crate::delegate::nearest_reader(name).map_or(String::new(), |reader| {
            format!("; did you mean \"{reader}\"?")
        });
        at.invalid(
            "usage",
            format!(
                "\"{name}\" is not a usage reader{guess} (the readers: {})",
                crate::delegate::USAGE_READERS.join(", ")
            ),
        )
    })
}

/// The categories a delegate works on: all (`"*"`) when left out, never none or a blank one.
fn resolve_categories(
    at: Entry<'_>,
    categories: Option<Vec<String>>,
) -> Result<Vec<String>, ConfigError> {
    let categories = categories.unwrap_or_else(|| vec!["*".to_string()]);
    if categories.is_empty() || categories.iter().any(|c| c.trim().is_empty()) {
        return Err(at.invalid(
            "categories",
            "must name at least one category, or \"*\" for all",
        ));
    }
    Ok(categories)
}

/// A delegate's `role`: `fix` when left out.
fn parse_role(at: Entry<'_>, role: Option<&str>) -> Result<Role, ConfigError> {
    match role {
        None | Some("fix") => Ok(Role::Fix),
        Some("discover") => Ok(Role::Discover),
        Some("execute") => Ok(Role::Execute),
        Some("reviewer") => Ok(Role::Reviewer),
        Some(other) => Err(at.invalid(
            "role",
            format!("\"{other}\" is not a role; expected fix, discover, execute or reviewer"),
        )),
    }
}

/// A delegate's `lens`: only a discover delegate has one, and it is one of [`LENSES`].
fn resolve_lens(
    at: Entry<'_>,
    lens: Option<String>,
    role: Role,
) -> Result<Option<String>, ConfigError> {
    match lens {
        None => Ok(None),
        Some(lens) if LENSES.contains(&lens.as_str()) && role == Role::Discover => Ok(Some(lens)),
        Some(lens) => Err(at.invalid(
            "lens",
            format!(
                "\"{lens}\": a lens is for a discover delegate, one of {}",
                LENSES.join(", ")
            ),
        )),
    }
}

/// A delegate's `stdin`: `"prompt"` sends it the rendered prompt; left out, nothing.
fn parse_stdin(at: Entry<'_>, stdin: Option<&str>) -> Result<bool, ConfigError> {
    match stdin {
        None => Ok(false),
        Some("prompt") => Ok(true),
        Some(other) => Err(at.invalid(
            "stdin",
            format!("\"{other}\" is not supported; expected \"prompt\""),
        )),
    }
}

/// A delegate's prompt template: the file it names (relative to `config_dir`), else the
/// built-in one.
fn read_template(config_dir: &Path, template: Option<PathBuf>) -> Result<String, ConfigError> {
    match template {
        None => Ok(DEFAULT_TEMPLATE.to_string()),
        Some(path) => {
            let full = config_dir.join(&path);
            std::fs::read_to_string(&full)
                .map_err(|source| ConfigError::Unreadable { path: full, source })
        }
    }
}

/// A delegate's `kind`: a command (`run`), or a model endpoint (`endpoint`, `model`, ...). The
/// fields of the other kind are refused, so a typo does not silently change what runs.
fn resolve_launch(
    at: Entry<'_>,
    delegate: &DelegateFile,
    role: Role,
) -> Result<Launch, ConfigError> {
    match delegate.kind.as_deref() {
        None | Some("command") => resolve_command(at, delegate),
        Some("http") => resolve_http(at, delegate, role).map(Launch::Http),
        Some(other) => Err(at.invalid(
            "kind",
            format!("\"{other}\" is not a delegate kind; expected command or http"),
        )),
    }
}

/// The first field for `kind = "http"` a delegate sets, if any.
fn first_http_field(delegate: &DelegateFile) -> Option<&'static str> {
    [
        ("endpoint", delegate.endpoint.is_some()),
        ("model", delegate.model.is_some()),
        ("api_key_env", delegate.api_key_env.is_some()),
        ("max_files", delegate.max_files.is_some()),
        ("max_file_bytes", delegate.max_file_bytes.is_some()),
    ]
    .into_iter()
    .find(|(_, set)| *set)
    .map(|(field, _)| field)
}

/// The first field for a command a delegate sets, if any.
fn first_command_field(delegate: &DelegateFile) -> Option<&'static str> {
    [
        ("run", delegate.run.is_some()),
        ("stdin", delegate.stdin.is_some()),
        ("idle_timeout", delegate.idle_timeout.is_some()),
        ("env", !delegate.env.is_empty()),
        ("usage", delegate.usage.is_some()),
    ]
    .into_iter()
    .find(|(_, set)| *set)
    .map(|(field, _)| field)
}

/// A delegate of kind `command`: no http field, and a `run` command (not empty, no NUL).
fn resolve_command(at: Entry<'_>, delegate: &DelegateFile) -> Result<Launch, ConfigError> {
    if let Some(field) = first_http_field(delegate) {
        return Err(at.invalid(
            field,
            "is for kind = \"http\"; this delegate runs a command",
        ));
    }
    match &delegate.run {
        Some(run) if !run.trim().is_empty() && !run.contains('\0') => {
            Ok(Launch::Command(run.clone()))
        }
        _ => Err(at.invalid("run", "must be the command that runs this delegate")),
    }
}

/// A delegate of kind `http`: no command field, a role that changes code, an http(s) endpoint, a
/// model, a secret-looking key variable, and limits of at least 1.
fn resolve_http(
    at: Entry<'_>,
    delegate: &DelegateFile,
    role: Role,
) -> Result<HttpSpec, ConfigError> {
    if let Some(field) = first_command_field(delegate) {
        return Err(at.invalid(field, "is for a command; kind = \"http\" asks an endpoint"));
    }
    if !matches!(role, Role::Fix | Role::Execute) {
        return Err(at.invalid(
            "kind",
            "\"http\" is for a delegate that changes code (role fix or execute)",
        ));
    }
    let endpoint = delegate.endpoint.clone().unwrap_or_default();
    if !(endpoint.starts_with("https://") || endpoint.starts_with("http://")) {
        return Err(at.invalid(
            "endpoint",
            "must be the http(s) URL of a /v1/chat/completions endpoint",
        ));
    }
    let model = delegate.model.clone().unwrap_or_default();
    if model.trim().is_empty() {
        return Err(at.invalid("model", "must name the model to ask"));
    }
    if let Some(name) = &delegate.api_key_env {
        check_key_variable(name).map_err(|reason| at.invalid("api_key_env", reason))?;
    }
    let max_tokens = delegate.max_tokens.unwrap_or(defaults::HTTP_MAX_TOKENS);
    let max_files = delegate.max_files.unwrap_or(defaults::HTTP_MAX_FILES);
    if max_tokens == 0 || max_files == 0 {
        let field = if max_tokens == 0 {
            "max_tokens"
        } else {
            "max_files"
        };
        return Err(at.invalid(field, "must be at least 1"));
    }
    Ok(HttpSpec {
        endpoint,
        model,
        api_key_env: delegate.api_key_env.clone(),
        max_tokens,
        max_files,
        max_file_bytes: delegate
            .max_file_bytes
            .map_or(defaults::HTTP_MAX_FILE_BYTES, |size| size.0),
    })
}

/// `api_key_env` names a variable, never holds the key: its name must say it is secret, so that
/// its value is redacted from everything the run writes. (Whether it is set is checked when a run
/// starts: `check` does not need it.)
fn check_key_variable(name: &str) -> Result<(), String> {
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(format!(
            "\"{name}\" is not a variable name; give the name of the variable that holds the key, never the key"
        ));
    }
    if !crate::secrets::is_secret_name(name) {
        return Err(format!(
            "{name} does not look like a secret's name (…_KEY, …_TOKEN, …_SECRET), so its value would not be redacted from the run's files; use such a name"
        ));
    }
    Ok(())
}
