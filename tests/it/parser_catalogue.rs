//! Every built-in parser against its fixtures: real output of the real tool (`<case>.txt`) and the
//! truth taken from the same tool's machine-readable output (`<case>.truth.json`, made by the
//! `to_truth.py` beside it). File, line, column, severity and code must agree exactly, the parsed
//! message must start with the truth's, and `auto` must name the right parser (the truth's
//! `auto`, where another parser reads the output too: node's TAP is read by `node-test` and by
//! `tap`, which `auto` chooses; else its `parser`). The same rule is
//! `tests/fixtures/parsers/compare.py`, for parser authors.

use std::path::{Path, PathBuf};

use refine_loop::parse::{
    Catalogue, Choice, Findings, ParseContext, Unread, choose, parse_reader, rank,
};
use serde_json::Value;

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/parsers");
    let mut cases = Vec::new();
    for folder in std::fs::read_dir(&root).unwrap().flatten() {
        if !folder.path().is_dir() {
            continue;
        }
        for file in std::fs::read_dir(folder.path()).unwrap().flatten() {
            let path = file.path();
            if path.to_string_lossy().ends_with(".truth.json") {
                cases.push(path);
            }
        }
    }
    cases.sort();
    cases
}

type Key = (
    Option<String>,
    Option<u64>,
    Option<u64>,
    Option<String>,
    Option<String>,
);

fn key(value: &Value) -> Key {
    let text = |name: &str| value[name].as_str().map(str::to_string);
    let number = |name: &str| value[name].as_u64();
    (
        text("file"),
        number("line"),
        number("column"),
        text("severity"),
        text("code"),
    )
}

/// Truth diagnostics not parsed, and parsed ones not in the truth.
pub fn differences(parsed: &Findings, truth: &Value) -> (Vec<Value>, Vec<Value>) {
    let mut left: Vec<Value> = parsed
        .diagnostics()
        .iter()
        .map(|d| serde_json::to_value(d).unwrap())
        .collect();
    let mut misses = Vec::new();
    for want in truth["diagnostics"].as_array().unwrap() {
        let prefix = want["message"].as_str().unwrap_or("");
        let found = left.iter().position(|got| {
            key(got) == key(want) && got["message"].as_str().unwrap_or("").starts_with(prefix)
        });
        match found {
            Some(index) => {
                left.remove(index);
            }
            None => misses.push(want.clone()),
        }
    }
    (misses, left)
}

