//! Tests of a parser that counts a repeated finding once (`deduplicate = true`).

use super::*;

/// `deduplicate`: a finding printed again (cargo prints a diagnostic again for another target
/// when a note differs) counts once, kept or only counted, in one line or several; the repeats
/// come off the tool's count of what it printed.
#[test]
fn a_deduplicating_parser_counts_a_finding_printed_again_once() {
    let definition = RUSTC_LIKE.replacen("[[skip]]", "deduplicate = true\n[[skip]]", 1)
        + r#"
[[summary]]
regex = '^warning: `\w+` generated (?P<warnings>\d+) warnings(?: \((?P<duplicates>\d+) duplicates\))?'
[[pattern]]
regex = '^(?P<file>[^\s:]+):(?P<line>\d+):(?P<column>\d+): (?P<severity>warning): (?P<message>.+)$'
"#;
    // Each finding twice: an entry with a note and without, a line of the short format.
    let printed = |findings: usize| {
        let mut text: String = (1..=findings)
            .map(|line| {
                format!(
                    "warning: unneeded return\n --> src/a.rs:{line}:5\n  = note: on by default\n\n\
                     warning: unneeded return\n --> src/a.rs:{line}:5\n\n\
                     src/b.rs:{line}:1: warning: short\nsrc/b.rs:{line}:1: warning: short\n"
                )
            })
            .collect();
        let duplicates = findings;
        let printed = 4 * findings;
        text.push_str(&format!(
            "warning: `x` generated {} warnings ({duplicates} duplicates)\n",
            printed + duplicates
        ));
        text
    };
    let few = parse(&definition, &printed(2));
    let got: Vec<String> = few.diagnostics().iter().map(brief).collect();
    assert_eq!(
        got,
        [
            "src/a.rs:1:5 warning - unneeded return [-]",
            "src/b.rs:1:1 warning - short [-]",
            "src/a.rs:2:5 warning - unneeded return [-]",
            "src/b.rs:2:1 warning - short [-]",
        ]
    );
    assert_eq!(few.expected.and_then(|e| e.warning), Some(4));
    // Past the kept findings, repeats are still told apart.
    let kept = crate::parse::Findings::default_limit();
    let findings = kept / 2 + 50;
    let many = parse(&definition, &printed(findings));
    let unique = 2 * findings as u64;
    assert_eq!(many.counts.warning, unique);
    assert_eq!(many.diagnostics().len(), kept);
    assert_eq!(many.omitted, unique - kept as u64);
    assert_eq!(many.expected.and_then(|e| e.warning), Some(unique));
}

/// A deduplicating parser reads a new finding exactly as one that does not deduplicate: the same
/// place, code, message and body, whether its entry is short or longer than what is kept to read
/// it again; only the repeats are left out.
#[test]
fn a_deduplicating_parser_keeps_each_new_finding_whole() {
    let clippy = include_str!("../../gate-parsers/clippy.toml");
    let plain = clippy.replacen("deduplicate = true", "deduplicate = false", 1);
    assert_ne!(clippy, plain);
    let fixtures =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/parsers/clippy");
    let mut logs: Vec<String> = std::fs::read_dir(&fixtures)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "txt"))
        .map(|path| std::fs::read_to_string(path).unwrap())
        .collect();
    assert!(logs.len() >= 5);
    // An entry far longer than one is usually, printed twice, then a short one.
    let long_note: String = (0..1_500)
        .map(|n| format!("   = note: {n} {}\n", "x".repeat(90)))
        .collect();
    let long = format!(
        "warning: long\n  --> src/a.rs:1:1\n{long_note}\nwarning: long\n  --> src/a.rs:1:1\n{long_note}\n\
         warning: short\n  --> src/a.rs:2:1\n   |\n2  |     x\n   = note: after\n\n"
    );
    logs.push(long);
    for log in &logs {
        let kept = parse(clippy, log);
        let all = parse(&plain, log);
        let mut seen = Vec::new();
        let first_seen: Vec<&Diagnostic> = all
            .diagnostics()
            .iter()
            .filter(|d| {
                let identity = (&d.file, d.line, d.column, d.severity, &d.code, &d.message);
                let new = !seen.contains(&identity);
                seen.push(identity);
                new
            })
            .collect();
        let got: Vec<&Diagnostic> = kept.diagnostics().iter().collect();
        assert_eq!(got, first_seen, "{}", &log[..log.len().min(200)]);
    }
}

