//! `report.sarif`: the remaining findings as SARIF 2.1.0, within GitHub code scanning's limits.

use std::collections::BTreeMap;

use serde::Serialize;

use super::Report;
use super::ci::{CiReportError, Finding, ParserDocs, SARIF_FILE};
use crate::model::Severity;

/// The schema the log names.
pub const SARIF_SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";
/// Code scanning rejects a run with more results than this.
pub const MAX_RESULTS: usize = 25_000;
/// The key of the fingerprint in each result's `partialFingerprints`.
const FINGERPRINT_KEY: &str = "refineLoop/v1";

/// Renders the findings as a SARIF log of one run. Each result has a location (the anchor when
/// the finding has no path inside the target), because code scanning rejects the whole file
/// otherwise. Past [`MAX_RESULTS`] the most severe are kept and `run.properties` says so.
pub fn render_sarif(report: &Report) -> Result<Vec<u8>, CiReportError> {
    render_with_limit(report, MAX_RESULTS)
}

fn render_with_limit(input: &Report, limit: usize) -> Result<Vec<u8>, CiReportError> {
    let mut findings = super::ci::findings(input);
    let total = findings.len();
    // Stable: within a severity the findings keep the order they were found in.
    // New findings first (pull-request mode), then by severity.
    findings.sort_by_key(|finding| (finding.preexisting, finding.diagnostic.severity));
    findings.truncate(limit);

    let mut rule_index: BTreeMap<&str, usize> = BTreeMap::new();
    let mut facts: Vec<RuleFacts<'_>> = Vec::new();
    let mut results = Vec::with_capacity(findings.len());
    for finding in &findings {
        let rule = finding.rule();
        let index = *rule_index.entry(rule).or_insert_with(|| {
            facts.push(RuleFacts::new(finding));
            facts.len() - 1
        });
        facts[index].add(finding, &input.parsers);
        let mut result = result(finding, index, &input.anchor);
        if input.new_since().is_some() {
            result.baseline_state = Some(if finding.preexisting {
                "unchanged"
            } else {
                "new"
            });
        }
        results.push(result);
    }
    let rules = facts
        .iter()
        .map(|facts| facts.rule(&input.parsers))
        .collect();
    let properties = (results.len() < total).then(|| RunProperties {
        truncated: true,
        results_total: total,
        results_kept: results.len(),
        note: format!(
            "{total} findings, more than the {limit} results code scanning accepts in one run: \
             the {} most severe are reported",
            results.len()
        ),
    });
    let log = Log {
        schema: SARIF_SCHEMA,
        version: "2.1.0",
        runs: [Run {
            tool: Tool {
                driver: Driver {
                    name: "refine-loop",
                    version: env!("CARGO_PKG_VERSION"),
                    rules,
                },
            },
            automation_details: AutomationDetails {
                id: input.automation_id.clone(),
            },
            results,
            properties,
        }],
    };
    let mut bytes = serde_json::to_vec_pretty(&log).map_err(|source| CiReportError::Json {
        file: SARIF_FILE,
        source,
    })?;
    bytes.push(b'\n');
    Ok(bytes)
}

fn result<'a>(finding: &Finding<'a>, rule_index: usize, anchor: &str) -> SarifResult<'a> {
    let region = finding.line().map(|line| Region {
        start_line: line,
        start_column: finding.column(),
    });
    SarifResult {
        rule_id: finding.rule().to_string(),
        rule_index,
        level: match finding.diagnostic.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        },
        message: Text {
            text: finding.message(),
        },
        locations: [Location {
            physical_location: PhysicalLocation {
                artifact_location: ArtifactLocation {
                    uri: relative_uri(finding.path().unwrap_or(anchor)),
                },
                region,
            },
        }],
        partial_fingerprints: BTreeMap::from([(FINGERPRINT_KEY, finding.fingerprint.clone())]),
        baseline_state: None,
        properties: ResultProperties {
            check: &finding.check.name,
            category: finding.category().to_string(),
        },
    }
}

/// A relative path as a URI reference: every byte outside the unreserved set and `/` is
/// percent-encoded (spaces, `#`, `?`, `%`, non-ASCII), so `docs/ü.md` is `docs/%C3%BC.md`.
fn relative_uri(path: &str) -> String {
    crate::encoding::percent_encoded(path.as_bytes(), b"/")
}

