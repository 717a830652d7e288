//! Gate integrity: a change that lowers the count by changing what the gate sees is no fix.
//! After the gate has run on a delegate's change, [`inspect`] reads the change itself (each
//! file before and after) and the gate's record (the runners' test counts, where the findings
//! were) for moves that make the gate see less: a suppression added; a test skipped, focused,
//! deleted or its assertions weakened; the gate's configuration or scripts changed; code or a
//! file moved out of the gate's reach. What counts as such a move is data, the catalogue in
//! `gate-integrity/` (one entry per tool or language), which users extend and override like
//! the parser catalogue; `[[integrity.allow]]` entries let a project accept what it means to.

mod allow;
mod catalogue;
mod config_files;
pub(crate) mod definition;
mod evasion;
mod gate_files;
mod lines;
mod markers;
mod test_code;

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

pub use allow::{Allow, AllowSpec, apply as apply_allows};
pub use catalogue::{Applicable, Catalogue};
pub use gate_files::{CheckCommand, GateFiles};

use crate::model::{CheckRecord, Diagnostic, Severity};

/// The four kinds of move that make a gate see less.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    /// An inline or file-level pragma that silences a tool.
    Suppression,
    /// A test skipped, focused away, deleted, or its assertions removed or weakened; fewer tests
    /// run.
    Tests,
    /// The files a tool reads its rules from, or the gate's own scripts, changed.
    Config,
    /// A file with findings deleted or moved where the gate does not read it, code commented
    /// out or switched off, a threshold lowered.
    Evasion,
}

impl Class {
    pub const ALL: [Self; 4] = [Self::Suppression, Self::Tests, Self::Config, Self::Evasion];

    pub fn name(self) -> &'static str {
        match self {
            Self::Suppression => "suppression",
            Self::Tests => "tests",
            Self::Config => "config",
            Self::Evasion => "evasion",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|class| class.name() == text)
    }
}

/// What the loop does with a change that weakens the gate (`[loop] integrity`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Mode {
    /// Rolled back, a strike for its delegate (the default).
    #[default]
    Refuse,
    /// Judged as any change; its moves are listed.
    Report,
    /// Not looked for.
    Off,
}

impl Mode {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "refuse" => Some(Self::Refuse),
            "report" => Some(Self::Report),
            "off" => Some(Self::Off),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Refuse => "refuse",
            Self::Report => "report",
            Self::Off => "off",
        }
    }
}

/// One move a change made that makes the gate see less.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Move {
    pub class: Class,
    /// The catalogue's rule: `python/noqa`, or `runner/totals`.
    pub rule: String,
    /// The file, relative to the target (`:/path` from the repository's top when outside it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// What was done: `suppression added`.
    pub what: String,
    /// What was found: the pragma or marker, the line, the key and its values.
    pub text: String,
    /// The `[[integrity.allow]]` entry that lets it through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_by: Option<String>,
}

impl Move {
    /// One line: ``` `src/app.py:3`: suppression added: `# noqa: F401` (python/noqa) ```.
    pub fn describe(&self) -> String {
        use crate::markdown::code_span;
        let place = match (&self.path, self.line) {
            (Some(path), Some(line)) => format!("{}: ", code_span(&format!("{path}:{line}"))),
            (Some(path), None) => format!("{}: ", code_span(path)),
            (None, _) => String::new(),
        };
        let allowed = match &self.allowed_by {
            Some(by) => format!("; allowed by {by}"),
            None => String::new(),
        };
        format!(
            "{place}{}: {} ({}){allowed}",
            self.what,
            code_span(&self.text),
            self.rule
        )
    }
}

/// What a path holds, before or after the change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    Absent,
    /// A regular file; its bytes are loaded by this hash.
    File {
        sha256: String,
    },
    /// A symlink, a folder or a special file.
    Other {
        what: &'static str,
    },
}

impl State {
    fn sha256(&self) -> Option<&str> {
        match self {
            Self::File { sha256 } => Some(sha256),
            _ => None,
        }
    }
}

/// One path the change touched.
#[derive(Debug, Clone)]
pub struct Subject {
    /// Relative to the target, `/`-separated (`:/path` from the repository's top when the path
    /// is outside the target): as the catalogue's globs and the findings name it.
    pub path: String,
    pub before: State,
    pub after: State,
}

/// A gate run, as the inspection reads it.
#[derive(Debug, Default)]
pub struct GateView<'a> {
    pub checks: &'a [CheckRecord],
    /// Findings per file (as the findings name it), of any severity: where the gate looked.
    pub findings: HashMap<String, u64>,
    /// Files where a test runner (a check that reports test counts) found a failure.
    pub failing_tests: HashSet<String>,
}

impl<'a> GateView<'a> {
    /// The view of a run whose `checks` reported `findings`, `origins[i]` naming the check of
    /// `findings[i]`.
    pub fn new(checks: &'a [CheckRecord], findings: &[Diagnostic], origins: &[String]) -> Self {
        let runners: HashSet<&str> = (checks.iter())
            .filter(|c| c.tests.is_some())
            .map(|c| c.name.as_str())
            .collect();
        let mut view = Self {
            checks,
            ..Self::default()
        };
        for (finding, origin) in findings.iter().zip(origins) {
            let Some(file) = finding.file.as_deref() else {
                continue;
            };
            let file = file.trim_start_matches("./").to_string();
            if finding.severity == Severity::Error && runners.contains(origin.as_str()) {
                view.failing_tests.insert(file.clone());
            }
            *view.findings.entry(file).or_default() += 1;
        }
        view
    }
}

