//! The gate's configuration: a change to a file a tool reads its rules from, or to a file the
//! gate itself runs, is a move; one that only changes the layout (a formatter's) is not. Files
//! that hold more than tool settings (`pyproject.toml`, `package.json`, `Cargo.toml`,
//! `setup.cfg`) are read as TOML, JSON or INI, and only the keys their rule names count; code
//! that is configuration too (`conftest.py`) counts the lines added that can steer the tools; an
//! ignore file counts the lines added that hide a file where the gate found something. A
//! threshold the gate must reach (coverage's `fail_under`) that goes down is evasion.

use std::collections::{BTreeMap, HashMap};

use super::definition::{ConfigOn, ConfigRule, Threshold};
use super::gate_files::Named;
use super::lines::{shown, trim, trimmed_lines};
use super::{Applicable, Catalogue, Class, FilePair, GateFiles, GateView, Move};

/// Keys of one file listed one by one; the rest are summed up in one move.
const KEYS_SHOWN: usize = 5;

/// The moves a change to the file of `pair` makes in the gate's configuration.
pub fn compare(
    catalogue: &Catalogue,
    applicable: &Applicable,
    gate_files: &GateFiles,
    before: &GateView<'_>,
    pair: &FilePair<'_>,
) -> Vec<Move> {
    let gate_file = gate_files.holds(pair.path);
    let rules_apply = !applicable.config.is_empty() || !applicable.thresholds.is_empty();
    if pair.before == pair.after || (!rules_apply && gate_file.is_none()) {
        return Vec::new();
    }
    let indented = indentation_counts(pair.path);
    if let (Some(was), Some(is)) = (pair.before, pair.after)
        && layout_free(was, indented) == layout_free(is, indented)
    {
        return Vec::new();
    }
    let mut moves = Vec::new();
    let mut whole_file = false;
    let any_rule = !applicable.config.is_empty();
    for &(e, r) in &applicable.config {
        let (entry, rule) = (&catalogue.entries()[e], &catalogue.entries()[e].config[r]);
        let name = format!("{}/{}", entry.name, rule.name);
        whole_file |=
            rule.keys.is_empty() && rule.except_keys.is_empty() && rule.on == ConfigOn::Changed;
        for found in config_moves(rule, &name, pair, before) {
            if !moves
                .iter()
                .any(|m: &Move| m.path == found.path && m.text == found.text)
            {
                moves.push(found);
            }
        }
    }
    for &(e, t) in &applicable.thresholds {
        let (entry, threshold) = (
            &catalogue.entries()[e],
            &catalogue.entries()[e].thresholds[t],
        );
        let name = format!("{}/{}", entry.name, threshold.name);
        for found in threshold_moves(threshold, &name, pair) {
            // Two entries may read the same setting (`fail-under`): one move.
            let seen =
                |m: &Move| m.class == found.class && m.path == found.path && m.line == found.line;
            if !moves.iter().any(seen) {
                moves.push(found);
            }
        }
    }
    let gate_file = match gate_file {
        Some(Named::ByCommand) => !whole_file,
        Some(Named::ByRunner) => !any_rule,
        None => false,
    };
    if gate_file {
        let (line, text) = first_difference(pair);
        moves.push(Move {
            class: Class::Config,
            rule: "gate/script".into(),
            path: Some(pair.path.to_string()),
            line,
            what: file_change(pair, "the gate's own file"),
            text,
            allowed_by: None,
        });
    }
    moves
}

