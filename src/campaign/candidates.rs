//! The refine preset's candidates: proposed by the gate's findings (one per family) and by
//! discover delegates (one JSON object per line), classified (a behaviour-changing finding is a
//! handoff, never executed), scored `ROI = impact × confidence ÷ effort`, qualified at
//! `ROI ≥ theta`, and ranked by ROI, then confidence, then lower effort.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::model::Diagnostic;

/// Categories whose findings change behaviour to fix: handoffs, never refinements.
const BEHAVIOUR_CATEGORIES: [&str; 2] = ["tests", "security"];
/// Of those, the ones whose finding is critical (it ends the round).
const CRITICAL_CATEGORIES: [&str; 1] = ["security"];

/// A proposal, before it is classified.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    pub family: String,
    pub title: String,
    pub evidence: String,
    pub paths: Vec<String>,
    pub impact: u8,
    pub confidence: u8,
    pub effort: u8,
    pub behaviour_changing: bool,
    pub critical: bool,
    pub severity: String,
    /// Where it came from: `gate` or the discover delegate's lens.
    pub source: String,
    /// The findings it is about, when the gate proposed it.
    pub diagnostics: Vec<Diagnostic>,
}

impl Proposal {
    pub fn roi(&self) -> f64 {
        f64::from(self.impact) * f64::from(self.confidence) / f64::from(self.effort.max(1))
    }
}

/// One line of a discover delegate's output, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    title: String,
    family: String,
    evidence: String,
    #[serde(default)]
    paths: Vec<String>,
    impact: u8,
    confidence: u8,
    effort: u8,
    #[serde(alias = "behavior_changing")]
    behaviour_changing: bool,
    #[serde(default)]
    critical: bool,
    #[serde(default)]
    severity: Option<String>,
}

/// Reads a discover delegate's lines; each bad line is rejected with its number and reason.
pub fn parse_lines(text: &str, source: &str) -> (Vec<Proposal>, Vec<String>) {
    let mut proposals = Vec::new();
    let mut rejected = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let reject = |reason: String| format!("{source} line {}: {reason}", number + 1);
        let parsed: Line = match serde_json::from_str(line) {
            Ok(parsed) => parsed,
            Err(error) => {
                rejected.push(reject(format!("not a candidate object: {error}")));
                continue;
            }
        };
        if let Some(problem) = problem_of(&parsed) {
            rejected.push(reject(problem));
            continue;
        }
        proposals.push(Proposal {
            family: parsed.family.trim().to_string(),
            title: parsed.title.trim().to_string(),
            evidence: parsed.evidence,
            paths: parsed.paths,
            impact: parsed.impact,
            confidence: parsed.confidence,
            effort: parsed.effort,
            behaviour_changing: parsed.behaviour_changing,
            critical: parsed.critical,
            severity: parsed.severity.unwrap_or_else(|| "medium".into()),
            source: source.to_string(),
            diagnostics: Vec::new(),
        });
    }
    (proposals, rejected)
}

fn problem_of(line: &Line) -> Option<String> {
    for (name, value) in [
        ("impact", line.impact),
        ("confidence", line.confidence),
        ("effort", line.effort),
    ] {
        if !(1..=5).contains(&value) {
            return Some(format!("{name} {value} is not 1 to 5"));
        }
    }
    if line.title.trim().is_empty() {
        return Some("the title is empty".into());
    }
    if line.family.trim().is_empty() {
        return Some("the family is empty".into());
    }
    if line.evidence.trim().is_empty() {
        return Some("no evidence".into());
    }
    if let Some(path) = line
        .paths
        .iter()
        .find(|p| p.starts_with('/') || p.split('/').any(|part| part == ".."))
    {
        return Some(format!("{path}: not a path inside the repository"));
    }
    None
}

