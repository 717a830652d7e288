//! Delegates: a fixer or a coding agent run in a fresh process, bound to categories. It gets the
//! rendered prompt (in a file, and on stdin if asked), the category's findings as JSON, and
//! `REFINE_LOOP_*` variables naming them; it runs in its own process group with a deadline and an
//! idle timeout; what it printed (bounded) and its verdict are kept.

mod environment;
mod http;
mod on_paths;
mod prompt;
mod reapply;
mod usage;
mod verdict;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use on_paths::OnPaths;
pub use prompt::{DEFAULT_TEMPLATE, check_template, render_prompt};
pub use usage::{READERS as USAGE_READERS, UsageReader, nearest_reader};
pub use verdict::Verdict;
pub(crate) use verdict::read_verdict;

use crate::cancel::Cancel;
use crate::model::{Diagnostic, TokenUsage};
use crate::process::{HeadTail, ProcessEnd, ProcessError, ProcessSpec, confined};
use crate::workspace::{PathState, RepoPath};

/// What a delegate is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Fixes the findings of its categories (the refactoring and improve presets).
    Fix,
    /// Refine: proposes candidates, one JSON object per line.
    Discover,
    /// Refine: makes one candidate's change.
    Execute,
    /// Refine: reads a candidate's diff and evidence and approves or rejects it.
    Reviewer,
    /// A campaign's earlier accepted work, applied again (`[campaign] pending = "reapply"`);
    /// never configured, added by the loop.
    Reapply,
}

/// A delegate as configured.
#[derive(Debug, Clone)]
pub struct DelegateSpec {
    /// The categories it fixes; `*` for all.
    pub categories: Vec<String>,
    pub role: Role,
    /// A discover delegate's lens.
    pub lens: Option<String>,
    /// How it runs: a command, or a request to a model endpoint.
    pub launch: Launch,
    /// The prompt template's text (the default one when the config names none).
    pub template: String,
    /// Give the rendered prompt on stdin too.
    pub prompt_on_stdin: bool,
    pub timeout: Duration,
    pub idle_timeout: Option<Duration>,
    pub env: Vec<(String, String)>,
    /// A fixer made from a check whose tool takes the paths it works: in a run with a scope, it
    /// runs on the paths of its work instead of the check's own targets.
    pub on_paths: Option<OnPaths>,
    /// A fixer made from a check whose tool cannot be given paths (`cargo clippy --fix`,
    /// `cargo fmt`, golangci-lint): in a run with a scope, what it changes outside the scope is
    /// left out, and not held against it; it did what its tool does.
    pub whole_tree: bool,
    /// How a command delegate's usage is read from its output; `None` when the config names no
    /// reader (its usage is unknown).
    pub usage: Option<UsageReader>,
    /// What it may spend in a run (`max_cost`, and `max_tokens` for a command).
    pub cap: crate::spending::Cap,
}

/// How a delegate runs.
#[derive(Debug, Clone)]
pub enum Launch {
    /// A shell command, run in the target in its own process group.
    Command(String),
    /// A request to an OpenAI-compatible chat-completions endpoint, whose diff the loop applies.
    Http(HttpSpec),
    /// The loop applies these patches of earlier runs (the state dir's `history/`), in order.
    Reapply(Vec<PathBuf>),
}

/// A model endpoint, as configured (`kind = "http"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpSpec {
    /// The `/v1/chat/completions` URL.
    pub endpoint: String,
    pub model: String,
    /// The variable holding the API key; `None` for an endpoint that needs none.
    pub api_key_env: Option<String>,
    pub max_tokens: u32,
    /// The most files, named by the findings, sent with the prompt.
    pub max_files: usize,
    /// A file larger than this is not sent.
    pub max_file_bytes: u64,
}