/// The moves of one configuration rule on a changed file.
fn config_moves(
    rule: &ConfigRule,
    name: &str,
    pair: &FilePair<'_>,
    gate: &GateView<'_>,
) -> Vec<Move> {
    if pair.before.is_none() && !rule.in_new_files {
        return Vec::new();
    }
    let subject = match rule.class {
        Class::Tests => "expected output",
        _ => "gate configuration",
    };
    let base = Move {
        class: rule.class,
        rule: name.to_string(),
        path: Some(pair.path.to_string()),
        line: None,
        what: file_change(pair, subject),
        text: String::new(),
        allowed_by: None,
    };
    let ignored =
        |text: &str| (rule.ignore_lines.as_ref()).is_some_and(|r| r.is_match(text.as_bytes()));
    if rule.on == ConfigOn::Added {
        return added_lines(pair)
            .into_iter()
            .filter(|(_, text)| !ignored(text))
            .filter(|(_, text)| {
                rule.lines
                    .as_ref()
                    .is_none_or(|r| r.is_match(text.as_bytes()))
            })
            .take(KEYS_SHOWN)
            .map(|(line, text)| Move {
                line: Some(line),
                what: "the tools steered: a line added".into(),
                text,
                ..base.clone()
            })
            .collect();
    }
    if rule.on == ConfigOn::Hides {
        let folder = pair.path.rsplit_once('/').map_or("", |(folder, _)| folder);
        // A rule added, or an exception (`!keep.py`) removed: either can hide a file.
        let exceptions_removed = (removed_lines(pair).into_iter())
            .filter_map(|(line, text)| text.strip_prefix('!').map(|rule| (line, rule.to_string())));
        return added_lines(pair)
            .into_iter()
            .chain(exceptions_removed)
            .filter_map(|(line, text)| {
                let globs = ignore_globs(folder, &text)?;
                let mut hidden: Vec<&String> =
                    gate.findings.keys().filter(|file| globs.is_match(file.as_str())).collect();
                hidden.sort();
                let first = hidden.first()?;
                Some(Move {
                    line: Some(line),
                    what: format!(
                        "an ignore rule added that hides {} where the gate found something, `{first}` first",
                        if hidden.len() == 1 { "a file".to_string() } else { format!("{} files", hidden.len()) }
                    ),
                    text,
                    ..base.clone()
                })
            })
            .take(KEYS_SHOWN)
            .collect();
    }
    if rule.keys.is_empty() && rule.except_keys.is_empty() {
        // What is left but the lines the rule ignores (imports, in code that configures).
        let kept = |text: &[u8]| -> Vec<u8> {
            let lines = trimmed_lines(text).map(|(_, line)| line);
            let kept: Vec<&[u8]> = lines
                .filter(|line| !ignored(&String::from_utf8_lossy(line)))
                .collect();
            layout_free(&kept.join(&b'\n'), false)
        };
        if let (Some(was), Some(is)) = (pair.before, pair.after)
            && rule.ignore_lines.is_some()
            && kept(was) == kept(is)
        {
            return Vec::new();
        }
        let (line, text) = first_difference(pair);
        return vec![Move { line, text, ..base }];
    }
    let format = Format::of(pair.path);
    let (Some(before), Some(after)) = (
        pair.before
            .map_or(Some(BTreeMap::new()), |t| format.flatten(t)),
        pair.after
            .map_or(Some(BTreeMap::new()), |t| format.flatten(t)),
    ) else {
        // Not readable as its format: every change counts.
        let (line, text) = first_difference(pair);
        return vec![Move { line, text, ..base }];
    };
    let counts = |key: &str| {
        (rule.keys.is_empty() || rule.keys.iter().any(|k| key_matches(k, key)))
            && !rule.except_keys.iter().any(|k| key_matches(k, key))
    };
    let mut keys: Vec<&String> = before.keys().chain(after.keys()).collect();
    keys.sort();
    keys.dedup();
    let changed: Vec<(&String, Option<&String>, Option<&String>)> = keys
        .into_iter()
        .filter(|key| counts(key))
        .map(|key| (key, before.get(key), after.get(key)))
        .filter(|(_, was, is)| was != is)
        .collect();
    let mut moves: Vec<Move> = changed
        .iter()
        .take(KEYS_SHOWN)
        .map(|(key, was, is)| Move {
            what: "gate configuration changed".into(),
            text: format!(
                "{key}: {} → {}",
                was.map_or("(none)".into(), |v| shown(v.as_bytes())),
                is.map_or("(none)".into(), |v| shown(v.as_bytes()))
            ),
            ..base.clone()
        })
        .collect();
    if changed.len() > KEYS_SHOWN {
        moves.push(Move {
            what: "gate configuration changed".into(),
            text: format!("and {} more keys", changed.len() - KEYS_SHOWN),
            ..base
        });
    }
    moves
}

