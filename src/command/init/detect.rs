//! What `init` finds in a project: its kinds (from the files that reveal them), the project's
//! own tool configs, and which tools are installed.

use std::path::{Path, PathBuf};

/// Folders never looked into: dependencies, build output, caches.
const SKIP: &[&str] = &[
    ".git",
    "node_modules",
    "target",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
    "dist",
    "build",
    "vendor",
    ".refine-loop",
];

/// Files looked at, at most: a big monorepo is detected from its first ones.
const MAX_FILES: usize = 20_000;

/// The project's files (relative paths) and the text of the few config files that matter.
#[derive(Debug, Default)]
pub struct Project {
    pub root: PathBuf,
    pub files: Vec<String>,
}

impl Project {
    /// Lists the files under `root` (tracked ones when it is a git repository with any, else a
    /// walk that skips [`SKIP`]).
    pub fn scan(root: &Path) -> Self {
        let mut files = tracked(root).unwrap_or_default();
        if files.is_empty() {
            walk(root, root, &mut files);
        }
        files.retain(|f| !f.split('/').any(|part| SKIP.contains(&part)));
        Self {
            root: root.to_path_buf(),
            files,
        }
    }

    /// A file at the top of the project.
    pub fn has(&self, name: &str) -> bool {
        self.root.join(name).is_file()
    }

    /// The text of a file at the top of the project ("" when there is none).
    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.root.join(name)).unwrap_or_default()
    }

    /// The files whose name ends with one of `suffixes`.
    pub fn with_suffix<'a>(&'a self, suffixes: &'a [&str]) -> impl Iterator<Item = &'a String> {
        self.files
            .iter()
            .filter(move |f| suffixes.iter().any(|s| f.ends_with(s)))
    }

    /// Benchmarks that need a nightly compiler (`#![feature(...)]`): `--all-targets` would not
    /// build on stable.
    pub fn nightly_benches(&self) -> bool {
        self.files
            .iter()
            .filter(|f| f.ends_with(".rs") && f.split('/').any(|part| part == "benches"))
            .any(|f| {
                std::fs::read_to_string(self.root.join(f))
                    .is_ok_and(|text| text.contains("#![feature"))
            })
    }

    /// Whether any of `names` is a file at the top of the project.
    pub fn has_any(&self, names: &[&str]) -> bool {
        names.iter().any(|name| self.has(name))
    }

    /// Whether the project runs `tool` itself: its CI workflows, Makefile, task files or
    /// package scripts name it, or a tracked script is named after it (`shellcheck.sh`).
    pub fn runs(&self, tool: &str) -> bool {
        const RUNNERS: &[&str] = &[
            ".gitlab-ci.yml",
            "Makefile",
            "makefile",
            "justfile",
            "Taskfile.yml",
            "tox.ini",
            "tox.toml",
            "noxfile.py",
            "package.json",
            ".pre-commit-config.yaml",
            ".pre-commit-config.yml",
        ];
        let named = |text: &str| {
            text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
                .any(|word| word == tool)
        };
        self.files.iter().any(|f| {
            let name = f.rsplit('/').next().unwrap_or(f);
            let workflow = (f.starts_with(".github/workflows/") || f.starts_with(".circleci/"))
                && (f.ends_with(".yml") || f.ends_with(".yaml"));
            name.split('.').next() == Some(tool)
                || ((workflow || RUNNERS.contains(&f.as_str())) && named(&self.read(f)))
        })
    }

    /// Whether the project's pre-commit config runs a hook with this `id`.
    pub fn precommit_hook(&self, id: &str) -> bool {
        [".pre-commit-config.yaml", ".pre-commit-config.yml"]
            .iter()
            .map(|name| self.read(name))
            .any(|text| {
                text.lines().any(|line| {
                    let line = line.trim().trim_start_matches("- ").trim();
                    line.strip_prefix("id:")
                        .is_some_and(|value| value.trim().trim_matches(['"', '\'']) == id)
                })
            })
    }

    /// Shell scripts known by their shebang only (`bin/deploy`: `#!/usr/bin/env bash`): files
    /// without an extension whose first line names sh, bash, dash or ksh.
    pub fn shebang_scripts(&self) -> Vec<&String> {
        use std::io::Read;
        self.files
            .iter()
            .filter(|f| !f.rsplit('/').next().unwrap_or(f).contains('.'))
            .take(MAX_SHEBANG_READS)
            .filter(|f| {
                let mut head = [0u8; 128];
                let read = std::fs::File::open(self.root.join(f))
                    .and_then(|mut file| file.read(&mut head))
                    .unwrap_or(0);
                let first = head[..read]
                    .split(|&b| b == b'\n')
                    .next()
                    .unwrap_or_default();
                shell_shebang(&String::from_utf8_lossy(first))
            })
            .collect()
    }

    /// The Dockerfiles: `Dockerfile`, `Dockerfile.x`, `x.Dockerfile`, at any depth.
    pub fn dockerfiles(&self) -> Vec<&String> {
        self.files
            .iter()
            .filter(|f| {
                let name = f.rsplit('/').next().unwrap_or(f);
                name == "Dockerfile"
                    || name.starts_with("Dockerfile.")
                    || name.ends_with(".Dockerfile")
            })
            .collect()
    }
}

