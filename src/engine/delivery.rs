//! The record a person can apply or throw away: each accepted cycle as a commit on the run's
//! private ref (its ledger in the body), exported at the end as a `git am` series, one cumulative
//! patch and `manifest.json`. Nothing is pushed; the user's branch and HEAD never move.

use std::fmt::Write as _;

use super::Attempt;
use crate::config::Settings;
use crate::deliver::{
    DeliverError, DeliveryNote, Iteration, Ledger, PathChange, Provenance, Recorder,
};
use crate::model::{GateSummary, TokenUsage};
use crate::stop::StopReason;
use crate::workspace::{Change, SnapshotStore, compose};

/// One accepted cycle, as the ledger tells it.
pub struct CycleStory<'a> {
    pub cycle: u32,
    pub before: &'a GateSummary,
    pub after: &'a GateSummary,
    pub attempts: &'a [Attempt],
    pub next: Option<StopReason>,
}

/// Records the cycle's kept changes as a commit, when it kept any; `own` is a campaign's open
/// backlog and stop-condition state for the ledger.
pub fn record_cycle(
    recorder: &mut Recorder<'_>,
    store: &SnapshotStore,
    settings: &Settings,
    story: &CycleStory<'_>,
    own: Option<(&[String], &str)>,
) -> Result<(), DeliverError> {
    let kept: Vec<&[Change]> = story
        .attempts
        .iter()
        .filter(|a| a.kept)
        .map(|a| a.changes.as_slice())
        .collect();
    let changes: Vec<PathChange> = compose(&kept)
        .into_iter()
        .map(|change| PathChange {
            path: change.path.as_bytes().to_vec(),
            before: change.before,
            after: change.after,
        })
        .collect();
    if changes.is_empty() {
        return Ok(());
    }
    let iteration = Iteration {
        cycle: story.cycle,
        summary: summary(story.before, story.after),
        ledger: {
            let mut ledger = ledger(settings, story, &changes);
            if let Some((backlog, stop_state)) = own {
                ledger.next_backlog = if backlog.is_empty() {
                    "empty: nothing material open".to_string()
                } else {
                    backlog.join("\n")
                };
                ledger.stop_condition_state = stop_state.to_string();
            }
            ledger
        },
        provenance: provenance(recorder.run_id(), settings, story),
        changes,
    };
    match recorder.record(&iteration, store) {
        Ok(_) | Err(DeliverError::NothingToRecord { .. }) => Ok(()),
        Err(error) => Err(error),
    }
}

/// The commit's trailers: the CI run (its URL where the environment gives one), the gate's
/// fingerprint, the delegates whose changes it keeps, what the cycle's turns cost, and the
/// findings it fixed and left (see [`findings_trailer`]).
fn provenance(run_id: &str, settings: &Settings, story: &CycleStory<'_>) -> Provenance {
    let mut delegates: Vec<usize> = story
        .attempts
        .iter()
        .filter(|a| a.kept)
        .map(|a| a.delegate)
        .collect();
    delegates.sort_unstable();
    delegates.dedup();
    Provenance {
        run: crate::deliver::run_locator(|name| std::env::var(name).ok(), run_id),
        gate: settings.gate.fingerprint(),
        delegates: delegates
            .into_iter()
            .map(|index| delegate_name(&settings.delegates[index]))
            .collect(),
        cost: cost(settings, story.attempts),
        findings: findings_trailer(story.before, story.after),
    }
}

/// `fixed N, new N, pre-existing N` of a cycle that went from `before` to `after`. In
/// pull-request mode (`--new-since`) the failures left are new since the base, and those there
/// before it are pre-existing; without a base, every failure left counts as pre-existing.
fn findings_trailer(before: &GateSummary, after: &GateSummary) -> String {
    let fixed = before.failed_count.saturating_sub(after.failed_count);
    match after.preexisting_count {
        Some(preexisting) => format!(
            "fixed {fixed}, new {}, pre-existing {preexisting}",
            after.failed_count
        ),
        None => format!("fixed {fixed}, new 0, pre-existing {}", after.failed_count),
    }
}