impl HttpSpec {
    /// The API key from `api_key_env`: `None` when none is configured; an error naming the
    /// variable when it is unset or too short to be redacted.
    pub fn key(&self) -> Result<Option<String>, String> {
        let Some(name) = &self.api_key_env else {
            return Ok(None);
        };
        match std::env::var(name) {
            Ok(value) if value.trim().len() >= crate::secrets::MIN_SECRET_LEN => {
                Ok(Some(value.trim().to_string()))
            }
            Ok(value) if !value.trim().is_empty() => Err(format!(
                "{name} holds fewer than {} bytes, too short to be told apart in the logs",
                crate::secrets::MIN_SECRET_LEN
            )),
            _ => Err(format!(
                "{name}, the variable holding the API key, is not set"
            )),
        }
    }
}

impl DelegateSpec {
    /// It spends nothing the loop counts: `usage = "none"` on purpose, or the loop's own
    /// applying of earlier patches.
    pub fn spends_nothing(&self) -> bool {
        self.usage == Some(UsageReader::None) || matches!(self.launch, Launch::Reapply(_))
    }

    /// What the reports call it: the command, or the model and its endpoint.
    pub fn describe(&self) -> String {
        match &self.launch {
            Launch::Command(run) => run.clone(),
            Launch::Http(http) => format!("model {} at {}", http.model, http.endpoint),
            Launch::Reapply(patches) => reapply::describe(patches),
        }
    }

    pub fn handles(&self, category: &str) -> bool {
        self.role == Role::Fix && self.categories.iter().any(|c| c == "*" || c == category)
    }
}

/// One piece of work for a delegate.
#[derive(Debug, Clone)]
pub struct Assignment<'a> {
    pub category: &'a str,
    pub cycle: u32,
    /// What it may change.
    pub scope: &'a crate::scope::Scope,
    pub diagnostics: &'a [Diagnostic],
    /// Files the work is about beyond those the diagnostics name (a refine candidate's paths),
    /// relative to the target: an http delegate sends them along.
    pub files: &'a [String],
    /// The lines the summary shows for the category (when no diagnostic is kept, as for an
    /// unparsed failure).
    pub details: &'a [String],
    pub target: &'a Path,
    pub state_dir: &'a Path,
    /// `cycle-N/delegate-reports/`, where its files go.
    pub reports_dir: &'a Path,
    /// What this delegate's last refused change did to make the gate see less: its prompt says
    /// so.
    pub refused: &'a [String],
}

/// The files a delegate run uses, all in the cycle's `delegate-reports/`.
#[derive(Debug, Clone)]
pub struct DelegateFiles {
    pub prompt: PathBuf,
    pub findings: PathBuf,
    pub verdict: PathBuf,
    pub report: PathBuf,
    /// A discover delegate's proposals (`REFINE_LOOP_CANDIDATES_FILE`).
    pub candidates: PathBuf,
}

/// The most of a file of its own (verdict, report, candidates) that a delegate leaves in the
/// state dir, which CI uploads; the rest is cut.
pub const MAX_OWN_FILE: u64 = 4 * 1024 * 1024;

impl DelegateFiles {
    /// Makes the files the delegate wrote of its own fit to keep in the state dir: what is not a
    /// regular file there (a symlink, a FIFO, a device) is removed unread, a file over
    /// [`MAX_OWN_FILE`] is cut, and every one is redacted. One line for each file it had to cut
    /// or remove.
    pub fn settle(&self) -> Vec<String> {
        use std::io::Read as _;
        let mut said = Vec::new();
        for path in [&self.verdict, &self.report, &self.candidates] {
            let Ok(meta) = std::fs::symlink_metadata(path) else {
                continue;
            };
            let name = path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into());
            if !meta.is_file() {
                let _ = std::fs::remove_file(path);
                said.push(format!("`{name}`: not a regular file; removed unread"));
                continue;
            }
            let Ok(file) = crate::files::open_regular(path) else {
                continue;
            };
            let mut bytes = Vec::new();
            if file.take(MAX_OWN_FILE).read_to_end(&mut bytes).is_err() {
                continue;
            }
            if meta.len() > MAX_OWN_FILE {
                said.push(format!(
                    "`{name}`: {} bytes, cut to the first {MAX_OWN_FILE}",
                    meta.len()
                ));
            } else if !matches!(crate::secrets::redacted(&bytes), std::borrow::Cow::Owned(_)) {
                continue;
            }
            // Replaced, never written through.
            let _ = crate::state::write_redacted(path, &bytes);
        }
        said
    }

    pub fn for_category(reports_dir: &Path, category: &str) -> Self {
        let stem = format!("fix-{}", file_safe(category));
        Self {
            prompt: reports_dir.join(format!("{stem}.prompt.md")),
            findings: reports_dir.join(format!("{stem}.findings.json")),
            verdict: reports_dir.join(format!("{stem}.verdict")),
            report: reports_dir.join(format!("{stem}.md")),
            candidates: reports_dir.join(format!("{}.candidates.jsonl", file_safe(category))),
        }
    }
}