#[test]
fn every_parser_reads_its_fixtures_exactly_and_auto_names_it() {
    let cases = cases();
    assert!(!cases.is_empty());
    // A fixture of two tools in one log names both parsers (`ruff,pytest`): `auto` must read it
    // in regions by those parsers, and every other fixture with one parser, unsplit.
    let mut catalogue = Catalogue::built_in().unwrap();
    for truth_path in &cases {
        let truth: Value =
            serde_json::from_str(&std::fs::read_to_string(truth_path).unwrap()).unwrap();
        let name = truth["parser"].as_str().unwrap();
        if name.contains(',') {
            catalogue.add_combination(name).unwrap();
        }
    }
    let catalogue = catalogue;
    let (mut diagnostics, mut misses, mut extras) = (0, 0, 0);
    let mut failures = Vec::new();
    for truth_path in &cases {
        let name = truth_path
            .strip_prefix(env!("CARGO_MANIFEST_DIR"))
            .unwrap()
            .display()
            .to_string();
        let truth: Value =
            serde_json::from_str(&std::fs::read_to_string(truth_path).unwrap()).unwrap();
        // The output read: `input` (relative to the truth file), else `<case>.txt` beside it.
        let input_path = match truth["input"].as_str() {
            Some(input) => truth_path.parent().unwrap().join(input),
            None => PathBuf::from(truth_path.to_string_lossy().replace(".truth.json", ".txt")),
        };
        let input = std::fs::read(&input_path).unwrap_or_else(|e| panic!("{input_path:?}: {e}"));
        let parser_name = truth["parser"].as_str().unwrap();
        let parser = catalogue
            .get(parser_name)
            .unwrap_or_else(|| panic!("{name}: no built-in parser {parser_name}"));
        let context = ParseContext {
            target: PathBuf::from(truth["target"].as_str().unwrap_or("/fixture")),
            cwd_relative: String::new(),
            sample: false,
        };
        let mut unread = Unread::default();
        let findings = parse_reader(
            parser,
            &context,
            &mut input.as_slice(),
            &mut |_, line, outcome| unread.observe(line, outcome),
        )
        .unwrap();
        // The parser of the tool understood its output: no note that it left much unread.
        if !parser.reads_documents()
            && let Some(note) = unread.note(parser_name, &findings)
        {
            failures.push(format!("{name}: {note}"));
        }
        let (missed, extra) = differences(&findings, &truth);
        diagnostics += truth["diagnostics"].as_array().unwrap().len();
        misses += missed.len();
        extras += extra.len();
        for value in missed {
            failures.push(format!("{name}: MISS {value}"));
        }
        for value in extra {
            failures.push(format!("{name}: EXTRA {value}"));
        }
        if !truth["tests"].is_null() {
            let tests = serde_json::to_value(findings.tests).unwrap();
            if tests != truth["tests"] {
                failures.push(format!("{name}: tests {tests} != {}", truth["tests"]));
            }
        }
        let (ranked, lines) = rank(&catalogue, &context, &mut input.as_slice()).unwrap();
        let chosen = match choose(&catalogue, &ranked, lines) {
            Choice::One(parser) => parser.name().to_string(),
            Choice::Regions(several, _) => refine_loop::parse::Parser::name(&several).to_string(),
            Choice::NotRecognised(note) => note,
        };
        let expected = truth["auto"].as_str().unwrap_or(parser_name);
        if chosen != expected {
            failures.push(format!("{name}: auto chose {chosen}, not {expected}"));
        }
    }
    eprintln!(
        "parser fixtures: {} cases, {diagnostics} diagnostics in the truth, {misses} misses, {extras} extras",
        cases.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A bare path is not ESLint's file header unless ESLint lints such a file: pyright prints each
/// file alone on its line before its findings (real output, pyright 1.1 on the python sample),
/// and `auto` once chose eslint for it, with 0 findings.
#[test]
fn eslint_takes_no_header_of_a_file_it_does_not_lint() {
    let pyright = "/fixture/python/app/calc.py\n  \
        /fixture/python/app/calc.py:19:17 - error: \"split\" is not a known attribute of \"None\" (reportOptionalMemberAccess)\n\
        /fixture/python/app/storage.py\n  \
        /fixture/python/app/storage.py:37:25 - error: \"missing_name\" is not defined (reportUndefinedVariable)\n\
        2 errors, 0 warnings, 0 informations \n";
    let catalogue = Catalogue::built_in().unwrap();
    let context = ParseContext {
        target: PathBuf::from("/fixture/python"),
        cwd_relative: String::new(),
        sample: false,
    };
    let (ranked, _) = rank(&catalogue, &context, &mut pyright.as_bytes()).unwrap();
    let eslint = ranked.iter().find(|r| r.parser.name() == "eslint").unwrap();
    assert_eq!(eslint.explained, 0, "eslint explained pyright's headers");
    assert_ne!(ranked[0].parser.name(), "eslint");
}

/// Output of tools outside the catalogue (and of unittest before it had a parser): `auto` says it
/// recognises none of it, or the parser it chooses says what it left unread. Never a silent
/// reading as another tool, with findings that are not there or none of those that are.
#[test]
fn output_of_a_tool_outside_the_catalogue_is_never_silently_read_as_another() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/parsers/outside");
    let catalogue = Catalogue::built_in().unwrap();
    let context = ParseContext {
        target: PathBuf::from("/fixture/python"),
        cwd_relative: String::new(),
        sample: false,
    };
    let mut seen = 0;
    for entry in std::fs::read_dir(&root).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "txt") || path.ends_with("TOOLS.txt") {
            continue;
        }
        seen += 1;
        let input = std::fs::read(&path).unwrap();
        let (ranked, lines) = rank(&catalogue, &context, &mut input.as_slice()).unwrap();
        let parser = match choose(&catalogue, &ranked, lines) {
            Choice::NotRecognised(_) => continue,
            Choice::One(parser) => parser,
            Choice::Regions(..) => panic!("{path:?}: read in regions"),
        };
        let mut unread = Unread::default();
        let findings = parse_reader(
            parser,
            &context,
            &mut input.as_slice(),
            &mut |_, line, o| unread.observe(line, o),
        )
        .unwrap();
        assert!(
            unread.note(parser.name(), &findings).is_some(),
            "{path:?}: read silently as {}",
            parser.name()
        );
    }
    assert_eq!(seen, 4, "cpplint, vulture, pydocstyle and jshint");
}
