//! Annotations: the workflow commands that put the remaining findings on the changed files.

use std::path::{Component, Path, PathBuf};

use crate::ci::github::{escape_data, escape_property};
use crate::model::{Diagnostic, Severity};
use crate::secrets::Redactor;

/// GitHub shows at most this many error annotations of one step; the rest are dropped.
pub const MAX_ERRORS: usize = 10;
/// ... and this many warnings.
pub const MAX_WARNINGS: usize = 10;
/// ... and this many notices; when findings are left out, one of them says how many.
pub const MAX_NOTICES: usize = 10;

/// The annotation lines for the remaining findings, redacted: errors first, then warnings, then
/// notes (as notices), each by file, line and column; at most [`MAX_ERRORS`] errors,
/// [`MAX_WARNINGS`] warnings and [`MAX_NOTICES`] notices, the last of which, when findings were
/// left out, counts them.
///
/// A finding's path is relative to `target`; the annotation's is relative to `workspace_root`
/// (`GITHUB_WORKSPACE`), where GitHub looks for it. A relative `target` is taken as relative to
/// the workspace root. When the file lies outside the workspace, the annotation carries no
/// file, line or column, and its message starts with the location as the tool wrote it.
pub fn annotations(
    diagnostics: &[Diagnostic],
    workspace_root: &Path,
    target: &Path,
    redactor: &Redactor,
) -> Vec<String> {
    let ordered = most_severe_first(diagnostics);
    let count = |severity| {
        ordered
            .iter()
            .filter(|diagnostic| diagnostic.severity == severity)
            .count()
    };
    let (errors, warnings, notes) = (
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Note),
    );
    let errors_left_out = errors.saturating_sub(MAX_ERRORS);
    let warnings_left_out = warnings.saturating_sub(MAX_WARNINGS);
    let max_notes = if errors_left_out + warnings_left_out > 0 || notes > MAX_NOTICES {
        MAX_NOTICES - 1
    } else {
        MAX_NOTICES
    };
    let notes_left_out = notes.saturating_sub(max_notes);
    let workspace_root = normalized(workspace_root);
    let target = normalized(&workspace_root.join(target));
    let mut shown = (0, 0, 0);
    let mut lines = Vec::new();
    for diagnostic in ordered {
        let (count, limit) = match diagnostic.severity {
            Severity::Error => (&mut shown.0, MAX_ERRORS),
            Severity::Warning => (&mut shown.1, MAX_WARNINGS),
            Severity::Note => (&mut shown.2, max_notes),
        };
        if *count < limit {
            *count += 1;
            lines.push(annotation(diagnostic, &workspace_root, &target, redactor));
        }
    }
    if let Some(notice) = overflow_notice(errors_left_out, warnings_left_out, notes_left_out) {
        lines.push(notice);
    }
    lines
}

/// The findings by severity (errors first); within a severity each category's first finding,
/// then each one's second, and so on; within those by file (findings without one last), line
/// and column; findings that tie keep their order.
pub(super) fn most_severe_first(diagnostics: &[Diagnostic]) -> Vec<&Diagnostic> {
    let mut ordered: Vec<&Diagnostic> = diagnostics.iter().collect();
    ordered.sort_by_key(|diagnostic| {
        (
            diagnostic.severity,
            diagnostic.file.is_none(),
            diagnostic.file.as_deref(),
            diagnostic.line.unwrap_or(0),
            diagnostic.column.unwrap_or(0),
        )
    });
    // Shared fairly: within a severity, every category's first finding comes before any
    // category's second, so ten lint errors cannot hide the one failing test.
    let mut taken: std::collections::HashMap<(Severity, Option<&str>), usize> =
        std::collections::HashMap::new();
    let mut ranked: Vec<(Severity, usize, usize, &Diagnostic)> = ordered
        .into_iter()
        .enumerate()
        .map(|(position, diagnostic)| {
            let count = taken
                .entry((diagnostic.severity, diagnostic.category.as_deref()))
                .or_insert(0);
            *count += 1;
            (diagnostic.severity, *count, position, diagnostic)
        })
        .collect();
    ranked.sort_by_key(|(severity, rank, position, _)| (*severity, *rank, *position));
    ranked
        .into_iter()
        .map(|(.., diagnostic)| diagnostic)
        .collect()
}

