//! What can be wrong with a parser definition (a file of `gate-parsers/`, a `parser_dirs` folder
//! or a problem matcher): every message names the file, the key and the reason, on one line.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum DefinitionError {
    #[error("{}: cannot read: {source}", path.display())]
    Unreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A value in a definition is wrong.
    #[error(transparent)]
    Invalid(#[from] InvalidValue),
}

/// A value in a file is wrong: `file[:line:column]: key: reason` (a parser definition's, or
/// the config's).
#[derive(Debug, thiserror::Error)]
#[error("{}{}: {key}: {reason}", path.display(), location.map(|(l, c)| format!(":{l}:{c}")).unwrap_or_default())]
pub struct InvalidValue {
    pub path: PathBuf,
    pub location: Option<(usize, usize)>,
    pub key: String,
    pub reason: String,
}

impl InvalidValue {
    /// `key` in the file at `path` is wrong, at the position `span` points at in `text`.
    pub fn at(
        path: impl Into<PathBuf>,
        text: &str,
        span: Option<std::ops::Range<usize>>,
        key: impl Into<String>,
        reason: impl AsRef<str>,
    ) -> Self {
        Self {
            path: path.into(),
            location: span.map(|span| line_and_column(text, span.start)),
            key: key.into(),
            reason: one_line(reason.as_ref()),
        }
    }
}

/// An error about `key` in the definition `origin`, without a position.
pub(crate) fn invalid(origin: &str, key: String, reason: String) -> DefinitionError {
    InvalidValue::at(origin, "", None, key, reason).into()
}

/// Reads the TOML `text` of the file at `path` into `T`; an error names the key (`(syntax)`,
/// `(top level)`, `gate.check[0].run`) and its line and column.
pub fn from_toml<T: serde::de::DeserializeOwned>(
    path: impl Into<PathBuf>,
    text: &str,
) -> Result<T, InvalidValue> {
    let path = path.into();
    let deserializer = toml::de::Deserializer::parse(text)
        .map_err(|e| InvalidValue::at(&path, text, e.span(), "(syntax)", e.message()))?;
    serde_path_to_error::deserialize(deserializer).map_err(|error| {
        let key = match error.path().to_string() {
            key if key == "." => "(top level)".to_string(),
            key => key,
        };
        let inner = error.into_inner();
        InvalidValue::at(path, text, inner.span(), key, inner.message())
    })
}

/// 1-based line and column of a byte offset.
pub fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text.as_bytes()[..offset.min(text.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let column = String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count()
        + 1;
    (line, column)
}

/// Joins a multi-line message into one line.
pub fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_based() {
        let text = "a = 1\nbb = 2\n";
        assert_eq!(line_and_column(text, 0), (1, 1));
        assert_eq!(line_and_column(text, 6), (2, 1));
        assert_eq!(line_and_column(text, 11), (2, 6));
        assert_eq!(line_and_column(text, 999), (3, 1));
    }
}
