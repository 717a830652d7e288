//! Discovery: the round's proposals, from the gate's findings (one per family) and from every
//! discover delegate whose lens is in focus (read-only: what one changes is undone).

use crate::campaign::candidates::{self, Proposal};
use crate::delegate::{Assignment, Role};
use crate::engine::{CycleNumber, Engine, RunError};
use crate::model::Diagnostic;

/// Proposals from the gate's findings and from every discover delegate whose lens is in focus;
/// the reasons proposals were rejected; whether a discover delegate failed.
/// A round's discovery: its proposals, the reasons proposals were rejected, and whether a
/// discover delegate failed (an operational error).
#[derive(Debug, Default)]
pub(super) struct Discovered {
    pub proposals: Vec<Proposal>,
    pub rejected: Vec<String>,
    pub failed: bool,
}

pub(super) fn discover(
    engine: &mut Engine<'_>,
    cycle: CycleNumber,
    focus: &[String],
) -> Result<Discovered, RunError> {
    let mut discovered = Discovered {
        proposals: from_gate(engine),
        ..Discovered::default()
    };
    let details: Vec<String> = engine
        .kept()
        .summary
        .categories
        .values()
        .flat_map(|c| c.details.iter().cloned())
        .collect();
    let settings = engine.settings;
    for (index, spec) in settings.delegates.iter().enumerate() {
        let in_focus = spec.lens.as_ref().is_none_or(|lens| focus.contains(lens));
        if spec.role != Role::Discover
            || !in_focus
            || engine.cancel.is_requested()
            || engine.ledger.refuses(index).is_some()
        {
            continue;
        }
        let lens = spec.lens.clone().unwrap_or_else(|| "architecture".into());
        ask_lens(engine, cycle, index, spec, &lens, &details, &mut discovered)?;
    }
    Ok(discovered)
}

/// The gate's findings of the failing categories within the scope (infra is the gate's own
/// trouble), one proposal per family.
fn from_gate(engine: &Engine<'_>) -> Vec<Proposal> {
    let kept = &engine.kept().summary;
    let scope = &engine.settings().run.scope;
    let failing: Vec<Diagnostic> = engine
        .kept()
        .diagnostics
        .iter()
        .filter(|d| {
            d.category.as_deref().is_some_and(|c| {
                c != crate::gate::INFRA_CATEGORY
                    && kept.categories.get(c).is_some_and(|s| !s.passed)
            })
        })
        .filter(|d| crate::engine::in_scope(scope, d))
        .cloned()
        .collect();
    candidates::from_findings(&failing)
}

/// Runs the discover delegate `index` with its lens, and reads the proposals it wrote.
fn ask_lens(
    engine: &mut Engine<'_>,
    cycle: CycleNumber,
    index: usize,
    spec: &crate::delegate::DelegateSpec,
    lens: &str,
    details: &[String],
    discovered: &mut Discovered,
) -> Result<(), RunError> {
    let settings = engine.settings;
    let reports_dir = engine.reports_dir(cycle)?;
    let category = format!("discover-{lens}");
    let output = crate::delegate::DelegateFiles::for_category(&reports_dir, &category).candidates;
    let _ = std::fs::remove_file(&output);
    let mut spec = spec.clone();
    if spec.template == crate::delegate::DEFAULT_TEMPLATE {
        spec.template = lens_template(lens).to_string();
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
        details,
        target: &settings.target,
        state_dir: &settings.state_dir,
        reports_dir: &reports_dir,
        refused: &[],
    };
    let consulted = engine.consult(index, &spec, &assignment)?;
    let attempt = &consulted.attempt;
    if attempt.run.failed() {
        discovered.failed = true;
        discovered.rejected.push(format!(
            "{category}: the discover delegate failed ({}); an operational error",
            attempt.run.describe_end(spec.timeout)
        ));
    }
    // A discover delegate reads only: anything it changed was undone.
    if consulted.changed {
        discovered.rejected.push(format!(
            "{category}: changed {} path(s) while discovering; undone",
            attempt.changes.len()
        ));
    }
    let text = crate::state::read_own(&output, crate::state::OWN_FILE_LIMIT)
        .ok()
        .flatten()
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default();
    let (found, bad) = candidates::parse_lines(&text, lens);
    discovered.proposals.extend(found);
    discovered.rejected.extend(bad);
    Ok(())
}

fn lens_template(lens: &str) -> &'static str {
    match lens {
        "usability" => include_str!("../../../../templates/lenses/usability.md"),
        "production" => include_str!("../../../../templates/lenses/production.md"),
        "refactoring" => include_str!("../../../../templates/lenses/refactoring.md"),
        _ => include_str!("../../../../templates/lenses/architecture.md"),
    }
}
