//! The integrity catalogue: the built-in entries embedded from `gate-integrity/`, plus the
//! user's own folders. An entry of the user's takes the place of a built-in one of the same
//! name (an empty one turns it off); two of the user's own with one name are an error.

use std::path::PathBuf;

use super::definition::{Entry, compile};
use crate::parse::{DefinitionError, InvalidValue};

/// The built-in entries (every file in `gate-integrity/`), embedded by `build.rs`.
const BUILT_IN: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/built_in_integrity.rs"));

/// Every entry, by name.
#[derive(Debug, Default)]
pub struct Catalogue {
    entries: Vec<Entry>,
}

impl Catalogue {
    /// The built-in entries only.
    pub fn built_in() -> Result<Self, DefinitionError> {
        Self::load(&[])
    }

    /// The built-in entries and every `*.toml` in `dirs`.
    pub fn load(dirs: &[PathBuf]) -> Result<Self, DefinitionError> {
        let mut entries: Vec<Entry> = Vec::new();
        for (file, text) in BUILT_IN {
            let entry = compile(&format!("gate-integrity/{file} (built in)"), text)?;
            if let Some(first) = entries.iter().find(|e| e.name == entry.name) {
                return Err(duplicate(&entry.origin, &entry.name, &first.origin));
            }
            entries.push(entry);
        }
        let built_in = entries.len();
        for dir in dirs {
            for path in crate::parse::definition_files(dir, &["toml"])? {
                let text = crate::parse::read_definition_file(&path)?;
                let entry = compile(&path.display().to_string(), &text)?;
                match entries.iter().position(|e| e.name == entry.name) {
                    Some(index)
                        if index >= built_in || !entries[index].origin.ends_with("(built in)") =>
                    {
                        return Err(duplicate(
                            &entry.origin,
                            &entry.name,
                            &entries[index].origin,
                        ));
                    }
                    Some(index) => {
                        tracing::info!(entry = %entry.name, origin = %entry.origin, "replaces the built-in integrity entry");
                        entries[index] = entry;
                    }
                    None => entries.push(entry),
                }
            }
        }
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Self { entries })
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The entry `name`.
    pub fn get(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.name == name)
    }
}

fn duplicate(origin: &str, name: &str, first: &str) -> DefinitionError {
    DefinitionError::Invalid(InvalidValue::at(
        origin,
        "",
        None,
        "name",
        format!("integrity entry \"{name}\" is already defined in {first}"),
    ))
}