/// The longest command shown as a delegate's name, in characters.
const COMMAND_SUMMARY: usize = 60;

/// A delegate as its trailer names it: `command <its command, cut short>; model unknown` (a
/// command delegate does not say which model it runs), `http <endpoint>; model <model>`.
fn delegate_name(spec: &crate::delegate::DelegateSpec) -> String {
    match &spec.launch {
        crate::delegate::Launch::Command(run) => {
            let line = run.split_whitespace().collect::<Vec<_>>().join(" ");
            let short = if line.chars().count() > COMMAND_SUMMARY {
                let cut: String = line.chars().take(COMMAND_SUMMARY - 1).collect();
                format!("{}\u{2026}", cut.trim_end())
            } else {
                line
            };
            format!("command `{short}`; model unknown")
        }
        crate::delegate::Launch::Http(http) => {
            format!("http {}; model {}", http.endpoint, http.model)
        }
        crate::delegate::Launch::Reapply(_) => format!("{}; model none", spec.describe()),
    }
}

/// The tokens the cycle's turns report, kept or not: `none` when no turn spends (`usage =
/// "none"`), `unknown` when none that spends reports any, else the sum and how many turns did
/// not report; the cost in money where every turn gave it.
fn cost(settings: &Settings, attempts: &[Attempt]) -> String {
    let paying: Vec<&Attempt> = (attempts.iter())
        .filter(|a| !settings.delegates[a.delegate].spends_nothing() && a.run.spawn_error.is_none())
        .collect();
    if paying.is_empty() {
        return "none (its delegates say usage = \"none\")".to_string();
    }
    let reported: Vec<&TokenUsage> = paying.iter().filter_map(|a| a.run.usage.as_ref()).collect();
    let Some(total) = TokenUsage::total(reported.iter().copied()) else {
        return "unknown".to_string();
    };
    let silent = paying.len() - reported.len();
    let mut text = format!(
        "tokens {} (prompt {}, completion {})",
        total.total_tokens, total.prompt_tokens, total.completion_tokens
    );
    if silent > 0 {
        let _ = write!(text, " plus {silent} turn(s) unknown");
    }
    // Money only where every turn's tool said what it cost (Claude Code, aider); a sum of
    // some turns' costs would read as the whole.
    match total.cost_usd {
        Some(usd) if silent == 0 && reported.iter().all(|u| u.cost_usd.is_some()) => {
            let _ = write!(text, ", cost {usd:.4} USD");
        }
        _ => text.push_str(", cost unknown"),
    }
    text
}

/// `failed 12→7 (lint 5→0, types 7→7)`: the categories that moved.
fn summary(before: &GateSummary, after: &GateSummary) -> String {
    let moved: Vec<String> = before
        .categories
        .iter()
        .filter_map(|(name, was)| {
            let now = after.categories.get(name).map_or(0, |c| c.failures);
            (now != was.failures).then(|| format!("{name} {}→{now}", was.failures))
        })
        .collect();
    let mut text = format!("failed {}→{}", before.failed_count, after.failed_count);
    if !moved.is_empty() {
        let _ = write!(text, " ({})", moved.join(", "));
    }
    text
}

fn ledger(settings: &Settings, story: &CycleStory<'_>, changes: &[PathChange]) -> Ledger {
    let delegate = |a: &Attempt| settings.delegates[a.delegate].describe();
    let thesis = story
        .attempts
        .iter()
        .map(|a| format!("{}: `{}`", a.category, delegate(a)))
        .collect::<Vec<_>>()
        .join("\n");
    let undone: Vec<&Attempt> = story
        .attempts
        .iter()
        .filter(|a| !a.kept && !a.changes.is_empty())
        .collect();
    let outcome = format!(
        "{}: {}",
        if undone.is_empty() {
            "confirmed"
        } else {
            "partial"
        },
        summary(story.before, story.after)
    );
    let test_evidence = format!(
        "the gate ran after the changes: {} with {} failures and {} warnings",
        if story.after.failed_count == 0 {
            "passed"
        } else {
            "failed"
        },
        story.after.failed_count,
        story.after.warning_count
    );
    let what_landed = what_landed(changes);
    let notes = notes(story, &undone, &delegate);
    let next_backlog = story
        .after
        .categories
        .iter()
        .filter(|(_, c)| !c.passed)
        .map(|(name, c)| format!("- [ ] P1: {name}: {} failures", c.failures))
        .collect::<Vec<_>>()
        .join("\n");
    let stop_condition_state = format!(
        "cycle {} of at most {}; {}",
        story.cycle,
        settings.run.max_cycles,
        story.next.map_or("continuing".to_string(), |r| format!(
            "stopping: {}",
            r.as_str()
        ))
    );
    Ledger {
        thesis,
        outcome,
        test_evidence,
        what_landed,
        notes,
        next_backlog: if next_backlog.is_empty() {
            "empty: the gate passes".to_string()
        } else {
            next_backlog
        },
        stop_condition_state,
    }
}

