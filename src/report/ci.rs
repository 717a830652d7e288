//! What the CI report renderers (JUnit, SARIF, Code Quality) read of the report beside it: each
//! finding with a fingerprint unique in the report, the parsers' documentation, and the paths as
//! the repository's root has them.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::Report;
use crate::config::CheckSettings;
use crate::model::{CheckRecord, Diagnostic};
use crate::parse::{Catalogue, RuleHelp};
use crate::state::StateError;

pub use crate::state::{CODE_QUALITY_FILE, JUNIT_FILE, SARIF_FILE};

#[derive(Debug, thiserror::Error)]
pub enum CiReportError {
    #[error("cannot render {JUNIT_FILE}: {source}")]
    Junit {
        #[source]
        source: std::io::Error,
    },
    #[error("cannot render {file}: {source}")]
    Json {
        file: &'static str,
        #[source]
        source: serde_json::Error,
    },
    #[error("cannot create the report folder {}: {source}", path.display())]
    CreateDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Write(#[from] StateError),
}

/// The parsers the checks name, by name.
pub type ParserDocs = BTreeMap<String, ParserDoc>;

/// What the reports know of a parser: what it reads, and where its tool documents each code.
#[derive(Debug, Clone, Default)]
pub struct ParserDoc {
    pub description: String,
    pub rule_help: Option<RuleHelp>,
}

/// What `parsers` knows of the parsers `checks` name.
pub fn parser_docs(parsers: &Catalogue, checks: &[CheckSettings]) -> ParserDocs {
    docs_of(parsers, checks.iter().map(|check| check.parser.as_str()))
}

/// What `parsers` knows of the parsers `names` (those it has).
pub(crate) fn docs_of<'n>(
    parsers: &Catalogue,
    names: impl IntoIterator<Item = &'n str>,
) -> ParserDocs {
    names
        .into_iter()
        .filter_map(|name| {
            let parser = parsers.get(name)?;
            Some((
                name.to_string(),
                ParserDoc {
                    description: parser.description().to_string(),
                    rule_help: parser.rule_help().cloned(),
                },
            ))
        })
        .collect()
}

/// Every finding of `report`'s checks in order (check by check), with what the CI renderers
/// need beside it.
/// In pull-request mode the new findings come first, the pre-existing ones after them.
pub(crate) fn findings(report: &Report) -> Vec<Finding<'_>> {
    let mut seen = Seen::default();
    let mut out = Vec::new();
    for check in &report.checks {
        for (index, diagnostic) in check.findings.iter().enumerate() {
            let fingerprint = unique_fingerprint(&mut seen, &check.record, diagnostic);
            out.push(Finding {
                check: &check.record,
                diagnostic,
                fingerprint,
                preexisting: check.preexisting.get(index).copied().unwrap_or(false),
            });
        }
    }
    // Stable: each part keeps the order its findings were found in.
    out.sort_by_key(|finding| finding.preexisting);
    out
}

