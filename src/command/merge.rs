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

/// One shard: the state it left, and its kept failed and warning counts per cycle.
struct Shard {
    dir: PathBuf,
    last: GateSummary,
    trend: Vec<(u64, u64)>,
}

/// Merges the shards; returns the exit code (0, or 1 when the merged gate fails).
pub fn merge(args: &MergeArgs, stdout: &mut dyn Write) -> Result<i32, CommandError> {
    let shards = args
        .dirs
        .iter()
        .map(|dir| read_shard(dir))
        .collect::<Result<Vec<_>, _>>()?;
    let last = sum(
        shards.iter().map(|s| s.trend.len()).max().unwrap_or(1) - 1,
        shards.iter().map(|s| s.last.clone()),
    );
    // A shard that stopped early stays at its last counts in the later cycles.
    let cycles = shards.iter().map(|s| s.trend.len()).max().unwrap_or(1);
    let per_cycle: Vec<(u64, u64)> = (0..cycles)
        .map(|cycle| {
            shards.iter().fold((0, 0), |(failed, warnings), shard| {
                let (f, w) = shard.trend[cycle.min(shard.trend.len() - 1)];
                (failed + f, warnings + w)
            })
        })
        .collect();
    std::fs::create_dir_all(&args.out).map_err(|source| state::StateError {
        path: args.out.clone(),
        source,
    })?;
    state::write_json(&args.out.join(SUMMARY_FILE), &last)?;
    let trend = serde_json::json!({
        "format_version": 1,
        "merged_from": shards.iter().map(|s| s.dir.display().to_string()).collect::<Vec<_>>(),
        "cycles": per_cycle.iter().enumerate().map(|(cycle, (failed, warnings))| serde_json::json!({
            "cycle": cycle,
            "failed_count": failed,
            "warning_count": warnings,
        })).collect::<Vec<_>>(),
    });
    state::write_json(&args.out.join("trend.json"), &trend)?;
    let history: BTreeMap<&String, serde_json::Value> = last
        .categories
        .iter()
        .map(|(name, category)| {
            (
                name,
                serde_json::json!([{
                    "cycle": last.cycle,
                    "passed": category.passed,
                    "failures": category.failures,
                }]),
            )
        })
        .collect();
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
    Ok(if last.overall_result == GateResult::Passed {
        crate::exit_code::SUCCESS
    } else {
        crate::exit_code::NEEDS_FIX
    })
}

/// A shard: the summary of the state it left (`gate-summary.json` at the top of a run's state
/// dir, else `cycle-0/` of a check) and its kept counts per cycle (`trend.json` of a run).
fn read_shard(dir: &Path) -> Result<Shard, CommandError> {
    let read = |path: PathBuf| -> Result<Option<String>, CommandError> {
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok(Some(text)),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(CommandError::Input {
                name: path.display().to_string(),
                source,
            }),
        }
    };
    let not_state = || {
        CommandError::Usage(format!(
            "{}: no {SUMMARY_FILE}: not a refine-loop state dir",
            dir.display()
        ))
    };
    let text = match read(dir.join(SUMMARY_FILE))? {
        Some(text) => text,
        None => read(dir.join("cycle-0").join(SUMMARY_FILE))?.ok_or_else(not_state)?,
    };
    let last: GateSummary = serde_json::from_str(&text).map_err(|error| {
        CommandError::Usage(format!("{}: not a gate summary: {error}", dir.display()))
    })?;
    let trend = match read(dir.join("trend.json"))? {
        Some(text) => serde_json::from_str::<crate::model::Trend>(&text)
            .map_err(|error| {
                CommandError::Usage(format!("{}: trend.json: {error}", dir.display()))
            })?
            .cycles
            .iter()
            .map(|c| (c.failed_count, c.warning_count))
            .collect(),
        None => vec![(last.failed_count, last.warning_count)],
    };
    Ok(Shard {
        dir: dir.to_path_buf(),
        last,
        trend,
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
        if summary.overall_result == GateResult::Failed {
            merged.overall_result = GateResult::Failed;
        }
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
            shard.dir.display().to_string().replace('|', "\\|"),
            shard.trend.len().saturating_sub(1),
            shard.trend.first().map_or(0, |(failed, _)| *failed),
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
