//! The engine's side of gate integrity: the moves a change made that make the gate see less,
//! found by the catalogue (`crate::integrity`) in the change itself and in the gate's record,
//! judged by `[loop] integrity`, and kept on record: per cycle (`trend.json`), per delegate (the
//! final report, its bar), and as the lines its next prompt carries.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

use super::verify::Verified;
use super::{Attempt, Kept};
use crate::config::Settings;
use crate::gate::GateRun;
use crate::integrity::{GateView, Inspection, Mode, Move, State, Subject, apply_allows, inspect};
use crate::model::IntegrityCounts;
use crate::workspace::{Change, PathState, SnapshotStore};

/// Changes a delegate may have refused for weakening the gate before it is barred.
pub const REFUSALS_FOR_BAR: u32 = 3;

/// A changed file larger than this is not read for its markers, tests or configuration (its
/// deletion or move still counts): a source file a gate reads is far smaller.
const MAX_READ_BYTES: u64 = 64 << 20;

/// Refused moves an attempt's next prompt names, at most.
const PROMPT_MOVES: usize = 10;

/// The moves `changes` made, from the kept state `kept` to the gate run `run`, each marked
/// with the allow entry that lets it through.
pub fn moves_of(
    settings: &Settings,
    root: &Path,
    store: &SnapshotStore,
    changes: &[Change],
    kept: &Kept,
    run: &GateRun,
) -> Vec<Move> {
    let prefix = super::verify::target_prefix(root, &settings.target);
    let subjects: Vec<Subject> = changes
        .iter()
        .map(|change| Subject {
            path: subject_path(&prefix, change.path.as_bytes()),
            before: state(&change.before),
            after: state(&change.after),
        })
        .collect();
    let before = GateView::new(&kept.summary.checks, &kept.diagnostics, &kept.origins);
    let (after_findings, after_origins) = super::verify::diagnostics_of(run);
    let after = GateView::new(&run.summary.checks, &after_findings, &after_origins);
    let inspection = Inspection {
        catalogue: &settings.integrity.catalogue,
        gate_files: &settings.integrity.gate_files,
        before: &before,
        after: &after,
    };
    let load = |sha: &str| {
        let size = std::fs::metadata(store.path_of(sha)).map_or(0, |m| m.len());
        if size > MAX_READ_BYTES {
            tracing::info!(
                size,
                "a changed file is too large to read for integrity; left out"
            );
            return None;
        }
        match store.read_verified(sha) {
            Ok(bytes) => Some(bytes),
            Err(error) => {
                tracing::warn!(%error, "a changed file's kept copy cannot be read; integrity leaves it out");
                None
            }
        }
    };
    let mut moves = inspect(&inspection, &subjects, &load);
    apply_allows(&settings.integrity.allow, &mut moves);
    moves
}

/// Why a change with `moves` goes, under `mode`: `None` when it may stay.
pub fn refusal(mode: Mode, moves: &[Move]) -> Option<String> {
    let refused: Vec<&Move> = moves.iter().filter(|m| m.allowed_by.is_none()).collect();
    if mode != Mode::Refuse || refused.is_empty() {
        return None;
    }
    let mut classes: Vec<&str> = refused.iter().map(|m| m.class.name()).collect();
    classes.sort_unstable();
    classes.dedup();
    Some(format!(
        "it weakens the gate instead of fixing the code ({} {}: {}); first: {}",
        refused.len(),
        if refused.len() == 1 { "move" } else { "moves" },
        classes.join(", "),
        refused[0].describe()
    ))
}

/// The moves of `verified`'s that belong to `attempt`'s change: those in the files it changed,
/// and those every attempt shares: of no file (the runners' totals), or in a file the gate run
/// made (whose planted code wrote it cannot be told). With whether one is refused and its own.
pub fn of_attempt(
    settings: &Settings,
    root: &Path,
    attempt: &Attempt,
    verified: &Verified,
) -> (Vec<Move>, bool) {
    let prefix = super::verify::target_prefix(root, &settings.target);
    let paths = |changes: &[Change]| -> Vec<String> {
        (changes.iter())
            .map(|change| subject_path(&prefix, change.path.as_bytes()))
            .collect()
    };
    let (own, shared) = (paths(&attempt.changes), paths(&verified.made));
    let moves: Vec<Move> = (verified.integrity.iter())
        .filter(|m| {
            m.path
                .as_ref()
                .is_none_or(|path| own.contains(path) || shared.contains(path))
        })
        .cloned()
        .collect();
    let its_own = (moves.iter())
        .any(|m| m.allowed_by.is_none() && m.path.as_ref().is_some_and(|path| own.contains(path)));
    (moves, its_own)
}

