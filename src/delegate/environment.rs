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
    let mut env = spec.env.clone();
    let path = |p: &Path| p.to_string_lossy().into_owned();
    env.extend([
        (
            "REFINE_LOOP_CATEGORY".to_string(),
            assignment.category.to_string(),
        ),
        (
            "REFINE_LOOP_CYCLE".to_string(),
            assignment.cycle.to_string(),
        ),
        (
            "REFINE_LOOP_SCOPE".to_string(),
            assignment.scope.env_value(),
        ),
        ("REFINE_LOOP_PROMPT_FILE".to_string(), path(&files.prompt)),
        (
            "REFINE_LOOP_FINDINGS_FILE".to_string(),
            path(&files.findings),
        ),
        ("REFINE_LOOP_REPORT_FILE".to_string(), path(&files.report)),
        ("REFINE_LOOP_VERDICT_FILE".to_string(), path(&files.verdict)),
        (
            "REFINE_LOOP_STATE_DIR".to_string(),
            path(assignment.state_dir),
        ),
    ]);
    env
}
