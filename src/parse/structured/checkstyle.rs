//! Checkstyle XML, the report format many linters share (`eslint -f checkstyle`, `shellcheck -f
//! checkstyle`, `hadolint -f checkstyle`, `stylelint` and `golangci-lint` formatters...):
//! `<checkstyle><file name="…"><error line="…" column="…" severity="…" message="…"
//! source="…"/></file></checkstyle>`. The code is `source` without a tool's own prefix
//! (`eslint.rules.no-unused-vars`, `ShellCheck.SC2086`). Severity: `error` an error, `warning`
//! a warning, `info`, `ignore` and hadolint's `style` notes. Line and column 0 (biome's, for a
//! diagnostic about the whole file) are none.

use std::io::BufRead;

use quick_xml::events::{BytesStart, Event};

use super::junit::attribute;
use super::{DocumentReader, Found, Sink};
use crate::model::Severity;

#[derive(Debug)]
pub struct Checkstyle;

/// Prefixes tools put before their rule's name in `source`.
const SOURCE_PREFIXES: &[&str] = &["eslint.rules.", "ShellCheck.", "stylelint.rules."];

impl DocumentReader for Checkstyle {
    fn read(&self, document: &mut dyn BufRead, sink: &mut Sink<'_>) -> bool {
        let mut reader = quick_xml::Reader::from_reader(document);
        let mut buffer = Vec::new();
        let mut seen_root = false;
        let mut file: Option<String> = None;
        loop {
            let event = match reader.read_event_into(&mut buffer) {
                Ok(event) => event,
                Err(_) => return false,
            };
            match event {
                Event::Eof => break,
                Event::Start(element) | Event::Empty(element) => {
                    match element.local_name().as_ref() {
                        b"checkstyle" => seen_root = true,
                        b"file" if seen_root => file = attribute(&element, "name"),
                        b"error" if seen_root => sink.push(found(&element, file.clone())),
                        _ if !seen_root => return false,
                        _ => {}
                    }
                }
                Event::End(element) if element.local_name().as_ref() == b"file" => file = None,
                _ => {}
            }
            buffer.clear();
        }
        seen_root
    }
}

fn found(element: &BytesStart<'_>, file: Option<String>) -> Found {
    // Line 0 (biome's, for a diagnostic about the whole file) is no line.
    let number = |name| {
        attribute(element, name)
            .and_then(|n| n.trim().parse::<u32>().ok())
            .filter(|n| *n > 0)
    };
    let code = attribute(element, "source").map(|source| {
        SOURCE_PREFIXES
            .iter()
            .find_map(|prefix| source.strip_prefix(prefix))
            .unwrap_or(&source)
            .to_string()
    });
    Found {
        file,
        line: number("line"),
        column: number("column"),
        severity: Some(
            match attribute(element, "severity")
                .unwrap_or_default()
                .to_ascii_lowercase()
                .as_str()
            {
                "warning" => Severity::Warning,
                "info" | "ignore" | "style" => Severity::Note,
                _ => Severity::Error,
            },
        ),
        code: code.filter(|c| !c.is_empty()),
        message: super::what_it_says(&attribute(element, "message").unwrap_or_default()),
        ..Found::default()
    }
}
