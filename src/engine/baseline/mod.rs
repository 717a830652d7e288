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

use std::fs::File;
use std::io::{BufWriter, Write};

use super::RunError;
use super::verify::measure;
use crate::cancel::Cancel;
use crate::config::{CheckSettings, Settings};
use crate::confine::Confiner;
use crate::gate::{self, CheckResult, Excused, Flaky, GateRun, SUMMARY_FILE};
use crate::model::{
    BaselineNotes, CheckStatus, ConfinementNote, FlakyTestNote, Installed, Severity,
};
use crate::process::{self, HeadTail, ProcessSpec};
use crate::secrets::RedactingWriter;
use crate::state;

/// The baseline's facts, in the state dir.
pub use crate::state::RUN_FILE;
/// Where the confirming runs and the single tests write their output, in `cycle-0/`.
const CONFIRM_OUTPUT: &str = "confirm-output.txt";
/// Failing tests of one check run alone at most.
const MAX_RERUNS: usize = 20;
/// Bytes of an install command's output kept.
const INSTALL_OUTPUT: usize = 4 * 1024;

/// The baseline run and its notes.
#[derive(Debug)]
pub struct Baseline {
    pub run: GateRun,
    pub notes: BaselineNotes,
}

/// Runs the baseline gate with its confirmations (`tracked`: the workspace, for its guard;
/// `confiner`: its confinement, when the tree holds an earlier run's uncommitted work).
pub fn measure_baseline(
    settings: &Settings,
    confinement: ConfinementNote,
    cancel: &Cancel,
    (tracked, confiner): (Option<&dyn gate::TrackedList>, Option<&Confiner>),
) -> Result<Baseline, RunError> {
    let mut notes = BaselineNotes {
        format_version: state::format::RUN,
        recorded_at: crate::clock::now_iso8601(),
        load_average: load_average(),
        cpus: std::thread::available_parallelism().map_or(1, usize::from),
        confirm_runs: settings.gate.confirm_runs,
        scope: settings.run.scope.patterns().to_vec(),
        confinement: Some(confinement),
        ..BaselineNotes::default()
    };
    let mut run = measure(settings, &Flaky::default(), 0, cancel, (tracked, confiner))?;
    super::contain::refuse_gate_writes(&run)?;
    if !missing_tools(&run).is_empty() && !run.cancelled {
        run = install_missing(settings, (&run, &mut notes), cancel, confiner)?;
        super::contain::refuse_gate_writes(&run)?;
    }
    let mut flaky = if run.cancelled {
        Flaky::default()
    } else {
        confirm(settings, &run, cancel, confiner)?
    };
    if let Some(since) = &settings.run.since
        && !run.cancelled
    {
        let split = super::new_since::preexisting_at_baseline(since, &run.checks, &flaky)?;
        flaky.preexisting = Some(split);
        if let Some(summary) = &since.base_summary {
            let dir = state::cycle_dir(&settings.state_dir, 0)?.join("new-since-base");
            std::fs::create_dir_all(&dir).map_err(|source| state::StateError {
                path: dir.clone(),
                source,
            })?;
            state::write_json(&dir.join(SUMMARY_FILE), summary)?;
        }
    }
    notes.flaky_checks = flaky.checks.keys().cloned().collect();
    notes.flaky_tests = flaky
        .tests
        .iter()
        .map(|(check, file, test)| FlakyTestNote {
            check: check.clone(),
            file: file.clone(),
            test: test.clone(),
        })
        .collect();
    if !flaky.is_empty() {
        let cancelled = run.summary.cancelled;
        let not_run = std::mem::take(&mut run.summary.not_run);
        run.summary = gate::summarize(0, &run.checks, Some(&flaky));
        run.summary.cancelled = cancelled;
        run.summary.not_run = not_run;
        let dir = state::cycle_dir(&settings.state_dir, 0)?;
        state::write_json(&dir.join(SUMMARY_FILE), &run.summary)?;
    }
    run.flaky = flaky;
    if let Some(since) = &settings.run.since {
        notes.new_since = Some(super::new_since::note_of(since, &run.summary));
    } else {
        notes
            .new_since_skipped
            .clone_from(&settings.run.new_since_skipped);
    }
    state::write_json(&settings.state_dir.join(RUN_FILE), &notes)?;
    Ok(Baseline { run, notes })
}

