//! The request grammar at its boundaries, as tables: theta, focus, repetition, the intent.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

use super::*;

fn tokens(words: &[&str]) -> Vec<OsString> {
    words.iter().map(OsString::from).collect()
}

fn theta(text: &str) -> Theta {
    Theta::parse(text).expect("a valid theta")
}

const INVALID_THETA: &str =
    "theta must be a plain decimal greater than 0 and at most 25 (no sign, no exponent)";

#[test]
fn theta_accepts_plain_decimals_in_range() {
    let table: &[(&str, f64)] = &[
        ("2", 2.0),
        ("2.0", 2.0),
        ("2.5", 2.5),
        ("0.5", 0.5),
        ("0.0001", 0.0001),
        ("1", 1.0),
        ("007", 7.0),
        ("25", 25.0),
        ("25.0", 25.0),
        ("25.000000", 25.0),
        ("025", 25.0),
        ("24.9999", 24.9999),
        ("9.99", 9.99),
        ("19", 19.0),
        // The longest text accepted, and still above zero.
        ("0.000000000000000000000000000001", 1e-30),
    ];
    for &(text, expected) in table {
        assert_eq!(
            Theta::parse(text).map(Theta::value),
            Ok(expected),
            "{text:?}"
        );
    }
}

#[test]
fn theta_rejects_everything_else() {
    let table: &[&str] = &[
        // Not above zero.
        "0",
        "0.0",
        "00",
        "000.000",
        // Above 25, including by less than an f64 can tell.
        "25.0001",
        "25.0000000000000001",
        "26",
        "30",
        "99",
        "100",
        "250",
        "1000000",
        // Signs.
        "+2",
        "-1",
        "-0.5",
        // Exponents.
        "1e1",
        "2E0",
        "1e-1",
        // Not finite.
        "NaN",
        "nan",
        "inf",
        "Inf",
        "infinity",
        "+inf",
        "-inf",
        // Other spellings.
        "0x10",
        "0b1",
        "1_000",
        "2,5",
        "two",
        "２",
        // Dots.
        ".5",
        "2.",
        ".",
        "1.2.3",
        "..5",
        // Spaces and the empty text.
        "",
        " ",
        " 2",
        "2 ",
        "2\n",
        "2\t",
    ];
    for &text in table {
        assert_eq!(
            Theta::parse(text),
            Err(INVALID_THETA.to_string()),
            "{text:?}"
        );
    }
}

#[test]
fn theta_rejects_long_text_before_reading_it() {
    let longest_valid = format!("0.{}1", "0".repeat(Theta::MAX_LENGTH - 3));
    assert_eq!(longest_valid.len(), Theta::MAX_LENGTH);
    assert!(Theta::parse(&longest_valid).is_ok());
    let too_long_message = format!(
        "theta must be at most {} characters long",
        Theta::MAX_LENGTH
    );
    let table = [
        format!("0.{}1", "0".repeat(Theta::MAX_LENGTH - 2)),
        format!("2.{}", "0".repeat(Theta::MAX_LENGTH)),
        "9".repeat(10_000),
        "x".repeat(Theta::MAX_LENGTH + 1),
    ];
    for text in table {
        assert_eq!(
            Theta::parse(&text),
            Err(too_long_message.clone()),
            "{text:?}"
        );
    }
}

#[test]
fn theta_displays_the_shortest_round_trip() {
    let table: &[(&str, &str)] = &[
        ("2", "2"),
        ("2.0", "2"),
        ("2.50", "2.5"),
        ("007", "7"),
        ("0.0001", "0.0001"),
        ("25.000", "25"),
        ("0.1", "0.1"),
        (
            "0.000000000000000000000000000001",
            "0.000000000000000000000000000001",
        ),
    ];
    for &(text, shown) in table {
        let parsed = theta(text);
        assert_eq!(parsed.to_string(), shown, "{text:?}");
        assert_eq!(theta(shown), parsed, "{shown:?} parses back");
    }
}

#[test]
fn theta_defaults_to_two() {
    assert_eq!(Theta::default().value(), 2.0);
    assert_eq!(Theta::default(), Theta::DEFAULT);
    assert_eq!(Theta::default().to_string(), "2");
}