/// One proposal per family of the gate's findings (the category and the tool's code).
pub fn from_findings(diagnostics: &[Diagnostic]) -> Vec<Proposal> {
    let mut families: BTreeMap<String, Vec<&Diagnostic>> = BTreeMap::new();
    for diagnostic in diagnostics {
        let category = diagnostic.category.as_deref().unwrap_or("other");
        let code = diagnostic.code.as_deref().unwrap_or("general");
        families
            .entry(format!("{category}/{code}"))
            .or_default()
            .push(diagnostic);
    }
    families
        .into_iter()
        .map(|(family, found)| {
            let category = family.split('/').next().unwrap_or_default().to_string();
            let mut paths: Vec<String> = found.iter().filter_map(|d| d.file.clone()).collect();
            paths.sort();
            paths.dedup();
            let count = found.len();
            // More occurrences, more impact; more files, more effort.
            let impact = (1 + (usize::BITS - count.leading_zeros())).min(5) as u8;
            let effort = paths.len().div_ceil(3).clamp(1, 5) as u8;
            let behaviour_changing = BEHAVIOUR_CATEGORIES.contains(&category.as_str());
            Proposal {
                title: format!("fix {count} `{family}` finding(s)"),
                evidence: found
                    .iter()
                    .take(3)
                    .map(|d| d.detail())
                    .collect::<Vec<_>>()
                    .join("\n"),
                paths,
                impact,
                confidence: 5,
                effort,
                behaviour_changing,
                critical: CRITICAL_CATEGORIES.contains(&category.as_str()),
                severity: if behaviour_changing { "high" } else { "low" }.to_string(),
                source: "gate".to_string(),
                diagnostics: found.into_iter().cloned().collect(),
                family,
            }
        })
        .collect()
}

/// The proposals that qualify (`ROI ≥ theta`), best first: ROI, then confidence, then lower
/// effort, then family.
pub fn rank(proposals: &[Proposal], theta: f64) -> Vec<&Proposal> {
    let mut qualified: Vec<&Proposal> = proposals
        .iter()
        .filter(|p| !p.behaviour_changing && p.roi() >= theta)
        .collect();
    qualified.sort_by(|a, b| {
        b.roi()
            .total_cmp(&a.roi())
            .then(b.confidence.cmp(&a.confidence))
            .then(a.effort.cmp(&b.effort))
            .then(a.family.cmp(&b.family))
    });
    qualified
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(impact: u8, confidence: u8, effort: u8, changing: bool) -> String {
        format!(
            r#"{{"title":"t","family":"f{impact}{confidence}{effort}","evidence":"e","paths":["src/a.rs"],"impact":{impact},"confidence":{confidence},"effort":{effort},"behaviour_changing":{changing}}}"#
        )
    }

    #[test]
    fn lines_are_read_and_bad_ones_rejected_with_a_reason() {
        let text = [
            line(4, 4, 2, false),
            "not json".to_string(),
            line(6, 4, 2, false),
            r#"{"title":"t","family":"f","evidence":"e","paths":["../x"],"impact":1,"confidence":1,"effort":1,"behaviour_changing":false}"#.to_string(),
            r#"{"title":"","family":"f","evidence":"e","impact":1,"confidence":1,"effort":1,"behaviour_changing":false}"#.to_string(),
            r#"{"title":"t","family":"f","evidence":"e","impact":1,"confidence":1,"effort":1,"behavior_changing":true,"extra":1}"#.to_string(),
            String::new(),
            line(1, 1, 5, true),
        ]
        .join("\n");
        let (proposals, rejected) = parse_lines(&text, "architecture");
        assert_eq!(proposals.len(), 2);
        assert!(proposals[1].behaviour_changing);
        let reasons: Vec<&str> = rejected
            .iter()
            .map(|r| r.split_once(": ").unwrap().1)
            .collect();
        assert_eq!(rejected.len(), 5, "{rejected:?}");
        assert!(rejected[0].starts_with("architecture line 2: not a candidate object"));
        assert_eq!(reasons[1], "impact 6 is not 1 to 5");
        assert_eq!(reasons[2], "../x: not a path inside the repository");
        assert_eq!(reasons[3], "the title is empty");
        assert!(reasons[4].starts_with("not a candidate object: unknown field `extra`"));
    }

    #[test]
    fn roi_qualifies_at_theta_and_ranks_by_roi_then_confidence_then_effort() {
        let (proposals, _) = parse_lines(
            &[
                line(2, 2, 2, false), // ROI 2: qualifies at theta 2 exactly
                line(1, 3, 2, false), // 1.5: below
                line(4, 2, 2, false), // 4, confidence 2
                line(2, 4, 2, false), // 4, confidence 4: before the one above
                line(4, 4, 4, false), // 4, confidence 4, effort 4: after the one above
                line(5, 5, 1, true),  // 25, but changes behaviour: never qualifies
            ]
            .join("\n"),
            "gate",
        );
        let ranked: Vec<&str> = rank(&proposals, 2.0)
            .iter()
            .map(|p| p.family.as_str())
            .collect();
        assert_eq!(ranked, ["f242", "f444", "f422", "f222"]);
        assert!(rank(&proposals, 4.0001).is_empty());
        assert_eq!(rank(&proposals, 0.0001).len(), 5);
    }
}