/// A deduplicating parser reads a log as the same parser without deduplication reads the log
/// with its repeats taken out, counts and all: a long copy (past what is kept to read an entry
/// again) beside a short copy of the same finding, in either order; a place or a code read only
/// past that point; and a full sink, where a warning is only counted and an error takes a kept
/// warning's place.
#[test]
fn a_deduplicating_parser_reads_a_log_as_the_log_without_its_repeats() {
    let clippy = include_str!("../../gate-parsers/clippy.toml");
    let plain = clippy.replacen("deduplicate = true", "deduplicate = false", 1);
    let notes = |n: usize| -> String {
        (0..n)
            .map(|i| format!("   = note: {i} {}\n", "x".repeat(200)))
            .collect()
    };
    let help = "   = help: for further information visit \
                https://rust-lang.github.io/rust-clippy/master/index.html#needless_return\n";
    let entry = |head: &str, place: &str, before: usize, after: usize, code: bool| {
        let code = if code { help } else { "" };
        format!(
            "{head}\n{}  --> {place}\n{}{code}\n",
            notes(before),
            notes(after)
        )
    };
    // Each entry, and whether it repeats one before it (400 notes are past 64 KiB).
    let entries = [
        (
            entry("warning: long first", "src/a.rs:1:1", 0, 400, false),
            false,
        ),
        (
            entry("warning: long first", "src/a.rs:1:1", 0, 2, false),
            true,
        ),
        (
            entry("warning: short first", "src/b.rs:2:1", 0, 2, true),
            false,
        ),
        (
            entry("warning: short first", "src/b.rs:2:1", 0, 400, true),
            true,
        ),
        (
            entry("warning: late place", "src/c.rs:3:1", 400, 0, true),
            false,
        ),
        (
            entry("warning: late place", "src/c.rs:3:1", 1, 0, true),
            true,
        ),
        (
            entry("warning: late place", "src/c.rs:3:1", 400, 0, true),
            true,
        ),
        (
            entry("error[E0499]: an error", "src/d.rs:4:1", 300, 300, false),
            false,
        ),
        (
            entry("error[E0499]: an error", "src/d.rs:4:1", 0, 0, false),
            true,
        ),
        (
            entry("error[E0499]: an error", "src/d.rs:5:1", 0, 0, false),
            false,
        ),
    ];
    let filler: String = (0..10_000)
        .map(|n| format!("src/f.rs:{n}:1: warning: filler {n}\n"))
        .collect();
    for before in [String::new(), filler] {
        let log: String = entries.iter().map(|(text, _)| text.as_str()).collect();
        let unique: String = entries
            .iter()
            .filter(|(_, repeat)| !repeat)
            .map(|(text, _)| text.as_str())
            .collect();
        let kept = parse(clippy, &format!("{before}{log}"));
        let all = parse(&plain, &format!("{before}{unique}"));
        assert!(kept.diagnostics().len() >= 4);
        assert_eq!(format!("{kept:?}"), format!("{all:?}"));
    }
}

/// The strings of a repeat's draft serve the next draft only when short: a short finding stored
/// in a long one's string would hold its capacity, which the findings' memory bound (it counts
/// lengths) does not see.
#[test]
fn a_stored_finding_does_not_hold_a_long_repeats_memory() {
    let definition = RUSTC_LIKE.replacen("[[skip]]", "deduplicate = true\n[[skip]]", 1);
    let long = "x".repeat(60_000);
    let log: String = (0..50)
        .map(|n| {
            format!(
                "warning[E0001]: {long} {n}\n --> src/a.rs:1:1\n\nwarning[E0001]: {long} {n}\n --> src/a.rs:1:1\n\n\
                 error[E0002]: short {n}\n --> src/b.rs:{n}:1\n\n"
            )
        })
        .collect();
    let findings = parse(&definition, &log);
    let short: Vec<&Diagnostic> = (findings.diagnostics().iter())
        .filter(|d| d.message.starts_with("short"))
        .collect();
    assert_eq!(short.len(), 50);
    for diagnostic in short {
        assert!(
            diagnostic.message.capacity() < 1024,
            "{}",
            diagnostic.message
        );
    }
}
