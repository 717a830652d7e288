//! The gate runner: runs each check in its own process group, streams its output to
//! `cycle-N/gate-output.txt` and through its parser, and sums the results into a
//! [`GateSummary`](crate::model::GateSummary).

mod capture;
mod check;
mod environment;
mod summarize;
mod tracked;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

pub use capture::last_lines;
pub use check::{CheckResult, run_check};
pub use summarize::{Excused, Flaky, INFRA_CATEGORY, read_besides, summarize};
pub use tracked::TrackedList;

use crate::cancel::Cancel;
use crate::config::Settings;
use crate::model::GateSummary;
use crate::process::Interruption;
use crate::secrets::RedactingWriter;

/// The name of the raw output file in a cycle folder.
pub use crate::state::OUTPUT_FILE;
/// The name of the summary file in a cycle folder.
pub const SUMMARY_FILE: &str = "gate-summary.json";

#[derive(Debug, thiserror::Error)]
pub enum GateError {
    #[error("cannot write {}: {source}", path.display())]
    Log {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("check \"{check}\": lost control of its process: {source}")]
    Supervise {
        check: String,
        #[source]
        source: std::io::Error,
    },
}

/// One run of the whole gate.
#[derive(Debug)]
pub struct GateRun {
    pub summary: GateSummary,
    pub checks: Vec<CheckResult>,
    /// A cancel request stopped the gate before it finished.
    pub cancelled: bool,
    /// What the baseline excused when this run was summed (its findings are not counted).
    pub flaky: Flaky,
}

/// Runs every check of the gate in order, writing `cycle_dir/gate-output.txt`; what the baseline
/// found `flaky` is not counted. With a `confiner`, each check is confined as a delegate is: the
/// run may run code a delegate planted.
pub fn run_gate(
    settings: &Settings,
    flaky: &Flaky,
    (cycle, cycle_dir): (u32, &Path),
    cancel: &Cancel,
    tracked: Option<&dyn TrackedList>,
    confiner: Option<&crate::confine::Confiner>,
) -> Result<GateRun, GateError> {
    let log_path = cycle_dir.join(OUTPUT_FILE);
    let log_error = |source| GateError::Log {
        path: log_path.clone(),
        source,
    };
    let file = BufWriter::new(File::create(&log_path).map_err(log_error)?);
    // Redacted as it streams: a secret the gate prints never reaches the file.
    let redactor = crate::secrets::process_redactor().ok_or_else(|| {
        log_error(std::io::Error::other(
            "the secret patterns do not compile: nothing is written unredacted",
        ))
    })?;
    let mut log = RedactingWriter::new(redactor, file);
    let mut checks = Vec::with_capacity(settings.gate.checks.len());
    let mut cancelled = false;
    let start = tracked::GateStart::new(&settings.target, tracked);
    let tracked: Option<&dyn TrackedList> = Some(&start);
    for check in &settings.gate.checks {
        if cancel.is_requested() {
            cancelled = true;
            break;
        }
        tracing::info!(check = %check.name, category = %check.category, "running check");
        let result = run_check(settings, check, &mut log, cancel, (tracked, confiner))?;
        log.flush().map_err(log_error)?;
        cancelled |= result.end.stopped == Some(Interruption::Cancelled);
        checks.push(result);
    }
    log.finish()
        .and_then(|mut file| file.flush())
        .map_err(log_error)?;
    let mut summary = summarize(cycle, &checks, Some(flaky));
    if cancelled {
        summary.cancelled = true;
        summary.overall_result = crate::model::GateResult::Failed;
        summary.not_run = settings.gate.checks[checks.len()..]
            .iter()
            .map(|check| check.name.clone())
            .collect();
    }
    Ok(GateRun {
        summary,
        checks,
        cancelled,
        flaky: flaky.clone(),
    })
}