#[test]
fn lens_names_round_trip_and_are_lowercase_only() {
    for lens in Lens::ALL {
        assert_eq!(Lens::parse(lens.as_str()), Some(lens));
        assert_eq!(lens.to_string(), lens.as_str());
    }
    let names: Vec<&str> = Lens::ALL.iter().map(|lens| lens.as_str()).collect();
    assert_eq!(names.join(", "), LENS_NAMES);
    for name in ["Architecture", "USABILITY", " production", "refactor", ""] {
        assert_eq!(Lens::parse(name), None, "{name:?}");
    }
}

#[test]
fn requests_that_parse() {
    let all_set = Request {
        resume: true,
        auto: false,
        target: Some(PathBuf::from("repo")),
        state_dir: Some(PathBuf::from("state")),
        theta: Some(theta("3")),
        focus: Some(vec![Lens::Usability]),
        intent: "tidy".to_string(),
    };
    let table: Vec<(&[&str], Request)> = vec![
        (&[], Request::default()),
        (
            &["tidy", "the", "parser"],
            Request {
                intent: "tidy the parser".to_string(),
                ..Request::default()
            },
        ),
        (
            &["--continue"],
            Request {
                resume: true,
                ..Request::default()
            },
        ),
        (
            &["--continue=auto", "fix", "more"],
            Request {
                resume: true,
                auto: true,
                intent: "fix more".to_string(),
                ..Request::default()
            },
        ),
        // Every configuration token, in two orders.
        (
            &[
                "--continue",
                "--target=repo",
                "--state-dir=state",
                "theta=3",
                "focus=usability",
                "tidy",
            ],
            all_set.clone(),
        ),
        (
            &[
                "focus=usability",
                "theta=3",
                "--state-dir=state",
                "--target=repo",
                "--continue",
                "tidy",
            ],
            all_set.clone(),
        ),
        // Option-looking text after the intent begins is intent.
        (
            &["tidy", "--continue", "theta=3"],
            Request {
                intent: "tidy --continue theta=3".to_string(),
                ..Request::default()
            },
        ),
        (
            &[
                "theta=3",
                "tidy",
                "theta=1e1",
                "--target=",
                "focus=",
                "--continue",
            ],
            Request {
                theta: Some(theta("3")),
                intent: "tidy theta=1e1 --target= focus= --continue".to_string(),
                ..Request::default()
            },
        ),
        (
            &["make", "errors", "clear", "--verbose", "-x"],
            Request {
                intent: "make errors clear --verbose -x".to_string(),
                ..Request::default()
            },
        ),
        // An unknown flag is the first other token: it starts the intent.
        (
            &["--flag", "--continue"],
            Request {
                intent: "--flag --continue".to_string(),
                ..Request::default()
            },
        ),
        (
            &["--continue", "--flag", "theta=3"],
            Request {
                resume: true,
                intent: "--flag theta=3".to_string(),
                ..Request::default()
            },
        ),
        // Near misses of configuration names are intent too: exact, case-sensitive matches only.
        (
            &["--target", "repo"],
            Request {
                intent: "--target repo".to_string(),
                ..Request::default()
            },
        ),
        (
            &["--continued"],
            Request {
                intent: "--continued".to_string(),
                ..Request::default()
            },
        ),
        (
            &["Theta=3"],
            Request {
                intent: "Theta=3".to_string(),
                ..Request::default()
            },
        ),
        (
            &["FOCUS=usability"],
            Request {
                intent: "FOCUS=usability".to_string(),
                ..Request::default()
            },
        ),
        (
            &["theta", "=3"],
            Request {
                intent: "theta =3".to_string(),
                ..Request::default()
            },
        ),
        (
            &["-continue"],
            Request {
                intent: "-continue".to_string(),
                ..Request::default()
            },
        ),
        // Theta at its edges.
        (
            &["theta=25"],
            Request {
                theta: Some(theta("25")),
                ..Request::default()
            },
        ),
        (
            &["theta=2.5"],
            Request {
                theta: Some(theta("2.5")),
                ..Request::default()
            },
        ),
        (
            &["theta=0.0001"],
            Request {
                theta: Some(theta("0.0001")),
                ..Request::default()
            },
        ),
        // Focus: a subset, in the order given.
        (
            &["focus=refactoring,architecture"],
            Request {
                focus: Some(vec![Lens::Refactoring, Lens::Architecture]),
                ..Request::default()
            },
        ),
        (
            &["focus=architecture,usability,production,refactoring"],
            Request {
                focus: Some(Lens::ALL.to_vec()),
                ..Request::default()
            },
        ),
        // Paths are taken as given; `=` after the first belongs to the path.
        (
            &["--target=../other repo", "--state-dir=/tmp/a=b"],
            Request {
                target: Some(PathBuf::from("../other repo")),
                state_dir: Some(PathBuf::from("/tmp/a=b")),
                ..Request::default()
            },
        ),
        // The intent is joined as given: inner spaces kept, an empty token an empty word.
        (
            &["fix  the", "", "tests"],
            Request {
                intent: "fix  the  tests".to_string(),
                ..Request::default()
            },
        ),
        (
            &["--continue", ""],
            Request {
                resume: true,
                intent: String::new(),
                ..Request::default()
            },
        ),
        (
            &["", "theta=3"],
            Request {
                intent: " theta=3".to_string(),
                ..Request::default()
            },
        ),
    ];
    for (words, expected) in table {
        assert_eq!(parse_request(&tokens(words)), Ok(expected), "{words:?}");
    }
}

