//! The independent reviewer of a refine candidate: a fresh process that reads the candidate, its
//! evidence, the gate's result and the diff, and writes `approve` or `reject <reason>`. It must
//! not edit anything; with no reviewer configured, nothing is accepted.

use std::path::Path;

use crate::campaign::candidates::Proposal;
use crate::delegate::{Assignment, DelegateFiles, Role};
use crate::engine::{Attempt, CycleNumber, Engine, RunError};
use crate::model::GateSummary;
use crate::workspace::{Change, PathState, SnapshotStore};

/// Bytes of diff shown in the reviewer's prompt; the whole diff is in its file.
const PROMPT_DIFF: usize = 64 * 1024;

#[derive(Debug, PartialEq, Eq)]
pub enum Decision {
    Approve,
    Reject(String),
    /// No reviewer, or it could not give a decision: an operational error.
    Unavailable(String),
}

/// Asks the reviewer about `attempt`'s change (in the tree now).
pub fn review(
    engine: &mut Engine<'_>,
    proposal: &Proposal,
    attempt: &Attempt,
    gate: &GateSummary,
    cycle: CycleNumber,
) -> Result<Decision, RunError> {
    let settings = engine.settings;
    let reports_dir = &engine.reports_dir(cycle)?;
    let Some(reviewer) = settings
        .delegates
        .iter()
        .position(|d| d.role == Role::Reviewer)
    else {
        return Ok(Decision::Unavailable(
            "no reviewer delegate is configured: a refinement is never accepted unreviewed".into(),
        ));
    };
    let category = format!("review-{}", proposal.family.replace('/', "-"));
    let diff = diff_of(&attempt.changes, engine.workspace.store());
    let diff_file = reports_dir.join(format!("{category}.diff"));
    crate::state::write_redacted(&diff_file, diff.as_bytes())?;
    let mut spec = settings.delegates[reviewer].clone();
    if spec.template == crate::delegate::DEFAULT_TEMPLATE {
        spec.template = include_str!("../../../../templates/refine/reviewer.md").to_string();
    }
    spec.env.push((
        "REFINE_LOOP_DIFF_FILE".into(),
        diff_file.to_string_lossy().into_owned(),
    ));
    let shown = if diff.len() > PROMPT_DIFF {
        format!(
            "{}\n… (the whole diff is in {})",
            &diff[..(0..=PROMPT_DIFF)
                .rev()
                .find(|at| diff.is_char_boundary(*at))
                .unwrap_or(0)],
            diff_file.display()
        )
    } else {
        diff
    };
    let mut details = vec![
        format!("candidate: {} ({})", proposal.title, proposal.family),
        format!(
            "gate after the change: {} failures, {} warnings",
            gate.failed_count, gate.warning_count
        ),
    ];
    details.extend(proposal.evidence.lines().map(|l| format!("evidence: {l}")));
    details.push(format!("diff:\n\n```diff\n{}\n```", shown.trim_end()));
    let assignment = Assignment {
        category: &category,
        cycle: cycle.index,
        scope: &settings.run.scope,
        diagnostics: &proposal.diagnostics,
        files: &[],
        details: &details,
        target: &settings.target,
        state_dir: &settings.state_dir,
        reports_dir,
        refused: &[],
    };
    if let Some(why) = engine.ledger.refuses(reviewer) {
        return Ok(Decision::Reject(format!(
            "no review, so not kept: the reviewer may not start ({why})"
        )));
    }
    // The reviewer reads the tree with the candidate's change in it.
    if engine.consult(reviewer, &spec, &assignment)?.changed {
        return Ok(Decision::Reject(
            "the reviewer edited files (undone); a review must only read".into(),
        ));
    }
    let verdict_file = DelegateFiles::for_category(reports_dir, &category).verdict;
    let text = crate::delegate::read_verdict(&verdict_file)
        .ok()
        .flatten()
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default();
    Ok(parse_decision(&text))
}

/// `approve`, or `reject` and the reason; anything else is no decision.
pub fn parse_decision(text: &str) -> Decision {
    let text = text.trim();
    let (word, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    match word.to_ascii_lowercase().as_str() {
        "approve" | "approved" => Decision::Approve,
        "reject" | "rejected" => Decision::Reject(if rest.trim().is_empty() {
            "no reason given".into()
        } else {
            rest.trim().to_string()
        }),
        _ => Decision::Unavailable(format!(
            "the reviewer wrote no decision (expected `approve` or `reject <reason>`, found {:?})",
            text.chars().take(80).collect::<String>()
        )),
    }
}

/// A unified diff of the changes (from the kept bytes).
fn diff_of(changes: &[Change], store: &SnapshotStore) -> String {
    let bytes = |state: &PathState| -> Vec<u8> {
        match state {
            PathState::File { sha256, .. } => {
                std::fs::read(store.path_of(sha256)).unwrap_or_default()
            }
            PathState::Symlink { target } => target.clone(),
            PathState::Absent | PathState::Directory | PathState::Special { .. } => Vec::new(),
        }
    };
    let mut out = String::new();
    for change in changes {
        let path = change.path.to_string();
        let (old, new) = (bytes(&change.before), bytes(&change.after));
        let patch = git2::Patch::from_buffers(
            &old,
            Some(Path::new(&path)),
            &new,
            Some(Path::new(&path)),
            None,
        );
        match patch.and_then(|mut p| p.to_buf()) {
            Ok(buffer) => out.push_str(&String::from_utf8_lossy(&buffer)),
            Err(_) => out.push_str(&format!(
                "{path}: {} → {}\n",
                change.before.describe(),
                change.after.describe()
            )),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_are_read_from_the_first_word() {
        for (text, decision) in [
            ("approve", Decision::Approve),
            ("Approved\n", Decision::Approve),
            (
                "reject renames a public function",
                Decision::Reject("renames a public function".into()),
            ),
            ("reject", Decision::Reject("no reason given".into())),
        ] {
            assert_eq!(parse_decision(text), decision, "{text}");
        }
        assert!(matches!(parse_decision(""), Decision::Unavailable(_)));
        assert!(matches!(
            parse_decision("looks fine"),
            Decision::Unavailable(_)
        ));
    }
}
