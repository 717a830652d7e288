//! The parsers a gate can name: the built-in definitions embedded from `gate-parsers/`, plus the
//! user's own folders. Names are unique.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::built_in::{self, BuiltIn};
use super::error::DefinitionError;
use super::several::{Part, Several};
use super::{Parser, definition, problem_matcher};

#[derive(Debug)]
pub struct Catalogue {
    parsers: BTreeMap<String, (String, Arc<dyn Parser>)>,
    /// Parsers named together (`ruff,pytest`), by the name as written; not listed with the rest.
    combinations: BTreeMap<String, Arc<dyn Parser>>,
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
            combinations: BTreeMap::new(),
        };
        for reader in super::structured::readers() {
            let name = reader.name().to_string();
            catalogue.parsers.insert(
                name,
                ("structured reader (built in)".to_string(), reader.into()),
            );
        }
        catalogue.parsers.insert(
            super::annotations::NAME.to_string(),
            (
                "CI annotation commands (built in)".to_string(),
                Arc::new(super::annotations::Annotations),
            ),
        );
        catalogue.parsers.insert(
            super::tap::NAME.to_string(),
            (
                "TAP test results (built in)".to_string(),
                Arc::new(super::tap::Tap),
            ),
        );
        for (file, text) in built_in::BUILT_IN {
            let Some(built_in) = BuiltIn::new(file, text) else {
                // Not a `regex` definition (a problem matcher): compiled now.
                catalogue.add(&format!("gate-parsers/{file} (built in)"), text, false)?;
                continue;
            };
            let origin = built_in.origin().to_string();
            let name = built_in.name().to_string();
            if let Some((first, _)) = catalogue.parsers.get(&name) {
                return Err(duplicate(&origin, &name, first));
            }
            catalogue.parsers.insert(name, (origin, Arc::new(built_in)));
        }
        let built_in: Vec<String> = catalogue.names().map(str::to_string).collect();
        for dir in dirs {
            for path in definition_files(dir, &["toml", "json"])? {
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
                    catalogue
                        .parsers
                        .insert(name, (origin.clone(), parser.into()));
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
                .insert(name.clone(), (origin.to_string(), parser.into()));
            names.push(name);
        }
        Ok(names)
    }

    /// The parser `name`, or the parsers it names together once
    /// [added](Self::add_combination).
    pub fn get(&self, name: &str) -> Option<&dyn Parser> {
        self.parsers
            .get(name)
            .map(|(_, parser)| parser.as_ref())
            .or_else(|| self.combinations.get(name).map(AsRef::as_ref))
    }

    /// The parser `name` shared, to be one part of several.
    pub fn shared(&self, name: &str) -> Option<Arc<dyn Parser>> {
        self.parsers.get(name).map(|(_, parser)| Arc::clone(parser))
    }

    /// Adds the parsers a comma-separated `names` lists (`ruff,pytest`) as one parser of that
    /// name, each reading the whole output; a no-op when it is there already. The error says
    /// which name is unknown or cannot share an output.
    pub fn add_combination(&mut self, names: &str) -> Result<(), String> {
        if self.combinations.contains_key(names) {
            return Ok(());
        }
        let mut parts = Vec::new();
        for name in names.split(',').map(str::trim) {
            let parser = self
                .shared(name)
                .ok_or_else(|| format!("\"{name}\" is not a parser"))?;
            if parser.reads_documents() {
                return Err(format!(
                    "\"{name}\" reads a whole document (JSON or XML): it cannot share an output"
                ));
            }
            if parts.iter().any(|part: &Part| part.parser.name() == name) {
                return Err(format!("\"{name}\" is named twice"));
            }
            parts.push(Part {
                parser,
                lines: None,
            });
        }
        if parts.len() < 2 {
            return Err("name two parsers or more, separated by commas".into());
        }
        let several = Several::new(parts);
        self.combinations
            .insert(names.to_string(), Arc::new(several));
        Ok(())
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
    super::error::invalid(
        origin,
        "name".into(),
        format!("parser \"{name}\" is already defined in {first}"),
    )
}