/// What an inspection reads beside the change.
#[derive(Debug, Clone, Copy)]
pub struct Inspection<'a> {
    pub catalogue: &'a Catalogue,
    pub gate_files: &'a GateFiles,
    /// The gate on the state the change started from, and on the change.
    pub before: &'a GateView<'a>,
    pub after: &'a GateView<'a>,
}

/// One file of the change with its bytes on each side (`None`: not a regular file there).
#[derive(Debug, Clone, Copy)]
pub(crate) struct FilePair<'a> {
    pub path: &'a str,
    pub before: Option<&'a [u8]>,
    pub after: Option<&'a [u8]>,
}

/// The moves `subjects` (the change) made, in the order found; `load` gives a file's bytes by
/// its hash. Every file is read once, and the bytes of one file at a time are held.
pub fn inspect(
    inspection: &Inspection<'_>,
    subjects: &[Subject],
    load: &dyn Fn(&str) -> Option<Vec<u8>>,
) -> Vec<Move> {
    let catalogue = inspection.catalogue;
    let mut moves = Vec::new();
    let mut moved_markers = markers::Pool::default();
    let mut released = markers::Released::new();
    let groups = move_groups(subjects);
    let mut tests = test_code::Tally::new(catalogue);
    let mut new_tests: HashMap<&str, Vec<u64>> = HashMap::new();
    let mut emptied: HashSet<&str> = HashSet::new();
    for subject in subjects {
        let applicable = catalogue.applicable(&subject.path);
        if applicable.is_empty() && inspection.gate_files.holds(&subject.path).is_none() {
            continue;
        }
        // A file whose bytes cannot be had is left out, not read as created or deleted.
        let side = |state: &State| match state.sha256() {
            None => Some(None),
            Some(sha) => load(sha).map(Some),
        };
        let (Some(before), Some(after)) = (side(&subject.before), side(&subject.after)) else {
            continue;
        };
        let pair = FilePair {
            path: &subject.path,
            before: before.as_deref(),
            after: after.as_deref(),
        };
        if pair.before.is_none() && pair.after.is_none() {
            continue;
        }
        let diff = match (pair.before, pair.after) {
            (Some(before), Some(after)) => Some(lines::LineDiff::of(before, after)),
            _ => None,
        };
        let failing = inspection.before.failing_tests.contains(&subject.path);
        let tests_added = tests.read(&pair, &applicable.tests, diff.as_ref(), failing);
        if !tests_added.is_empty() {
            new_tests.insert(subject.path.as_str(), tests_added);
        }
        match &diff {
            Some(diff) => {
                let readings = markers::read_diff(catalogue, &applicable, pair.path, diff);
                let counting = markers::Counting::Modified(&mut released);
                moves.extend(markers::compare(catalogue, &readings, counting));
            }
            None => {
                let group = groups
                    .get(subject.path.as_str())
                    .copied()
                    .unwrap_or(&subject.path);
                moved_markers.add(group, markers::read_pair(catalogue, &applicable, &pair));
            }
        }
        moves.extend(config_files::compare(
            catalogue,
            &applicable,
            inspection.gate_files,
            inspection.before,
            &pair,
        ));
        if let Some(diff) = &diff {
            moves.extend(evasion::commented_out(
                catalogue,
                &applicable.comments,
                &pair,
                diff,
            ));
            if evasion::emptied(
                pair.before.unwrap_or_default(),
                pair.after.unwrap_or_default(),
            ) {
                emptied.insert(subject.path.as_str());
            }
        }
    }
    moves.extend(moved_markers.compare(catalogue, &mut released));
    // A skip or focus marker on a test the change added is that test's, not a test weakened.
    moves.retain(|found| !on_a_new_test(found, &new_tests));
    moves.extend(tests.compare(subjects, inspection.before));
    moves.extend(test_code::runner_totals(
        inspection.before.checks,
        inspection.after.checks,
    ));
    moves.extend(evasion::vanished_files(
        catalogue,
        subjects,
        &emptied,
        inspection.before,
        inspection.after,
    ));
    moves
}

/// Whether `found` is a tests marker on a test the change added: at most 5 lines above its
/// definition (an attribute, a decorator) or 30 below (in its body).
fn on_a_new_test(found: &Move, new_tests: &HashMap<&str, Vec<u64>>) -> bool {
    let (Some(path), Some(line)) = (&found.path, found.line) else {
        return false;
    };
    found.class == Class::Tests
        && found.what == markers::TEST_MARKER_ADDED
        && new_tests.get(path.as_str()).is_some_and(|tests| {
            tests
                .iter()
                .any(|&test| line + 5 >= test && line <= test + 30)
        })
}

/// Which created file was moved from which deleted one: the same content, else the same name.
/// Each created file with one maps to that deleted file's path.
fn move_groups(subjects: &[Subject]) -> HashMap<&str, &str> {
    let deleted: Vec<&Subject> = (subjects.iter())
        .filter(|s| s.before.sha256().is_some() && s.after.sha256().is_none())
        .collect();
    let name = |path: &str| path.rsplit('/').next().unwrap_or(path).to_string();
    let mut groups = HashMap::new();
    for created in subjects.iter().filter(|s| s.before.sha256().is_none()) {
        let Some(sha) = created.after.sha256() else {
            continue;
        };
        let from = (deleted.iter())
            .find(|d| d.before.sha256() == Some(sha))
            .or_else(|| {
                deleted
                    .iter()
                    .find(|d| name(&d.path) == name(&created.path))
            });
        if let Some(from) = from {
            groups.insert(created.path.as_str(), from.path.as_str());
        }
    }
    groups
}

#[cfg(test)]
#[path = "integrity_tests.rs"]
mod tests;