/// The ledger's "What landed": each changed path, before and after.
fn what_landed(changes: &[PathChange]) -> String {
    changes
        .iter()
        .map(|c| {
            format!(
                "{}: {} → {}",
                crate::workspace::RepoPath::new(c.path.clone()),
                c.before.describe(),
                c.after.describe()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The ledger's "Notes": what was rolled back and why, and what a delegate must not have done.
fn notes(
    story: &CycleStory<'_>,
    undone: &[&Attempt],
    delegate: &dyn Fn(&Attempt) -> String,
) -> String {
    let mut notes: Vec<String> = undone
        .iter()
        .map(|a| {
            format!(
                "{} (`{}`) rolled back: {}",
                a.category,
                delegate(a),
                a.rejected_because.join("; ")
            )
        })
        .collect();
    for attempt in story.attempts {
        notes.extend(attempt.incidents.iter().map(|i| i.describe()));
    }
    if notes.is_empty() {
        "none".to_string()
    } else {
        notes.join("\n")
    }
}

/// Writes `patches/`, `refine-loop.patch` and `manifest.json`. A patch that would carry a
/// secret is not written, and the note says why.
pub fn write_delivery(
    recorder: &Recorder<'_>,
    settings: &Settings,
    outcome: &str,
    stop_reason: &str,
) -> Result<DeliveryNote, DeliverError> {
    let layout = crate::state::Layout::new(&settings.state_dir);
    let scan = |content: &[u8]| -> Vec<String> {
        crate::secrets::process_redactor()
            .map(|redactor| {
                redactor
                    .findings(content)
                    .iter()
                    .map(ToString::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut note = DeliveryNote {
        reference: recorder.tip().map(|_| recorder.reference().to_string()),
        commits: recorder.iterations().len(),
        refused: None,
    };
    let written = recorder
        .write_series(&layout.patches(), &scan)
        .and_then(|_| recorder.write_cumulative_patch(&layout.patch(), &scan));
    match written {
        Ok(()) => {}
        Err(DeliverError::SecretRefused { path, findings }) => {
            let reason = format!(
                "{} would carry a secret ({}): no patch was written",
                path.display(),
                findings.join("; ")
            );
            tracing::warn!("{reason}");
            note.refused = Some(reason);
        }
        Err(error) => return Err(error),
    }
    recorder.write_manifest(&layout.manifest(), outcome, stop_reason)?;
    Ok(note)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_findings_trailer_counts_new_ones_only_in_pull_request_mode() {
        let summary = |failed: u64, preexisting: Option<u64>| GateSummary {
            failed_count: failed,
            preexisting_count: preexisting,
            new_count: preexisting.map(|_| failed),
            ..GateSummary::empty(1)
        };
        // (before, after, trailer)
        let cases = [
            (
                summary(5, None),
                summary(2, None),
                "fixed 3, new 0, pre-existing 2",
            ),
            (
                summary(2, Some(4)),
                summary(1, Some(4)),
                "fixed 1, new 1, pre-existing 4",
            ),
            (
                summary(2, Some(0)),
                summary(0, Some(0)),
                "fixed 2, new 0, pre-existing 0",
            ),
        ];
        for (before, after, trailer) in cases {
            assert_eq!(findings_trailer(&before, &after), trailer);
        }
    }
}