/// Files without an extension read for a shebang, at most.
const MAX_SHEBANG_READS: usize = 5_000;

/// Whether `line` is a shebang of a shell ShellCheck reads: `#!/bin/sh`, `#!/usr/bin/env bash`,
/// `#!/bin/bash -e`.
fn shell_shebang(line: &str) -> bool {
    let Some(command) = line.strip_prefix("#!") else {
        return false;
    };
    let mut words = command.split_whitespace();
    let mut program = words.next().unwrap_or_default();
    if program.rsplit('/').next() == Some("env") {
        program = words.find(|w| !w.starts_with('-')).unwrap_or_default();
    }
    matches!(
        program.rsplit('/').next(),
        Some("sh" | "bash" | "dash" | "ksh")
    )
}

/// The tracked files of the repository `root` is the top of (paths relative to `root`).
fn tracked(root: &Path) -> Option<Vec<String>> {
    let repo = git2::Repository::open(root).ok()?;
    let index = repo.index().ok()?;
    Some(
        index
            .iter()
            .take(MAX_FILES)
            .map(|entry| String::from_utf8_lossy(&entry.path).into_owned())
            .collect(),
    )
}

fn walk(root: &Path, dir: &Path, files: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if files.len() >= MAX_FILES {
            return;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() && !SKIP.contains(&name.as_str()) {
            walk(root, &entry.path(), files);
        } else if kind.is_file()
            && let Ok(relative) = entry.path().strip_prefix(root)
        {
            files.push(relative.to_string_lossy().into_owned());
        }
    }
}

/// Whether `program` can be run: on `PATH`, or (for `npx --no-install`) in the project's
/// `node_modules/.bin`.
pub fn installed(program: &str, root: &Path) -> bool {
    let executable = |path: &Path| {
        use std::os::unix::fs::PermissionsExt;
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if executable(&root.join("node_modules/.bin").join(program)) {
        return true;
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| executable(&dir.join(program))))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_shell_shebang_is_one_of_the_shells_shellcheck_reads() {
        let table = [
            ("#!/bin/sh", true),
            ("#!/usr/bin/env bash", true),
            ("#! /bin/bash -euo pipefail", true),
            ("#!/usr/bin/env -S bash -e", true),
            ("#!/bin/dash", true),
            ("#!/usr/bin/env python3", false),
            ("#!/usr/bin/env zsh", false),
            ("#!/usr/bin/env bats", false),
            ("# not a shebang", false),
            ("", false),
        ];
        for (line, shell) in table {
            assert_eq!(super::shell_shebang(line), shell, "{line:?}");
        }
    }
}
