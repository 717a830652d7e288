//! The integrity catalogue: the built-in entries embedded from `gate-integrity/`, plus the
//! user's own folders. An entry of the user's takes the place of a built-in one of the same
//! name (an empty one turns it off); two of the user's own with one name are an error.

use std::path::PathBuf;

use globset::{GlobSet, GlobSetBuilder};

use super::definition::{Entry, compile, compile_glob};
use crate::parse::{DefinitionError, InvalidValue};

/// The built-in entries (every file in `gate-integrity/`), embedded by `build.rs`.
const BUILT_IN: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/built_in_integrity.rs"));

/// Every entry, by name, and every rule's globs in one set.
#[derive(Debug, Default)]
pub struct Catalogue {
    entries: Vec<Entry>,
    router: Router,
}

/// A rule of an entry, by their indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Route {
    Marker(usize, usize),
    Tests(usize, usize),
    Config(usize, usize),
    Threshold(usize, usize),
    Comment(usize),
}

/// Every glob of every rule, matched at once: which rules a path is for.
#[derive(Debug, Default)]
struct Router {
    set: GlobSet,
    /// `routes[i]` is the rule of the set's glob `i`.
    routes: Vec<Route>,
}

impl Router {
    fn of(entries: &[Entry]) -> Self {
        let mut set = GlobSetBuilder::new();
        let mut routes = Vec::new();
        let mut add = |globs: &[String], route: Route| {
            for glob in globs {
                // Compiled once already, when the entry was.
                if let Ok(glob) = compile_glob(glob) {
                    set.add(glob);
                    routes.push(route);
                }
            }
        };
        for (e, entry) in entries.iter().enumerate() {
            for (i, marker) in entry.markers.iter().enumerate() {
                add(&marker.files.globs, Route::Marker(e, i));
            }
            for (i, rule) in entry.tests.iter().enumerate() {
                add(&rule.files.globs, Route::Tests(e, i));
            }
            for (i, rule) in entry.config.iter().enumerate() {
                add(&rule.files.globs, Route::Config(e, i));
            }
            for (i, rule) in entry.thresholds.iter().enumerate() {
                add(&rule.files.globs, Route::Threshold(e, i));
            }
            if let Some(comment) = &entry.comment {
                add(&comment.files.globs, Route::Comment(e));
            }
        }
        Self {
            set: set.build().unwrap_or_default(),
            routes,
        }
    }
}

/// The rules that apply to one path, by entry and rule index, in the catalogue's order.
#[derive(Debug, Default)]
pub struct Applicable {
    pub markers: Vec<(usize, usize)>,
    pub tests: Vec<(usize, usize)>,
    pub config: Vec<(usize, usize)>,
    pub thresholds: Vec<(usize, usize)>,
    pub comments: Vec<usize>,
}

impl Applicable {
    pub fn is_empty(&self) -> bool {
        self.markers.is_empty()
            && self.tests.is_empty()
            && self.config.is_empty()
            && self.thresholds.is_empty()
            && self.comments.is_empty()
    }
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
        let router = Router::of(&entries);
        Ok(Self { entries, router })
    }

    /// The rules that apply to the file at `path` (relative to the target).
    pub fn applicable(&self, path: &str) -> Applicable {
        let mut routes: Vec<Route> = (self.router.set.matches(path).into_iter())
            .map(|index| self.router.routes[index])
            .collect();
        routes.sort_unstable();
        routes.dedup();
        let mut applicable = Applicable::default();
        for route in routes {
            match route {
                Route::Marker(e, i) => applicable.markers.push((e, i)),
                Route::Tests(e, i) => applicable.tests.push((e, i)),
                Route::Config(e, i) => applicable.config.push((e, i)),
                Route::Threshold(e, i) => applicable.thresholds.push((e, i)),
                Route::Comment(e) => applicable.comments.push(e),
            }
        }
        applicable
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
