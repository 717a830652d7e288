//! One entry of the integrity catalogue (`gate-integrity/<name>.toml`): what one tool or
//! language offers a fixer for making its gate see less, as serde reads it (unknown keys are
//! errors), and its compiled form. Every regex and glob is compiled here, so a broken entry
//! fails before anything runs, naming its file and key.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use regex::bytes::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};
use serde::Deserialize;

use super::Class;
use crate::parse::InvalidValue;

/// Which lines of a change a marker counts on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// Occurrences the change added (a pragma written in).
    #[default]
    Added,
    /// Occurrences the change removed (a `#![deny(...)]` taken out).
    Removed,
}

/// Which changes of a configuration file count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConfigOn {
    /// Any change (of the keys named, when `keys` or `except_keys` is given).
    #[default]
    Changed,
    /// Only lines the change added (those matching `lines`, when it is given).
    Added,
    /// An ignore file: lines added that hide a file where the gate found something.
    Hides,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryFile {
    name: String,
    #[serde(default)]
    description: String,
    /// Globs of the files the entry's markers, tests and comments apply to.
    #[serde(default)]
    files: Vec<String>,
    #[serde(default)]
    marker: Vec<MarkerFile>,
    #[serde(default)]
    tests: Vec<TestsFile>,
    #[serde(default)]
    config: Vec<ConfigFile>,
    #[serde(default)]
    threshold: Vec<ThresholdFile>,
    comment: Option<CommentFile>,
    #[serde(default)]
    runner: Vec<Runner>,
    /// Globs of places the tools leave unread by default (build output, vendored code).
    #[serde(default)]
    unread: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MarkerFile {
    name: String,
    class: Class,
    regex: String,
    files: Option<Vec<String>>,
    #[serde(default)]
    on: Side,
    /// Whether it counts in a file the change created (a generated file's header does not).
    in_new_files: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TestsFile {
    name: String,
    files: Vec<String>,
    definition: Option<String>,
    assertion: Option<String>,
    trivial: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    name: String,
    files: Vec<String>,
    keys: Option<Vec<String>>,
    except_keys: Option<Vec<String>>,
    #[serde(default)]
    on: ConfigOn,
    lines: Option<String>,
    ignore_lines: Option<String>,
    /// The class of its moves: `config` (the default), or `tests` for expected output.
    class: Option<Class>,
    /// Whether a file the change created counts (a new snapshot for a new test does not).
    in_new_files: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThresholdFile {
    name: String,
    files: Vec<String>,
    regex: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CommentFile {
    #[serde(default)]
    line: Vec<String>,
    #[serde(default)]
    block: Vec<[String; 2]>,
}

/// The files a rule applies to: its globs as written (anchored), and compiled.
#[derive(Debug, Clone)]
pub struct Files {
    /// Each glob anchored at the target (`**/` before a bare name).
    pub globs: Vec<String>,
    set: GlobSet,
}

impl Files {
    pub fn is_match(&self, path: &str) -> bool {
        self.set.is_match(path)
    }
}

/// A catalogue entry, compiled.
#[derive(Debug)]
pub struct Entry {
    pub name: String,
    pub description: String,
    /// Where it came from: `gate-integrity/python.toml (built in)`, or a user's file.
    pub origin: String,
    pub markers: Vec<Marker>,
    /// Every marker's regex in one set: which of them a text holds, in one pass over it.
    pub marker_set: RegexSet,
    pub tests: Vec<TestRule>,
    pub config: Vec<ConfigRule>,
    pub thresholds: Vec<Threshold>,
    pub comment: Option<Comment>,
    pub runners: Vec<Runner>,
    pub unread: Option<GlobSet>,
}

/// Text that, where a change adds it (or removes it), makes a tool see less: a suppression,
/// a skip or focus marker, code switched off.
#[derive(Debug)]
pub struct Marker {
    pub name: String,
    pub class: Class,
    pub regex: Regex,
    /// The regex has a `codes` group: the rules a pragma names, each counted on its own.
    pub has_codes: bool,
    pub files: Files,
    pub on: Side,
    /// It counts in files the change created.
    pub in_new_files: bool,
}

/// How a test framework's tests and assertions read.
#[derive(Debug)]
pub struct TestRule {
    pub name: String,
    pub files: Files,
    pub definition: Option<Regex>,
    pub assertion: Option<Regex>,
    /// An assertion that always holds (`assert True`).
    pub trivial: Option<Regex>,
}

/// Files a tool reads its rules from.
#[derive(Debug)]
pub struct ConfigRule {
    pub name: String,
    pub files: Files,
    /// Only these dotted keys count (TOML, JSON, INI sections); all when empty.
    pub keys: Vec<String>,
    /// These keys do not count.
    pub except_keys: Vec<String>,
    pub on: ConfigOn,
    /// With `on = "added"`: only added lines this matches count.
    pub lines: Option<Regex>,
    /// Lines this matches do not count (imports, in a file of code that configures).
    pub ignore_lines: Option<Regex>,
    pub class: Class,
    pub in_new_files: bool,
}

/// A number a gate must reach (coverage's `fail_under`): lowering it is evasion.
#[derive(Debug)]
pub struct Threshold {
    pub name: String,
    pub files: Files,
    /// With a `value` group.
    pub regex: Regex,
}

/// How a language writes comments, to see code commented out.
#[derive(Debug)]
pub struct Comment {
    pub files: Files,
    pub line: Vec<Vec<u8>>,
    pub block: Vec<(Vec<u8>, Vec<u8>)>,
}

/// A command whose own file the gate runs (`make` reads `Makefile`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Runner {
    pub command: Vec<String>,
    /// Names relative to the check's folder.
    pub files: Vec<String>,
}

/// Reads and compiles the entry in `text`; `origin` names it in errors.
pub fn compile(origin: &str, text: &str) -> Result<Entry, InvalidValue> {
    let file = crate::parse::from_toml::<EntryFile>(origin, text)?;
    let invalid = |key: String, reason: String| InvalidValue::at(origin, "", None, key, reason);
    if file.name.trim().is_empty() {
        return Err(invalid("name".into(), "an entry needs a name".into()));
    }
    let entry_files = if file.files.is_empty() {
        None
    } else {
        Some(compile_files(&file.files).map_err(|r| invalid("files".into(), r))?)
    };
    let files_or_entry = |key: String, given: Option<&[String]>| match given {
        Some(globs) => compile_files(globs).map_err(|r| invalid(key, r)),
        None => entry_files
            .clone()
            .ok_or_else(|| invalid(key, "no `files` here or for the whole entry".into())),
    };
    let mut markers = Vec::new();
    for (index, marker) in file.marker.iter().enumerate() {
        let key = |field: &str| format!("marker[{index}].{field}");
        let regex =
            compile_regex(&marker.regex, &["codes"]).map_err(|r| invalid(key("regex"), r))?;
        markers.push(Marker {
            name: marker.name.clone(),
            class: marker.class,
            has_codes: regex.capture_names().any(|n| n == Some("codes")),
            regex,
            files: files_or_entry(key("files"), marker.files.as_deref())?,
            on: marker.on,
            in_new_files: marker.in_new_files.unwrap_or(true),
        });
    }
    // An optional regex at `key`.
    let optional = |key: String, pattern: &Option<String>| {
        (pattern.as_deref())
            .map(|p| compile_regex(p, &[]).map_err(|r| invalid(key, r)))
            .transpose()
    };
    let mut tests = Vec::new();
    for (index, rule) in file.tests.iter().enumerate() {
        let key = |field: &str| format!("tests[{index}].{field}");
        tests.push(TestRule {
            name: rule.name.clone(),
            files: compile_files(&rule.files).map_err(|r| invalid(key("files"), r))?,
            definition: optional(key("definition"), &rule.definition)?,
            assertion: optional(key("assertion"), &rule.assertion)?,
            trivial: optional(key("trivial"), &rule.trivial)?,
        });
    }
    let mut config = Vec::new();
    for (index, rule) in file.config.iter().enumerate() {
        let key = |field: &str| format!("config[{index}].{field}");
        let keys = rule.keys.clone().unwrap_or_default();
        let except_keys = rule.except_keys.clone().unwrap_or_default();
        for (field, list) in [("keys", &keys), ("except_keys", &except_keys)] {
            if let Some(bad) = list.iter().find(|k| k.split('.').any(str::is_empty)) {
                return Err(invalid(
                    key(field),
                    format!("\"{bad}\" is not a dotted key"),
                ));
            }
        }
        let lines = optional(key("lines"), &rule.lines)?;
        if lines.is_some() && rule.on != ConfigOn::Added {
            return Err(invalid(key("lines"), "goes with on = \"added\"".into()));
        }
        let ignore_lines = optional(key("ignore_lines"), &rule.ignore_lines)?;
        config.push(ConfigRule {
            ignore_lines,
            class: rule.class.unwrap_or(Class::Config),
            in_new_files: rule.in_new_files.unwrap_or(true),
            name: rule.name.clone(),
            files: compile_files(&rule.files).map_err(|r| invalid(key("files"), r))?,
            keys,
            except_keys,
            on: rule.on,
            lines,
        });
    }
    let mut thresholds = Vec::new();
    for (index, rule) in file.threshold.iter().enumerate() {
        let key = |field: &str| format!("threshold[{index}].{field}");
        let regex = compile_regex(&rule.regex, &["value"]).map_err(|r| invalid(key("regex"), r))?;
        if !regex.capture_names().any(|n| n == Some("value")) {
            return Err(invalid(key("regex"), "needs a `value` group".into()));
        }
        thresholds.push(Threshold {
            name: rule.name.clone(),
            files: compile_files(&rule.files).map_err(|r| invalid(key("files"), r))?,
            regex,
        });
    }
    let comment = match &file.comment {
        None => None,
        Some(comment) => {
            if comment
                .line
                .iter()
                .chain(comment.block.iter().flatten())
                .any(String::is_empty)
            {
                return Err(invalid("comment".into(), "a comment mark is empty".into()));
            }
            Some(Comment {
                files: files_or_entry("comment".into(), None)?,
                line: comment.line.iter().map(|l| l.as_bytes().to_vec()).collect(),
                block: (comment.block.iter())
                    .map(|[open, close]| (open.as_bytes().to_vec(), close.as_bytes().to_vec()))
                    .collect(),
            })
        }
    };
    let unread = if file.unread.is_empty() {
        None
    } else {
        Some(compile_globs(&file.unread).map_err(|r| invalid("unread".into(), r))?)
    };
    let marker_set = RegexSetBuilder::new(file.marker.iter().map(|m| &m.regex))
        .multi_line(true)
        .crlf(true)
        .build()
        .map_err(|e| invalid("marker".into(), crate::parse::one_line(&e.to_string())))?;
    Ok(Entry {
        name: file.name,
        description: file.description,
        origin: origin.to_string(),
        markers,
        marker_set,
        tests,
        config,
        thresholds,
        comment,
        runners: file.runner,
        unread,
    })
}

/// Globs as the catalogue writes them: relative to the target, `/` between folders, `*` within
/// one folder; a glob without a `/` matches a file's name at any depth.
pub fn compile_globs(globs: &[String]) -> Result<GlobSet, String> {
    compile_files(globs).map(|files| files.set)
}

/// [`compile_globs`], keeping the globs.
pub fn compile_files(globs: &[String]) -> Result<Files, String> {
    let mut set = GlobSetBuilder::new();
    let mut anchored_globs = Vec::new();
    for glob in globs {
        let anchored = anchor(glob);
        set.add(compile_glob(&anchored).map_err(|e| format!("\"{glob}\": {e}"))?);
        anchored_globs.push(anchored);
    }
    Ok(Files {
        globs: anchored_globs,
        set: set.build().map_err(|e| e.to_string())?,
    })
}

/// A glob relative to the target: one without a `/` matches a name at any depth.
fn anchor(glob: &str) -> String {
    if glob.contains('/') {
        glob.trim_start_matches("./").to_string()
    } else {
        format!("**/{glob}")
    }
}

/// An anchored glob, compiled as the catalogue reads them.
pub fn compile_glob(anchored: &str) -> Result<globset::Glob, globset::Error> {
    GlobBuilder::new(anchored)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
}

/// A regex of the catalogue, matched line by line (`^` and `$` at each line's ends, before a
/// `\r\n` too): its named groups must be among `groups`, and it must not match an empty text.
pub fn compile_regex(pattern: &str, groups: &[&str]) -> Result<Regex, String> {
    let regex = RegexBuilder::new(pattern)
        .multi_line(true)
        .crlf(true)
        .build()
        .map_err(|e| crate::parse::one_line(&e.to_string()))?;
    if let Some(name) = regex
        .capture_names()
        .flatten()
        .find(|n| !groups.contains(n))
    {
        return Err(format!(
            "unknown group `{name}`{}",
            if groups.is_empty() {
                String::new()
            } else {
                format!(" (known: {})", groups.join(", "))
            }
        ));
    }
    if regex.is_match(b"") {
        return Err("matches an empty text".into());
    }
    Ok(regex)
}