/// What one delegate run did.
#[derive(Debug)]
pub struct DelegateRun {
    pub end: ProcessEnd,
    /// The command could not be started.
    pub spawn_error: Option<String>,
    pub output: HeadTail,
    pub verdict: Option<Verdict>,
    /// Why its verdict file was not read (a symlink, a FIFO, a device, too long).
    pub verdict_refused: Option<String>,
    pub files: DelegateFiles,
    /// What it spent, as it reported it: an http delegate's endpoint, or a command delegate's
    /// output read by its `usage` reader.
    pub usage: Option<TokenUsage>,
    /// Why its usage is unknown, when it is: it is then never counted as free.
    pub usage_unknown: Option<String>,
    /// The agent's closing text, taken out of its JSON output by its `usage` reader.
    pub answer: Option<String>,
    /// Why an http delegate's answer was not applied.
    pub note: Option<String>,
    /// Its own files the loop had to cut or remove (see [`DelegateFiles::settle`]).
    pub own_files: Vec<String>,
    /// Writes the kernel's confinement refused it, as its output named them, each with how to
    /// allow it where the config can (see [`crate::confine::Refusals`]).
    pub kernel_refused: Vec<String>,
    /// The command it ran when that was not the configured one: a fixer made from a check, run
    /// on the paths of its work in a run with a scope.
    pub command: Option<String>,
}

impl DelegateRun {
    /// It could not start, was stopped, was killed by a signal, or exited non-zero.
    pub fn failed(&self) -> bool {
        self.spawn_error.is_some()
            || self.end.stopped.is_some()
            || self.end.signal.is_some()
            || self.end.exit_code.is_some_and(|code| code != 0)
    }