/// A path of the repository as the catalogue and the findings name it: relative to the
/// target, or `:/path` from the repository's top when it is outside the target.
fn subject_path(prefix: &Path, repo_path: &[u8]) -> String {
    let path = Path::new(OsStr::from_bytes(repo_path));
    match path.strip_prefix(prefix) {
        Ok(relative) => relative.to_string_lossy().into_owned(),
        Err(_) => format!(":/{}", path.to_string_lossy()),
    }
}

fn state(path_state: &PathState) -> State {
    match path_state {
        PathState::Absent => State::Absent,
        PathState::File { sha256, .. } => State::File {
            sha256: sha256.clone(),
        },
        PathState::Symlink { .. } => State::Other { what: "symlink" },
        PathState::Directory => State::Other { what: "folder" },
        PathState::Special { .. } => State::Other {
            what: "special file",
        },
    }
}

/// One move on record: where it was found and what came of it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub cycle: u32,
    pub delegate: String,
    pub category: String,
    pub found: Move,
    /// Its change was rolled back for it.
    pub refused: bool,
}

/// Every move of the run, the counts of the cycle under way, and what each delegate was
/// refused.
#[derive(Debug, Default)]
pub struct IntegrityLog {
    pub recorded: Vec<Recorded>,
    /// Per delegate: its changes refused, and the lines its next prompt carries.
    refusals: HashMap<usize, (u32, Vec<String>)>,
    cycle: IntegrityCounts,
    /// Time spent inspecting changes, in the cycle under way.
    pub time: Duration,
}

impl IntegrityLog {
    /// Records what `attempt` (by `delegate`, described `name`) was found to do in `cycle`;
    /// `refused` when its change went for it, `its_own` when that counts against the delegate.
    /// Returns the changes its delegate has had refused.
    pub fn record(
        &mut self,
        cycle: u32,
        attempt: &Attempt,
        name: &str,
        refused: bool,
        its_own: bool,
    ) -> u32 {
        for found in &attempt.integrity {
            match (&found.allowed_by, refused) {
                (Some(_), _) => self.cycle.allowed += 1,
                (None, true) => self.cycle.refused += 1,
                (None, false) => self.cycle.reported += 1,
            }
            self.recorded.push(Recorded {
                cycle,
                delegate: name.to_string(),
                category: attempt.category.clone(),
                found: found.clone(),
                refused: refused && found.allowed_by.is_none(),
            });
        }
        let (count, lines) = self.refusals.entry(attempt.delegate).or_default();
        if refused && its_own {
            *count += 1;
            *lines = (attempt.integrity.iter())
                .filter(|m| m.allowed_by.is_none())
                .take(PROMPT_MOVES)
                .map(Move::describe)
                .collect();
        }
        *count
    }

    /// What `delegate` was refused last time, for its next prompt to say (once).
    pub fn take_refused_lines(&mut self, delegate: usize) -> Vec<String> {
        (self.refusals.get_mut(&delegate))
            .map(|(_, lines)| std::mem::take(lines))
            .unwrap_or_default()
    }

    /// The cycle's counts; the next cycle starts from none.
    pub fn take_cycle(&mut self) -> IntegrityCounts {
        std::mem::take(&mut self.cycle)
    }

    /// The report's part.
    pub fn part(&self, mode: Mode) -> crate::report::IntegrityPart {
        let line = |r: &Recorded| {
            format!(
                "cycle {}, `{}` on {}: {}",
                r.cycle,
                r.delegate,
                r.category,
                r.found.describe()
            )
        };
        let mut per_delegate: BTreeMap<&str, crate::report::DelegateIntegrity> = BTreeMap::new();
        for r in &self.recorded {
            let row = per_delegate.entry(&r.delegate).or_default();
            match (r.refused, r.found.allowed_by.is_some()) {
                (true, _) => row.refused += 1,
                (false, true) => row.allowed += 1,
                (false, false) => row.reported += 1,
            }
        }
        let mut changes_refused: BTreeMap<&str, std::collections::BTreeSet<(u32, &str)>> =
            BTreeMap::new();
        for r in self.recorded.iter().filter(|r| r.refused) {
            changes_refused
                .entry(&r.delegate)
                .or_default()
                .insert((r.cycle, &r.category));
        }
        crate::report::IntegrityPart {
            mode,
            refused: self
                .recorded
                .iter()
                .filter(|r| r.refused)
                .map(line)
                .collect(),
            allowed: (self.recorded.iter())
                .filter(|r| r.found.allowed_by.is_some())
                .map(line)
                .collect(),
            reported: (self.recorded.iter())
                .filter(|r| !r.refused && r.found.allowed_by.is_none())
                .map(line)
                .collect(),
            delegates: per_delegate
                .into_iter()
                .map(|(name, mut row)| {
                    row.delegate = name.to_string();
                    row.changes_refused = changes_refused.get(name).map_or(0, |c| c.len() as u32);
                    row.barred = row.changes_refused >= REFUSALS_FOR_BAR;
                    row
                })
                .collect(),
        }
    }
}
