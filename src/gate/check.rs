//! Runs one check: its section of the log, its process, and its parse, all in one stream.

use std::io::Write;

use super::GateError;
use super::capture::BoundedLog;
use crate::cancel::Cancel;
use crate::config::{CheckSettings, Settings};
use crate::parse::{Findings, LineAssembler, ParseContext};
use crate::process::{
    HeadTail, ProcessEnd, ProcessError, ProcessSpec, confined, describe_end, run_in_group,
};

/// What one check did and what its parser found.
#[derive(Debug)]
pub struct CheckResult {
    pub check: CheckSettings,
    pub end: ProcessEnd,
    /// The command could not be started at all.
    pub spawn_error: Option<String>,
    pub findings: Findings,
    pub output: HeadTail,
    pub lines_cut: u64,
    /// Errors found in refine-loop's own files (the state dir), left out: not the project's.
    pub own_files: u64,
    /// The tracked files it changed, put back: a check must only read.
    pub wrote: super::tracked::Wrote,
    /// Confined, the writes the kernel refused it in the seal (a git dir, the state dir, the
    /// loop's store), as its output named them: no check has cause to write there.
    pub refused_sealed: Vec<String>,
    /// What its parser left unread that looked like diagnostics, when that was much.
    pub unread: Option<String>,
}

/// The line that opens a check's section of the log, and its command.
fn header(check: &CheckSettings) -> String {
    format!(
        "==> refine-loop: check \"{}\" · category {} · parser {} · cwd {} <==\n$ {}",
        check.name,
        check.category,
        check.parser,
        if check.cwd_relative.is_empty() {
            "."
        } else {
            &check.cwd_relative
        },
        check.run
    )
}

/// Runs `check`, appending its section to `log`; confined by `confiner` when given (a run that
/// may run what a delegate planted).
pub fn run_check<W: Write>(
    settings: &Settings,
    check: &CheckSettings,
    log: &mut W,
    cancel: &Cancel,
    (tracked, confiner): (
        Option<&dyn super::tracked::TrackedList>,
        Option<&crate::confine::Confiner>,
    ),
) -> Result<CheckResult, GateError> {
    let log_error = |source| GateError::Log {
        path: settings.state_dir.join(super::OUTPUT_FILE),
        source,
    };
    writeln!(log, "{}", header(check)).map_err(log_error)?;

    let parser = settings.parsers.get(&check.parser).ok_or_else(|| {
        let missing = format!("parser \"{}\" is not loaded", check.parser);
        lost(check, std::io::Error::other(missing))
    })?;
    let context = ParseContext {
        target: settings.target.clone(),
        cwd_relative: check.cwd_relative.clone(),
        sample: false,
    };
    let mut findings = Findings::default();
    let mut session = crate::parse::Annotated::open(parser, &context);
    let mut unread = crate::parse::Unread::default();
    let mut assembler = LineAssembler::default();
    let mut bounded = BoundedLog::new(log, settings.gate.log_limit);

    let private = settings.private_variables();
    let raw = parser.reads_documents();
    let guard =
        super::tracked::TrackedGuard::before(&settings.target, &settings.state_dir, tracked);
    let confinement =
        confiner.map(|confiner| confined::Confinement::prepare(confiner, &[], &check.env));
    // Confined, it has a temp folder of its own: what a delegate left in the run's is not read.
    let env: Vec<(String, String)> = match &confinement {
        Some(Ok(confinement)) => check
            .env
            .iter()
            .cloned()
            .chain(confinement.environment())
            .collect(),
        _ => check.env.clone(),
    };
    let spec = process_spec(settings, check, &env, &private);
    let mut refusals = crate::confine::Refusals::default();
    let mut on_output = |chunk: &[u8]| {
        bounded.write(chunk)?;
        if confiner.is_some() {
            refusals.push(chunk);
        }
        if raw {
            session.bytes(chunk, &mut findings);
        } else {
            assembler.push(chunk, &mut |line| {
                let outcome = session.line(line, &mut findings);
                unread.observe(line, outcome);
            });
        }
        Ok(())
    };
    let ran = match confinement {
        None => run_in_group(spec, cancel, &mut on_output),
        Some(Ok(confinement)) => confined::run(spec, Some(confinement), cancel, &mut on_output),
        Some(Err(error)) => Err(ProcessError::Spawn(std::io::Error::other(format!(
            "it could not be confined, so it was not started: {error}"
        )))),
    };
    assembler.finish(&mut |line| {
        let outcome = session.line(line, &mut findings);
        unread.observe(line, outcome);
    });
    session.finish(&mut findings);
    let unread = (!raw)
        .then(|| unread.note(parser.name(), &findings))
        .flatten();
    let own_files = drop_own_files(settings, &mut findings);
    // Before anything can return early: what the check wrote is put back whatever follows.
    let wrote = guard.map(|guard| guard.after(tracked)).unwrap_or_default();
    if let Some(framing) = assembler.framing().framing {
        tracing::info!(check = %check.name, ?framing, "CI framing stripped from the output");
    }
    let output = bounded.finish().map_err(log_error)?;
    let refused_sealed = confiner
        .map(|confiner| refusals.sealed(confiner, &check.cwd))
        .unwrap_or_default();

    let (end, spawn_error) = match ran {
        Ok(end) => (end, None),
        Err(ProcessError::Spawn(error)) => (ProcessEnd::default(), Some(error.to_string())),
        Err(ProcessError::Output(source)) => return Err(log_error(source)),
        Err(ProcessError::Supervise(source)) => return Err(lost(check, source)),
    };
    writeln!(
        log,
        "<== check \"{}\": {} <==",
        check.name,
        describe_end(&end, spawn_error.as_deref(), check.timeout)
    )
    .map_err(log_error)?;
    Ok(CheckResult {
        check: check.clone(),
        end,
        spawn_error,
        findings,
        output,
        lines_cut: assembler.lines_cut(),
        own_files,
        wrote,
        refused_sealed,
        unread,
    })
}

