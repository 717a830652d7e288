//! The scope of a run (`--scope`, `[loop] scope`): the paths and globs, relative to the target,
//! that delegates may change and whose findings are worked. A pattern names a file, or a folder
//! and all beneath it; `*` does not cross `/`, `**` does. No pattern: the whole target.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// What the delegates may change.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    patterns: Vec<String>,
    /// `None`: everything.
    set: Option<GlobSet>,
    /// The target, relative to the repository root (empty when they are the same).
    prefix: Vec<u8>,
}

impl Scope {
    /// The scope of `patterns` for paths relative to the target only (no repository to
    /// locate it in): what `merge` reads back from a shard's `run.json`.
    pub fn of_patterns(patterns: &[String]) -> Result<Self, String> {
        Self::new(Path::new("/nonexistent/refine-loop-scope"), patterns)
    }

    /// The scope of `patterns`, relative to `target`; an error says which pattern is wrong.
    pub fn new(target: &Path, patterns: &[String]) -> Result<Self, String> {
        // `.` is the whole target, as `REFINE_LOOP_SCOPE` writes it.
        if patterns.iter().all(|p| matches!(p.as_str(), "." | "./")) {
            return Ok(Self::default());
        }
        let mut builder = GlobSetBuilder::new();
        for pattern in patterns {
            let trimmed = pattern.trim_end_matches('/');
            let climbs = Path::new(trimmed)
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)));
            if trimmed.is_empty() || trimmed.starts_with('/') || climbs {
                return Err(format!(
                    "{pattern:?} is not a path or glob inside the target (relative, no . or ..)"
                ));
            }
            for glob in [trimmed.to_string(), format!("{trimmed}/**")] {
                let compiled = GlobBuilder::new(&glob)
                    .literal_separator(true)
                    .build()
                    .map_err(|error| format!("{pattern:?} is not a glob: {error}"))?;
                builder.add(compiled);
            }
        }
        let set = builder
            .build()
            .map_err(|error| format!("the scope does not compile: {error}"))?;
        let prefix = git2::Repository::discover(target)
            .ok()
            .and_then(|repo| {
                let root = repo.workdir()?.canonicalize().ok()?;
                let target = target.canonicalize().ok()?;
                Some(
                    target
                        .strip_prefix(root)
                        .ok()?
                        .as_os_str()
                        .as_bytes()
                        .to_vec(),
                )
            })
            .unwrap_or_default();
        Ok(Self {
            patterns: patterns.to_vec(),
            set: Some(set),
            prefix,
        })
    }

    /// Pull-request mode: the files the change touched (relative to `target`), and beside them
    /// what this scope names when it is not the whole target. No file and no pattern: nothing.
    pub fn with_changed_files(&self, target: &Path, files: &[String]) -> Result<Self, String> {
        let mut patterns: Vec<String> = self.patterns.clone();
        patterns.extend(files.iter().map(|file| globset::escape(file)));
        if patterns.is_empty() {
            return Ok(Self {
                patterns,
                set: Some(GlobSet::empty()),
                prefix: Vec::new(),
            });
        }
        Self::new(target, &patterns)
    }

    /// The whole target.
    pub fn is_everything(&self) -> bool {
        self.set.is_none()
    }

    /// Whether a path relative to the target is in scope.
    pub fn holds(&self, path: &str) -> bool {
        let path = path.trim_start_matches("./");
        self.set.as_ref().is_none_or(|set| set.is_match(path))
    }

    /// Whether a path relative to the repository root is in scope (outside the target is not).
    pub fn holds_in_repository(&self, path: &[u8]) -> bool {
        let Some(set) = &self.set else {
            return true;
        };
        // Bytes, not text: two names that differ only in bytes that are not UTF-8 stay apart.
        let relative = if self.prefix.is_empty() {
            Some(path)
        } else {
            path.strip_prefix(self.prefix.as_slice())
                .and_then(|rest| rest.strip_prefix(b"/"))
        };
        relative.is_some_and(|relative| set.is_match(Path::new(OsStr::from_bytes(relative))))
    }

    /// For a prompt: `the whole repository`, or the patterns.
    pub fn describe(&self) -> String {
        if self.is_everything() {
            "the whole repository".to_string()
        } else if self.patterns.is_empty() {
            "no path (the change touched none)".to_string()
        } else {
            format!("only these paths: {}", self.patterns.join(", "))
        }
    }

    /// For `REFINE_LOOP_SCOPE`: the patterns, space-separated, or `.` for the whole target.
    pub fn env_value(&self) -> String {
        if self.is_everything() {
            ".".to_string()
        } else {
            self.patterns.join(" ")
        }
    }

    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_name_files_folders_and_globs() {
        let dir = tempfile::tempdir().unwrap();
        let patterns: Vec<String> = ["src/app.py", "lib", "pkg/*.py", "docs/**/*.md"]
            .map(String::from)
            .to_vec();
        let scope = Scope::new(dir.path(), &patterns).unwrap();
        // (path, in scope)
        let cases = [
            ("src/app.py", true),
            ("./src/app.py", true),
            ("src/other.py", false),
            ("src/app.py.bak", false),
            ("lib", true),
            ("lib/a/b.py", true),
            ("library/a.py", false),
            ("pkg/a.py", true),
            ("pkg/sub/a.py", false),
            ("docs/a.md", true),
            ("docs/x/y/a.md", true),
            ("docs/a.txt", false),
            ("README.md", false),
        ];
        for (path, expected) in cases {
            assert_eq!(scope.holds(path), expected, "{path}");
            assert_eq!(
                scope.holds_in_repository(path.as_bytes()),
                expected && !path.starts_with("./"),
                "{path}"
            );
        }
        assert!(Scope::default().holds("anything/at/all"));
        assert!(
            Scope::new(dir.path(), &[".".into()])
                .unwrap()
                .is_everything()
        );
        assert_eq!(Scope::default().env_value(), ".");
        assert_eq!(scope.env_value(), "src/app.py lib pkg/*.py docs/**/*.md");
    }

    #[test]
    fn a_pattern_outside_the_target_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        for bad in ["", "/etc", "../x", "a/../../b", "./a", "a/[b"] {
            assert!(
                Scope::new(dir.path(), &[bad.to_string()]).is_err(),
                "{bad:?}"
            );
        }
    }
}
