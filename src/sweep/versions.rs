//! Rule 4: a dependency update's version delta, read from the diff of its manifests and lock
//! files, never from its title (update bots rewrite branches in place; titles lag). A major bump,
//! a `0.x` minor bump, or one dependency changed in lockstep across manifests is for a human.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;

use super::{Bump, VersionChange};

/// Files that pin dependencies by hand.
const MANIFESTS: [&str; 9] = [
    "Cargo.toml",
    "package.json",
    "pyproject.toml",
    "Pipfile",
    "setup.cfg",
    "go.mod",
    "Gemfile",
    "composer.json",
    "deno.json",
];

/// Files a tool writes from the manifests.
const LOCK_FILES: [&str; 4] = [
    "package-lock.json",
    "npm-shrinkwrap.json",
    "pnpm-lock.yaml",
    "go.sum",
];

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// A lock file: `*.lock`, `package-lock.json`, `go.sum`, …
pub fn is_lock_file(path: &str) -> bool {
    let name = file_name(path);
    name.ends_with(".lock") || LOCK_FILES.contains(&name)
}

/// A manifest or a lock file: a pull request touching one gets its diff read.
pub fn is_dependency_file(path: &str) -> bool {
    let name = file_name(path);
    let listed = |prefix: &str| name.starts_with(prefix) && name.ends_with(".txt");
    MANIFESTS.contains(&name)
        || listed("requirements")
        || listed("constraints")
        || is_lock_file(path)
}

/// What a line of a manifest or lock file can say.
enum Line {
    /// The dependency the next `version` lines are about (a lock file's `name = "serde"`,
    /// `[dependencies.serde]`, `"node_modules/lodash": {`, a yarn.lock entry).
    Context(String),
    /// `version = "1.2.3"`: the context's version.
    Version(String),
    /// A dependency and its version on one line.
    Pin(String, String),
}

/// Keys of a manifest that hold a version that is not a dependency's.
const NOT_DEPENDENCIES: [&str; 11] = [
    "version",
    "name",
    "edition",
    "rust-version",
    "resolver",
    "requires-python",
    "node",
    "npm",
    "checksum",
    "integrity",
    "go",
];

macro_rules! pattern {
    ($name:ident, $text:literal) => {
        static $name: LazyLock<Regex> =
            LazyLock::new(|| Regex::new($text).expect("a built-in pattern compiles"));
    };
}

