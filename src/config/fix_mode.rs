//! A delegate made from a gate check (`[[delegate]] from_check = "ruff"`): the check's own
//! command in the tool's fix mode, so that the fixer works exactly the rules the gate reads (its
//! selection, its config file, its targets), with no second copy to keep in sync.

use super::error::ConfigError;
use super::error::Entry;
use super::settings::CheckSettings;
use super::units::ConfigDuration;
use super::wire::DelegateFile;
use crate::delegate::OnPaths;

/// The tools whose fix mode is known.
const TOOLS: &[&str] = &[
    "ruff",
    "cargo",
    "eslint",
    "stylelint",
    "markdownlint-cli2",
    "markdownlint",
    "prettier",
    "black",
    "isort",
    "gofmt",
    "golangci-lint",
    "biome",
];

/// The tools that take the paths they work as operands, the verbs before those operands, and
/// their flags that take the next word as a value. Every other flag takes none.
#[rustfmt::skip]
const PATH_TOOLS: &[(&str, &[&str], &[&str])] = &[
    ("ruff", &["check", "format"], &[
        "--config", "--select", "--ignore", "--extend-select", "--extend-ignore",
        "--per-file-ignores", "--extend-per-file-ignores", "--exclude", "--extend-exclude",
        "--fixable", "--unfixable", "--extend-fixable", "--output-format", "-o",
        "--output-file", "--target-version", "--line-length", "--dummy-variable-rgx",
        "--cache-dir", "--stdin-filename", "--extension", "--range",
    ]),
    ("eslint", &[], &[
        "-c", "--config", "--env", "--ext", "--global", "--parser", "--parser-options",
        "--resolve-plugins-relative-to", "--rulesdir", "--plugin", "--rule", "--ignore-path",
        "--ignore-pattern", "--stdin-filename", "--fix-type", "-o", "--output-file", "-f",
        "--format", "--max-warnings", "--cache-location", "--cache-strategy",
        "--report-unused-disable-directives-severity", "--flag", "--concurrency",
    ]),
    ("stylelint", &[], &[
        "-c", "--config", "--config-basedir", "-i", "--ignore-path", "--ip", "--ignore-pattern",
        "--custom-syntax", "-f", "--formatter", "--custom-formatter", "-o", "--output-file",
        "--mw", "--max-warnings", "--cache-location", "--cache-strategy", "--stdin-filename",
    ]),
    ("markdownlint-cli2", &[], &[
        "--config",
    ]),
    ("markdownlint", &[], &[
        "-c", "--config", "-i", "--ignore", "-p", "--ignore-path", "-r", "--rules", "-o",
        "--output", "--enable", "--disable",
    ]),
    ("prettier", &[], &[
        "--config", "--ignore-path", "--plugin", "--parser", "--log-level", "--cache-location",
        "--cache-strategy", "--stdin-filepath", "--print-width", "--tab-width",
        "--trailing-comma", "--arrow-parens", "--end-of-line", "--quote-props", "--prose-wrap",
        "--html-whitespace-sensitivity", "--embedded-language-formatting", "--object-wrap",
        "--experimental-operator-position", "--config-precedence", "--cursor-offset",
        "--range-start", "--range-end",
    ]),
    ("black", &[], &[
        "-c", "--code", "--config", "-l", "--line-length", "-t", "--target-version",
        "--include", "--exclude", "--extend-exclude", "--force-exclude", "--stdin-filename",
        "-W", "--workers", "--python-cell-magics", "--required-version",
        "--enable-unstable-feature",
    ]),
    ("isort", &[], &[
        "--settings-path", "--sp", "--settings-file", "--settings", "--profile", "-l",
        "--line-length", "-s", "--skip", "--sg", "--skip-glob", "--src", "--src-path",
        "--virtual-env", "--conda-env", "--py", "--python-version", "-m", "--multi-line",
        "--ext", "--extension", "--filename", "-p", "--project", "-o", "--thirdparty", "-b",
        "--known-standard-library", "-a", "--add-import", "--rm", "--remove-import",
    ]),
    ("gofmt", &[], &[
        "-r", "-cpuprofile",
    ]),
    ("biome", &["check", "lint", "format"], &[
        "--config-path", "--max-diagnostics", "--diagnostic-level", "--reporter",
        "--stdin-file-path", "--log-level", "--log-kind", "--colors", "--only", "--skip",
        "--vcs-root", "--vcs-client-kind", "--files-max-size", "--since",
    ]),
];

/// Characters that make a command more than one tool with its arguments: it is not rewritten.
const SHELL: &[char] = &['|', ';', '&', '`', '$', '>', '<', '\n', '(', ')'];