/// How a file with keys is read.
#[derive(Debug, Clone, Copy)]
enum Format {
    Toml,
    Json,
    /// Sections in brackets, `key = value` or `key: value`, indented lines continuing a value
    /// (Python's configparser: `setup.cfg`, `tox.ini`).
    Ini,
}

impl Format {
    fn of(path: &str) -> Self {
        if path.ends_with(".toml") {
            Self::Toml
        } else if path.ends_with(".json") {
            Self::Json
        } else {
            Self::Ini
        }
    }

    /// Every leaf value by its dotted key; `None` when `text` is not of this format.
    fn flatten(self, text: &[u8]) -> Option<BTreeMap<String, String>> {
        let text = std::str::from_utf8(text).ok()?;
        let mut leaves = BTreeMap::new();
        match self {
            Self::Toml => {
                let table: toml::Table = text.parse().ok()?;
                flatten_toml(&toml::Value::Table(table), String::new(), &mut leaves);
            }
            Self::Json => {
                let value: serde_json::Value = serde_json::from_str(text).ok()?;
                flatten_json(&value, String::new(), &mut leaves);
            }
            Self::Ini => flatten_ini(text, &mut leaves),
        }
        Some(leaves)
    }
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

fn flatten_toml(value: &toml::Value, prefix: String, leaves: &mut BTreeMap<String, String>) {
    match value {
        toml::Value::Table(table) => {
            for (key, value) in table {
                flatten_toml(value, join(&prefix, key), leaves);
            }
        }
        toml::Value::Array(items) if items.iter().any(toml::Value::is_table) => {
            for (index, item) in items.iter().enumerate() {
                flatten_toml(item, join(&prefix, &index.to_string()), leaves);
            }
        }
        leaf => {
            leaves.insert(prefix, leaf.to_string());
        }
    }
}

fn flatten_json(value: &serde_json::Value, prefix: String, leaves: &mut BTreeMap<String, String>) {
    match value {
        serde_json::Value::Object(object) => {
            for (key, value) in object {
                flatten_json(value, join(&prefix, key), leaves);
            }
        }
        leaf => {
            leaves.insert(prefix, leaf.to_string());
        }
    }
}

fn flatten_ini(text: &str, leaves: &mut BTreeMap<String, String>) {
    let mut section = String::new();
    let mut last: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if line.starts_with(char::is_whitespace) {
            if let Some(key) = &last {
                let value = leaves.entry(key.clone()).or_default();
                value.push('\n');
                value.push_str(trimmed);
            }
            continue;
        }
        if let Some(name) = trimmed.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            section = name.trim().to_string();
            last = None;
            continue;
        }
        let (key, value) = match trimmed.find(['=', ':']) {
            Some(at) => (&trimmed[..at], trimmed[at + 1..].trim()),
            None => (trimmed, ""),
        };
        let key = join(&section, &key.trim().to_ascii_lowercase());
        leaves.insert(key.clone(), value.to_string());
        last = Some(key);
    }
}

/// Whether the dotted `key` is `pattern` or below it; a segment of `pattern` may hold `*`.
fn key_matches(pattern: &str, key: &str) -> bool {
    let mut keys = key.split('.');
    pattern
        .split('.')
        .all(|segment| keys.next().is_some_and(|k| wildcard(segment, k)))
}

/// `*` matches any run of characters.
pub(super) fn wildcard(pattern: &str, text: &str) -> bool {
    let Some((head, rest)) = pattern.split_once('*') else {
        return pattern == text;
    };
    let Some(tail) = text.strip_prefix(head) else {
        return false;
    };
    (0..=tail.len())
        .filter(|&at| tail.is_char_boundary(at))
        .any(|at| wildcard(rest, &tail[at..]))
}