#[derive(Serialize)]
struct Log<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: [Run<'a>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run<'a> {
    tool: Tool,
    automation_details: AutomationDetails,
    results: Vec<SarifResult<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    properties: Option<RunProperties>,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
struct Driver {
    name: &'static str,
    version: &'static str,
    rules: Vec<Rule>,
}

/// Which job and matrix leg made the log (code scanning's category, see
/// [`super::automation`]).
#[derive(Serialize)]
struct AutomationDetails {
    id: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RunProperties {
    truncated: bool,
    results_total: usize,
    results_kept: usize,
    note: String,
}

#[derive(Serialize)]
pub(super) struct Text {
    pub(super) text: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult<'a> {
    rule_id: String,
    rule_index: usize,
    level: &'static str,
    message: Text,
    locations: [Location; 1],
    partial_fingerprints: BTreeMap<&'static str, String>,
    /// Pull-request mode: `new`, or `unchanged` for a finding there before the change.
    #[serde(skip_serializing_if = "Option::is_none")]
    baseline_state: Option<&'static str>,
    properties: ResultProperties<'a>,
}

#[derive(Serialize)]
struct ResultProperties<'a> {
    check: &'a str,
    category: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    physical_location: PhysicalLocation,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<Region>,
}

#[derive(Serialize)]
struct ArtifactLocation {
    uri: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    start_column: Option<u32>,
}

// The rules of `report.sarif`: what the findings tell of each rule (its checks and parsers,
// category, first message and documentation), as code scanning shows it.

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
            what(&|text: &str| crate::markdown::inline(text)),
            crate::markdown::inline(&message),
            crate::markdown::inline(&treatment)
        );
        if let Some(uri) = &self.help_uri {
            text.push_str(&format!("\n\nDocumentation: {uri}"));
            markdown.push_str(&format!(
                "\n\n[Documentation of {}](<{uri}>)",
                crate::markdown::inline(self.id)
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

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use super::{MAX_DESCRIPTION_CHARS, and_list};
    use crate::model::Diagnostic;
    use crate::report::fixture;

    fn render(findings: &[Diagnostic], limit: usize) -> String {
        let records = fixture::records();
        let bytes = render_with_limit(&fixture::input(&records, findings), limit).unwrap();
        String::from_utf8(bytes).unwrap()
    }

    /// Why the vendored SARIF 2.1.0 schema refuses each log (formats included).
    fn schema_errors(logs: &[Value]) -> Vec<Vec<String>> {
        let schema = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/sarif/sarif-schema-2.1.0.json"
        );
        crate::test_json_schema::errors(std::path::Path::new(schema), logs)
    }

    fn assert_valid(texts: &[String]) {
        let logs: Vec<Value> = texts
            .iter()
            .map(|text| serde_json::from_str(text).unwrap())
            .collect();
        for errors in schema_errors(&logs) {
            assert!(errors.is_empty(), "not valid SARIF 2.1.0: {errors:#?}");
        }
    }

    #[test]
    fn snapshot() {
        let text =
            render(&fixture::findings(), MAX_RESULTS).replace(env!("CARGO_PKG_VERSION"), "VERSION");
        insta::assert_snapshot!("report_sarif", &text);
    }

    #[test]
    fn valid_against_the_sarif_schema() {
        assert_valid(&[
            render(&fixture::findings(), MAX_RESULTS),
            render(&[], MAX_RESULTS),
            render(&fixture::findings(), 1),
        ]);
    }

    #[test]
    fn in_pull_request_mode_new_results_come_first_and_say_so() {
        let records = fixture::records();
        let findings = fixture::findings();
        let mut input = fixture::input(&records, &findings);
        input.new_since = Some(crate::model::NewSinceNote::default());
        // The first finding was there before the change.
        let count = input.checks[0].findings.len();
        assert!(count >= 2, "the fixture has findings to split");
        input.checks[0].preexisting = (0..count).map(|index| index == 0).collect();
        let text = String::from_utf8(render_with_limit(&input, MAX_RESULTS).unwrap()).unwrap();
        assert_valid(std::slice::from_ref(&text));
        let log: Value = serde_json::from_str(&text).unwrap();
        let results = log["runs"][0]["results"].as_array().unwrap();
        let states: Vec<&str> = results
            .iter()
            .map(|result| result["baselineState"].as_str().unwrap())
            .collect();
        assert_eq!(states.last(), Some(&"unchanged"), "{states:?}");
        assert_eq!(
            states.iter().filter(|state| **state == "unchanged").count(),
            1
        );
        assert!(
            states[..states.len() - 1]
                .iter()
                .all(|state| *state == "new")
        );
        // Without the mode there is no baselineState.
        let text = render(&findings, MAX_RESULTS);
        assert!(!text.contains("baselineState"));
    }

    #[test]
    fn the_schema_rejects_what_it_should() {
        // The validator is live, formats included: a `$schema` that is no URI, a region at line
        // 0 and a log without `runs` all fail. (`uri-reference`, the format of artifact URIs, is
        // not a draft-04 format, so the schema leaves their encoding to `relative_uri`.)
        let log: Value = serde_json::from_str(&render(&fixture::findings(), MAX_RESULTS)).unwrap();
        let set = |pointer: &str, value: Value| {
            let mut changed = log.clone();
            *changed.pointer_mut(pointer).unwrap() = value;
            changed
        };
        let region = "/runs/0/results/0/locations/0/physicalLocation/region";
        let mut without_runs = log.clone();
        without_runs.as_object_mut().unwrap().remove("runs");
        let valid: Vec<bool> = schema_errors(&[
            set("/$schema", Value::from("not a uri")),
            set(&format!("{region}/startLine"), Value::from(0)),
            set(&format!("{region}/startLine"), Value::from(1)),
            without_runs,
        ])
        .iter()
        .map(Vec::is_empty)
        .collect();
        assert_eq!(valid, [false, false, true, false]);
    }

    #[test]
    fn the_run_names_its_job_and_leg() {
        let log: Value = serde_json::from_str(&render(&fixture::findings(), MAX_RESULTS)).unwrap();
        assert_eq!(
            log["runs"][0]["automationDetails"]["id"],
            fixture::AUTOMATION_ID
        );
    }

    #[test]
    fn truncates_past_the_limit_keeping_the_most_severe() {
        let text = render(&fixture::findings(), 1);
        let log: Value = serde_json::from_str(&text).unwrap();
        let run = &log["runs"][0];
        let results = run["results"].as_array().unwrap();
        assert_eq!(results.len(), 1);
        assert_eq!(results[0]["level"], "error");
        assert_eq!(run["tool"]["driver"]["rules"].as_array().unwrap().len(), 1);
        assert_eq!(run["properties"]["truncated"], true);
        assert_eq!(run["properties"]["resultsTotal"], 3);
        assert_eq!(run["properties"]["resultsKept"], 1);
    }

    /// A check of `parser` named after it, in `category`.
    fn record(parser: &str, category: &str) -> crate::model::CheckRecord {
        crate::model::CheckRecord {
            name: parser.into(),
            category: category.into(),
            parser: parser.into(),
            ..fixture::records()[0].clone()
        }
    }

    fn finding(file: &str, severity: Severity, code: Option<&str>, message: &str) -> Diagnostic {
        Diagnostic {
            file: Some(file.into()),
            line: Some(3),
            column: Some(5),
            end_line: None,
            end_column: None,
            severity,
            code: code.map(Into::into),
            message: message.into(),
            category: None,
            fingerprint: String::new(),
            outside_target: false,
            body: None,
        }
    }

    /// The log of the checks `records`, each with its findings.
    fn log_of(records: &[crate::model::CheckRecord], findings: &[Vec<Diagnostic>]) -> String {
        let checks = records
            .iter()
            .cloned()
            .zip(findings.iter().cloned())
            .collect();
        let input = fixture::checks_report(checks, fixture::parsers(records));
        String::from_utf8(render_with_limit(&input, MAX_RESULTS).unwrap()).unwrap()
    }

    /// A clippy check and an ESLint check: codes with a page (a clippy lint, a rustc error code,
    /// an ESLint core rule), codes without one (a rustc lint, a plugin's rule), a message with
    /// Markdown and HTML in it.
    fn rule_help_log() -> String {
        let records = vec![record("clippy", "lint"), record("eslint", "lint")];
        let clippy = vec![
            finding(
                "src/lib.rs",
                Severity::Warning,
                Some("clippy::needless_return"),
                "unneeded `return` statement",
            ),
            finding(
                "src/main.rs",
                Severity::Error,
                Some("E0425"),
                "cannot find value `x` in this scope",
            ),
            finding(
                "src/lib.rs",
                Severity::Warning,
                Some("unused_variables"),
                "unused variable: `y`",
            ),
        ];
        let eslint = vec![
            finding(
                "web/cart.js",
                Severity::Error,
                Some("eqeqeq"),
                "Expected '===' and instead saw '==' [see](javascript:alert(1)) <b>*now*</b> | _x_",
            ),
            finding(
                "web/cart.ts",
                Severity::Warning,
                Some("@typescript-eslint/no-unused-vars"),
                "'total' is defined but never used.",
            ),
        ];
        log_of(&records, &[clippy, eslint])
    }

    fn rules(log: &Value) -> BTreeMap<String, Value> {
        log["runs"][0]["tool"]["driver"]["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|rule| (rule["id"].as_str().unwrap().to_string(), rule.clone()))
            .collect()
    }

    #[test]
    fn rules_link_the_page_their_tool_gives_a_code() {
        let text = rule_help_log();
        assert_valid(std::slice::from_ref(&text));
        insta::assert_snapshot!(
            "report_sarif_rule_help",
            text.replace(env!("CARGO_PKG_VERSION"), "VERSION")
        );
        let log: Value = serde_json::from_str(&text).unwrap();
        let rules = rules(&log);
        let help_uri = |id: &str| rules[id].get("helpUri").and_then(Value::as_str);
        assert_eq!(
            help_uri("clippy::needless_return"),
            Some("https://rust-lang.github.io/rust-clippy/master/index.html#needless_return")
        );
        assert_eq!(
            help_uri("E0425"),
            Some("https://doc.rust-lang.org/error_codes/E0425.html")
        );
        assert_eq!(
            help_uri("eqeqeq"),
            Some("https://eslint.org/docs/latest/rules/eqeqeq")
        );
        assert_eq!(help_uri("unused_variables"), None);
        assert_eq!(help_uri("@typescript-eslint/no-unused-vars"), None);
        for (id, rule) in &rules {
            for key in ["shortDescription", "fullDescription", "help"] {
                let text = rule[key]["text"].as_str().unwrap_or_default();
                assert!(
                    !text.is_empty() && text.chars().count() <= 1024 || key == "help",
                    "{id} {key}"
                );
            }
            let markdown = rule["help"]["markdown"].as_str().unwrap();
            assert_eq!(
                markdown.contains("[Documentation of"),
                rule.get("helpUri").is_some(),
                "{id}: {markdown}"
            );
        }
        // The message is quoted as text: no link, tag or emphasis of its own in the Markdown.
        let markdown = rules["eqeqeq"]["help"]["markdown"].as_str().unwrap();
        assert!(
            markdown
                .contains("\\[see\\](javascript:alert(1)) \\<b\\>\\*now\\*\\</b\\> \\| \\_x\\_"),
            "{markdown}"
        );
        assert!(
            markdown.ends_with(
                "[Documentation of eqeqeq](<https://eslint.org/docs/latest/rules/eqeqeq>)"
            ),
            "{markdown}"
        );
        assert_eq!(
            log["runs"][0]["automationDetails"]["id"],
            fixture::AUTOMATION_ID
        );
    }

    #[test]
    fn a_code_two_checks_report_names_both_and_takes_the_page_either_gives() {
        // The same ShellCheck code from a check whose parser gives no page and from ShellCheck.
        let records = vec![record("ruff", "lint"), record("shellcheck", "scripts")];
        let first = vec![finding("a.sh", Severity::Error, Some("SC2086"), "quote it")];
        let second = vec![finding(
            "b.sh",
            Severity::Note,
            Some("SC2086"),
            "quote this too",
        )];
        let text = log_of(&records, &[first, second]);
        assert_valid(std::slice::from_ref(&text));
        let log: Value = serde_json::from_str(&text).unwrap();
        let rules = rules(&log);
        assert_eq!(rules.len(), 1);
        let rule = &rules["SC2086"];
        assert_eq!(rule["helpUri"], "https://www.shellcheck.net/wiki/SC2086");
        assert_eq!(
            rule["shortDescription"]["text"],
            "SC2086, reported by ruff and shellcheck"
        );
        let full = rule["fullDescription"]["text"].as_str().unwrap();
        assert!(
            full.starts_with(
                "Code SC2086 reported by the checks ruff (parser ruff: ruff check, full (default) \
                 or concise output format) and shellcheck (parser shellcheck: ShellCheck, default \
                 tty format or -f gcc), in the category lint. The first finding said: quote it"
            ),
            "{full}"
        );
    }

    #[test]
    fn long_messages_are_cut_to_what_code_scanning_shows() {
        let records = vec![record("clippy", "lint")];
        let long = format!("{}\nsecond line", "word ".repeat(400));
        let findings = vec![finding("src/lib.rs", Severity::Error, Some("E0308"), &long)];
        let text = log_of(&records, &[findings]);
        assert_valid(std::slice::from_ref(&text));
        let log: Value = serde_json::from_str(&text).unwrap();
        let rule = &rules(&log)["E0308"];
        let full = rule["fullDescription"]["text"].as_str().unwrap();
        assert!(full.chars().count() <= MAX_DESCRIPTION_CHARS, "{full}");
        assert!(full.ends_with('…') && !full.contains('\n'), "{full}");
        // The message stays the finding's, whole, in its result.
        assert_eq!(log["runs"][0]["results"][0]["message"]["text"], long);
    }

    #[test]
    fn and_lists_read_as_english() {
        assert_eq!(and_list::<&str>(&[]), "");
        assert_eq!(and_list(&["a"]), "a");
        assert_eq!(and_list(&["a", "b"]), "a and b");
        assert_eq!(and_list(&["a", "b", "c"]), "a, b and c");
    }

    #[test]
    fn uris_are_relative_and_encoded() {
        assert_eq!(relative_uri("src/a b#c.rs"), "src/a%20b%23c.rs");
        assert_eq!(relative_uri("docs/grüße.py"), "docs/gr%C3%BC%C3%9Fe.py");
        assert_eq!(relative_uri("a/b-c_d.~e"), "a/b-c_d.~e");
    }
}
