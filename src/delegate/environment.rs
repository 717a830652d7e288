//! The variables a command delegate runs with: its own, then the `REFINE_LOOP_*` ones naming
//! its work and its files.

use std::path::Path;

use super::{Assignment, DelegateFiles, DelegateSpec};

/// The `REFINE_LOOP_*` variables a command delegate gets, after its own.
pub(super) fn of(
    spec: &DelegateSpec,
    assignment: &Assignment<'_>,
    files: &DelegateFiles,
) -> Vec<(String, String)> {
    let path = |p: &Path| p.to_string_lossy().into_owned();
    let ours = [
        ("REFINE_LOOP_CATEGORY", assignment.category.to_string()),
        ("REFINE_LOOP_CYCLE", assignment.cycle.to_string()),
        ("REFINE_LOOP_SCOPE", assignment.scope.env_value()),
        ("REFINE_LOOP_PROMPT_FILE", path(&files.prompt)),
        ("REFINE_LOOP_FINDINGS_FILE", path(&files.findings)),
        ("REFINE_LOOP_REPORT_FILE", path(&files.report)),
        ("REFINE_LOOP_VERDICT_FILE", path(&files.verdict)),
        ("REFINE_LOOP_STATE_DIR", path(assignment.state_dir)),
    ];
    let mut env = spec.env.clone();
    env.extend(ours.map(|(name, value)| (name.to_string(), value)));
    env
}