/// A threshold that went down, or is gone.
fn threshold_moves(threshold: &Threshold, name: &str, pair: &FilePair<'_>) -> Vec<Move> {
    let values = |text: Option<&[u8]>| -> Vec<(u64, f64, String)> {
        let Some(text) = text else {
            return Vec::new();
        };
        let index = super::lines::LineIndex::new(text);
        threshold
            .regex
            .captures_iter(text)
            .filter_map(|captures| {
                let value = captures.name("value")?;
                let number = std::str::from_utf8(value.as_bytes())
                    .ok()?
                    .parse::<f64>()
                    .ok()?;
                let whole = captures.get(0)?;
                Some((
                    index.line_of(whole.start()),
                    number,
                    shown(whole.as_bytes()),
                ))
            })
            .collect()
    };
    // Compared in order of value, so that two targets swapped lower nothing.
    let sorted = |mut values: Vec<(u64, f64, String)>| {
        values.sort_by(|a, b| a.1.total_cmp(&b.1));
        values
    };
    let (before, after) = (sorted(values(pair.before)), sorted(values(pair.after)));
    let mut moves = Vec::new();
    for (index, (_, was, was_text)) in before.iter().enumerate() {
        let (line, what, text) = match after.get(index) {
            Some((line, is, is_text)) if is < was => (
                Some(*line),
                "threshold lowered",
                format!("{was_text} → {is_text}"),
            ),
            Some(_) => continue,
            None => (None, "threshold removed", was_text.clone()),
        };
        moves.push(Move {
            class: Class::Evasion,
            rule: name.to_string(),
            path: Some(pair.path.to_string()),
            line,
            what: what.into(),
            text,
            allowed_by: None,
        });
    }
    moves
}

/// The globs of one line of an ignore file in `folder` (gitignore's rules: a pattern without a
/// `/` but at its end matches at any depth, one with a `/` from the file's folder; a folder
/// hides all below it); `None` for a blank line, a comment or a negation.
fn ignore_globs(folder: &str, line: &str) -> Option<globset::GlobSet> {
    let pattern = line.trim();
    if pattern.is_empty() || pattern.starts_with('#') || pattern.starts_with('!') {
        return None;
    }
    let pattern = pattern.trim_end_matches('/');
    let anchored = pattern.starts_with('/') || pattern.contains('/');
    let pattern = pattern.trim_start_matches('/');
    let base = match (folder.is_empty(), anchored) {
        (true, true) => pattern.to_string(),
        (true, false) => format!("**/{pattern}"),
        (false, true) => format!("{folder}/{pattern}"),
        (false, false) => format!("{folder}/**/{pattern}"),
    };
    let mut set = globset::GlobSetBuilder::new();
    for glob in [base.clone(), format!("{base}/**")] {
        set.add(
            globset::GlobBuilder::new(&glob)
                .literal_separator(true)
                .build()
                .ok()?,
        );
    }
    set.build().ok()
}

/// `text` without its layout: runs of spaces and line breaks dropped (one space kept between
/// two words), one kind of quote, no `;` or trailing commas, and `var`, `let` and `const`
/// alike. A formatter's change (prettier, ruff format, taplo) leaves it as it was.
/// Where indentation means something (`indented`: Python), the depth of each line that starts
/// a statement (outside brackets) is kept.
fn layout_free(text: &[u8], indented: bool) -> Vec<u8> {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
    let mut out: Vec<u8> = Vec::with_capacity(text.len());
    let mut space = false;
    let mut depth: i64 = 0;
    let mut line_start = true;
    let mut indent = 0usize;
    for &byte in text {
        if byte == b'\n' {
            line_start = true;
            indent = 0;
            space = true;
            continue;
        }
        if byte.is_ascii_whitespace() {
            if line_start {
                indent += 1;
            }
            space = true;
            continue;
        }
        if line_start && indented && depth <= 0 {
            out.extend_from_slice(format!("\n{indent}:").as_bytes());
            space = false;
        }
        line_start = false;
        match byte {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            _ => {}
        }
        let byte = match byte {
            b'\'' | b'`' => b'"',
            b';' => continue,
            other => other,
        };
        if matches!(byte, b'}' | b']' | b')') && out.last() == Some(&b',') {
            out.pop();
        }
        if space && out.last().is_some_and(|&last| word(last)) && word(byte) {
            out.push(b' ');
        }
        space = false;
        out.push(byte);
    }
    static DECLARATION: std::sync::LazyLock<regex::bytes::Regex> = std::sync::LazyLock::new(|| {
        regex::bytes::Regex::new(r"\b(?:var|const)\b").expect("a valid regex")
    });
    DECLARATION.replace_all(&out, &b"let"[..]).into_owned()
}

