//! The parsers a gate can name: the built-in definitions embedded from `gate-parsers/`, plus the
//! user's own folders. Names are unique.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Parser, definition, problem_matcher};
use crate::config::ConfigError;

/// The built-in definitions (every file in `gate-parsers/`), embedded by `build.rs`.
const BUILT_IN: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/built_in_parsers.rs"));

#[derive(Debug)]
pub struct Catalogue {
    parsers: BTreeMap<String, (String, Box<dyn Parser>)>,
}

impl Catalogue {
    /// The built-in parsers only.
    pub fn built_in() -> Result<Self, ConfigError> {
        Self::load(&[])
    }

    /// The built-in parsers and every definition in `dirs`.
    pub fn load(dirs: &[PathBuf]) -> Result<Self, ConfigError> {
        let mut catalogue = Self {
            parsers: BTreeMap::new(),
        };
        for reader in super::structured::readers() {
            let name = reader.name().to_string();
            catalogue
                .parsers
                .insert(name, ("structured reader (built in)".to_string(), reader));
        }
        for (file, text) in BUILT_IN {
            catalogue.add(&format!("gate-parsers/{file} (built in)"), text, false)?;
        }
        for dir in dirs {
            for path in definition_files(dir)? {
                catalogue.add_file(&path, false)?;
            }
        }
        Ok(catalogue)
    }

    /// Adds the definitions in `path`; with `replace`, one may take the place of a parser of the
    /// same name (a definition being developed with `refine-loop parse --definition`). Returns
    /// the names added.
    pub fn add_file(&mut self, path: &Path, replace: bool) -> Result<Vec<String>, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Unreadable {
            path: path.to_path_buf(),
            source,
        })?;
        self.add(&path.display().to_string(), &text, replace)
    }

    fn add(&mut self, origin: &str, text: &str, replace: bool) -> Result<Vec<String>, ConfigError> {
        let parsers: Vec<Box<dyn Parser>> =
            if origin.ends_with(".json") || origin.contains(".json ") {
                problem_matcher::compile_matchers(origin, text)?
                    .into_iter()
                    .map(|matcher| Box::new(matcher) as Box<dyn Parser>)
                    .collect()
            } else {
                vec![Box::new(definition::compile(origin, text)?)]
            };
        let mut names = Vec::new();
        for parser in parsers {
            let name = parser.name().to_string();
            if !replace && let Some((first, _)) = self.parsers.get(&name) {
                return Err(ConfigError::invalid_at(
                    origin,
                    "",
                    None,
                    "name",
                    format!("parser \"{name}\" is already defined in {first}"),
                ));
            }
            self.parsers
                .insert(name.clone(), (origin.to_string(), parser));
            names.push(name);
        }
        Ok(names)
    }

    pub fn get(&self, name: &str) -> Option<&dyn Parser> {
        self.parsers.get(name).map(|(_, parser)| parser.as_ref())
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.parsers.keys().map(String::as_str)
    }

    /// Every parser with the file it came from, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&dyn Parser, &str)> {
        self.parsers
            .values()
            .map(|(origin, parser)| (parser.as_ref(), origin.as_str()))
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
        .filter(|path| {
            path.extension()
                .is_some_and(|ext| ext == "toml" || ext == "json")
                && path.is_file()
        })
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
        for name in ["cargo-test", "clippy", "exit-code"] {
            assert!(catalogue.get(name).is_some(), "{name}");
        }
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