    /// How it ended, in one line (`timeout` is its deadline).
    pub fn describe_end(&self, timeout: Duration) -> String {
        match &self.spawn_error {
            Some(error) => error.clone(),
            None => crate::process::describe_end(&self.end, None, timeout),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DelegateError {
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("lost track of the delegate's process: {0}")]
    Supervise(#[source] std::io::Error),
    #[error("its prompt template: {0}")]
    Template(#[from] crate::template::UnknownPlaceholder),
}

/// What the loop holds every delegate to.
#[derive(Debug, Clone, Copy)]
pub struct Limits<'a> {
    /// Between SIGTERM and SIGKILL.
    pub kill_grace: Duration,
    /// The user's work: an http delegate's diff is not applied there.
    pub protected: &'a BTreeMap<RepoPath, PathState>,
    /// Variables a command delegate must not see.
    pub private: &'a [String],
    /// The kernel's hold on a command delegate, when the run confines them.
    pub confiner: Option<&'a crate::confine::Confiner>,
    /// What this turn may spend: a command delegate whose reader streams is stopped as soon as
    /// what it reported passes it.
    pub allowance: crate::spending::Allowance,
}

/// Runs `spec` on `assignment` and waits for it (or its deadline, idle timeout, or a cancel).
pub fn run_delegate(
    spec: &DelegateSpec,
    assignment: &Assignment<'_>,
    limits: Limits<'_>,
    cancel: &Cancel,
) -> Result<DelegateRun, DelegateError> {
    let files = DelegateFiles::for_category(assignment.reports_dir, assignment.category);
    let prompt = write_inputs(spec, assignment, &files)?;
    match &spec.launch {
        Launch::Command(run) => {
            let files_of_work = (assignment.diagnostics.iter())
                .filter(|diagnostic| !diagnostic.outside_target)
                .filter_map(|diagnostic| diagnostic.file.as_deref())
                .chain(assignment.files.iter().map(String::as_str));
            let on_paths = (spec.on_paths.as_ref())
                .and_then(|on_paths| on_paths.command_for(assignment.scope, files_of_work));
            let mut ran = run_command(
                on_paths.as_deref().unwrap_or(run),
                spec,
                assignment,
                &limits,
                files,
                cancel,
            )?;
            ran.command = on_paths;
            Ok(ran)
        }
        Launch::Reapply(patches) => Ok(reapply::reapply(patches, assignment, &limits, files)),
        Launch::Http(http) => Ok(http::ask(
            http,
            spec.timeout,
            &prompt,
            assignment,
            limits.protected,
            cancel,
            files,
        )),
    }
}

/// What an in-process delegate (a model endpoint, a reapply) did, kept as its output.
struct Transcript {
    text: String,
    started: std::time::Instant,
    files: DelegateFiles,
}

impl Transcript {
    fn new(files: DelegateFiles) -> Self {
        Self {
            text: String::new(),
            started: std::time::Instant::now(),
            files,
        }
    }

    /// The run this transcript tells of: ended by `stopped`, or else exited with `code`;
    /// `note` (why nothing was applied) ends the text. The text is redacted.
    fn end(
        mut self,
        stopped: Option<crate::process::Interruption>,
        code: i32,
        verdict: Option<Verdict>,
        usage: Option<TokenUsage>,
        note: Option<String>,
    ) -> DelegateRun {
        use std::fmt::Write as _;
        if let Some(note) = &note {
            let _ = writeln!(self.text, "not applied: {note}");
        }
        let mut output = HeadTail::default();
        output.push(crate::secrets::redacted(self.text.as_bytes()).as_ref());
        DelegateRun {
            end: ProcessEnd {
                exit_code: stopped.is_none().then_some(code),
                duration: self.started.elapsed(),
                stopped,
                ..ProcessEnd::default()
            },
            spawn_error: None,
            output,
            verdict,
            verdict_refused: None,
            files: self.files,
            usage,
            usage_unknown: None,
            answer: None,
            note,
            own_files: Vec::new(),
            kernel_refused: Vec::new(),
            command: None,
        }
    }
}

/// The work tree's root for a target inside it.
fn repository_root(target: &Path) -> Option<PathBuf> {
    let repository = git2::Repository::discover(target).ok()?;
    repository.workdir().map(Path::to_path_buf)
}

/// Writes the rendered prompt and the findings into the delegate's files, and removes an
/// earlier verdict; returns the prompt.
fn write_inputs(
    spec: &DelegateSpec,
    assignment: &Assignment<'_>,
    files: &DelegateFiles,
) -> Result<String, DelegateError> {
    let write = |path: &Path, bytes: &[u8]| {
        std::fs::create_dir_all(assignment.reports_dir)
            .map_err(|source| DelegateError::Write {
                path: path.to_path_buf(),
                source,
            })
            .and_then(|()| {
                crate::state::write_redacted(path, bytes).map_err(|error| DelegateError::Write {
                    path: error.path,
                    source: error.source,
                })
            })
    };
    let mut prompt = render_prompt(
        &spec.template,
        assignment.category,
        &assignment.scope.describe(),
        assignment.details,
    )?;
    prompt.push_str(&prompt::refused_section(assignment.refused));
    write(&files.prompt, prompt.as_bytes())?;
    let findings = serde_json::to_vec_pretty(assignment.diagnostics).unwrap_or_default();
    write(&files.findings, &findings)?;
    let _ = std::fs::remove_file(&files.verdict);
    Ok(prompt)
}

/// Runs a command delegate in its own process group and reads its verdict.
fn run_command(
    run: &str,
    spec: &DelegateSpec,
    assignment: &Assignment<'_>,
    limits: &Limits<'_>,
    files: DelegateFiles,
    cancel: &Cancel,
) -> Result<DelegateRun, DelegateError> {
    let mut env = environment::of(spec, assignment, &files);
    let over_allowance = std::sync::atomic::AtomicBool::new(false);
    let confinement = match limits.confiner.map(|c| {
        let own = [&*files.verdict, &*files.report, &*files.candidates];
        confined::Confinement::prepare(c, &own, &env)
    }) {
        None => None,
        Some(Ok(confinement)) => Some(confinement),
        Some(Err(error)) => {
            return Ok(not_started(
                files,
                format!("could not confine it, so it was not started: {error}"),
            ));
        }
    };
    if let Some(confinement) = &confinement {
        env.extend(confinement.environment());
    }
    let process = ProcessSpec {
        shell_command: run,
        cwd: assignment.target,
        env: &env,
        env_remove: limits.private,
        timeout: spec.timeout,
        kill_grace: limits.kill_grace,
        idle_timeout: spec.idle_timeout,
        stdin: spec.prompt_on_stdin.then_some(files.prompt.as_path()),
        launcher: &[],
        stop: Some(&over_allowance),
    };
    let mut output = HeadTail::default();
    let mut refusals = crate::confine::Refusals::default();
    let mut tally = spec.usage.map(usage::UsageTally::new);
    let ran = confined::run(process, confinement, cancel, &mut |chunk| {
        output.push(chunk);
        if let Some(tally) = &mut tally {
            tally.push(chunk);
            if !limits.allowance.is_unlimited()
                && tally
                    .in_flight()
                    .is_some_and(|spent| limits.allowance.passed_by(&spent))
            {
                over_allowance.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        }
        if limits.confiner.is_some() {
            refusals.push(chunk);
        }
        Ok(())
    });
    let kernel_refused = limits
        .confiner
        .map(|confiner| refusals.explain(confiner, assignment.target))
        .unwrap_or_default();
    let (end, spawn_error) = match ran {
        Ok(end) => (end, None),
        Err(ProcessError::Spawn(error)) => (ProcessEnd::default(), Some(error.to_string())),
        Err(ProcessError::Output(error) | ProcessError::Supervise(error)) => {
            return Err(DelegateError::Supervise(error));
        }
    };
    let (bytes, verdict_refused) = match read_verdict(&files.verdict) {
        Ok(bytes) => (bytes, None),
        Err(refused) => (None, Some(refused)),
    };
    let verdict = bytes.and_then(|bytes| {
        Verdict::parse(&String::from_utf8_lossy(&crate::secrets::redacted(&bytes)))
    });
    // Its own files stay in the state dir: bounded, and without the secrets they may hold.
    let own_files = files.settle();
    let (usage, answer) = tally.map_or((None, None), usage::UsageTally::finish);
    let usage_unknown = match spec.usage {
        _ if usage.is_some() || spawn_error.is_some() => None,
        Some(UsageReader::None) => None,
        Some(reader) => Some(format!(
            "its output held nothing the `{}` reader could read",
            reader.name()
        )),
        None => Some("no `usage` reader is configured for it".to_string()),
    };
    let answer = answer.map(|text| {
        String::from_utf8_lossy(&crate::secrets::redacted(text.as_bytes())).into_owned()
    });
    Ok(DelegateRun {
        end,
        spawn_error,
        output,
        verdict,
        verdict_refused,
        files,
        usage,
        usage_unknown,
        answer,
        note: None,
        own_files,
        kernel_refused,
        command: None,
    })
}

/// A command delegate that was not started.
fn not_started(files: DelegateFiles, why: String) -> DelegateRun {
    DelegateRun {
        end: ProcessEnd::default(),
        spawn_error: Some(why),
        output: HeadTail::default(),
        verdict: None,
        files,
        usage: None,
        usage_unknown: None,
        answer: None,
        note: None,
        verdict_refused: None,
        own_files: Vec::new(),
        kernel_refused: Vec::new(),
        command: None,
    }
}

/// A category name made safe as part of a file name.
fn file_safe(category: &str) -> String {
    category
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
#[path = "delegate_tests.rs"]
mod tests;