/// Leaves out the findings in the state dir (the loop's reports and records, which a tool that
/// reads every file of the project finds, like `prettier --check .`); returns how many of them
/// were errors.
fn drop_own_files(settings: &Settings, findings: &mut Findings) -> u64 {
    let Ok(state) = settings.state_dir.strip_prefix(&settings.target) else {
        return 0;
    };
    let Some(state) = state.to_str().filter(|s| !s.is_empty()) else {
        return 0;
    };
    let prefix = format!("{state}/");
    let own = |d: &crate::model::Diagnostic| {
        d.file
            .as_deref()
            .is_some_and(|file| file.trim_start_matches("./").starts_with(&prefix))
    };
    let errors = (findings.diagnostics().iter())
        .filter(|d| own(d) && d.severity == crate::model::Severity::Error)
        .count() as u64;
    let dropped = findings.remove_where(own);
    if dropped > 0 {
        tracing::info!(dropped, "findings in refine-loop's own state dir left out");
    }
    errors
}

/// How `check`'s process runs: in its folder, with its environment but the private variables.
fn process_spec<'a>(
    settings: &Settings,
    check: &'a CheckSettings,
    env: &'a [(String, String)],
    private: &'a [String],
) -> ProcessSpec<'a> {
    ProcessSpec {
        shell_command: &check.run,
        cwd: &check.cwd,
        env,
        env_remove: private,
        timeout: check.timeout,
        kill_grace: settings.gate.kill_grace,
        idle_timeout: None,
        stdin: None,
        launcher: &[],
        stop: None,
    }
}

/// The loop lost control of `check`'s process (or could not run it at all).
fn lost(check: &CheckSettings, source: std::io::Error) -> GateError {
    GateError::Supervise {
        check: check.name.clone(),
        source,
    }
}