/// One finding's workflow command.
fn annotation(
    diagnostic: &Diagnostic,
    workspace_root: &Path,
    target: &Path,
    redactor: &Redactor,
) -> String {
    let command = match diagnostic.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "notice",
    };
    let mut message = match &diagnostic.body {
        Some(body) => format!("{}\n{body}", diagnostic.message),
        None => diagnostic.message.clone(),
    };
    let mut properties: Vec<(&str, String)> = Vec::new();
    let file = diagnostic.file.as_deref();
    match file.and_then(|file| workspace_relative(workspace_root, target, file)) {
        Some(path) => {
            properties.push(("file", path));
            if let Some(line) = diagnostic.line {
                properties.push(("line", line.to_string()));
                if let Some(column) = diagnostic.column {
                    properties.push(("col", column.to_string()));
                }
            }
        }
        None => {
            if let Some(file) = file {
                let numbers = [diagnostic.line, diagnostic.column]
                    .into_iter()
                    .map_while(|n| n);
                let location: Vec<String> = std::iter::once(file.to_string())
                    .chain(numbers.map(|number| number.to_string()))
                    .collect();
                message = format!("{}: {message}", location.join(":"));
            }
        }
    }
    if let Some(title) = diagnostic.code.as_ref().or(diagnostic.category.as_ref()) {
        properties.push(("title", title.clone()));
    }
    let properties: Vec<String> = properties
        .into_iter()
        .map(|(name, value)| format!("{name}={}", escape_property(&redactor.redact_str(&value))))
        .collect();
    let message = escape_data(&redactor.redact_str(&message));
    let line = if properties.is_empty() {
        format!("::{command}::{message}")
    } else {
        format!("::{command} {}::{message}", properties.join(","))
    };
    redactor.redact_str(&line).into_owned()
}

/// The notice that counts the findings left out, when there are any.
fn overflow_notice(errors: usize, warnings: usize, notes: usize) -> Option<String> {
    let total = errors + warnings + notes;
    if total == 0 {
        return None;
    }
    let parts: Vec<String> = [(errors, "error"), (warnings, "warning"), (notes, "note")]
        .into_iter()
        .filter(|&(count, _)| count > 0)
        .map(|(count, word)| counted(count, word))
        .collect();
    let findings = if total == 1 { "finding" } else { "findings" };
    Some(format!(
        "::notice title=refine-loop::{total} more {findings} not annotated ({}): GitHub shows at \
         most {MAX_ERRORS} errors, {MAX_WARNINGS} warnings and {MAX_NOTICES} notices per step; \
         the step summary and the report list the remaining findings.",
        parts.join(", ")
    ))
}

/// `1 error`, `2 errors`.
fn counted(count: usize, word: &str) -> String {
    if count == 1 {
        format!("{count} {word}")
    } else {
        format!("{count} {word}s")
    }
}

/// `file` (relative to `target`, or absolute) relative to `workspace_root`, with `/` between its
/// parts; `None` when it lies outside the workspace or is the workspace itself. Both folders
/// are absolute and normalized. Purely lexical: links are not followed.
fn workspace_relative(workspace_root: &Path, target: &Path, file: &str) -> Option<String> {
    let path = normalized(&target.join(file));
    let relative = path.strip_prefix(workspace_root).ok()?;
    let parts: Vec<&str> = relative
        .components()
        .map(|component| component.as_os_str().to_str())
        .collect::<Option<_>>()?;
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// `path` with `.` dropped and each `..` taking away the part before it (never the root).
fn normalized(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                Some(Component::CurDir | Component::ParentDir) | None => out.push(component),
            },
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
#[path = "annotations_tests.rs"]
mod tests;