/// The lines of `text` as written, without what ends them.
fn raw_lines(text: Option<&[u8]>) -> Vec<&[u8]> {
    text.map(|t| {
        t.split(|&b| b == b'\n')
            .map(<[u8]>::trim_ascii_end)
            .collect()
    })
    .unwrap_or_default()
}

/// Whether indentation means something in the file at `path`: Python, and the INI files
/// (an indented line continues the value above it).
fn indentation_counts(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    [".py", ".pyi", ".cfg", ".ini"]
        .iter()
        .any(|ext| name.ends_with(ext))
        || [
            ".coveragerc",
            ".flake8",
            ".pylintrc",
            "pylintrc",
            ".pycodestyle",
            ".isort.cfg",
            ".editorconfig",
        ]
        .contains(&name)
}

/// `what` added, deleted or changed, as the pair has it.
fn file_change(pair: &FilePair<'_>, what: &str) -> String {
    match (pair.before, pair.after) {
        (None, _) => format!("{what} added"),
        (_, None) => format!("{what} deleted"),
        _ => format!("{what} changed"),
    }
}

/// The first line where the two sides differ (the new side's, or the old one's when nothing is
/// left), and its text.
fn first_difference(pair: &FilePair<'_>) -> (Option<u64>, String) {
    let before: Vec<(u64, &[u8])> = pair
        .before
        .map(|t| trimmed_lines(t).collect())
        .unwrap_or_default();
    let after: Vec<(u64, &[u8])> = pair
        .after
        .map(|t| trimmed_lines(t).collect())
        .unwrap_or_default();
    // Lines as written: a change of indentation alone is a difference.
    let (raw_before, raw_after) = (raw_lines(pair.before), raw_lines(pair.after));
    let at = raw_before
        .iter()
        .zip(&raw_after)
        .position(|(a, b)| a != b)
        .unwrap_or(before.len().min(after.len()));
    match (after.get(at), before.get(at)) {
        (Some((line, text)), _) => (Some(*line), shown(text)),
        (None, Some((line, text))) if pair.after.is_none() => (Some(*line), shown(text)),
        (None, Some((_, text))) => (None, format!("removed: {}", shown(text))),
        (None, None) => (None, String::new()),
    }
}

/// Lines the change added (counted, so a line moved is not added), but blank and `#` ones.
fn added_lines(pair: &FilePair<'_>) -> Vec<(u64, String)> {
    changed_lines(pair.before, pair.after)
}

/// Lines the change removed, as [`added_lines`] has them.
fn removed_lines(pair: &FilePair<'_>) -> Vec<(u64, String)> {
    changed_lines(pair.after, pair.before)
}

