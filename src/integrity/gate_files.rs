//! The gate's own files: the scripts a check's `run` names (`scripts/lint.sh`, `python
//! tools/check.py`), the files a runner it calls reads (`make` reads `Makefile`), the config
//! file and the folders of extra parsers and integrity entries. A delegate's change to one of
//! them changes the gate itself.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use super::Catalogue;

/// How a file belongs to the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Named {
    /// A check's command names it, or it is refine-loop's own configuration.
    ByCommand,
    /// A runner a check calls reads it (`Makefile`, `package.json`).
    ByRunner,
}

/// The gate's own files, relative to the target.
#[derive(Debug, Clone, Default)]
pub struct GateFiles {
    named: BTreeSet<String>,
    /// Folders whose every file is the gate's.
    folders: Vec<String>,
    by_runner: BTreeSet<String>,
}

/// One check, as far as its files go.
#[derive(Debug, Clone, Copy)]
pub struct CheckCommand<'a> {
    pub run: &'a str,
    /// Absolute.
    pub cwd: &'a Path,
}

impl GateFiles {
    /// The files of `checks` in the target at `target`, with `config_file` and the `folders` of
    /// extra definitions (absolute paths).
    pub fn resolve(
        catalogue: &Catalogue,
        target: &Path,
        config_file: &Path,
        checks: &[CheckCommand<'_>],
        folders: &[PathBuf],
    ) -> Self {
        let target = target
            .canonicalize()
            .unwrap_or_else(|_| target.to_path_buf());
        let mut files = Self::default();
        let relative = |path: &Path| -> Option<String> {
            let path = path.canonicalize().ok()?;
            let relative = path.strip_prefix(&target).ok()?;
            Some(relative.to_string_lossy().into_owned())
        };
        files.named.extend(relative(config_file));
        files
            .folders
            .extend(folders.iter().filter_map(|f| relative(f)));
        for check in checks {
            for word in words(check.run, 2) {
                let candidate = check.cwd.join(&word);
                if candidate.is_file()
                    && let Some(path) = relative(&candidate)
                {
                    files.named.insert(path);
                }
                let program = Path::new(&word)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                for entry in catalogue.entries() {
                    for runner in entry
                        .runners
                        .iter()
                        .filter(|r| r.command.contains(&program))
                    {
                        let cwd = check
                            .cwd
                            .canonicalize()
                            .unwrap_or_else(|_| check.cwd.to_path_buf());
                        let Ok(folder) = cwd.strip_prefix(&target) else {
                            continue;
                        };
                        for file in &runner.files {
                            files.by_runner.insert(normal(&folder.join(file)));
                        }
                    }
                }
            }
        }
        files
    }

    /// Whether the file at `path` (relative to the target) is the gate's, and how.
    pub fn holds(&self, path: &str) -> Option<Named> {
        let in_folder = self.folders.iter().any(|folder| {
            folder.is_empty()
                || path
                    .strip_prefix(folder.as_str())
                    .is_some_and(|rest| rest.starts_with('/'))
        });
        if self.named.contains(path) || in_folder {
            Some(Named::ByCommand)
        } else if self.by_runner.contains(path) {
            Some(Named::ByRunner)
        } else {
            None
        }
    }

    /// The gate's files are `paths`, each named by a command (for tests).
    #[cfg(test)]
    pub fn of_paths(paths: &[String]) -> Self {
        Self {
            named: paths.iter().cloned().collect(),
            ..Self::default()
        }
    }

    /// The files, for the report and for tests.
    pub fn listed(&self) -> Vec<String> {
        (self.named.iter())
            .chain(&self.by_runner)
            .cloned()
            .chain(self.folders.iter().map(|f| format!("{f}/")))
            .collect()
    }
}

/// The words of a shell command, as sh splits them; a word that holds a command of its own
/// (`sh -c '…'`) is split too, `depth` times; an option's value (`--config=x.toml`) is a word.
fn words(command: &str, depth: u32) -> Vec<String> {
    let split = shlex::split(command)
        .unwrap_or_else(|| command.split_whitespace().map(str::to_string).collect());
    let mut found = Vec::new();
    for word in split {
        if let Some((_, value)) = word.split_once('=').filter(|_| word.starts_with('-')) {
            found.push(value.to_string());
        }
        if depth > 0 && word.contains(char::is_whitespace) {
            found.extend(words(&word, depth - 1));
        }
        found.push(word);
    }
    found
}

/// `path` without `.` and with `..` taken back, `/`-separated.
fn normal(path: &Path) -> String {
    let mut parts: Vec<String> = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            Component::ParentDir => {
                parts.pop();
            }
            _ => {}
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_words_of_a_command_and_of_the_commands_it_holds() {
        assert_eq!(
            words(
                "sh -c 'scripts/lint.sh --fast' && ruff check --config=ruff.toml .",
                2
            ),
            vec![
                "sh",
                "-c",
                "scripts/lint.sh",
                "--fast",
                "scripts/lint.sh --fast",
                "&&",
                "ruff",
                "check",
                "ruff.toml",
                "--config=ruff.toml",
                "."
            ]
        );
        assert_eq!(words("echo 'unbalanced", 1), vec!["echo", "'unbalanced"]);
    }

    #[test]
    fn files_a_check_names_and_a_runner_reads() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for file in [
            "scripts/lint.sh",
            "Makefile",
            "refine-loop.toml",
            "sub/tool.py",
        ] {
            std::fs::create_dir_all(root.join(file).parent().unwrap()).unwrap();
            std::fs::write(root.join(file), "x").unwrap();
        }
        let catalogue = Catalogue::built_in().unwrap();
        let checks = [
            CheckCommand {
                run: "bash scripts/lint.sh && make test",
                cwd: root,
            },
            CheckCommand {
                run: "python tool.py --strict",
                cwd: &root.join("sub"),
            },
        ];
        let files = GateFiles::resolve(
            &catalogue,
            root,
            &root.join("refine-loop.toml"),
            &checks,
            &[root.join("parsers")],
        );
        let table = [
            ("scripts/lint.sh", Some(Named::ByCommand)),
            ("refine-loop.toml", Some(Named::ByCommand)),
            ("sub/tool.py", Some(Named::ByCommand)),
            ("Makefile", Some(Named::ByRunner)),
            ("GNUmakefile", Some(Named::ByRunner)),
            ("src/app.py", None),
            ("scripts/lint.sh.bak", None),
        ];
        for (path, expected) in table {
            assert_eq!(files.holds(path), expected, "{path}");
        }
    }
}