pattern!(
    SECTION,
    r"^\[(?:[\w.\-]*\.)?(?:dev-|build-)?dependencies\.([\w.\-]+)\]$"
);
pattern!(TOML_PAIR, r#"^([\w.\-]+)\s*=\s*"([^"]*)""#);
pattern!(
    TOML_TABLE,
    r#"^([\w.\-]+)\s*=\s*\{.*\bversion\s*=\s*"([^"]*)""#
);
pattern!(JSON_PAIR, r#"^"([^"]+)"\s*:\s*"([^"]*)""#);
pattern!(JSON_OBJECT, r#"^"([^"]*)"\s*:\s*\{"#);
pattern!(
    REQUIREMENT,
    r#"^"?([A-Za-z0-9][\w.\-]*)(?:\[[^\]]*\])?\s*(?:===|==|~=|>=|<=|!=|>|<)\s*([0-9][^\s;,"'#]*)"#
);
pattern!(
    GO_MODULE,
    r"^(?:require\s+)?([a-z0-9][\w.\-]*\.[a-z]{2,}/[^\s]+?)(?:/v\d+)?\s+(v[0-9][^\s/]*)"
);
pattern!(GEM, r#"^gem\s+["']([^"']+)["']\s*,\s*["']([^"']+)["']"#);
pattern!(LOCKED_GEM, r"^([\w.\-]+) \(([0-9][^)]*)\)$");
pattern!(LOCKED_PAIR, r#"^"([\w.\-]+) ([0-9][^"\s]*)",?$"#);
pattern!(YARN_ENTRY, r#"^"?((?:@[^@/"\s]+/)?[^@"\s]+)@.*:$"#);
pattern!(YARN_VERSION, r#"^version:?\s+"?([0-9][^"\s]*)"?$"#);

fn capture(regex: &Regex, text: &str) -> Option<(String, String)> {
    let found = regex.captures(text)?;
    Some((found[1].to_string(), found.get(2)?.as_str().to_string()))
}

/// What one line (without its diff marker) says, in a file that is a lock file or not.
fn read_line(text: &str, lock_file: bool) -> Option<Line> {
    let text = text.trim();
    if let Some(found) = SECTION.captures(text) {
        return Some(Line::Context(found[1].to_string()));
    }
    if text.len() > 2 && text.starts_with('[') && text.ends_with(']') {
        // Any other table (`[package]`, `[[package]]`) ends the one before.
        return Some(Line::Context(String::new()));
    }
    if let Some((key, value)) = capture(&TOML_TABLE, text) {
        return Some(Line::Pin(key, value));
    }
    if let Some((key, value)) = capture(&TOML_PAIR, text).or_else(|| capture(&JSON_PAIR, text)) {
        return match key.as_str() {
            "name" if lock_file => Some(Line::Context(value)),
            "version" => Some(Line::Version(value)),
            _ if NOT_DEPENDENCIES.contains(&key.as_str()) => None,
            _ => Some(Line::Pin(key, value)),
        };
    }
    if let Some(found) = JSON_OBJECT.captures(text) {
        let key = &found[1];
        let name = key.rsplit("node_modules/").next().unwrap_or(key);
        return Some(Line::Context(name.to_string()));
    }
    if let Some(found) = YARN_VERSION.captures(text) {
        return Some(Line::Version(found[1].to_string()));
    }
    [&REQUIREMENT, &GO_MODULE, &GEM, &LOCKED_GEM, &LOCKED_PAIR]
        .into_iter()
        .find_map(|regex| capture(regex, text))
        .map(|(name, version)| Line::Pin(name, version))
        .or_else(|| {
            YARN_ENTRY
                .captures(text)
                .map(|found| Line::Context(found[1].to_string()))
        })
}

/// The dependencies whose version the patch of `file` changes: removed and added pins of one
/// name paired in order; a version that did not change is not a change.
pub fn version_changes(file: &str, patch: &str) -> Vec<VersionChange> {
    let lock_file = is_lock_file(file);
    let mut context: Option<String> = None;
    let mut removed: Vec<(String, String)> = Vec::new();
    let mut added: Vec<(String, String)> = Vec::new();
    for raw in patch.lines() {
        let (side, text) = if let Some(header) = raw.strip_prefix("@@") {
            // A hunk starts afresh; git may name the enclosing line after the second `@@`.
            context = None;
            (None, header.split_once("@@").map_or("", |(_, rest)| rest))
        } else if let Some(text) = raw.strip_prefix('-') {
            (Some(&mut removed), text)
        } else if let Some(text) = raw.strip_prefix('+') {
            (Some(&mut added), text)
        } else {
            (None, raw.strip_prefix(' ').unwrap_or(raw))
        };
        let pin = match read_line(text, lock_file) {
            Some(Line::Context(name)) => {
                context = Some(name).filter(|name| !name.is_empty());
                None
            }
            Some(Line::Version(version)) => context.clone().map(|name| (name, version)),
            Some(Line::Pin(name, version)) => Some((name, version)),
            None => None,
        };
        if let (Some(side), Some((name, version))) = (side, pin)
            && looks_like_version(&version)
            && !side.contains(&(name.clone(), version.clone()))
        {
            side.push((name, version));
        }
    }
    let mut changes = Vec::new();
    for (name, from) in &removed {
        let Some(at) = added.iter().position(|(added_name, _)| added_name == name) else {
            continue;
        };
        let (_, to) = added.remove(at);
        if *from != to {
            changes.push(VersionChange {
                file: file.to_string(),
                dependency: name.clone(),
                bump: bump(from, &to),
                from: from.clone(),
                to,
            });
        }
    }
    changes
}

/// A version requirement: digits after any operator (`^1.2`, `>=0.3,<1`, `v1.4.0`, `~> 6.1`).
fn looks_like_version(spec: &str) -> bool {
    numbers(spec).is_some()
}

/// The major, minor and patch numbers of a version requirement's first version.
fn numbers(spec: &str) -> Option<[Option<u64>; 3]> {
    let start = spec.trim_start_matches(|c: char| "^~=<>!v ".contains(c));
    let end = start
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(start.len());
    let mut parts = start[..end].split('.').map(|part| part.parse::<u64>().ok());
    let major = parts.next().flatten()?;
    Some([Some(major), parts.next().flatten(), parts.next().flatten()])
}

/// How far a version moved, either way. Below 1.0 a minor change breaks (and below 0.1 a patch
/// change), as semver and cargo read it.
pub fn bump(from: &str, to: &str) -> Bump {
    let (Some(from), Some(to)) = (numbers(from), numbers(to)) else {
        return Bump::Other;
    };
    let [major, minor, patch] = [0, 1, 2].map(|i| (from[i].unwrap_or(0), to[i].unwrap_or(0)));
    match (major, minor, patch) {
        ((a, b), _, _) if a != b => Bump::Major,
        ((0, _), (a, b), _) if a != b => Bump::ZeroMinor,
        ((0, _), (0, _), (a, b)) if a != b => Bump::ZeroMinor,
        (_, (a, b), _) if a != b => Bump::Minor,
        (_, _, (a, b)) if a != b => Bump::Patch,
        _ => Bump::Other,
    }
}

/// Why a dependency update is for a human, however green: a major or `0.x` minor bump, one
/// dependency changed in two or more manifests at once (pinned in lockstep), or a manifest
/// whose diff could not be read (`unreadable`).
pub fn human_only_reasons(changes: &[VersionChange], unreadable: &[String]) -> Vec<String> {
    let mut reasons = Vec::new();
    for change in changes {
        let what = match change.bump {
            Bump::Major => "a major bump",
            Bump::ZeroMinor => "a 0.x minor bump (breaking below 1.0)",
            Bump::Minor | Bump::Patch | Bump::Other => continue,
        };
        let reason = format!(
            "{} {} → {} in {}: {what}",
            change.dependency, change.from, change.to, change.file
        );
        if !reasons.contains(&reason) {
            reasons.push(reason);
        }
    }
    let mut manifests: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for change in changes.iter().filter(|c| !is_lock_file(&c.file)) {
        let files = manifests.entry(&change.dependency).or_default();
        if !files.contains(&change.file.as_str()) {
            files.push(&change.file);
        }
    }
    for (dependency, files) in manifests.into_iter().filter(|(_, f)| f.len() >= 2) {
        reasons.push(format!(
            "{dependency} changed in lockstep in {}: a version pinned across files",
            files.join(", ")
        ));
    }
    for file in unreadable {
        reasons.push(format!(
            "{file}: GitHub sent no diff (too large or binary); the version change cannot be read"
        ));
    }
    reasons
}

#[cfg(test)]
#[path = "versions_tests.rs"]
mod tests;
