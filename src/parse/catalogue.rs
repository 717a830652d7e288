//! The parsers a gate can name: the built-in definitions embedded from `gate-parsers/`, plus the
//! user's own folders. Names are unique.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Parser, definition};
use crate::config::ConfigError;

/// The built-in definitions, embedded at build time.
const BUILT_IN: &[(&str, &str)] = &[
    (
        "cargo-test.toml",
        include_str!("../../gate-parsers/cargo-test.toml"),
    ),
    (
        "clippy.toml",
        include_str!("../../gate-parsers/clippy.toml"),
    ),
    (
        "exit-code.toml",
        include_str!("../../gate-parsers/exit-code.toml"),
    ),
];

#[derive(Debug)]
pub struct Catalogue {
    parsers: BTreeMap<String, (String, Box<dyn Parser>)>,
}

impl Catalogue {
    /// The built-in parsers only.
    pub fn built_in() -> Result<Self, ConfigError> {
        Self::load(&[])
    }

    /// The built-in parsers and every `*.toml` in `dirs`.
    pub fn load(dirs: &[PathBuf]) -> Result<Self, ConfigError> {
        let mut catalogue = Self {
            parsers: BTreeMap::new(),
        };
        for (file, text) in BUILT_IN {
            catalogue.add(&format!("gate-parsers/{file} (built in)"), text)?;
        }
        for dir in dirs {
            for path in definition_files(dir)? {
                let text =
                    std::fs::read_to_string(&path).map_err(|source| ConfigError::Unreadable {
                        path: path.clone(),
                        source,
                    })?;
                catalogue.add(&path.display().to_string(), &text)?;
            }
        }
        Ok(catalogue)
    }

    fn add(&mut self, origin: &str, text: &str) -> Result<(), ConfigError> {
        let parser = definition::compile(origin, text)?;
        if let Some((first, _)) = self.parsers.get(&parser.name) {
            return Err(ConfigError::invalid_at(
                origin,
                "",
                None,
                "name",
                format!("parser \"{}\" is already defined in {first}", parser.name),
            ));
        }
        self.parsers
            .insert(parser.name.clone(), (origin.to_string(), Box::new(parser)));
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&dyn Parser> {
        self.parsers.get(name).map(|(_, parser)| parser.as_ref())
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.parsers.keys().map(String::as_str)
    }
}

fn definition_files(dir: &Path) -> Result<Vec<PathBuf>, ConfigError> {
    let entries = std::fs::read_dir(dir).map_err(|source| ConfigError::Unreadable {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml") && path.is_file())
        .collect();
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_ins_compile() {
        let catalogue = Catalogue::built_in().unwrap();
        assert_eq!(
            catalogue.names().collect::<Vec<_>>(),
            ["cargo-test", "clippy", "exit-code"]
        );
    }

    #[test]
    fn a_duplicate_name_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("mine.toml"), "name = \"clippy\"\n").unwrap();
        let error = Catalogue::load(&[dir.path().to_path_buf()])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains(
                "mine.toml: name: parser \"clippy\" is already defined in gate-parsers/clippy.toml"
            ),
            "{error}"
        );
    }
}