/// Runs the `install` of each check whose tool is missing (once per command), then the gate
/// again; a tool still missing, or a check without `install`, is an error naming it. What was
/// tried is on record (`run.json`) whatever comes of it.
fn install_missing(
    settings: &Settings,
    (run, notes): (&GateRun, &mut BaselineNotes),
    cancel: &Cancel,
    confiner: Option<&Confiner>,
) -> Result<GateRun, RunError> {
    let missing_tool = |notes: &BaselineNotes, check: &str, tool: String| {
        let installed = notes.installed.iter().find(|i| i.check == check);
        let _ = state::write_json(&settings.state_dir.join(RUN_FILE), notes);
        RunError::MissingTool {
            check: check.to_string(),
            tool,
            install: installed.cloned().map(Box::new),
        }
    };
    for (index, tool) in &missing_tools(run) {
        let check = &run.checks[*index].check;
        let Some(install) = &check.install else {
            return Err(missing_tool(notes, &check.name, tool.clone()));
        };
        // Checks sharing one install run it once.
        let earlier = notes
            .installed
            .iter()
            .find(|i| i.command == *install)
            .cloned();
        let installed = match earlier {
            Some(earlier) => Installed {
                check: check.name.clone(),
                tool: tool.clone(),
                ..earlier
            },
            None => run_install(settings, check, install, tool, cancel)?,
        };
        notes.installed.push(installed);
    }
    // The output that showed the tool missing stays beside the new one.
    let dir = state::cycle_dir(&settings.state_dir, 0)?;
    let _ = std::fs::rename(
        dir.join(gate::OUTPUT_FILE),
        dir.join("gate-output-before-install.txt"),
    );
    let run = measure(settings, &Flaky::default(), 0, cancel, (None, confiner))?;
    if let Some((index, tool)) = missing_tools(&run).into_iter().next() {
        return Err(missing_tool(notes, &run.checks[index].check.name, tool));
    }
    Ok(run)
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
    // A check that passed, or failed with findings, ran its tool, whatever it printed.
    let record = &gate::summarize(0, std::slice::from_ref(result), None).checks[0];
    if record.status == CheckStatus::Passed || result.findings.counts.error > 0 {
        return None;
    }
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
        launcher: &[],
        stop: None,
    };
    let mut output = HeadTail::default();
    let end = match process::run_in_group(spec, cancel, &mut |chunk| {
        output.push(chunk);
        Ok(())
    }) {
        Ok(end) => end,
        Err(process::ProcessError::Spawn(_)) => process::ProcessEnd::default(),
        Err(process::ProcessError::Output(source) | process::ProcessError::Supervise(source)) => {
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
fn confirm(
    settings: &Settings,
    run: &GateRun,
    cancel: &Cancel,
    confiner: Option<&Confiner>,
) -> Result<Flaky, RunError> {
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
        // The failures seen while the check failed: what is excused if it turns out flaky.
        let mut excused = Excused::default();
        excuse(&mut excused, first);
        let mut flipped = false;
        for _ in 0..settings.gate.confirm_runs {
            if cancel.is_requested() {
                break;
            }
            let again =
                gate::run_check(settings, &first.check, &mut log, cancel, (None, confiner))?;
            match status_of(&again) {
                // Stopped (cancel, deadline) or not run: it says nothing about flakiness.
                CheckStatus::Infra => break,
                CheckStatus::Passed => {
                    flipped = true;
                    break;
                }
                CheckStatus::Failed => excuse(&mut excused, &again),
            }
        }
        if flipped {
            tracing::warn!(check = %first.check.name, "flaky at the baseline");
            flaky.checks.insert(first.check.name.clone(), excused);
            continue;
        }
        if let Some(rerun) = &first.check.rerun {
            for (file, test) in failing_tests(first) {
                if cancel.is_requested() {
                    break;
                }
                let alone = (rerun.as_str(), test.as_str());
                if passes_alone(settings, &first.check, alone, &mut log, (cancel, confiner))? {
                    flaky.tests.insert((first.check.name.clone(), file, test));
                }
            }
        }
    }
    log.finish()
        .and_then(|mut file| file.flush())
        .map_err(log_error)?;
    Ok(flaky)
}

fn status_of(result: &CheckResult) -> CheckStatus {
    gate::summarize(0, std::slice::from_ref(result), None).checks[0].status
}

/// Adds a failing run's failures to what is excused: its errors, and an unparsed failure.
fn excuse(excused: &mut Excused, result: &CheckResult) {
    let record = &gate::summarize(0, std::slice::from_ref(result), None).checks[0];
    excused.unparsed |= record.unparsed;
    excused.fingerprints.extend(
        result
            .findings
            .diagnostics()
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .map(|d| d.fingerprint.clone()),
    );
}

/// A check's failing tests, as (file, test id) from its errors' `code`, at most [`MAX_RERUNS`].
fn failing_tests(result: &CheckResult) -> Vec<(Option<String>, String)> {
    let mut tests: Vec<(Option<String>, String)> = Vec::new();
    for diagnostic in result.findings.diagnostics() {
        if diagnostic.severity == Severity::Error
            && let Some(code) = &diagnostic.code
            && !tests.iter().any(|(_, seen)| seen == code)
        {
            tests.push((diagnostic.file.clone(), code.clone()));
        }
    }
    tests.truncate(MAX_RERUNS);
    tests
}

/// Runs `rerun` with `{test}` (shell-quoted) for one test, through the check's parser. It
/// passed alone only when the command succeeded, the parser counted at least one passing test,
/// and no error names the test: a filter that matched nothing proves nothing.
fn passes_alone(
    settings: &Settings,
    check: &CheckSettings,
    (rerun, test): (&str, &str),
    log: &mut dyn Write,
    (cancel, confiner): (&Cancel, Option<&Confiner>),
) -> Result<bool, RunError> {
    let alone = CheckSettings {
        run: rerun.replace("{test}", &shell_quote(test)),
        ..check.clone()
    };
    let mut log = log;
    let result = gate::run_check(settings, &alone, &mut log, cancel, (None, confiner))?;
    let ran = result
        .findings
        .tests
        .is_some_and(|counts| counts.passed >= 1);
    let failed = result
        .findings
        .diagnostics()
        .iter()
        .any(|d| d.severity == Severity::Error && d.code.as_deref() == Some(test));
    let passed = status_of(&result) == CheckStatus::Passed && ran && !failed;
    writeln!(
        log,
        "<== {test}: {} alone <==",
        if passed {
            "passed"
        } else {
            "not shown to pass"
        }
    )
    .map_err(|source| {
        RunError::Gate(gate::GateError::Log {
            path: settings.state_dir.join(CONFIRM_OUTPUT),
            source,
        })
    })?;
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
