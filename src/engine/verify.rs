//! Verification: the gate run after changes, judged by the accept rule.

use super::{RunError, reasons_to_reject};
use crate::cancel::Cancel;
use crate::config::Settings;
use crate::gate::{self, Flaky, SUMMARY_FILE};
use crate::model::{Diagnostic, GateSummary};
use crate::state;
use crate::workspace::Incident;

/// A gate run after changes, and what the accept rule says of it.
#[derive(Debug)]
pub struct Verified {
    pub run: gate::GateRun,
    pub reasons: Vec<String>,
    /// What the run changed that it must not (put back already): held against the change.
    pub incidents: Vec<Incident>,
}

impl Verified {
    /// The changes may stay: nothing got worse and the gate ran to its end.
    pub fn keeps(&self) -> bool {
        self.reasons.is_empty() && self.incidents.is_empty() && !self.run.cancelled
    }
}

/// Runs the gate against the changes made since `kept`.
pub fn verify(
    settings: &Settings,
    flaky: &Flaky,
    cycle: u32,
    cancel: &Cancel,
    kept: &GateSummary,
) -> Result<Verified, RunError> {
    let run = measure(settings, flaky, cycle, cancel)?;
    let reasons = reasons_to_reject(kept, &run.summary);
    Ok(Verified {
        run,
        reasons,
        incidents: Vec::new(),
    })
}

/// Runs the gate for `cycle` and writes its summary.
pub fn measure(
    settings: &Settings,
    flaky: &Flaky,
    cycle: u32,
    cancel: &Cancel,
) -> Result<gate::GateRun, RunError> {
    let dir = state::cycle_dir(&settings.state_dir, cycle)?;
    let run = gate::run_gate(settings, flaky, cycle, &dir, cancel)?;
    state::write_json(&dir.join(SUMMARY_FILE), &run.summary)?;
    Ok(run)
}

/// Every kept diagnostic of a gate run, with its category settled; not those the baseline
/// excused as flaky.
pub fn diagnostics_of(run: &gate::GateRun) -> Vec<Diagnostic> {
    run.checks
        .iter()
        .flat_map(|check| {
            let name = &check.check.name;
            check
                .findings
                .diagnostics()
                .iter()
                .filter(move |d| !run.flaky.excuses(name, d))
                .map(|d| {
                    let mut d = d.clone();
                    d.category = d.category.or_else(|| Some(check.check.category.clone()));
                    d
                })
        })
        .collect()
}