/// Why `name` names no check: the nearest check's name when it is likely a typo of it, and
/// the checks there are.
fn no_such_check(name: &str, checks: &[CheckSettings]) -> String {
    let names: Vec<&str> = checks.iter().map(|check| check.name.as_str()).collect();
    let nearest = names
        .iter()
        .map(|candidate| (strsim::jaro_winkler(name, candidate), *candidate))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let guess = nearest.map_or(String::new(), |(_, candidate)| {
        format!("; did you mean \"{candidate}\"?")
    });
    format!(
        "there is no gate check named \"{name}\"{guess} (the checks: {})",
        names.join(", ")
    )
}

/// `run`, a gate check's read-only command, in its tool's fix mode; `None` when the tool has no
/// fix mode known here, or the command is more than one tool with its arguments.
pub fn fix_command(run: &str) -> Option<String> {
    if run.contains(SHELL) {
        return None;
    }
    let words: Vec<&str> = run.split_whitespace().collect();
    // A quoted word holds no space (`'!dist/**'`): one with a space is not split right here.
    let balanced = |word: &&str| {
        word.matches('\'').count().is_multiple_of(2) && word.matches('"').count().is_multiple_of(2)
    };
    if !words.iter().all(balanced) {
        return None;
    }
    let (i, tool) = find_tool(&words)?;
    let next = words.get(i + 1).copied();
    let fixed = match (tool, next) {
        ("ruff", Some("check")) => {
            let kept = without(&words, &["--no-fix", "--diff", "--fix"], &[]);
            insert_at(&kept, i + 2, &["--fix"])
        }
        ("ruff", Some("format")) => without(&words, &["--check", "--diff"], &[]),
        ("cargo", Some("clippy")) if !words.contains(&"--fix") => {
            insert_at(&words, i + 2, &["--fix", "--allow-dirty", "--allow-staged"])
        }
        ("cargo", Some("fmt")) => without(&words, &["--check"], &[]),
        ("eslint" | "stylelint", _) => {
            let kept = without(&words, &["--fix"], &["--format", "-f", "--formatter"]);
            insert_at(&kept, i + 1, &["--fix"])
        }
        ("markdownlint-cli2" | "markdownlint", _) => {
            insert_at(&without(&words, &["--fix"], &[]), i + 1, &["--fix"])
        }
        ("prettier", _) => swap(
            &words,
            &["--check", "-c", "--list-different", "-l"],
            "--write",
        )?,
        ("black", _) => without(&words, &["--check", "--diff"], &[]),
        ("isort", _) => without(&words, &["--check", "--check-only", "-c", "--diff"], &[]),
        ("gofmt", _) => swap(&words, &["-l", "-d"], "-w")?,
        ("golangci-lint", Some("run")) => {
            insert_at(&without(&words, &["--fix"], &[]), i + 2, &["--fix"])
        }
        ("biome", Some("check" | "lint" | "format")) => {
            insert_at(&without(&words, &["--write"], &[]), i + 2, &["--write"])
        }
        _ => return None,
    };
    Some(fixed.join(" "))
}

/// The first word that names a tool whose fix mode is known (after `npx`, `uv run`,
/// `python -m`...): its place and its name.
fn find_tool<'a>(words: &[&'a str]) -> Option<(usize, &'a str)> {
    words.iter().enumerate().find_map(|(i, word)| {
        let name = word.rsplit('/').next()?;
        TOOLS.contains(&name).then_some((i, name))
    })
}

/// A fix command (as [`fix_command`] makes it) without its path operands, for a tool that takes
/// the paths it works as operands. `None` for a tool that does not (cargo, golangci-lint), or
/// when a word it would drop is not clearly a path: neither `.`, a glob, a negated glob, nor a
/// path that exists in `dir` (where the check runs); a flag's value it did not know of, say.
pub fn without_paths(fixed: &str, dir: &std::path::Path) -> Option<String> {
    let words: Vec<&str> = fixed.split_whitespace().collect();
    let (i, tool) = find_tool(&words)?;
    let (_, verbs, valued) = PATH_TOOLS.iter().find(|(name, ..)| *name == tool)?;
    let mut start = i + 1;
    if !verbs.is_empty() {
        verbs.contains(words.get(start)?).then_some(())?;
        start += 1;
    }
    let mut kept = words[..start].to_vec();
    let mut operands_only = false;
    let mut value_next = false;
    for word in &words[start..] {
        if std::mem::take(&mut value_next) {
            kept.push(word);
        } else if operands_only || !word.starts_with('-') || *word == "-" {
            is_path(word, dir).then_some(())?;
        } else if *word == "--" {
            // Kept: the paths put after it are operands too.
            operands_only = true;
            kept.push(word);
        } else {
            value_next = !word.contains('=') && valued.contains(word);
            kept.push(word);
        }
    }
    Some(kept.join(" "))
}

