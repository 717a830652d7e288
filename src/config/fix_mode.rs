//! A delegate made from a gate check (`[[delegate]] from_check = "ruff"`): the check's own
//! command in the tool's fix mode, so that the fixer works exactly the rules the gate reads (its
//! selection, its config file, its targets), with no second copy to keep in sync.

use super::error::ConfigError;
use super::error::Entry;
use super::settings::CheckSettings;
use super::units::ConfigDuration;
use super::wire::DelegateFile;

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
    // The tool is the first word that names one (after `npx`, `uv run`, `python -m`...).
    let (i, tool) = words.iter().enumerate().find_map(|(i, word)| {
        let name = word.rsplit('/').next()?;
        TOOLS.contains(&name).then_some((i, name))
    })?;
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
/// check's.
pub(super) fn derive_from_checks(
    config_file: &std::path::Path,
    delegates: &mut [DelegateFile],
    checks: &[CheckSettings],
) -> Result<(), ConfigError> {
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
    Ok(())
}

#[cfg(test)]
#[path = "fix_mode_tests.rs"]
mod tests;