#[test]
fn requests_that_are_refused_name_the_token() {
    let theta_error = |token: &str| format!("{token}: {INVALID_THETA}");
    let unknown_lens = |token: &str, lens: &str| {
        format!(
            "{token}: unknown lens `{lens}`; allowed: architecture, usability, production, refactoring"
        )
    };
    let table: Vec<(&[&str], String)> = vec![
        // Theta.
        (&["theta=+2"], theta_error("theta=+2")),
        (&["theta=-1"], theta_error("theta=-1")),
        (&["theta=1e1"], theta_error("theta=1e1")),
        (&["theta=2E0"], theta_error("theta=2E0")),
        (&["theta=NaN"], theta_error("theta=NaN")),
        (&["theta=nan"], theta_error("theta=nan")),
        (&["theta=inf"], theta_error("theta=inf")),
        (&["theta=infinity"], theta_error("theta=infinity")),
        (&["theta=0"], theta_error("theta=0")),
        (&["theta=0.0"], theta_error("theta=0.0")),
        (&["theta=25.0001"], theta_error("theta=25.0001")),
        (&["theta="], theta_error("theta=")),
        (&["theta=2."], theta_error("theta=2.")),
        (&["theta=.5"], theta_error("theta=.5")),
        (&["theta=0x10"], theta_error("theta=0x10")),
        (&["theta= 2"], theta_error("theta= 2")),
        (&["theta==2"], theta_error("theta==2")),
        (
            &["--continue", "theta=1e1", "tidy"],
            theta_error("theta=1e1"),
        ),
        // Paths.
        (&["--target="], "--target=: the path is empty".to_string()),
        (
            &["--state-dir="],
            "--state-dir=: the path is empty".to_string(),
        ),
        // Focus.
        (
            &["focus="],
            "focus=: focus needs at least one lens: architecture, usability, production, \
             refactoring"
                .to_string(),
        ),
        (
            &["focus=security"],
            unknown_lens("focus=security", "security"),
        ),
        (
            &["focus=Architecture"],
            unknown_lens("focus=Architecture", "Architecture"),
        ),
        (
            &["focus=usability,speed"],
            unknown_lens("focus=usability,speed", "speed"),
        ),
        (
            &["focus=usability, production"],
            unknown_lens("focus=usability, production", " production"),
        ),
        (
            &["focus=architecture,,usability"],
            "focus=architecture,,usability: an empty lens between commas; allowed: \
             architecture, usability, production, refactoring"
                .to_string(),
        ),
        (
            &["focus=architecture,"],
            "focus=architecture,: an empty lens between commas; allowed: architecture, \
             usability, production, refactoring"
                .to_string(),
        ),
        (
            &["focus=,"],
            "focus=,: an empty lens between commas; allowed: architecture, usability, \
             production, refactoring"
                .to_string(),
        ),
        (
            &["focus=usability,usability"],
            "focus=usability,usability: lens `usability` is listed twice".to_string(),
        ),
        (
            &["focus=usability,production,usability"],
            "focus=usability,production,usability: lens `usability` is listed twice".to_string(),
        ),
        // Repeated configuration, the same value or not, valid or not.
        (
            &["theta=2", "theta=3"],
            "theta=3: theta is given twice (first as theta=2)".to_string(),
        ),
        (
            &["theta=2", "theta=2"],
            "theta=2: theta is given twice (first as theta=2)".to_string(),
        ),
        (
            &["theta=2", "--continue", "theta=1e1", "tidy"],
            "theta=1e1: theta is given twice (first as theta=2)".to_string(),
        ),
        (
            &["--continue", "--continue"],
            "--continue: --continue is given twice (first as --continue)".to_string(),
        ),
        (
            &["--continue", "--continue=auto"],
            "--continue=auto: --continue is given twice (first as --continue)".to_string(),
        ),
        (
            &["--continue=yes", "tidy"],
            "--continue=yes: --continue takes no value but `auto` (--continue=auto)".to_string(),
        ),
        (
            &["--continue=", "tidy"],
            "--continue=: --continue takes no value but `auto` (--continue=auto)".to_string(),
        ),
        (
            &["--target=a", "--target=b"],
            "--target=b: --target is given twice (first as --target=a)".to_string(),
        ),
        (
            &["--state-dir=a", "focus=usability", "--state-dir=a"],
            "--state-dir=a: --state-dir is given twice (first as --state-dir=a)".to_string(),
        ),
        (
            &["focus=usability", "focus=production"],
            "focus=production: focus is given twice (first as focus=usability)".to_string(),
        ),
    ];
    for (words, expected) in table {
        let error = parse_request(&tokens(words)).expect_err(&format!("{words:?} is refused"));
        assert_eq!(error.to_string(), expected, "{words:?}");
    }
}

