//! `refine-loop merge DIR... --out DIR`: the state dirs of matrix jobs (a scope or a part of the
//! gate each) as one run. Findings are united by fingerprint ([`union`]), so shards that each
//! ran the whole gate are not counted twice; shards without findings files are added up. The
//! merged folder holds the typed `gate-summary.json` (and the baseline's in `cycle-0/`),
//! `trend.json`, `category-history.json`, the report, and `merge.json` (the shards it was made
//! of), so a merged folder can be merged again.

mod shard;
mod union;

use std::io::Write;

use shard::{MERGE_FILE, MergeFile, Shard, read_shards};
use union::{Counted, Side};

use super::CommandError;
use crate::cli::MergeArgs;
use crate::model::{CategoryHistory, GateResult, GateSummary, Outcome, Trend};
use crate::report::{Mode, Report, ShardRow};
use crate::scope::Scope;
use crate::state::{self, Layout};

/// Merges the shards; returns the exit code (0, or 1 when the merged gate fails).
pub fn merge(args: &MergeArgs, stdout: &mut dyn Write) -> Result<i32, CommandError> {
    let mut shards = Vec::new();
    for dir in &args.dirs {
        shards.extend(read_shards(dir)?);
    }
    let (baseline, last, note) = merged_states(&shards)?;
    let trend = merged_trend(&shards, &baseline, &last);
    let mut history = CategoryHistory::default();
    history.push(&baseline);
    if trend.cycles.len() > 1 {
        history.push(&last);
    }
    std::fs::create_dir_all(&args.out).map_err(|source| state::StateError {
        path: args.out.clone(),
        source,
    })?;
    let layout = Layout::new(&args.out);
    let outcome = if last.overall_result == GateResult::Passed {
        Outcome::Success
    } else {
        Outcome::NeedsFix
    };
    // merge writes no SARIF: no parser is described.
    let report = Report {
        last: last.clone(),
        trend: trend.clone(),
        history: history.clone(),
        shards: shards.iter().map(row).collect(),
        ..Report::bare(
            Mode::Merge,
            outcome,
            args.out.clone(),
            layout.clone(),
            baseline.clone(),
        )
    };
    std::fs::create_dir_all(layout.cycle(0)).map_err(|source| state::StateError {
        path: layout.cycle(0),
        source,
    })?;
    state::write_json(&layout.cycle_summary(0), &baseline)?;
    state::write_json(&layout.summary(), &last)?;
    state::write_json(&layout.trend(), &trend)?;
    state::write_json(&layout.history(), &history)?;
    state::write_json(
        &args.out.join(MERGE_FILE),
        &MergeFile {
            format_version: state::format::MERGE,
            shards: shards.clone(),
        },
    )?;
    let mut text = crate::report::final_report(&report);
    if let Some(note) = note {
        text.push_str(&format!("\n{note}\n"));
    }
    state::write_redacted(&layout.final_report(), text.as_bytes())?;
    let line = format!(
        "merged {} shards: {} failures, {} warnings; {}\n",
        shards.len(),
        last.failed_count,
        last.warning_count,
        layout.summary().display()
    );
    let _ = stdout.write_all(line.as_bytes());
    Ok(crate::exit_code::of_outcome(outcome))
}

/// The shards' baseline and end as one, and a note when they could only be added up.
fn merged_states(
    shards: &[Shard],
) -> Result<(GateSummary, GateSummary, Option<String>), CommandError> {
    let mut scopes = Vec::with_capacity(shards.len());
    let mut sides: Vec<(Vec<Counted>, Vec<Counted>)> = Vec::with_capacity(shards.len());
    for shard in shards {
        let scope = Scope::of_patterns(&shard.scope).map_err(|reason| {
            CommandError::Usage(format!(
                "{}: run.json: scope: {reason}",
                shard.dir.display()
            ))
        })?;
        scopes.push(scope);
        let counted = |summary: &GateSummary, file: &Option<crate::model::FindingsFile>| {
            file.as_ref()
                .filter(|file| file.complete)
                .and_then(|file| union::counted(summary, &file.findings))
        };
        match (
            counted(&shard.baseline, &shard.baseline_findings),
            counted(&shard.last, &shard.last_findings),
        ) {
            (Some(baseline), Some(last)) => sides.push((baseline, last)),
            _ => {
                let note = format!(
                    "Note: {} holds no complete findings.json (an older refine-loop, or findings past the limits): the shards' counts were added up, and shards that ran the same checks are counted more than once.",
                    shard.dir.display()
                );
                return Ok((
                    summed(0, shards.iter().map(|s| &s.baseline)),
                    summed(last_cycle(shards), shards.iter().map(|s| &s.last)),
                    Some(note),
                ));
            }
        }
    }
    let sides: Vec<Side<'_>> = sides
        .iter()
        .zip(&scopes)
        .map(|((baseline, last), scope)| Side {
            scope,
            baseline,
            last,
        })
        .collect();
    let baseline = summary_of(
        0,
        &union::baseline(&sides),
        shards.iter().map(|s| &s.baseline),
    );
    let last = summary_of(
        last_cycle(shards),
        &union::last(&sides),
        shards.iter().map(|s| &s.last),
    );
    Ok((baseline, last, None))
}

