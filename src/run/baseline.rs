//! The baseline (cycle 0), made trustworthy before the first cycle:
//! - a check whose tool is missing is an infrastructure failure, never findings: its `install`
//!   runs once and the gate runs again; a tool still missing (or without `install`) ends the
//!   run with ERROR naming it;
//! - every failing check runs again `baseline_confirm_runs` times; one whose result changes is
//!   flaky, and its failures are pre-existing, never counted against a delegate;
//! - a failing test of a check with `rerun` runs alone; one that passes alone is not counted;
//! - the load average and the CPUs are recorded.
//!
//! All of it goes to `run.json` and the final report.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::RunError;
use super::verify::measure;
use crate::cancel::Cancel;
use crate::config::{CheckSettings, Settings};
use crate::gate::{self, CheckResult, Flaky, GateRun, HeadTail, ProcessSpec, SUMMARY_FILE};
use crate::model::{CheckStatus, Severity};
use crate::secrets::RedactingWriter;
use crate::state;

/// The baseline's facts, in the state dir.
pub const RUN_FILE: &str = "run.json";
/// Where the confirming runs and the single tests write their output, in `cycle-0/`.
const CONFIRM_OUTPUT: &str = "confirm-output.txt";
/// Failing tests of one check run alone at most.
const MAX_RERUNS: usize = 20;
/// Bytes of an install command's output kept.
const INSTALL_OUTPUT: usize = 4 * 1024;

/// What the baseline found beside the gate's findings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BaselineNotes {
    pub format_version: u32,
    pub recorded_at: String,
    /// 1, 5 and 15 minutes, from `/proc/loadavg`.
    pub load_average: Option<[f64; 3]>,
    pub cpus: usize,
    pub confirm_runs: u32,
    /// The run's scope; empty for the whole target.
    pub scope: Vec<String>,
    pub installed: Vec<Installed>,
    /// Checks whose result changed between runs.
    pub flaky_checks: Vec<String>,
    /// Tests that failed in their suite and passed alone: (check, test).
    pub flaky_tests: Vec<(String, String)>,
}

/// A missing tool's install, as it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Installed {
    pub check: String,
    pub tool: String,
    pub command: String,
    pub exit_code: Option<i32>,
    /// The end of its output (redacted).
    pub output: String,
}

/// The baseline run and its notes.
#[derive(Debug)]
pub struct Baseline {
    pub run: GateRun,
    pub notes: BaselineNotes,
}

/// Runs the baseline gate with its confirmations; see the module's text.
pub fn measure_baseline(settings: &Settings, cancel: &Cancel) -> Result<Baseline, RunError> {
    let mut notes = BaselineNotes {
        format_version: crate::model::FORMAT_VERSION,
        recorded_at: super::ledger::now_iso8601(),
        load_average: load_average(),
        cpus: std::thread::available_parallelism().map_or(1, usize::from),
        confirm_runs: settings.gate.confirm_runs,
        scope: settings.run.scope.patterns().to_vec(),
        ..BaselineNotes::default()
    };
    let mut run = measure(settings, 0, cancel)?;
    let missing = missing_tools(&run);
    if !missing.is_empty() && !run.cancelled {
        for (index, tool) in &missing {
            let check = &run.checks[*index].check;
            let Some(install) = &check.install else {
                return Err(RunError::MissingTool {
                    check: check.name.clone(),
                    tool: tool.clone(),
                    install: None,
                });
            };
            notes
                .installed
                .push(run_install(settings, check, install, tool, cancel)?);
        }
        run = measure(settings, 0, cancel)?;
        if let Some((index, tool)) = missing_tools(&run).into_iter().next() {
            let check = &run.checks[index].check.name;
            let installed = notes.installed.iter().find(|i| i.check == *check);
            return Err(RunError::MissingTool {
                check: check.clone(),
                tool,
                install: installed.cloned().map(Box::new),
            });
        }
    }
    let flaky = if run.cancelled {
        Flaky::default()
    } else {
        confirm(settings, &run, cancel)?
    };
    notes.flaky_checks = flaky.checks.iter().cloned().collect();
    notes.flaky_tests = flaky.tests.iter().cloned().collect();
    if !flaky.is_empty() {
        let cancelled = run.summary.cancelled;
        let not_run = std::mem::take(&mut run.summary.not_run);
        run.summary = gate::summarize(0, &run.checks, Some(&flaky));
        run.summary.cancelled = cancelled;
        run.summary.not_run = not_run;
        let dir = state::cycle_dir(&settings.state_dir, 0)?;
        state::write_json(&dir.join(SUMMARY_FILE), &run.summary)?;
    }
    let _ = settings.gate.flaky.set(flaky);
    state::write_json(&settings.state_dir.join(RUN_FILE), &notes)?;
    Ok(Baseline { run, notes })
}

