//! What a cycle leaves on record beside the gate's files: each attempt's delegate report, and
//! the lines of the final report's scope section.

use std::path::Path;

use super::{Attempt, CycleNumber};
use crate::config::Settings;
use crate::report::{DelegateReport, delegate_report};
use crate::state::{self, StateError};

/// Writes `attempt`'s report to `path`.
pub fn write_delegate_report(
    path: &Path,
    cycle: u32,
    attempt: &Attempt,
    settings: &Settings,
) -> Result<(), StateError> {
    let delegate = &settings.delegates[attempt.delegate];
    let text = delegate_report(&DelegateReport {
        cycle,
        category: &attempt.category,
        delegate: &delegate.describe(),
        timeout: delegate.timeout,
        run: &attempt.run,
        changes: &attempt.changes,
        incidents: &attempt.incidents,
        kept: attempt.kept,
        rejected_because: &attempt.rejected_because,
    });
    state::write_atomic(path, text.as_bytes())
}

/// The lines of the final report's scope section for an attempt's changes outside the scope.
pub fn scope_violations(attempt: &Attempt, cycle: CycleNumber, settings: &Settings) -> Vec<String> {
    attempt
        .incidents
        .iter()
        .filter(|incident| matches!(incident, crate::workspace::Incident::OutOfScope { .. }))
        .map(|incident| {
            format!(
                "cycle {}, `{}` on {}: {}",
                cycle.index,
                settings.delegates[attempt.delegate].describe(),
                attempt.category,
                incident.describe()
            )
        })
        .collect()
}