fn last_cycle(shards: &[Shard]) -> usize {
    shards
        .iter()
        .map(|s| s.trend.cycles.len())
        .max()
        .unwrap_or(1)
        - 1
}

/// A summary of united findings; the checks and notes are the shards'.
fn summary_of<'a>(
    cycle: usize,
    counted: &[Counted],
    summaries: impl Iterator<Item = &'a GateSummary>,
) -> GateSummary {
    let mut summary = summed(cycle, summaries);
    summary.categories = union::categories_of(counted);
    summary.failed_count = summary.categories.values().map(|c| c.failures).sum();
    summary.warning_count = summary.categories.values().map(|c| c.warnings).sum();
    summary.overall_result = if summary.failed_count > 0 || summary.cancelled {
        GateResult::Failed
    } else {
        GateResult::Passed
    };
    summary
}

/// The shards' summaries of one cycle as one, their counts added (details bounded).
fn summed<'a>(cycle: usize, summaries: impl Iterator<Item = &'a GateSummary>) -> GateSummary {
    let mut merged = GateSummary::empty(u32::try_from(cycle).unwrap_or(u32::MAX));
    for summary in summaries {
        merged.failed_count += summary.failed_count;
        merged.warning_count += summary.warning_count;
        merged.cancelled |= summary.cancelled;
        merged.checks.extend(summary.checks.iter().cloned());
        merged.notes.extend(summary.notes.iter().cloned());
        merged.not_run.extend(summary.not_run.iter().cloned());
        for (name, category) in &summary.categories {
            let into = merged.categories.entry(name.clone()).or_default();
            into.failures += category.failures;
            into.warnings += category.warnings;
            into.unparsed |= category.unparsed;
            into.details_omitted += category.details_omitted;
            for detail in &category.details {
                if into.details.len() < 100 {
                    into.details.push(detail.clone());
                } else {
                    into.details_omitted += 1;
                }
            }
        }
    }
    for category in merged.categories.values_mut() {
        category.passed = category.failures == 0;
    }
    if merged.failed_count > 0 || merged.cancelled {
        merged.overall_result = GateResult::Failed;
    }
    merged
}

/// The merged failed and warning counts per cycle: the merged baseline, moved by what each
/// shard gained or lost by then (a shard that stopped early stays at its last counts); the last
/// cycle is the merged end. The cycles between are an estimate: shards keep no findings per
/// cycle, so a change two whole-gate shards both made counts twice there.
fn merged_trend(shards: &[Shard], baseline: &GateSummary, last: &GateSummary) -> Trend {
    let cycles = last_cycle(shards) + 1;
    let mut trend = Trend::default();
    for cycle in 0..cycles {
        let mut summary = if cycle + 1 == cycles {
            last.clone()
        } else {
            baseline.clone()
        };
        if cycle > 0 && cycle + 1 < cycles {
            let moved = |pick: fn(&crate::model::TrendCycle) -> u64| -> i128 {
                shards
                    .iter()
                    .map(|shard| {
                        let at = &shard.trend.cycles[cycle.min(shard.trend.cycles.len() - 1)];
                        i128::from(pick(at)) - i128::from(pick(&shard.trend.cycles[0]))
                    })
                    .sum()
            };
            let apply =
                |count: u64, by: i128| u64::try_from((i128::from(count) + by).max(0)).unwrap_or(0);
            summary.failed_count = apply(baseline.failed_count, moved(|c| c.failed_count));
            summary.warning_count = apply(baseline.warning_count, moved(|c| c.warning_count));
        }
        summary.cycle = u32::try_from(cycle).unwrap_or(u32::MAX);
        let accepted = (cycle > 0).then(|| {
            shards.iter().any(|shard| {
                shard
                    .trend
                    .cycles
                    .get(cycle)
                    .is_some_and(|c| c.accepted == Some(true))
            })
        });
        trend.push(&summary, accepted, false);
    }
    trend
}

fn row(shard: &Shard) -> ShardRow {
    ShardRow {
        dir: shard.dir.clone(),
        cycles: shard.trend.cycles.len().saturating_sub(1),
        first_failed: shard.trend.cycles.first().map_or(0, |c| c.failed_count),
        last_failed: shard.last.failed_count,
    }
}
