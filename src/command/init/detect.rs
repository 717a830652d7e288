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
