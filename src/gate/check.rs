//! Runs one check: its section of the log, its process, and its parse, all in one stream.

use std::io::Write;
use std::time::Duration;

use super::GateError;
use super::capture::{BoundedLog, HeadTail};
use super::process::{ProcessEnd, ProcessError, ProcessSpec, StopReason, run_in_group};
use crate::cancel::Cancel;
use crate::config::{CheckSettings, Settings};
use crate::parse::{Findings, LineAssembler, ParseContext};

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
}

/// Runs `check`, appending its section to `log`.
pub fn run_check<W: Write>(
    settings: &Settings,
    check: &CheckSettings,
    log: &mut W,
    cancel: &Cancel,
) -> Result<CheckResult, GateError> {
    let log_error = |source| GateError::Log {
        path: settings.state_dir.join(super::OUTPUT_FILE),
        source,
    };
    writeln!(
        log,
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
    .map_err(log_error)?;

    let parser = settings
        .parsers
        .get(&check.parser)
        .ok_or_else(|| GateError::Supervise {
            check: check.name.clone(),
            source: std::io::Error::other(format!("parser \"{}\" is not loaded", check.parser)),
        })?;
    let context = ParseContext {
        target: settings.target.clone(),
        cwd_relative: check.cwd_relative.clone(),
    };
    let mut findings = Findings::default();
    let mut session = parser.session(&context);
    let mut assembler = LineAssembler::default();
    let mut bounded = BoundedLog::new(log, settings.gate.log_limit);

    let spec = ProcessSpec {
        shell_command: &check.run,
        cwd: &check.cwd,
        env: &check.env,
        env_remove: &settings.private_variables(),
        timeout: check.timeout,
        kill_grace: settings.gate.kill_grace,
        idle_timeout: None,
        stdin: None,
    };
    let raw = parser.reads_documents();
    let ran = run_in_group(spec, cancel, &mut |chunk| {
        bounded.write(chunk)?;
        if raw {
            session.bytes(chunk, &mut findings);
        } else {
            assembler.push(chunk, &mut |line| {
                session.line(line, &mut findings);
            });
        }
        Ok(())
    });
    assembler.finish(&mut |line| {
        session.line(line, &mut findings);
    });
    session.finish(&mut findings);
    let output = bounded.finish().map_err(log_error)?;

    let (end, spawn_error) = match ran {
        Ok(end) => (end, None),
        Err(ProcessError::Spawn(error)) => (ProcessEnd::not_started(), Some(error.to_string())),
        Err(ProcessError::Output(source)) => return Err(log_error(source)),
        Err(ProcessError::Supervise(source)) => {
            return Err(GateError::Supervise {
                check: check.name.clone(),
                source,
            });
        }
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
    })
}

/// One line saying how a check's process ended.
pub fn describe_end(end: &ProcessEnd, spawn_error: Option<&str>, timeout: Duration) -> String {
    if let Some(error) = spawn_error {
        return format!("could not start: {error}");
    }
    let how = match (end.exit_code, end.signal) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => "ended".to_string(),
    };
    let why = match end.stopped {
        Some(StopReason::Deadline) => {
            format!(" (stopped at its deadline of {})", humanize(timeout))
        }
        Some(StopReason::Cancelled) => " (cancelled)".to_string(),
        Some(StopReason::LeftoverProcesses) => {
            " (processes it left running were stopped)".to_string()
        }
        Some(StopReason::Idle) => " (stopped: it printed nothing for its idle timeout)".to_string(),
        None => String::new(),
    };
    let abandoned = if end.output_abandoned {
        "; output still held open by a process outside its group was not read to the end"
    } else {
        ""
    };
    format!(
        "{how} after {:.2}s{why}{abandoned}",
        end.duration.as_secs_f64()
    )
}

/// A duration in the config's own notation: `90s`, `10m`, `1h30m`, `500ms`.
pub fn humanize(duration: Duration) -> String {
    let millis = duration.as_millis();
    if !millis.is_multiple_of(1000) {
        return format!("{millis}ms");
    }
    let seconds = duration.as_secs();
    let (hours, minutes, seconds) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    let mut out = String::new();
    for (value, unit) in [(hours, "h"), (minutes, "m"), (seconds, "s")] {
        if value > 0 {
            out.push_str(&format!("{value}{unit}"));
        }
    }
    if out.is_empty() {
        "0s".to_string()
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn humanize_durations() {
        let table = [
            (Duration::from_secs(90), "1m30s"),
            (Duration::from_secs(600), "10m"),
            (Duration::from_secs(5400), "1h30m"),
            (Duration::from_millis(1500), "1500ms"),
            (Duration::ZERO, "0s"),
        ];
        for (duration, expected) in table {
            assert_eq!(humanize(duration), expected);
        }
    }
}