/// The file a finding is reported against when it has no path inside the target: the config
/// file that declares the gate, relative to the target and `/`-separated (its default name when
/// it lies outside the target).
pub fn config_anchor(target: &Path, config_file: &Path) -> String {
    let relative = config_file.strip_prefix(target).unwrap_or(config_file);
    if relative.as_os_str().is_empty() || relative.is_absolute() {
        return crate::config::defaults::CONFIG_FILE.to_string();
    }
    relative
        .components()
        .map(|part| part.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// `path` (relative to the target) relative to the repository root. A path that already starts
/// with the target's folder and names nothing under the target is taken as the root's already
/// (a tool that prints workspace-relative paths, as cargo does for a member); an empty one stays.
pub(super) fn rooted(prefix: &str, target: &Path, path: &str) -> String {
    let path = path.trim_start_matches("./");
    let from_root = path.starts_with(&format!("{prefix}/")) && !target.join(path).exists();
    if prefix.is_empty() || path.is_empty() || from_root {
        path.to_string()
    } else {
        format!("{prefix}/{path}")
    }
}

/// The target's folder relative to the repository root the CI system checked out:
/// `GITHUB_WORKSPACE`, else `CI_PROJECT_DIR`, else the git work tree holding the target.
/// Empty when the target is the root (or lies outside it).
pub fn repository_prefix(target: &Path) -> String {
    let from_env = |name: &str| {
        std::env::var_os(name)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    };
    let root = from_env("GITHUB_WORKSPACE").or_else(|| from_env("CI_PROJECT_DIR"));
    let Ok(canonical) = target.canonicalize() else {
        return String::new();
    };
    let relative_to = |root: PathBuf| -> Option<String> {
        let root = root.canonicalize().unwrap_or(root);
        let relative = canonical.strip_prefix(&root).ok()?;
        Some(
            relative
                .components()
                .map(|part| part.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/"),
        )
    };
    // No CI folder, or the target lies outside it (a linked worktree of `--isolate`): its own
    // work tree is the root.
    root.and_then(relative_to)
        .or_else(|| {
            git2::Repository::discover(target)
                .ok()
                .and_then(|repo| repo.workdir().map(Path::to_path_buf))
                .and_then(relative_to)
        })
        .unwrap_or_default()
}

/// One finding as the renderers see it.
#[derive(Debug, Clone)]
pub(crate) struct Finding<'a> {
    pub check: &'a CheckRecord,
    pub diagnostic: &'a Diagnostic,
    /// The finding's fingerprint, made unique within the report.
    pub fingerprint: String,
    /// Pull-request mode: it was there before the change.
    pub preexisting: bool,
}

impl Finding<'_> {
    /// The category the finding counts under (its own, else its check's).
    pub fn category(&self) -> &str {
        self.diagnostic
            .category
            .as_deref()
            .unwrap_or(&self.check.category)
    }

    /// The finding's path when it is inside the target (relative, `/`-separated).
    pub fn path(&self) -> Option<&str> {
        let file = self.diagnostic.file.as_deref()?;
        let inside = !self.diagnostic.outside_target && !file.is_empty() && !file.starts_with('/');
        inside.then_some(file)
    }

    /// The line, when the finding has a path inside the target and a line (1-based).
    pub fn line(&self) -> Option<u32> {
        self.path()?;
        self.diagnostic.line.filter(|line| *line >= 1)
    }

    /// The column, when the line is known (1-based).
    pub fn column(&self) -> Option<u32> {
        self.line()?;
        self.diagnostic.column.filter(|column| *column >= 1)
    }

    /// The message, with the path the tool printed when that path is outside the target (the
    /// report's location is then the anchor).
    pub fn message(&self) -> String {
        let diagnostic = self.diagnostic;
        match (&diagnostic.file, self.path()) {
            (Some(file), None) if !file.is_empty() => {
                let mut at = file.clone();
                for number in [diagnostic.line, diagnostic.column]
                    .into_iter()
                    .map_while(|n| n)
                {
                    at.push_str(&format!(":{number}"));
                }
                format!("{} (at {at})", diagnostic.message)
            }
            _ => diagnostic.message.clone(),
        }
    }

    /// The finding's code, when it has one.
    pub fn code(&self) -> Option<&str> {
        self.diagnostic
            .code
            .as_deref()
            .filter(|code| !code.is_empty())
    }

    /// Whether the finding has a code of its own.
    pub fn has_code(&self) -> bool {
        self.code().is_some()
    }

    /// The rule: the finding's code, or else the name of the check that reported it.
    pub fn rule(&self) -> &str {
        self.code().unwrap_or(&self.check.name)
    }
}

/// The diagnostic's fingerprint (computed when it has none), salted with its occurrence number
/// when an earlier finding of the report already has it.
/// The fingerprints given out so far, and for each base how many times it was asked for (so
/// that a flood of one finding costs one hash each, not a walk over all the earlier ones).
#[derive(Default)]
struct Seen {
    taken: HashSet<String>,
    occurrences: std::collections::HashMap<String, u64>,
}

fn unique_fingerprint(seen: &mut Seen, check: &CheckRecord, diagnostic: &Diagnostic) -> String {
    let base = if diagnostic.fingerprint.is_empty() {
        Diagnostic::compute_fingerprint(
            &check.name,
            diagnostic.code.as_deref(),
            diagnostic.file.as_deref(),
            &diagnostic.message,
        )
    } else {
        diagnostic.fingerprint.clone()
    };
    let occurrence = seen.occurrences.entry(base.clone()).or_insert(0);
    let mut candidate = base.clone();
    if *occurrence > 0 {
        candidate.clear();
    }
    while candidate.is_empty() || !seen.taken.insert(candidate.clone()) {
        *occurrence += 1;
        let mut hasher = Sha256::new();
        hasher.update(base.as_bytes());
        hasher.update([0u8]);
        hasher.update((*occurrence).to_le_bytes());
        candidate = crate::encoding::hex_digest(hasher);
    }
    if *occurrence == 0 {
        *occurrence = 1;
    }
    candidate
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Severity;
    use crate::report::fixture;
    use crate::report::write_ci_reports;

    #[test]
    fn repeated_fingerprints_are_salted_deterministically() {
        let records = fixture::records();
        let mut findings = fixture::findings();
        findings.push(findings[0].clone());
        findings.push(findings[0].clone());
        let input = fixture::input(&records, &findings);
        let first: Vec<String> = super::findings(&input)
            .into_iter()
            .map(|f| f.fingerprint)
            .collect();
        let again: Vec<String> = super::findings(&input)
            .into_iter()
            .map(|f| f.fingerprint)
            .collect();
        assert_eq!(first, again);
        assert_eq!(first[0], findings[0].fingerprint);
        assert_eq!(first.iter().collect::<HashSet<_>>().len(), first.len());
    }

    #[test]
    fn outside_paths_move_into_the_message() {
        let records = fixture::records();
        let findings = vec![Diagnostic {
            file: Some("/usr/lib/python3/site.py".into()),
            line: Some(3),
            column: Some(1),
            end_line: None,
            end_column: None,
            severity: Severity::Error,
            code: None,
            message: "bad".into(),
            category: Some("types".into()),
            fingerprint: String::new(),
            outside_target: true,
            body: None,
        }];
        let input = fixture::input(&records, &findings);
        let finding = &super::findings(&input)[0];
        assert_eq!(finding.path(), None);
        assert_eq!(finding.line(), None);
        assert_eq!(finding.message(), "bad (at /usr/lib/python3/site.py:3:1)");
        assert_eq!(finding.rule(), "ruff");
        assert_eq!(finding.category(), "types");
        assert_eq!(finding.fingerprint.len(), 64);
    }

    #[test]
    fn the_anchor_is_the_config_file_relative_to_the_target() {
        let target = Path::new("/work/repo");
        let anchor = |config: &str| config_anchor(target, Path::new(config));
        assert_eq!(anchor("/work/repo/refine-loop.toml"), "refine-loop.toml");
        assert_eq!(anchor("/work/repo/ci/gate.toml"), "ci/gate.toml");
        assert_eq!(anchor("ci/gate.toml"), "ci/gate.toml");
        assert_eq!(anchor("/etc/refine-loop.toml"), "refine-loop.toml");
        assert_eq!(anchor("/work/repo"), "refine-loop.toml");
    }

    #[test]
    fn writes_the_three_files() {
        let records = fixture::records();
        let findings = fixture::findings();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("reports");
        write_ci_reports(&out, &fixture::input(&records, &findings)).unwrap();
        for name in [JUNIT_FILE, SARIF_FILE, CODE_QUALITY_FILE] {
            let bytes = std::fs::read(out.join(name)).unwrap();
            assert!(!bytes.starts_with(&[0xef, 0xbb, 0xbf]), "{name} has a BOM");
            assert!(std::str::from_utf8(&bytes).is_ok(), "{name} is not UTF-8");
        }
    }
}
