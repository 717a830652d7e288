//! A shard as `merge` reads it: the state a run (or a `check`) left in its state dir, or the
//! shards a merged folder was made of (its `merge.json`), so that merging merged folders is
//! merging their shards.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::super::CommandError;
use crate::model::{FindingsFile, GateSummary, Trend};
use crate::state::Layout;

pub use crate::state::MERGE_FILE;

/// The shards of a merged folder.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MergeFile {
    pub format_version: u32,
    pub shards: Vec<Shard>,
}

/// One shard's state: the gate at its start and end, its trend, its scope and its findings.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Shard {
    /// The folder it was read from.
    pub dir: PathBuf,
    pub baseline: GateSummary,
    pub last: GateSummary,
    /// Its kept counts per cycle (one cycle for a `check`).
    pub trend: Trend,
    /// Its scope's patterns (empty: the whole target).
    #[serde(default)]
    pub scope: Vec<String>,
    /// Its findings at the start and the end, when it wrote them (`findings.json`).
    #[serde(default)]
    pub baseline_findings: Option<FindingsFile>,
    #[serde(default)]
    pub last_findings: Option<FindingsFile>,
}

/// The shards in `dir`: those of a merged folder, or the state dir itself.
pub fn read_shards(dir: &Path) -> Result<Vec<Shard>, CommandError> {
    if let Some(text) = read(&dir.join(MERGE_FILE))? {
        let merged: MergeFile = serde_json::from_str(&text).map_err(|error| {
            CommandError::Usage(format!("{}: {MERGE_FILE}: {error}", dir.display()))
        })?;
        if merged.shards.is_empty() {
            return Err(CommandError::Usage(format!(
                "{}: {MERGE_FILE} lists no shard",
                dir.display()
            )));
        }
        for shard in &merged.shards {
            finished(&shard.trend, &shard.dir)?;
        }
        return Ok(merged.shards);
    }
    read_state_dir(dir).map(|shard| vec![shard])
}

fn read_state_dir(dir: &Path) -> Result<Shard, CommandError> {
    let layout = Layout::new(dir);
    let json = |path: PathBuf| -> Result<Option<serde_json::Value>, CommandError> {
        read(&path)?
            .map(|text| serde_json::from_str(&text))
            .transpose()
            .map_err(|error| CommandError::Usage(format!("{}: not JSON: {error}", path.display())))
    };
    let Some(baseline) = json(layout.cycle_summary(0))? else {
        return Err(CommandError::Usage(format!(
            "{}: no cycle-0/{}: not a refine-loop state dir",
            dir.display(),
            crate::state::SUMMARY_FILE
        )));
    };
    let baseline: GateSummary = typed(dir, baseline, "cycle-0/gate-summary.json")?;
    // A run leaves its state at the top; a check only cycle 0.
    let last: GateSummary = match json(layout.summary())? {
        Some(value) => typed(dir, value, crate::state::SUMMARY_FILE)?,
        None => baseline.clone(),
    };
    let trend = match json(layout.trend())? {
        Some(value) => typed(dir, value, crate::state::TREND_FILE)?,
        None => {
            let mut trend = Trend::default();
            trend.push(&last, None, false);
            trend
        }
    };
    finished(&trend, dir)?;
    let scope = match json(layout.run_json())? {
        Some(value) => value["scope"]
            .as_array()
            .map(|patterns| {
                patterns
                    .iter()
                    .filter_map(|p| p.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
        None => Vec::new(),
    };
    let findings = |path: PathBuf| -> Result<Option<FindingsFile>, CommandError> {
        json(path)?
            .map(|value| typed(dir, value, crate::state::FINDINGS_FILE))
            .transpose()
    };
    let baseline_findings = findings(layout.cycle_findings(0))?;
    let last_findings = match findings(layout.findings())? {
        Some(found) => Some(found),
        None if layout.summary().exists() => None,
        None => baseline_findings.clone(),
    };
    Ok(Shard {
        dir: dir.to_path_buf(),
        baseline,
        last,
        trend,
        scope,
        baseline_findings,
        last_findings,
    })
}

/// A shard's trend has its baseline at least: a run that did not finish has none.
fn finished(trend: &Trend, dir: &Path) -> Result<(), CommandError> {
    if trend.cycles.is_empty() {
        return Err(CommandError::Usage(format!(
            "{}: {} has no cycles, not even the baseline: the run it belongs to did not finish; merge the shards that did",
            dir.display(),
            crate::state::TREND_FILE
        )));
    }
    Ok(())
}

/// `value` as a `T`; an error names the shard and the file.
fn typed<T: serde::de::DeserializeOwned>(
    dir: &Path,
    value: serde_json::Value,
    name: &str,
) -> Result<T, CommandError> {
    serde_json::from_value(value)
        .map_err(|error| CommandError::Usage(format!("{}: {name}: {error}", dir.display())))
}

/// The file's text, `None` when it does not exist.
fn read(path: &Path) -> Result<Option<String>, CommandError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(CommandError::Input {
            name: path.display().to_string(),
            source,
        }),
    }
}
