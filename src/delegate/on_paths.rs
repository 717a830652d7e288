//! A fixer made from a gate check (`from_check`), run on the paths of its work when the run has a
//! scope: the files in scope its findings name, or else the scope's own paths; never the check's
//! own targets (`.`), whose fixes outside the scope would only be undone as scope violations.

use crate::scope::Scope;

/// A fixer's command without its path operands, and where it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OnPaths {
    /// The tool in its fix mode, without the paths the check gave it.
    pub command: String,
    /// The check's folder relative to the target, `/`-separated; empty for the target itself.
    pub cwd: String,
}

impl OnPaths {
    /// The command to run for work on `files` (relative to the target) within `scope`: the
    /// command on those of `files` the scope holds, or, when it holds none, on the scope's
    /// patterns. `None` when the scope is everything: the command runs as configured.
    pub fn command_for<'a>(
        &self,
        scope: &Scope,
        files: impl IntoIterator<Item = &'a str>,
    ) -> Option<String> {
        if scope.is_everything() {
            return None;
        }
        let mut paths: Vec<&str> = files
            .into_iter()
            .map(|file| file.trim_start_matches("./"))
            .filter(|file| !file.is_empty() && scope.holds(file))
            .collect();
        paths.sort_unstable();
        paths.dedup();
        if paths.is_empty() {
            paths = scope
                .patterns()
                .iter()
                .map(|pattern| pattern.trim_end_matches('/'))
                .collect();
        }
        let mut command = if self.cwd.is_empty() {
            self.command.clone()
        } else {
            format!("cd {} && {}", shell_word(&self.cwd), self.command)
        };
        for path in paths {
            command.push(' ');
            command.push_str(&shell_word(&self.relative(path)));
        }
        Some(command)
    }

    /// `path`, relative to the target, as seen from the check's folder.
    fn relative(&self, path: &str) -> String {
        if self.cwd.is_empty() {
            return path.to_string();
        }
        let cwd = self.cwd.trim_end_matches('/');
        match path
            .strip_prefix(cwd)
            .and_then(|rest| rest.strip_prefix('/'))
        {
            Some(inside) => inside.to_string(),
            None => format!("{}{path}", "../".repeat(cwd.split('/').count())),
        }
    }
}

/// `text` as one shell word that no tool reads as a flag.
fn shell_word(text: &str) -> String {
    let text = if text.starts_with('-') {
        format!("./{text}")
    } else {
        text.to_string()
    };
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixer_runs_on_the_files_in_scope_or_the_scope() {
        let dir = tempfile::tempdir().unwrap();
        let scope = |patterns: &[&str]| {
            let patterns: Vec<String> = patterns.iter().map(|p| p.to_string()).collect();
            Scope::new(dir.path(), &patterns).unwrap()
        };
        let at = |cwd: &str| OnPaths {
            command: "ruff check --fix".into(),
            cwd: cwd.into(),
        };
        // (check's folder, scope, files with findings, command)
        type Case<'a> = (&'a str, &'a [&'a str], &'a [&'a str], Option<&'a str>);
        let cases: &[Case<'_>] = &[
            ("", &[], &["src/a.py"], None),
            ("", &["."], &["src/a.py"], None),
            (
                "",
                &["docs"],
                &["docs/b.md", "docs/a.md", "docs/b.md"],
                Some("ruff check --fix 'docs/a.md' 'docs/b.md'"),
            ),
            (
                "",
                &["docs"],
                &["./docs/a.md", "tools/x.md"],
                Some("ruff check --fix 'docs/a.md'"),
            ),
            // No file in scope: the scope's own paths.
            (
                "",
                &["docs/", "README.md"],
                &["tools/x.md"],
                Some("ruff check --fix 'docs' 'README.md'"),
            ),
            ("", &["docs"], &[], Some("ruff check --fix 'docs'")),
            (
                "",
                &["docs"],
                &["docs/it's.md", "docs/-n.md"],
                Some(r"ruff check --fix 'docs/-n.md' 'docs/it'\''s.md'"),
            ),
            ("", &["-weird"], &[], Some("ruff check --fix './-weird'")),
            (
                "web",
                &["web/src", "docs"],
                &["web/src/a.js", "docs/c.js"],
                Some("cd 'web' && ruff check --fix '../docs/c.js' 'src/a.js'"),
            ),
            (
                "a/b",
                &["docs"],
                &[],
                Some("cd 'a/b' && ruff check --fix '../../docs'"),
            ),
        ];
        for (cwd, patterns, files, expected) in cases {
            assert_eq!(
                at(cwd)
                    .command_for(&scope(patterns), files.iter().copied())
                    .as_deref(),
                *expected,
                "{cwd:?} {patterns:?} {files:?}"
            );
        }
    }
}
