//! `report.sarif`: the remaining findings as SARIF 2.1.0, within GitHub code scanning's limits.

use std::collections::BTreeMap;

use serde::Serialize;

use super::ci::{CiReportError, CiReportInput, Finding, SARIF_FILE};
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
pub fn render_sarif(input: &CiReportInput<'_>) -> Result<Vec<u8>, CiReportError> {
    render_with_limit(input, MAX_RESULTS)
}

fn render_with_limit(input: &CiReportInput<'_>, limit: usize) -> Result<Vec<u8>, CiReportError> {
    let mut findings = input.findings();
    let total = findings.len();
    // Stable: within a severity the findings keep the order they were found in.
    findings.sort_by_key(|finding| finding.diagnostic.severity);
    findings.truncate(limit);

    let mut rule_index: BTreeMap<&str, usize> = BTreeMap::new();
    let mut rules = Vec::new();
    let mut results = Vec::with_capacity(findings.len());
    for finding in &findings {
        let rule = finding.rule();
        let index = *rule_index.entry(rule).or_insert_with(|| {
            rules.push(Rule {
                id: rule.to_string(),
                short_description: Text {
                    text: if finding.has_code() {
                        format!("{rule}, reported by {}", finding.check.name)
                    } else {
                        format!("A finding of {} without a code", finding.check.name)
                    },
                },
                properties: RuleProperties {
                    tags: vec![finding.category().to_string()],
                },
            });
            rules.len() - 1
        });
        results.push(result(finding, index, &input.anchor));
    }
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
        properties: ResultProperties {
            check: &finding.check.name,
            category: finding.category().to_string(),
        },
    }
}

/// A relative path as a URI reference: every byte outside the unreserved set and `/` is
/// percent-encoded (spaces, `#`, `?`, `%`, non-ASCII), so `docs/ü.md` is `docs/%C3%BC.md`.
fn relative_uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
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
struct Rule {
    id: String,
    short_description: Text,
    properties: RuleProperties,
}

#[derive(Serialize)]
struct RuleProperties {
    tags: Vec<String>,
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
struct Text {
    text: String,
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

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::model::Diagnostic;
    use crate::report::fixture;

    fn render(findings: &[Diagnostic], limit: usize) -> String {
        let records = fixture::records();
        let bytes = render_with_limit(&fixture::input(&records, findings), limit).unwrap();
        String::from_utf8(bytes).unwrap()
    }

    fn schema_validator() -> jsonschema::Validator {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/sarif/sarif-schema-2.1.0.json"
        );
        let schema: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        jsonschema::options()
            .should_validate_formats(true)
            .build(&schema)
            .unwrap()
    }

    fn assert_valid(text: &str) {
        let instance: Value = serde_json::from_str(text).unwrap();
        let validator = schema_validator();
        let errors: Vec<String> = validator
            .iter_errors(&instance)
            .map(|error| format!("{} at {}", error, error.instance_path()))
            .collect();
        assert!(errors.is_empty(), "not valid SARIF 2.1.0: {errors:#?}");
    }

    #[test]
    fn snapshot() {
        let text =
            render(&fixture::findings(), MAX_RESULTS).replace(env!("CARGO_PKG_VERSION"), "VERSION");
        insta::assert_snapshot!("report_sarif", &text);
    }

    #[test]
    fn valid_against_the_sarif_schema() {
        assert_valid(&render(&fixture::findings(), MAX_RESULTS));
        assert_valid(&render(&[], MAX_RESULTS));
        assert_valid(&render(&fixture::findings(), 1));
    }

    #[test]
    fn the_schema_rejects_what_it_should() {
        // The validator is live, formats included: a `$schema` that is no URI, a region at line
        // 0 and a log without `runs` all fail. (`uri-reference`, the format of artifact URIs, is
        // not a draft-04 format, so the schema leaves their encoding to `relative_uri`.)
        let validator = schema_validator();
        let mut log: Value =
            serde_json::from_str(&render(&fixture::findings(), MAX_RESULTS)).unwrap();
        let set = |pointer: &str, value: Value| {
            let mut changed = log.clone();
            *changed.pointer_mut(pointer).unwrap() = value;
            validator.is_valid(&changed)
        };
        assert!(!set("/$schema", Value::from("not a uri")));
        let region = "/runs/0/results/0/locations/0/physicalLocation/region";
        assert!(!set(&format!("{region}/startLine"), Value::from(0)));
        assert!(set(&format!("{region}/startLine"), Value::from(1)));
        log.as_object_mut().unwrap().remove("runs");
        assert!(!validator.is_valid(&log));
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

    #[test]
    fn uris_are_relative_and_encoded() {
        assert_eq!(relative_uri("src/a b#c.rs"), "src/a%20b%23c.rs");
        assert_eq!(relative_uri("docs/grüße.py"), "docs/gr%C3%BC%C3%9Fe.py");
        assert_eq!(relative_uri("a/b-c_d.~e"), "a/b-c_d.~e");
    }
}