/// The text of a definition file.
pub(crate) fn read(path: &Path) -> Result<String, DefinitionError> {
    std::fs::read_to_string(path).map_err(|source| DefinitionError::Unreadable {
        path: path.to_path_buf(),
        source,
    })
}

/// The files in `dir` with one of `extensions`, in name order (a catalogue folder of the user's).
pub(crate) fn definition_files(
    dir: &Path,
    extensions: &[&str],
) -> Result<Vec<PathBuf>, DefinitionError> {
    let entries = std::fs::read_dir(dir).map_err(|source| DefinitionError::Unreadable {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.extension()
                .is_some_and(|ext| extensions.iter().any(|wanted| ext == *wanted))
                && path.is_file()
        })
        .collect();
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each built-in definition compiles, and its parser has the file's name (the catalogue
    /// names it so before compiling it, on first use).
    #[test]
    fn built_ins_compile() {
        assert!(built_in::BUILT_IN.len() >= 30);
        for (file, text) in built_in::BUILT_IN {
            let parsers = compile(file, text).unwrap();
            let names: Vec<&str> = parsers.iter().map(|parser| parser.name()).collect();
            assert_eq!(names, [file.strip_suffix(".toml").unwrap()], "{file}");
        }
        let catalogue = Catalogue::built_in().unwrap();
        for name in ["cargo-test", "clippy", "exit-code"] {
            assert!(catalogue.get(name).is_some(), "{name}");
        }
    }

    #[test]
    fn structured_readers_share_their_tools_rule_help() {
        assert!(built_in::built_in_rule_help("nothing-of-that-name").is_empty());
        let catalogue = Catalogue::built_in().unwrap();
        let uri = |parser: &str, code: &str| {
            catalogue
                .get(parser)
                .and_then(|p| p.rule_help())
                .and_then(|help| help.uri(code))
        };
        for parser in ["clippy", "cargo-json"] {
            assert_eq!(
                uri(parser, "clippy::needless_return").as_deref(),
                Some("https://rust-lang.github.io/rust-clippy/master/index.html#needless_return"),
                "{parser}"
            );
            assert_eq!(
                uri(parser, "E0425").as_deref(),
                Some("https://doc.rust-lang.org/error_codes/E0425.html"),
                "{parser}"
            );
            // rustc's own lints have no such page.
            assert_eq!(uri(parser, "unused_variables"), None, "{parser}");
        }
        for parser in ["eslint", "eslint-compact", "eslint-json"] {
            assert_eq!(
                uri(parser, "eqeqeq").as_deref(),
                Some("https://eslint.org/docs/latest/rules/eqeqeq"),
                "{parser}"
            );
            assert_eq!(uri(parser, "@typescript-eslint/no-unused-vars"), None);
            assert_eq!(uri(parser, "react/jsx-key"), None);
        }
        assert_eq!(
            uri("rustc", "E0308").as_deref(),
            Some("https://doc.rust-lang.org/error_codes/E0308.html")
        );
        assert_eq!(
            uri("mypy", "attr-defined").as_deref(),
            Some("https://mypy.rtfd.io/en/stable/_refs.html#code-attr-defined")
        );
        assert_eq!(
            uri("shellcheck", "SC2086").as_deref(),
            Some("https://www.shellcheck.net/wiki/SC2086")
        );
        assert_eq!(
            uri("hadolint", "DL3008").as_deref(),
            Some("https://github.com/hadolint/hadolint/wiki/DL3008")
        );
        assert_eq!(
            uri("hadolint", "SC2086").as_deref(),
            Some("https://www.shellcheck.net/wiki/SC2086")
        );
        // No page a code maps to: ruff's pages are by rule name, pylint's and bandit's by name
        // and kind, tsc and go have none.
        for (parser, code) in [
            ("ruff", "F401"),
            ("flake8", "F401"),
            ("pylint", "C0121"),
            ("bandit", "B602"),
            ("tsc", "TS2322"),
            ("pytest", "tests/test_a.py::test_b"),
        ] {
            assert_eq!(uri(parser, code), None, "{parser}");
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
