//! The problem matchers shipped by actions/setup-node, setup-python, setup-go and setup-java load
//! and read their tools' real output as the Actions runner would.

use std::path::{Path, PathBuf};

use refine_loop::parse::{Catalogue, Findings, ParseContext, parse_bytes};
use serde_json::Value;

use crate::parser_catalogue::differences;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn catalogue_with(matcher: &str) -> (Catalogue, String) {
    let mut catalogue = Catalogue::built_in().unwrap();
    let mut names = catalogue
        .add_file(&root().join("matchers").join(matcher), true)
        .unwrap();
    assert_eq!(names.len(), 1);
    (catalogue, names.remove(0))
}

fn parse(matcher: &str, input: &str, target: &str) -> Findings {
    let (catalogue, name) = catalogue_with(matcher);
    let context = ParseContext {
        target: PathBuf::from(target),
        cwd_relative: String::new(),
        sample: false,
    };
    let bytes = std::fs::read(root().join(input)).unwrap();
    parse_bytes(catalogue.get(&name).unwrap(), &context, &bytes)
}

#[test]
fn matchers_read_their_tools_output_like_the_truth() {
    // (matcher, tool output, the truth of that output, what the matcher cannot see)
    let table: [(&str, &str, &str, &[&str]); 3] = [
        (
            "setup-node-eslint-stylish.json",
            "parsers/eslint/lint.txt",
            "parsers/eslint/lint.truth.json",
            // A parsing error has no rule id after the message, so the matcher's second pattern
            // (message, two spaces, rule) does not match its line: the runner misses it too.
            &["Parsing error: Unexpected keyword 'return'"],
        ),
        (
            "setup-node-eslint-compact.json",
            "parsers/eslint-compact/lint.txt",
            "parsers/eslint-compact/lint.truth.json",
            // The same parsing error has no "(rule)" at the end of its line.
            &["Parsing error: Unexpected keyword 'return'"],
        ),
        (
            "setup-node-tsc.json",
            "parsers/tsc/plain.txt",
            "parsers/tsc/plain.truth.json",
            &[],
        ),
    ];
    for (matcher, input, truth, unseen) in table {
        let truth: Value =
            serde_json::from_str(&std::fs::read_to_string(root().join(truth)).unwrap()).unwrap();
        let findings = parse(matcher, input, truth["target"].as_str().unwrap());
        let (misses, extras) = differences(&findings, &truth);
        let missed: Vec<&str> = misses
            .iter()
            .map(|m| m["message"].as_str().unwrap())
            .collect();
        assert!(
            missed == unseen && extras.is_empty(),
            "{matcher} on {input}:\nmisses {misses:#?}\nextras {extras:#?}"
        );
        assert!(!findings.diagnostics().is_empty(), "{matcher}");
    }
}

#[test]
fn the_go_matcher_reads_go_vet_as_the_runner_does() {
    // setup-go's pattern wants a path starting with `/`, `./` or `../` and is not anchored. Go 1.19
    // (Debian's) prints `calc/calc.go:15:17: …`, so the pattern starts at the last `/`: the runner
    // would annotate `/calc.go`, and so does refine-loop. Line, column and message are right.
    let truth: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("parsers/go/vet.truth.json")).unwrap(),
    )
    .unwrap();
    let findings = parse(
        "setup-go-matchers.json",
        "parsers/go/vet.txt",
        "/fixture/go",
    );
    let mut expected: Vec<(String, u64, u64, String)> = truth["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let file = d["file"].as_str().unwrap();
            (
                format!("/{}", file.rsplit('/').next().unwrap()),
                d["line"].as_u64().unwrap(),
                d["column"].as_u64().unwrap(),
                d["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let mut found: Vec<(String, u64, u64, String)> = findings
        .diagnostics()
        .iter()
        .map(|d| {
            (
                d.file.clone().unwrap(),
                u64::from(d.line.unwrap()),
                u64::from(d.column.unwrap()),
                d.message.clone(),
            )
        })
        .collect();
    expected.sort();
    found.sort();
    assert_eq!(found, expected);
}

#[test]
fn the_java_matcher_reads_an_uncaught_exception() {
    let findings = parse(
        "setup-java-java.json",
        "matchers/java-exception.txt",
        "/fixture/matchers",
    );
    let found: Vec<(Option<&str>, &str)> = findings
        .diagnostics()
        .iter()
        .map(|d| (d.code.as_deref(), d.message.as_str()))
        .collect();
    assert_eq!(
        found,
        [(
            Some("java.lang.IllegalStateException"),
            "configuration file missing"
        )]
    );
}

#[test]
fn the_python_matcher_loads_and_like_the_runner_reports_nothing() {
    // Its message group (4) does not exist in its pattern; see tests/fixtures/matchers/SOURCES.md.
    let findings = parse(
        "setup-python-python.json",
        "matchers/python-traceback.txt",
        "/fixture/matchers",
    );
    assert!(findings.diagnostics().is_empty());
    assert_eq!(findings.counts.error, 0);
}

#[test]
fn every_shipped_matcher_loads_from_a_parser_dir() {
    // tsc, go and eslint-compact share names with built-in parsers, which they then replace.
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(root().join("matchers"))
        .unwrap()
        .flatten()
    {
        if entry.path().extension().is_some_and(|e| e == "json") {
            std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
        }
    }
    let output = std::process::Command::new(crate::support::binary())
        .args(["parsers", "--json", "--parser-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let list: Value = serde_json::from_slice(&output.stdout).unwrap();
    let from_dir: Vec<&str> = list["parsers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["source"].as_str().unwrap().ends_with(".json"))
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        from_dir,
        [
            "eslint-compact",
            "eslint-stylish",
            "go",
            "java",
            "python",
            "tsc"
        ]
    );
}

#[test]
fn parse_reads_a_matcher_from_a_parser_dir() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        root().join("matchers/setup-node-eslint-stylish.json"),
        dir.path().join("stylish.json"),
    )
    .unwrap();
    let output = std::process::Command::new(crate::support::binary())
        .args([
            "parse",
            "-p",
            "eslint-stylish",
            "--format",
            "json",
            "--target",
            "/fixture/js",
        ])
        .arg("--parser-dir")
        .arg(dir.path())
        .arg(root().join("parsers/eslint/lint.txt"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["parser"], "eslint-stylish");
    // 14 in the truth, less the parsing error the matcher cannot read (see above).
    assert_eq!(report["diagnostics"].as_array().unwrap().len(), 13);
}