#[test]
fn the_first_error_wins_and_names_its_variant() {
    let table: Vec<(&[&str], RequestError)> = vec![
        (
            &["--target=", "theta=0"],
            RequestError::EmptyPath {
                token: "--target=".to_string(),
            },
        ),
        (
            &["theta=0", "--target="],
            RequestError::InvalidTheta {
                token: "theta=0".to_string(),
                reason: INVALID_THETA.to_string(),
            },
        ),
        (
            &["focus=usability,usability,speed"],
            RequestError::RepeatedLens {
                token: "focus=usability,usability,speed".to_string(),
                lens: Lens::Usability,
            },
        ),
        (
            &["focus=speed,,usability"],
            RequestError::UnknownLens {
                token: "focus=speed,,usability".to_string(),
                lens: "speed".to_string(),
            },
        ),
    ];
    for (words, expected) in table {
        assert_eq!(parse_request(&tokens(words)), Err(expected), "{words:?}");
    }
}

#[test]
fn tokens_that_are_not_utf8() {
    let bytes = |prefix: &str| {
        let mut token = prefix.as_bytes().to_vec();
        token.extend_from_slice(&[0xff, 0xfe]);
        OsString::from_vec(token)
    };
    // As configuration: refused, the token named lossily.
    let refused = [
        ("--target=", "--target=\u{fffd}\u{fffd}"),
        ("--state-dir=", "--state-dir=\u{fffd}\u{fffd}"),
        ("theta=", "theta=\u{fffd}\u{fffd}"),
        ("focus=", "focus=\u{fffd}\u{fffd}"),
    ];
    for (prefix, shown) in refused {
        let words = vec![OsString::from("--continue"), bytes(prefix)];
        assert_eq!(
            parse_request(&words),
            Err(RequestError::NotUtf8 {
                token: shown.to_string()
            }),
            "{prefix:?}"
        );
        assert_eq!(
            RequestError::NotUtf8 {
                token: shown.to_string()
            }
            .to_string(),
            format!("{shown}: a configuration token must be valid UTF-8")
        );
    }
    // In the intent: converted lossily, even when it looks like configuration.
    let table: Vec<(Vec<OsString>, &str)> = vec![
        (vec![bytes("tidy ")], "tidy \u{fffd}\u{fffd}"),
        (
            vec![OsString::from("tidy"), bytes("--target=")],
            "tidy --target=\u{fffd}\u{fffd}",
        ),
        // Invalid bytes before `--continue` make it another token: the intent starts there.
        (
            vec![OsString::from_vec(b"\xff--continue".to_vec())],
            "\u{fffd}--continue",
        ),
    ];
    for (words, intent) in table {
        assert_eq!(
            parse_request(&words).map(|request| request.intent),
            Ok(intent.to_string()),
            "{words:?}"
        );
    }
}
