//! The parsers a gate can name: the built-in definitions embedded from `gate-parsers/`, plus the
//! user's own folders. Names are unique.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::error::DefinitionError;
use super::{Parser, definition, problem_matcher};

/// The built-in definitions (every file in `gate-parsers/`), embedded by `build.rs`.
const BUILT_IN: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/built_in_parsers.rs"));

#[derive(Debug)]
pub struct Catalogue {
    parsers: BTreeMap<String, (String, Box<dyn Parser>)>,
}

impl Catalogue {
    /// The built-in parsers only.
    pub fn built_in() -> Result<Self, DefinitionError> {
        Self::load(&[])
    }

    /// The built-in parsers and every definition in `dirs`.
    pub fn load(dirs: &[PathBuf]) -> Result<Self, DefinitionError> {
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
        let built_in: Vec<String> = catalogue.names().map(str::to_string).collect();
        for dir in dirs {
            for path in definition_files(dir)? {
                // A user's parser may take the place of a built-in one of the same name; two of
                // the user's own with one name are an error.
                let text = read(&path)?;
                let origin = path.display().to_string();
                for parser in compile(&origin, &text)? {
                    let name = parser.name().to_string();
                    match catalogue.parsers.get(&name) {
                        Some((first, _))
                            if !built_in.contains(&name) || !first.ends_with("(built in)") =>
                        {
                            return Err(duplicate(&origin, &name, first));
                        }
                        Some(_) => {
                            tracing::info!(parser = %name, %origin, "replaces the built-in parser")
                        }
                        None => {}
                    }
                    catalogue.parsers.insert(name, (origin.clone(), parser));
                }
            }
        }
        Ok(catalogue)
    }

    /// Adds the definitions in `path`; with `replace`, one may take the place of a parser of the
    /// same name (a definition being developed with `refine-loop parse --definition`). Returns
    /// the names added.
    pub fn add_file(&mut self, path: &Path, replace: bool) -> Result<Vec<String>, DefinitionError> {
        let text = read(path)?;
        self.add(&path.display().to_string(), &text, replace)
    }

    fn add(
        &mut self,
        origin: &str,
        text: &str,
        replace: bool,
    ) -> Result<Vec<String>, DefinitionError> {
        let mut names = Vec::new();
        for parser in compile(origin, text)? {
            let name = parser.name().to_string();
            if !replace && let Some((first, _)) = self.parsers.get(&name) {
                return Err(duplicate(origin, &name, first));
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

/// The parsers a definition file holds: one `regex` definition, or a problem matcher's owners.
fn compile(origin: &str, text: &str) -> Result<Vec<Box<dyn Parser>>, DefinitionError> {
    if origin.ends_with(".json") || origin.contains(".json ") {
        Ok(problem_matcher::compile_matchers(origin, text)?
            .into_iter()
            .map(|matcher| Box::new(matcher) as Box<dyn Parser>)
            .collect())
    } else {
        Ok(vec![Box::new(definition::compile(origin, text)?)])
    }
}

fn duplicate(origin: &str, name: &str, first: &str) -> DefinitionError {
    DefinitionError::invalid_at(
        origin,
        "",
        None,
        "name",
        format!("parser \"{name}\" is already defined in {first}"),
    )
}

fn read(path: &Path) -> Result<String, DefinitionError> {
    std::fs::read_to_string(path).map_err(|source| DefinitionError::Unreadable {
        path: path.to_path_buf(),
        source,
    })
}

fn definition_files(dir: &Path) -> Result<Vec<PathBuf>, DefinitionError> {
    let entries = std::fs::read_dir(dir).map_err(|source| DefinitionError::Unreadable {
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
    fn a_users_parser_replaces_a_built_in_but_not_another_of_theirs() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("mine.toml"), "name = \"clippy\"\n").unwrap();
        let catalogue = Catalogue::load(&[dir.path().to_path_buf()]).unwrap();
        assert!(
            catalogue
                .iter()
                .any(|(p, origin)| p.name() == "clippy" && origin.ends_with("mine.toml"))
        );

        std::fs::write(dir.path().join("other.toml"), "name = \"clippy\"\n").unwrap();
        let error = Catalogue::load(&[dir.path().to_path_buf()])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("other.toml: name: parser \"clippy\" is already defined in")
                && error.contains("mine.toml"),
            "{error}"
        );
    }
}
