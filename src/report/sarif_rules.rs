//! The rules of `report.sarif`: what the findings tell of each rule (its checks and parsers,
//! category, first message and documentation), as code scanning shows it.

use serde::Serialize;

use super::ci::{Finding, ParserDocs};
use super::sarif::Text;

/// Code scanning shows at most this many characters of a rule's short and full description.
pub(super) const MAX_DESCRIPTION_CHARS: usize = 1024;
/// The most of a finding's message a rule's description quotes.
const MAX_MESSAGE_CHARS: usize = 300;

/// What the report's findings tell of one rule: its code (or, without one, the check it is
/// named after), the checks and parsers that reported it, its category, the first message and
/// its documentation.
pub(super) struct RuleFacts<'a> {
    id: &'a str,
    has_code: bool,
    category: &'a str,
    first_message: String,
    /// (check, parser), in the order first seen.
    reporters: Vec<(&'a str, &'a str)>,
    help_uri: Option<String>,
}

impl<'a> RuleFacts<'a> {
    pub(super) fn new(finding: &'a Finding<'_>) -> Self {
        Self {
            id: finding.rule(),
            has_code: finding.has_code(),
            category: finding.category(),
            first_message: finding.diagnostic.message.clone(),
            reporters: Vec::new(),
            help_uri: None,
        }
    }

    /// Adds what `finding` tells: its check, and the page its parser gives the code when no
    /// earlier finding's parser gave one.
    pub(super) fn add(&mut self, finding: &'a Finding<'_>, parsers: &ParserDocs) {
        let reporter = (finding.check.name.as_str(), finding.check.parser.as_str());
        if !self.reporters.contains(&reporter) {
            self.reporters.push(reporter);
        }
        if self.help_uri.is_none()
            && let Some(code) = finding.code()
        {
            self.help_uri = parsers
                .get(&finding.check.parser)
                .and_then(|doc| doc.rule_help.as_ref())
                .and_then(|help| help.uri(code));
        }
    }

    pub(super) fn rule(&self, parsers: &ParserDocs) -> Rule {
        let checks: Vec<&str> = self.reporters.iter().map(|(check, _)| *check).collect();
        let short = if self.has_code {
            format!("{}, reported by {}", self.id, and_list(&checks))
        } else {
            format!("A finding of {} without a code", and_list(&checks))
        };
        let reporters = |describe: &dyn Fn(&str) -> String| -> String {
            let each: Vec<String> = self
                .reporters
                .iter()
                .map(|(check, parser)| {
                    let what = parsers
                        .get(*parser)
                        .map(|doc| doc.description.trim())
                        .filter(|description| !description.is_empty());
                    let parser = match what {
                        Some(what) => format!("parser {}: {}", describe(parser), describe(what)),
                        None => format!("parser {}", describe(parser)),
                    };
                    format!("{} ({parser})", describe(check))
                })
                .collect();
            let checks = if each.len() == 1 { "check" } else { "checks" };
            format!("the {checks} {}", and_list(&each))
        };
        let what = |describe: &dyn Fn(&str) -> String| -> String {
            if self.has_code {
                format!(
                    "Code {} reported by {}, in the category {}.",
                    describe(self.id),
                    reporters(describe),
                    describe(self.category)
                )
            } else {
                format!(
                    "Findings without a code reported by {}, in the category {}.",
                    reporters(describe),
                    describe(self.category)
                )
            }
        };
        let message = cut(&self.first_message, MAX_MESSAGE_CHARS);
        let plain = |text: &str| text.to_string();
        let full = format!("{} The first finding said: {message}", what(&plain));
        let treatment = treatment(self.category);
        let mut text = format!("{full}\n\n{treatment}");
        let mut markdown = format!(
            "{}\n\nThe first finding said: {}\n\n{}",
            what(&|text: &str| super::markdown::inline(text)),
            super::markdown::inline(&message),
            super::markdown::inline(&treatment)
        );
        if let Some(uri) = &self.help_uri {
            text.push_str(&format!("\n\nDocumentation: {uri}"));
            markdown.push_str(&format!(
                "\n\n[Documentation of {}](<{uri}>)",
                super::markdown::inline(self.id)
            ));
        }
        Rule {
            id: self.id.to_string(),
            short_description: Text {
                text: cut(&short, MAX_DESCRIPTION_CHARS),
            },
            full_description: Text {
                text: cut(&full, MAX_DESCRIPTION_CHARS),
            },
            help: Help { text, markdown },
            help_uri: self.help_uri.clone(),
            properties: RuleProperties {
                tags: vec![self.category.to_string()],
            },
        }
    }
}

/// How refine-loop treats a finding of `category`, by its level.
fn treatment(category: &str) -> String {
    format!(
        "How refine-loop treats it: an error is a failure of the category {category}, which \
         fails the gate and which a run hands to the delegates that work on {category}. A \
         warning is counted and reported but fails nothing; a note is only shown."
    )
}

/// `a`, `a and b`, `a, b and c`.
pub(super) fn and_list<S: AsRef<str>>(items: &[S]) -> String {
    match items {
        [] => String::new(),
        [one] => one.as_ref().to_string(),
        [init @ .., last] => format!(
            "{} and {}",
            init.iter()
                .map(AsRef::as_ref)
                .collect::<Vec<_>>()
                .join(", "),
            last.as_ref()
        ),
    }
}

/// `text` on one line, at most `max` characters (the last an ellipsis when cut).
fn cut(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= max {
        return line;
    }
    let mut kept: String = line.chars().take(max.saturating_sub(1)).collect();
    kept.push('…');
    kept
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Rule {
    id: String,
    short_description: Text,
    full_description: Text,
    help: Help,
    #[serde(skip_serializing_if = "Option::is_none")]
    help_uri: Option<String>,
    properties: RuleProperties,
}

#[derive(Serialize)]
struct Help {
    text: String,
    markdown: String,
}

#[derive(Serialize)]
struct RuleProperties {
    tags: Vec<String>,
}