/// The checks whose tool is missing, with the tool's name: the command was not found (exit
/// 127, or it could not start), or the output matches the check's `missing_tool`.
fn missing_tools(run: &GateRun) -> Vec<(usize, String)> {
    run.checks
        .iter()
        .enumerate()
        .filter_map(|(index, result)| missing_tool(result).map(|tool| (index, tool)))
        .collect()
}

fn missing_tool(result: &CheckResult) -> Option<String> {
    let first_word = || {
        result
            .check
            .run
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_string()
    };
    let text = String::from_utf8_lossy(&result.output.tail()).into_owned();
    if let Some(pattern) = &result.check.missing_tool
        && let Some(found) = pattern.captures(&text)
    {
        return Some(
            found
                .get(1)
                .map_or_else(first_word, |tool| tool.as_str().to_string()),
        );
    }
    if result.spawn_error.is_some() || result.end.exit_code == Some(127) {
        // sh: 1: ruff: not found / bash: ruff: command not found
        let named = text.lines().rev().find_map(|line| {
            let before = line
                .strip_suffix(": not found")
                .or_else(|| line.strip_suffix(": command not found"))?;
            before.rsplit(": ").next().map(str::to_string)
        });
        return Some(named.unwrap_or_else(first_word));
    }
    None
}

/// Runs a check's `install` once, in the check's folder, with its environment and deadline.
fn run_install(
    settings: &Settings,
    check: &CheckSettings,
    install: &str,
    tool: &str,
    cancel: &Cancel,
) -> Result<Installed, RunError> {
    tracing::warn!(check = %check.name, tool, install, "the check's tool is missing: installing it");
    let private = settings.private_variables();
    let spec = ProcessSpec {
        shell_command: install,
        cwd: &check.cwd,
        env: &check.env,
        env_remove: &private,
        timeout: check.timeout,
        kill_grace: settings.gate.kill_grace,
        idle_timeout: None,
        stdin: None,
    };
    let mut output = HeadTail::default();
    let end = match gate::run_in_group(spec, cancel, &mut |chunk| {
        output.push(chunk);
        Ok(())
    }) {
        Ok(end) => end,
        Err(gate::ProcessError::Spawn(_)) => gate::ProcessEnd::not_started(),
        Err(gate::ProcessError::Output(source) | gate::ProcessError::Supervise(source)) => {
            return Err(RunError::Gate(gate::GateError::Supervise {
                check: format!("{} (install)", check.name),
                source,
            }));
        }
    };
    let tail = output.tail();
    let start = tail.len().saturating_sub(INSTALL_OUTPUT);
    let text = String::from_utf8_lossy(&crate::secrets::redacted(&tail[start..])).into_owned();
    Ok(Installed {
        check: check.name.clone(),
        tool: tool.to_string(),
        command: install.to_string(),
        exit_code: end.exit_code,
        output: text,
    })
}

/// Runs each failing check again, and each failing test of a check with `rerun` alone.
fn confirm(settings: &Settings, run: &GateRun, cancel: &Cancel) -> Result<Flaky, RunError> {
    let mut flaky = Flaky::default();
    let failing: Vec<&CheckResult> = run
        .checks
        .iter()
        .zip(&run.summary.checks)
        .filter(|(_, record)| record.status == CheckStatus::Failed)
        .map(|(result, _)| result)
        .collect();
    if failing.is_empty() {
        return Ok(flaky);
    }
    let path = state::cycle_dir(&settings.state_dir, 0)?.join(CONFIRM_OUTPUT);
    let log_error = |source| gate::GateError::Log {
        path: path.clone(),
        source,
    };
    let redactor = crate::secrets::process_redactor().ok_or_else(|| {
        log_error(std::io::Error::other(
            "the secret patterns do not compile: nothing is written unredacted",
        ))
    })?;
    let file = BufWriter::new(File::create(&path).map_err(log_error)?);
    let mut log = RedactingWriter::new(redactor, file);
    for first in failing {
        let seen = outcome(first);
        for _ in 0..settings.gate.confirm_runs {
            if cancel.is_requested() {
                break;
            }
            let again = gate::run_check(settings, &first.check, &mut log, cancel)?;
            if outcome(&again) != seen {
                tracing::warn!(check = %first.check.name, "flaky at the baseline");
                flaky.checks.insert(first.check.name.clone());
                break;
            }
        }
        if flaky.checks.contains(&first.check.name) {
            continue;
        }
        if let Some(rerun) = &first.check.rerun {
            for test in failing_tests(first) {
                if cancel.is_requested() {
                    break;
                }
                if passes_alone(settings, &first.check, rerun, &test, &mut log, cancel)? {
                    flaky.tests.insert((first.check.name.clone(), test));
                }
            }
        }
    }
    log.finish()
        .and_then(|mut file| file.flush())
        .map_err(log_error)?;
    Ok(flaky)
}

