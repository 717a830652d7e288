//! Discovery: the round's proposals, from the gate's findings (one per family) and from every
//! discover delegate whose lens is in focus (read-only: what one changes is undone).

use crate::campaign::candidates::{self, Proposal};
use crate::delegate::{Assignment, Role};
use crate::engine::{CycleNumber, Engine, RunError};
use crate::model::Diagnostic;

/// Proposals from the gate's findings and from every discover delegate whose lens is in focus;
/// the reasons proposals were rejected; whether a discover delegate failed.
pub(super) fn discover(
    engine: &mut Engine<'_>,
    cycle: CycleNumber,
    focus: &[String],
) -> Result<(Vec<Proposal>, Vec<String>, bool), RunError> {
    let settings = engine.settings;
    let (kept, diagnostics) = (&engine.kept().summary, &engine.kept().diagnostics);
    let reports_dir = engine.reports_dir(cycle)?;
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
        .filter(|d| crate::engine::in_scope(&settings.run.scope, d))
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
        if spec.role != Role::Discover || !in_focus || engine.cancel.is_requested() {
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
            cycle: cycle.index,
            scope: &settings.run.scope,
            diagnostics: &[],
            files: &[],
            details: &details,
            target: &settings.target,
            state_dir: &settings.state_dir,
            reports_dir: &reports_dir,
        };
        let attempt = engine.take_turn(index, &spec, &assignment)?;
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
            engine.roll_back(&attempt)?;
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
