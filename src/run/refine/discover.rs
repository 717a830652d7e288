//! Discovery: the round's proposals, from the gate's findings (one per family) and from every
//! discover delegate whose lens is in focus (read-only: what one changes is undone).

use std::path::Path;

use crate::campaign::candidates::{self, Proposal};
use crate::cancel::Cancel;
use crate::config::Settings;
use crate::delegate::{Assignment, Role};
use crate::model::{Diagnostic, GateSummary};
use crate::run::{RunError, take_turn};
use crate::workspace::{Snapshot, Workspace};

/// Proposals from the gate's findings and from every discover delegate whose lens is in focus.
pub(super) fn discover(
    settings: &Settings,
    workspace: &mut Workspace,
    snapshot: &Snapshot,
    (kept, diagnostics): (&GateSummary, &[Diagnostic]),
    (reports_dir, cycle): (&Path, u32),
    focus: &[String],
    cancel: &Cancel,
) -> Result<(Vec<Proposal>, Vec<String>, bool), RunError> {
    // The gate's findings of the failing categories (infra is the gate's own trouble).
    let failing: Vec<Diagnostic> = diagnostics
        .iter()
        .filter(|d| {
            d.category.as_deref().is_some_and(|c| {
                c != crate::gate::INFRA_CATEGORY
                    && kept.categories.get(c).is_some_and(|s| !s.passed)
            })
        })
        .cloned()
        .collect();
    let in_scope: Vec<_> = failing
        .into_iter()
        .filter(|d| super::super::in_scope(&settings.run.scope, d))
        .collect();
    let mut proposals = candidates::from_findings(&in_scope);
    let mut rejected = Vec::new();
    let mut failed = false;
    let details: Vec<String> = kept
        .categories
        .values()
        .flat_map(|c| c.details.iter().cloned())
        .collect();
    for (index, spec) in settings.delegates.iter().enumerate() {
        let in_focus = spec.lens.as_ref().is_none_or(|lens| focus.contains(lens));
        if spec.role != Role::Discover || !in_focus || cancel.is_requested() {
            continue;
        }
        let lens = spec.lens.clone().unwrap_or_else(|| "architecture".into());
        let category = format!("discover-{lens}");
        let output = reports_dir.join(format!("{category}.candidates.jsonl"));
        let _ = std::fs::remove_file(&output);
        let mut spec = spec.clone();
        if spec.template == crate::delegate::DEFAULT_TEMPLATE {
            spec.template = lens_template(&lens).to_string();
        }
        spec.env.push((
            "REFINE_LOOP_CANDIDATES_FILE".into(),
            output.to_string_lossy().into_owned(),
        ));
        let assignment = Assignment {
            category: &category,
            cycle,
            scope: &settings.run.scope,
            diagnostics: &[],
            files: &[],
            details: &details,
            target: &settings.target,
            state_dir: &settings.state_dir,
            reports_dir,
        };
        let mut outside = std::time::Duration::ZERO;
        let attempt = take_turn(
            settings,
            workspace,
            snapshot,
            (index, &spec, &assignment),
            cancel,
            &mut outside,
        )?;
        if attempt.run.spawn_error.is_some()
            || attempt.run.end.stopped.is_some()
            || attempt.run.end.signal.is_some()
            || attempt.run.end.exit_code.is_some_and(|code| code != 0)
        {
            failed = true;
            rejected.push(format!(
                "{category}: the discover delegate failed ({}); an operational error",
                attempt
                    .run
                    .spawn_error
                    .clone()
                    .unwrap_or_else(|| crate::process::describe_end(
                        &attempt.run.end,
                        None,
                        spec.timeout
                    ))
            ));
        }
        // A discover delegate reads only: anything it changed is undone.
        if !attempt.settled && !attempt.changes.is_empty() {
            workspace.roll_back(&attempt.changes, attempt.started)?;
            rejected.push(format!(
                "{category}: changed {} path(s) while discovering; undone",
                attempt.changes.len()
            ));
        }
        let text = std::fs::read_to_string(&output).unwrap_or_default();
        let (found, bad) = candidates::parse_lines(&text, &lens);
        proposals.extend(found);
        rejected.extend(bad);
    }
    Ok((proposals, rejected, failed))
}

fn lens_template(lens: &str) -> &'static str {
    match lens {
        "usability" => include_str!("../../../templates/lenses/usability.md"),
        "production" => include_str!("../../../templates/lenses/production.md"),
        "refactoring" => include_str!("../../../templates/lenses/refactoring.md"),
        _ => include_str!("../../../templates/lenses/architecture.md"),
    }
}