/// What a check's run came to: its status and the fingerprints of its errors.
fn outcome(result: &CheckResult) -> (CheckStatus, BTreeSet<String>) {
    let status = gate::summarize(0, std::slice::from_ref(result), None).checks[0].status;
    let errors = result
        .findings
        .diagnostics()
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.fingerprint.clone())
        .collect();
    (status, errors)
}

/// The ids of a check's failing tests (the `code` of its errors), at most [`MAX_RERUNS`].
fn failing_tests(result: &CheckResult) -> Vec<String> {
    let mut tests: Vec<String> = Vec::new();
    for diagnostic in result.findings.diagnostics() {
        if diagnostic.severity == Severity::Error
            && let Some(code) = &diagnostic.code
            && !tests.contains(code)
        {
            tests.push(code.clone());
        }
    }
    tests.truncate(MAX_RERUNS);
    tests
}

/// Runs `rerun` with `{test}` (shell-quoted) for one test; whether it passed.
fn passes_alone(
    settings: &Settings,
    check: &CheckSettings,
    rerun: &str,
    test: &str,
    log: &mut dyn Write,
    cancel: &Cancel,
) -> Result<bool, RunError> {
    let command = rerun.replace("{test}", &shell_quote(test));
    let log_error = |source| {
        RunError::Gate(gate::GateError::Log {
            path: settings.state_dir.join(CONFIRM_OUTPUT),
            source,
        })
    };
    writeln!(
        log,
        "==> refine-loop: {} alone <==\n$ {command}",
        check.name
    )
    .map_err(log_error)?;
    let private = settings.private_variables();
    let spec = ProcessSpec {
        shell_command: &command,
        cwd: &check.cwd,
        env: &check.env,
        env_remove: &private,
        timeout: check.timeout,
        kill_grace: settings.gate.kill_grace,
        idle_timeout: None,
        stdin: None,
    };
    let end = gate::run_in_group(spec, cancel, &mut |chunk| log.write_all(chunk));
    let passed = match end {
        Ok(end) => end
            .exit_code
            .is_some_and(|code| check.success_codes.contains(&code)),
        Err(_) => false,
    };
    writeln!(
        log,
        "<== {test}: {} alone <==",
        if passed { "passed" } else { "failed" }
    )
    .map_err(log_error)?;
    Ok(passed)
}

/// `text` as one shell word.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The 1, 5 and 15 minute load averages.
fn load_average() -> Option<[f64; 3]> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut fields = text.split_whitespace().map(str::parse::<f64>);
    Some([
        fields.next()?.ok()?,
        fields.next()?.ok()?,
        fields.next()?.ok()?,
    ])
}

/// The final report's section on the baseline.
pub fn report_section(notes: &BaselineNotes) -> String {
    let mut text = String::from("\n## The baseline\n\n");
    let load = notes
        .load_average
        .map_or("unknown".to_string(), |[one, five, fifteen]| {
            format!("{one:.2} / {five:.2} / {fifteen:.2} (1 / 5 / 15 min)")
        });
    let _ = writeln!(text, "- load average: {load} on {} CPUs", notes.cpus);
    let _ = writeln!(
        text,
        "- scope: {}",
        if notes.scope.is_empty() {
            "the whole target".to_string()
        } else {
            notes.scope.join(", ")
        }
    );
    for installed in &notes.installed {
        let _ = writeln!(
            text,
            "- installed `{}` for check `{}`: `{}` ({})",
            installed.tool,
            installed.check,
            installed.command,
            installed
                .exit_code
                .map_or("did not exit".to_string(), |code| format!(
                    "exit code {code}"
                ))
        );
    }
    let _ = writeln!(
        text,
        "- failing checks run again: {} time(s) each",
        notes.confirm_runs
    );
    for check in &notes.flaky_checks {
        let _ = writeln!(
            text,
            "- flaky: check `{check}` changed its result between runs; its failures are pre-existing and are not counted against any delegate"
        );
    }
    for (check, test) in &notes.flaky_tests {
        let _ = writeln!(
            text,
            "- flaky: `{test}` ({check}) failed in its suite and passed alone; not counted"
        );
    }
    text
}

/// The notes a run left in `state_dir`, if it left any.
pub fn read_notes(state_dir: &Path) -> Option<BaselineNotes> {
    let bytes = std::fs::read(state_dir.join(RUN_FILE)).ok()?;
    serde_json::from_slice(&bytes).ok()
}
