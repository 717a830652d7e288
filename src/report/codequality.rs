//! `codequality.json`: the remaining findings as a GitLab Code Quality report.

use serde::Serialize;

use super::Report;
use super::ci::{CODE_QUALITY_FILE, CiReportError, Finding};
use crate::model::Severity;

/// Renders the findings as a JSON array of Code Quality issues (UTF-8, no BOM). Fingerprints are
/// unique within the report; a finding without a path inside the target is reported against the
/// anchor, at line 1.
pub fn render_code_quality(input: &Report) -> Result<Vec<u8>, CiReportError> {
    let issues: Vec<Issue> = super::ci::findings(input)
        .iter()
        .map(|finding| issue(finding, &input.anchor))
        .collect();
    let mut bytes = serde_json::to_vec_pretty(&issues).map_err(|source| CiReportError::Json {
        file: CODE_QUALITY_FILE,
        source,
    })?;
    bytes.push(b'\n');
    Ok(bytes)
}

fn issue(finding: &Finding<'_>, anchor: &str) -> Issue {
    let message = finding.message();
    Issue {
        description: match finding.code() {
            Some(code) => format!("{code}: {message}"),
            None => message,
        },
        check_name: finding.rule().to_string(),
        fingerprint: finding.fingerprint.clone(),
        severity: match finding.diagnostic.severity {
            Severity::Error => "major",
            Severity::Warning => "minor",
            Severity::Note => "info",
        },
        location: Location {
            path: finding.path().unwrap_or(anchor).to_string(),
            lines: Lines {
                begin: finding.line().unwrap_or(1),
            },
        },
    }
}

#[derive(Serialize)]
struct Issue {
    description: String,
    check_name: String,
    fingerprint: String,
    severity: &'static str,
    location: Location,
}

#[derive(Serialize)]
struct Location {
    path: String,
    lines: Lines,
}

#[derive(Serialize)]
struct Lines {
    begin: u32,
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use serde_json::Value;

    use super::*;
    use crate::model::Diagnostic;
    use crate::report::fixture;

    fn render(findings: &[Diagnostic]) -> Vec<u8> {
        let records = fixture::records();
        render_code_quality(&fixture::input(&records, findings)).unwrap()
    }

    #[test]
    fn snapshot() {
        let text = String::from_utf8(render(&fixture::findings())).unwrap();
        insta::assert_snapshot!("codequality_json", &text);
    }

    #[test]
    fn required_keys_and_unique_fingerprints() {
        let mut findings = fixture::findings();
        // The same finding twice (same fingerprint, another line) must not share one.
        let mut again = findings[0].clone();
        again.line = Some(40);
        findings.push(again);
        let bytes = render(&findings);
        assert!(!bytes.starts_with(&[0xef, 0xbb, 0xbf]));
        let issues: Vec<Value> = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(issues.len(), 4);
        let severities = ["info", "minor", "major", "critical", "blocker"];
        for issue in &issues {
            for key in ["description", "check_name", "fingerprint"] {
                assert!(
                    issue[key].as_str().is_some_and(|v| !v.is_empty()),
                    "{key} missing in {issue}"
                );
            }
            assert!(severities.contains(&issue["severity"].as_str().unwrap()));
            assert!(!issue["location"]["path"].as_str().unwrap().is_empty());
            assert!(issue["location"]["lines"]["begin"].as_u64().unwrap() >= 1);
        }
        let fingerprints: HashSet<&str> = issues
            .iter()
            .map(|issue| issue["fingerprint"].as_str().unwrap())
            .collect();
        assert_eq!(fingerprints.len(), issues.len());
    }

    #[test]
    fn a_finding_outside_the_target_points_at_the_anchor() {
        let mut findings = fixture::findings();
        findings.truncate(1);
        findings[0].file = Some("/usr/lib/python3/site.py".into());
        findings[0].outside_target = true;
        let issues: Vec<Value> = serde_json::from_slice(&render(&findings)).unwrap();
        assert_eq!(issues[0]["location"]["path"], "refine-loop.toml");
        assert_eq!(issues[0]["location"]["lines"]["begin"], 1);
        assert!(
            issues[0]["description"]
                .as_str()
                .unwrap()
                .ends_with("(at /usr/lib/python3/site.py:12:5)")
        );
    }
}