/// Whether an operand names paths: `.`, a glob or a negated one, or a path that exists in `dir`.
fn is_path(word: &str, dir: &std::path::Path) -> bool {
    let unquoted = word.trim_matches(|c| c == '\'' || c == '"');
    unquoted.starts_with(['!', '#'])
        || unquoted.contains(['*', '?', '[', '{'])
        || matches!(unquoted, "." | "./" | "./...")
        || (!unquoted.is_empty() && dir.join(unquoted).exists())
}

/// `words` without the flags `drop`, and without the flags `drop_with_value` and their value
/// (`--format json` and `--format=json`).
fn without<'a>(words: &[&'a str], drop: &[&str], drop_with_value: &[&str]) -> Vec<&'a str> {
    let mut kept = Vec::with_capacity(words.len());
    let mut skip_next = false;
    for word in words {
        if std::mem::take(&mut skip_next) {
            continue;
        }
        let flag = word.split('=').next().unwrap_or(word);
        if drop.contains(word) || drop_with_value.contains(&flag) && word.contains('=') {
            continue;
        }
        if drop_with_value.contains(word) {
            skip_next = true;
            continue;
        }
        kept.push(*word);
    }
    kept
}

/// `words` with `added` at `at` (after the tool and its verb: flags dropped before it are
/// not among those words).
fn insert_at<'a>(words: &[&'a str], at: usize, added: &[&'a str]) -> Vec<&'a str> {
    let mut out = words.to_vec();
    let at = at.min(out.len());
    out.splice(at..at, added.iter().copied());
    out
}

/// `words` with the first of `flags` replaced by `by`; `None` when none is there.
fn swap<'a>(words: &[&'a str], flags: &[&str], by: &'a str) -> Option<Vec<&'a str>> {
    let i = words.iter().position(|w| flags.contains(w))?;
    let mut out = words.to_vec();
    out[i] = by;
    Some(out)
}

/// Fills in each delegate that names a check (`from_check`): its command is the check's in fix
/// mode, run where the check runs; its categories, deadline and environment default to the
/// check's. Returns, by delegate, the command without its paths for a tool that takes them
/// (run on the paths of its work when the run has a scope).
pub(super) fn derive_from_checks(
    config_file: &std::path::Path,
    delegates: &mut [DelegateFile],
    checks: &[CheckSettings],
) -> Result<Vec<Option<OnPaths>>, ConfigError> {
    let mut on_paths = vec![None; delegates.len()];
    for (index, delegate) in delegates.iter_mut().enumerate() {
        let Some(name) = delegate.from_check.clone() else {
            continue;
        };
        let at = Entry {
            config_file,
            array: "delegate",
            index,
        };
        let invalid = |reason: String| at.invalid("from_check", reason);
        if delegate
            .kind
            .as_deref()
            .is_some_and(|kind| kind != "command")
        {
            return Err(invalid(
                "is for a delegate that runs a command, not kind = \"http\"".into(),
            ));
        }
        if delegate.run.is_some() {
            return Err(invalid(
                "a delegate has either `run` or `from_check`, not both".into(),
            ));
        }
        let check = checks
            .iter()
            .find(|check| check.name == name)
            .ok_or_else(|| invalid(no_such_check(&name, checks)))?;
        let fixed = fix_command(&check.run).ok_or_else(|| {
            invalid(format!(
                "the fix mode of check \"{name}\" (`{}`) is not known here: give this delegate \
                 its own `run`",
                check.run
            ))
        })?;
        on_paths[index] = without_paths(&fixed, &check.cwd).map(|command| OnPaths {
            command,
            cwd: check.cwd_relative.clone(),
        });
        delegate.run = Some(if check.cwd_relative.is_empty() {
            fixed
        } else {
            format!(
                "cd '{}' && {fixed}",
                check.cwd_relative.replace('\'', "'\\''")
            )
        });
        delegate
            .categories
            .get_or_insert_with(|| vec![check.category.clone()]);
        delegate
            .timeout
            .get_or_insert(ConfigDuration(check.timeout));
        for (key, value) in check.env.iter().cloned() {
            delegate.env.entry(key).or_insert(value);
        }
    }
    Ok(on_paths)
}

#[cfg(test)]
#[path = "fix_mode_tests.rs"]
mod tests;
