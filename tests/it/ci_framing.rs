//! Real fixtures in CI framing (`tests/fixtures/parsers/framed/`, made by its `frame.py`): GitHub
//! Actions timestamps and groups, `gh run view --log`, GitLab sections with and without
//! timestamps, the Jenkins timestamper, a mixed framed/plain log and a `##[group]` log. Each gives
//! exactly the findings and test counts of the unframed log, and `auto` picks the same parser.

use std::path::{Path, PathBuf};
use std::process::Command;

use refine_loop::parse::{Catalogue, ParseContext, parse_bytes, rank};
use serde_json::Value;

use crate::parser_catalogue::differences;
use crate::support::binary;

fn parsers_folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/parsers")
}

/// Each framed variant and the unframed fixture it wraps.
fn variants() -> Vec<(String, String)> {
    let manifest = std::fs::read_to_string(parsers_folder().join("framed/MANIFEST.tsv")).unwrap();
    manifest
        .lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .map(|line| {
            let (variant, source) = line.split_once('\t').unwrap();
            (variant.to_string(), source.to_string())
        })
        .collect()
}

#[test]
fn framed_fixtures_give_the_findings_of_the_unframed_log() {
    let catalogue = Catalogue::built_in().unwrap();
    let variants = variants();
    assert!(variants.len() >= 5, "{variants:?}");
    let mut failures = Vec::new();
    for (variant, source) in &variants {
        let folder = parsers_folder();
        let truth_path = folder.join(source.replace(".txt", ".truth.json"));
        let truth: Value =
            serde_json::from_str(&std::fs::read_to_string(&truth_path).unwrap()).unwrap();
        let parser_name = truth["parser"].as_str().unwrap();
        let parser = catalogue.get(parser_name).unwrap();
        let context = ParseContext {
            target: PathBuf::from(truth["target"].as_str().unwrap_or("/fixture")),
            cwd_relative: String::new(),
            sample: false,
        };
        let plain = std::fs::read(folder.join(source)).unwrap();
        let framed = std::fs::read(folder.join("framed").join(variant)).unwrap();
        let unframed = parse_bytes(parser, &context, &plain);
        let found = parse_bytes(parser, &context, &framed);

        let as_json = |f: &refine_loop::parse::Findings| -> Vec<Value> {
            let values = f
                .diagnostics()
                .iter()
                .map(|d| serde_json::to_value(d).unwrap());
            values.collect()
        };
        if as_json(&found) != as_json(&unframed) {
            failures.push(format!(
                "{variant}: {} findings framed, {} unframed\nframed: {:#?}",
                found.diagnostics().len(),
                unframed.diagnostics().len(),
                as_json(&found)
            ));
        }
        let (missed, extra) = differences(&found, &truth);
        if !missed.is_empty() || !extra.is_empty() {
            failures.push(format!("{variant}: MISS {missed:?} EXTRA {extra:?}"));
        }
        if found.tests != unframed.tests {
            failures.push(format!(
                "{variant}: tests {:?} != {:?}",
                found.tests, unframed.tests
            ));
        }
        let chosen = |input: &[u8]| {
            let (ranked, _) = rank(&catalogue, &context, &mut &input[..]).unwrap();
            ranked[0].parser.name().to_string()
        };
        let (framed_choice, plain_choice) = (chosen(&framed), chosen(&plain));
        if framed_choice != plain_choice || framed_choice != parser_name {
            failures.push(format!(
                "{variant}: auto chose {framed_choice} framed, {plain_choice} unframed, \
                 the fixture's parser is {parser_name}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The example: eslint in a GitHub Actions log found none of its findings, and `auto`
/// picked `exit-code`.
#[test]
fn auto_reads_eslint_in_a_github_actions_log() {
    let framed = parsers_folder().join("framed/github-eslint.txt");
    let output = Command::new(binary())
        .args(["parse", "--format", "summary", "--target", "/fixture/js"])
        .arg(&framed)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("auto: chose parser \"eslint\""), "{text}");
    let plain = parsers_folder().join("eslint/lint.truth.json");
    let truth: Value = serde_json::from_str(&std::fs::read_to_string(plain).unwrap()).unwrap();
    let json = Command::new(binary())
        .args(["parse", "--format", "json", "--target", "/fixture/js"])
        .arg(&framed)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        report["diagnostics"].as_array().unwrap().len(),
        truth["diagnostics"].as_array().unwrap().len()
    );
}

#[test]
fn explain_says_what_was_stripped_and_shows_the_lines_as_parsed() {
    let framed = parsers_folder().join("framed/gitlab-pytest.txt");
    let output = Command::new(binary())
        .args(["parse", "-p", "pytest", "--explain"])
        .arg(&framed)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let text = String::from_utf8_lossy(&output.stdout);
    let summary = text
        .lines()
        .find(|line| line.starts_with("CI framing: GitLab job log"))
        .unwrap_or_else(|| panic!("no framing line in:\n{text}"));
    assert!(summary.contains("continuations joined"), "{summary}");
    assert!(
        !text.contains("00O"),
        "a GitLab prefix reached a parser:\n{text}"
    );
    assert!(!text.contains("section_start"), "{text}");
    assert!(
        text.contains("| =================================== FAILURES"),
        "{text}"
    );
    // An unframed log says nothing about framing.
    let plain = parsers_folder().join("pytest/failing.txt");
    let output = Command::new(binary())
        .args(["parse", "-p", "pytest", "--explain"])
        .arg(&plain)
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&output.stdout).contains("CI framing"));
}