/// Lines `to` has more of than `from` (trimmed, counted), but blank and `#` ones.
fn changed_lines(from: Option<&[u8]>, to: Option<&[u8]>) -> Vec<(u64, String)> {
    let mut left: HashMap<&[u8], usize> = HashMap::new();
    for (_, line) in from
        .map(|t| trimmed_lines(t).collect::<Vec<_>>())
        .unwrap_or_default()
    {
        *left.entry(line).or_default() += 1;
    }
    let mut more = Vec::new();
    for (number, line) in to
        .map(|t| trimmed_lines(t).collect::<Vec<_>>())
        .unwrap_or_default()
    {
        if line.is_empty() || line.starts_with(b"#") {
            continue;
        }
        match left.get_mut(line) {
            Some(left) if *left > 0 => *left -= 1,
            _ => more.push((number, shown(trim(line)))),
        }
    }
    more
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_match_by_dotted_prefix_and_wildcards() {
        let table = [
            ("tool", "tool.ruff.lint.select", true),
            ("tool", "tool", true),
            ("tool", "toolbox.x", false),
            ("project.requires-python", "project.requires-python", true),
            ("project.requires-python", "project.dependencies", false),
            ("mypy*", "mypy-foo.bar.ignore_errors", true),
            (
                "target.*.dependencies",
                "target.cfg(unix).dependencies.libc",
                true,
            ),
            ("target.*.dependencies", "target.cfg(unix).lints", false),
            (
                "target.*.dependencies",
                "target.x86.dependencies.libc",
                true,
            ),
            ("bdist_*", "bdist_wheel.universal", true),
        ];
        for (pattern, key, expected) in table {
            assert_eq!(key_matches(pattern, key), expected, "{pattern} {key}");
        }
    }

    #[test]
    fn a_formatters_change_is_layout() {
        let same = [
            (
                "module.exports = [{ rules: { 'no-var': 'error', } }];\n",
                "module.exports = [\n  {\n    rules: { \"no-var\": \"error\" },\n  },\n]\n",
            ),
            ("var x = require('a')\n", "const x = require(\"a\");\n"),
            (
                "[tool.ruff]\nline-length=100\n",
                "[tool.ruff]\nline-length = 100\n",
            ),
        ];
        for (was, is) in same {
            assert_eq!(
                layout_free(was.as_bytes(), false),
                layout_free(is.as_bytes(), false),
                "{was}"
            );
        }
        let different = [
            ("rules: { 'no-var': 'error' }", "rules: { 'no-var': 'off' }"),
            ("ignore = E501 W503", "ignore = E501W503"),
            ("line-length = 100", "line-length = 1000"),
        ];
        for (was, is) in different {
            assert_ne!(
                layout_free(was.as_bytes(), false),
                layout_free(is.as_bytes(), false),
                "{was}"
            );
        }
        // Python: a statement's depth counts, a continuation line's does not.
        let python = |text: &str| layout_free(text.as_bytes(), true);
        assert_eq!(
            python("run(a, b,\n    c)\nfor x in y:\n    f(x)\n"),
            python("run(\n    a,\n    b,\n    c\n)\nfor x in y:\n    f(x)\n")
        );
        assert_ne!(
            python("for x in y:\n    f(x)\nsys.exit(1)\n"),
            python("for x in y:\n    f(x)\n    sys.exit(1)\n")
        );
    }

    #[test]
    fn ignore_lines_as_globs() {
        let table = [
            ("", "*.tmp", "src/a.tmp", true),
            ("", "*.tmp", "src/a.py", false),
            ("", "src/legacy.py", "src/legacy.py", true),
            ("", "/src/", "src/deep/a.py", true),
            ("", "legacy/", "pkg/legacy/a.py", true),
            ("sub", "a.py", "sub/x/a.py", true),
            ("sub", "/a.py", "sub/x/a.py", false),
            ("", "!keep.py", "keep.py", false),
            ("", "# comment", "comment", false),
        ];
        for (folder, line, path, hidden) in table {
            let found = ignore_globs(folder, line).is_some_and(|g| g.is_match(path));
            assert_eq!(found, hidden, "{folder} {line} {path}");
        }
    }

    #[test]
    fn ini_values_continue_on_indented_lines() {
        let mut leaves = BTreeMap::new();
        flatten_ini(
            "[metadata]\nname = x\n\n[flake8]\nextend-ignore =\n    E501,\n    W503\nMax-Line-Length: 100\n",
            &mut leaves,
        );
        assert_eq!(leaves["metadata.name"], "x");
        assert_eq!(leaves["flake8.extend-ignore"], "\nE501,\nW503");
        assert_eq!(leaves["flake8.max-line-length"], "100");
    }
}
