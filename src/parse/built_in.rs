//! A built-in parser compiled when it is first used: a gate names a few of the forty, and
//! compiling every one of them was most of what `parse` and `check` spent before reading a line.

use std::sync::OnceLock;

use super::{ParseContext, ParseSession, Parser, RuleHelp, definition};

/// The built-in definition `gate-parsers/<name>.toml`, compiled on first use.
#[derive(Debug)]
pub(super) struct BuiltIn {
    name: String,
    origin: String,
    text: &'static str,
    compiled: OnceLock<Box<dyn Parser>>,
}

impl BuiltIn {
    /// The definition `file` of `gate-parsers/`, whose text is `text`; `None` for a file that is
    /// not a parser definition. Its parser's name is the file's (a test holds every built-in to
    /// that).
    pub(super) fn new(file: &str, text: &'static str) -> Option<Self> {
        let name = file.strip_suffix(".toml")?;
        Some(Self {
            name: name.to_string(),
            origin: format!("gate-parsers/{file} (built in)"),
            text,
            compiled: OnceLock::new(),
        })
    }

    /// Where the definition comes from, as the catalogue lists it.
    pub(super) fn origin(&self) -> &str {
        &self.origin
    }

    fn parser(&self) -> &dyn Parser {
        self.compiled
            .get_or_init(|| {
                let parser = definition::compile(&self.origin, self.text)
                    .expect("the built-in parser definitions compile (a test compiles each)");
                Box::new(parser)
            })
            .as_ref()
    }
}

impl Parser for BuiltIn {
    fn name(&self) -> &str {
        &self.name
    }

    fn category(&self) -> Option<&str> {
        self.parser().category()
    }

    fn description(&self) -> &str {
        self.parser().description()
    }

    fn command(&self) -> &str {
        self.parser().command()
    }

    fn session<'a>(&'a self, context: &'a ParseContext) -> Box<dyn ParseSession + 'a> {
        self.parser().session(context)
    }

    fn rule_help(&self) -> Option<&RuleHelp> {
        self.parser().rule_help()
    }

    fn reads_documents(&self) -> bool {
        self.parser().reads_documents()
    }

    fn is_fallback(&self) -> bool {
        self.parser().is_fallback()
    }
}

/// The built-in definitions (every file in `gate-parsers/`), embedded by `build.rs`.
pub(super) const BUILT_IN: &[(&str, &str)] =
    include!(concat!(env!("OUT_DIR"), "/built_in_parsers.rs"));

/// The `[[rule_help]]` of the built-in definition `gate-parsers/<name>.toml` (none when it has
/// none): a structured reader of the same tool's output shares it.
pub(super) fn built_in_rule_help(name: &str) -> RuleHelp {
    let file = format!("{name}.toml");
    BUILT_IN
        .iter()
        .find(|(built_in, _)| *built_in == file)
        .and_then(|(_, text)| definition::compile(&file, text).ok())
        .map(|parser| parser.rule_help)
        .unwrap_or_default()
}
