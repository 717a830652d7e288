use std::path::PathBuf;

use super::*;
use crate::parse::parse_bytes;

fn read(tap: &str) -> (Vec<String>, Option<TestCounts>) {
    let context = ParseContext {
        target: PathBuf::from("/repo"),
        cwd_relative: String::new(),
        sample: false,
    };
    let findings = parse_bytes(&Tap, &context, tap.as_bytes());
    let found = findings
        .diagnostics()
        .iter()
        .map(|d| {
            let place = match (d.line, d.column) {
                (Some(line), Some(column)) => format!(":{line}:{column}"),
                (Some(line), None) => format!(":{line}"),
                _ => String::new(),
            };
            format!(
                "{}{place} | {} | {}",
                d.file.as_deref().unwrap_or("-"),
                d.code.as_deref().unwrap_or("-"),
                d.message
            )
        })
        .collect();
    (found, findings.tests)
}

fn counts(passed: u64, failed: u64, skipped: u64) -> Option<TestCounts> {
    Some(TestCounts {
        passed,
        failed,
        skipped,
    })
}

/// What a test point line says: ok, name, directive.
type Point<'a> = Option<(bool, &'a str, Directive)>;

#[test]
fn a_test_point_is_read_in_every_shape_runners_print() {
    let table: &[(&str, Point<'_>)] = &[
        ("ok 1 - adds", Some((true, "adds", Directive::None))),
        (
            "not ok 2 - sums # time=5.91ms",
            Some((false, "sums", Directive::None)),
        ),
        (
            "not ok 2 sums three",
            Some((false, "sums three", Directive::None)),
        ),
        (
            "ok 3 - skipped one # SKIP no db",
            Some((true, "skipped one", Directive::Skip)),
        ),
        ("ok 4 # skip", Some((true, "", Directive::Skip))),
        (
            "not ok 5 - later # TODO write it",
            Some((false, "later", Directive::Todo)),
        ),
        (
            "    not ok 1 - cart # time=12ms {",
            Some((false, "cart {", Directive::None)),
        ),
        ("not ok", Some((false, "", Directive::None))),
        ("ok 7 - a # b # SKIP", Some((true, "a", Directive::None))),
        ("okay 1 - no", None),
        ("not okay", None),
        ("# ok 1 - a comment", None),
    ];
    for &(line, expected) in table {
        let got = test_point(line).map(|p| (p.ok, p.name, p.directive));
        let expected = expected.map(|(ok, name, d)| (ok, name.to_string(), d));
        assert_eq!(got, expected, "{line:?}");
    }
}

#[test]
fn plans_test_files_quotes_and_frames() {
    assert!(plan("1..4") && plan("1..0 # no tests") && !plan("1..") && !plan("1..x"));
    for (name, file) in [
        ("tests/a.test.js", true),
        ("cas (1) [b]/panier été.test.mjs", true),
        ("test/x.bats", true),
        ("adds two numbers", false),
        ("handles a.b paths", false),
        ("v1.2", false),
    ] {
        assert_eq!(is_test_file(name), file, "{name}");
    }
    assert!(closes_quote(r#"abc" "#) && !closes_quote(r#"a \" b"#) && closes_quote(r#"\\""#));
    let table = [
        (
            "at Context.<anonymous> (tests/cas (1) [b]/a.js:8:12)",
            Some(("tests/cas (1) [b]/a.js", 8, 12)),
        ),
        (
            "TestContext.<anonymous> (/repo/t.js:10:10)",
            Some(("/repo/t.js", 10, 10)),
        ),
        (
            "at new SemVer (node_modules/semver/semver.js:361:11)",
            Some(("node_modules/semver/semver.js", 361, 11)),
        ),
        ("at /repo/a.js:3:1", Some(("/repo/a.js", 3, 1))),
        (
            "/repo/src/cart.js:37:55",
            Some(("/repo/src/cart.js", 37, 55)),
        ),
        ("Expected values to be strictly equal:", None),
        ("4 !== 3", None),
    ];
    for (line, expected) in table {
        let got = frame(line);
        let expected = expected.map(|(f, l, c)| (f.to_string(), l, c));
        assert_eq!(got, expected, "{line:?}");
    }
}

#[test]
fn vitest_nests_suites_in_braces_and_their_names_make_the_code() {
    let tap = r#"TAP version 13
1..2
not ok 1 - tests/cart.test.js # time=14.16ms {
    1..2
    not ok 1 - cart # time=12.52ms {
        1..2
        ok 1 - sums two # time=1.86ms
        not ok 2 - sums three # time=5.91ms
            ---
            error:
                name: "AssertionError"
                message: "expected 3 to be 6"
            at: "/repo/tests/cart.test.js:11:32"
            actual: "3"
            ...
    }
    not ok 2 - finds one # time=0.81ms
        ---
        error:
            name: "TypeError"
            message: "Cannot read"
        at: "/repo/node_modules/x/i.js:1:2"
        ...
}
not ok 2 - tests/broken.test.js
    ---
    error:
        name: "Error"
        message: "Parse failure:
Unexpected token
2: x"
    at: "/repo/tests/broken.test.js:2:1"
    ...
"#;
    let (found, tests) = read(tap);
    assert_eq!(
        found,
        [
            "tests/cart.test.js:11:32 | cart > sums three | AssertionError: expected 3 to be 6",
            "tests/cart.test.js | finds one | TypeError: Cannot read",
            "tests/broken.test.js:2:1 | tests/broken.test.js | Error: Parse failure: Unexpected token 2: x",
        ]
    );
    assert_eq!(tests, counts(1, 2, 0));
}

#[test]
fn node_suites_are_no_tests_and_its_counts_are_taken() {
    let tap = r#"TAP version 13
# Subtest: cart
    # Subtest: sums
    not ok 1 - sums
      ---
      location: '/repo/t.js:9:1'
      error: |-
        Expected 3

      stack: |-
        TestContext.<anonymous> (/repo/t.js:10:10)
        Test.run (node:internal/test_runner/test:796:25)
      ...
    1..1
not ok 1 - cart
  ---
  type: 'suite'
  error: '1 subtest failed'
  ...
# Subtest: /repo/broken.test.js
not ok 2 - /repo/broken.test.js
  ---
  error: 'test failed'
  ...
1..2
# tests 2
# suites 1
# pass 0
# fail 2
# skipped 0
"#;
    let (found, tests) = read(tap);
    assert_eq!(
        found,
        [
            "t.js:10:10 | sums | Expected 3",
            "broken.test.js | /repo/broken.test.js | test failed",
        ]
    );
    assert_eq!(tests, counts(0, 2, 0));
}

#[test]
fn indented_text_and_comments_tell_the_failure_where_there_is_no_yaml() {
    // mocha's TAP 12, then bats'.
    let mocha = r#"not ok 1 cart adds
  Expected values to be strictly equal:
  
  4 !== 3
  
  AssertionError [ERR_ASSERTION]: Expected values
      at new X (node_modules/x.js:1:1)
      at Context.<anonymous> (test/cart (1).js:8:12)
ok 2 cart passes
# tests 2
# pass 1
# fail 1
1..2
"#;
    let (found, tests) = read(mocha);
    assert_eq!(
        found,
        ["test/cart (1).js:8:12 | cart adds | Expected values to be strictly equal:"]
    );
    assert_eq!(tests, counts(1, 1, 0));
    let bats = r#"1..3
ok 1 adds
not ok 2 subtracts
# (in test file test/math.bats, line 7)
#   `[ "$result" -eq 1 ]' failed
not ok 3 later # TODO
ok 4 skipped # skip no bc
"#;
    let (found, tests) = read(bats);
    assert_eq!(
        found,
        ["test/math.bats:7 | subtracts | `[ \"$result\" -eq 1 ]' failed"]
    );
    assert_eq!(tests, counts(1, 1, 2));
}

#[test]
fn a_flat_name_that_begins_with_the_file_gives_the_file() {
    let tap = r#"TAP version 13
1..2
not ok 1 - tests/cart.test.js > cart > sums # time=7.38ms
    ---
    error:
        name: "AssertionError"
        message: "no"
    at: "/repo/node_modules/a.js:1:1"
    ...
ok 2 - tests/cart.test.js > cart > adds # time=0.23ms
"#;
    let (found, tests) = read(tap);
    assert_eq!(
        found,
        ["tests/cart.test.js | cart > sums | AssertionError: no"]
    );
    assert_eq!(tests, counts(1, 1, 0));
}

/// A block the runner never ended does not take the rest of the output, nor grow without bound.
#[test]
fn a_block_never_ended_ends_at_the_next_point_and_keeps_little() {
    let mut tap = String::from("not ok 1 - crashed\n  ---\n  error: 'boom'\n");
    for n in 0..5_000 {
        tap.push_str(&format!("  noise {n} {}\n", "é".repeat(3_000)));
    }
    tap.push_str("not ok 2 - next\n  ---\n  error: 'second'\n  ...\nok 3 - fine\n");
    let (found, tests) = read(&tap);
    assert_eq!(found, ["- | crashed | boom", "- | next | second"]);
    assert_eq!(tests, counts(1, 2, 0));
    let mut session = TapSession {
        context: &ParseContext {
            target: PathBuf::from("/repo"),
            cwd_relative: String::new(),
            sample: false,
        },
        suites: Vec::new(),
        open: None,
        counted: TestCounts::default(),
        printed: Printed::default(),
    };
    let mut findings = Findings::default();
    session.line("not ok 1 - x", &mut findings);
    session.line("  ---", &mut findings);
    let long = "x".repeat(100_000);
    for _ in 0..5_000 {
        session.line(&long, &mut findings);
    }
    let block = session.open.as_ref().and_then(|o| o.yaml.as_ref()).unwrap();
    assert_eq!(block.len(), MAX_KEPT_LINES);
    assert!(block.iter().all(|(_, text)| text.len() <= MAX_KEPT_BYTES));
}
