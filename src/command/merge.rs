//! `refine-loop merge DIR... --out DIR`: the state dirs of matrix jobs (one scope each) as one
//! run — a summary whose counts are the shards' sums, a trend of the summed failed counts per
//! cycle, a category history, and a report with a row per shard. How a monorepo too big for one
//! job scales out on the CI system itself.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::CommandError;
use crate::cli::MergeArgs;
use crate::gate::SUMMARY_FILE;
use crate::model::{CategorySummary, GateResult, GateSummary};
use crate::state;

/// Details kept per category in the merged summary.
const MAX_DETAILS: usize = 100;

/// One shard's last summary and its failed count per cycle.
struct Shard {
    dir: PathBuf,
    last: GateSummary,
    trend: Vec<u64>,
    history: Vec<GateSummary>,
}

/// Merges the shards; returns the exit code (0, or 1 when the merged gate fails).
pub fn merge(args: &MergeArgs, stdout: &mut dyn Write) -> Result<i32, CommandError> {
    let shards = args
        .dirs
        .iter()
        .map(|dir| read_shard(dir))
        .collect::<Result<Vec<_>, _>>()?;
    let cycles = shards.iter().map(|s| s.trend.len()).max().unwrap_or(1);
    // A shard that stopped early stays at its last state in the later cycles.
    let at = |shard: &Shard, cycle: usize| -> GateSummary {
        shard.history[cycle.min(shard.history.len() - 1)].clone()
    };
    let per_cycle: Vec<GateSummary> = (0..cycles)
        .map(|cycle| sum(cycle, shards.iter().map(|s| at(s, cycle))))
        .collect();
    let last = per_cycle
        .last()
        .cloned()
        .unwrap_or_else(|| sum(0, std::iter::empty()));
    std::fs::create_dir_all(&args.out).map_err(|source| state::StateError {
        path: args.out.clone(),
        source,
    })?;
    state::write_json(&args.out.join(SUMMARY_FILE), &last)?;
    let trend = serde_json::json!({
        "format_version": 1,
        "merged_from": shards.iter().map(|s| s.dir.display().to_string()).collect::<Vec<_>>(),
        "cycles": per_cycle.iter().map(|s| serde_json::json!({
            "cycle": s.cycle,
            "failed_count": s.failed_count,
            "warning_count": s.warning_count,
        })).collect::<Vec<_>>(),
    });
    state::write_json(&args.out.join("trend.json"), &trend)?;
    let mut history: BTreeMap<&str, Vec<serde_json::Value>> = BTreeMap::new();
    for summary in &per_cycle {
        for (name, category) in &summary.categories {
            history.entry(name).or_default().push(serde_json::json!({
                "cycle": summary.cycle,
                "passed": category.passed,
                "failures": category.failures,
            }));
        }
    }
    state::write_json(
        &args.out.join("category-history.json"),
        &serde_json::json!({ "format_version": 1, "categories": history }),
    )?;
    state::write_atomic(
        &args.out.join("REFINE-LOOP-FINAL.md"),
        report(&shards, &last).as_bytes(),
    )?;
    let line = format!(
        "merged {} shards: {} failures, {} warnings; {}\n",
        shards.len(),
        last.failed_count,
        last.warning_count,
        args.out.join(SUMMARY_FILE).display()
    );
    let _ = stdout.write_all(line.as_bytes());
    Ok(if last.failed_count == 0 {
        crate::exit_code::SUCCESS
    } else {
        crate::exit_code::NEEDS_FIX
    })
}

/// A shard: its cycle summaries in order (`cycle-0/` first).
fn read_shard(dir: &Path) -> Result<Shard, CommandError> {
    let mut history = Vec::new();
    for cycle in 0.. {
        let path = dir.join(format!("cycle-{cycle}")).join(SUMMARY_FILE);
        if !path.exists() {
            break;
        }
        let text = std::fs::read_to_string(&path).map_err(|source| CommandError::Input {
            name: path.display().to_string(),
            source,
        })?;
        let summary: GateSummary = serde_json::from_str(&text).map_err(|error| {
            CommandError::Usage(format!("{}: not a gate summary: {error}", path.display()))
        })?;
        history.push(summary);
    }
    let Some(last) = history.last().cloned() else {
        return Err(CommandError::Usage(format!(
            "{}: no cycle-0/{SUMMARY_FILE}: not a refine-loop state dir",
            dir.display()
        )));
    };
    Ok(Shard {
        dir: dir.to_path_buf(),
        trend: history.iter().map(|s| s.failed_count).collect(),
        last,
        history,
    })
}

/// The shards' summaries of one cycle as one: counts summed, details joined (bounded).
fn sum(cycle: usize, summaries: impl Iterator<Item = GateSummary>) -> GateSummary {
    let mut merged = GateSummary {
        format_version: 1,
        cycle: u32::try_from(cycle).unwrap_or(u32::MAX),
        overall_result: GateResult::Passed,
        failed_count: 0,
        warning_count: 0,
        categories: BTreeMap::new(),
        checks: Vec::new(),
        notes: Vec::new(),
        cancelled: false,
        not_run: Vec::new(),
    };
    for summary in summaries {
        merged.failed_count += summary.failed_count;
        merged.warning_count += summary.warning_count;
        merged.cancelled |= summary.cancelled;
        merged.checks.extend(summary.checks);
        merged.notes.extend(summary.notes);
        merged.not_run.extend(summary.not_run);
        for (name, category) in summary.categories {
            let into = merged
                .categories
                .entry(name)
                .or_insert_with(|| CategorySummary {
                    passed: true,
                    failures: 0,
                    warnings: 0,
                    details: Vec::new(),
                    details_omitted: 0,
                    unparsed: false,
                });
            into.failures += category.failures;
            into.warnings += category.warnings;
            into.passed &= category.passed;
            into.unparsed |= category.unparsed;
            into.details_omitted += category.details_omitted;
            for detail in category.details {
                if into.details.len() < MAX_DETAILS {
                    into.details.push(detail);
                } else {
                    into.details_omitted += 1;
                }
            }
        }
    }
    if merged.failed_count > 0 || merged.cancelled {
        merged.overall_result = GateResult::Failed;
    }
    merged
}

fn report(shards: &[Shard], last: &GateSummary) -> String {
    let mut text = String::from("# refine-loop: merged report\n\n");
    let _ = writeln!(
        text,
        "{} shards, {} failures and {} warnings in all.\n",
        shards.len(),
        last.failed_count,
        last.warning_count
    );
    text.push_str("| shard | cycles | failed first → last |\n|---|---|---|\n");
    for shard in shards {
        let _ = writeln!(
            text,
            "| {} | {} | {} → {} |",
            shard.dir.display(),
            shard.trend.len().saturating_sub(1),
            shard.trend.first().copied().unwrap_or(0),
            shard.last.failed_count
        );
    }
    text.push_str("\n## Categories\n\n");
    for (name, category) in &last.categories {
        let _ = writeln!(
            text,
            "- {name}: {} failures, {} warnings",
            category.failures, category.warnings
        );
    }
    text
}
