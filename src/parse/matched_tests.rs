//! Tests of the lines remembered.

use super::*;

fn groups(found: &Found<'_>, count: usize) -> Vec<Option<String>> {
    (0..count)
        .map(|group| found.matched().get(group).map(str::to_string))
        .collect()
}

#[test]
fn a_line_read_again_gives_what_the_regex_found_in_it() {
    let regex =
        Regex::new(r"^(?P<file>[^:]+):(?P<line>\d+)(?::(?P<column>\d+))?: (?P<message>.*)$")
            .unwrap();
    let other = Regex::new(r"^(?P<file>[^:]+):(?P<line>\d+)").unwrap();
    let mut memory = LineMemory::default();
    let lines = [
        "src/é a.rs:3: no column",
        "src/b.rs:10:4: with one",
        "nothing",
    ];
    for line in lines {
        let first = find(Some(&mut memory), &regex, line);
        let again = find(Some(&mut memory), &regex, line);
        let plain = find(None, &regex, line);
        assert_eq!(first.is_some(), plain.is_some(), "{line}");
        let (Some(first), Some(again), Some(plain)) = (first, again, plain) else {
            continue;
        };
        assert!(matches!(again, Found::Spans(..)), "{line}");
        assert_eq!(groups(&again, 6), groups(&plain, 6), "{line}");
        assert_eq!(groups(&first, 6), groups(&plain, 6), "{line}");
    }
    // The same line, another regex: that regex's own groups.
    let found = find(Some(&mut memory), &other, lines[1]).unwrap();
    assert!(matches!(found, Found::Captures(_)));
    let again = find(Some(&mut memory), &other, lines[1]).unwrap();
    assert_eq!(
        groups(&again, 3),
        [
            Some("src/b.rs:10".into()),
            Some("src/b.rs".into()),
            Some("10".into())
        ]
    );
}

#[test]
fn long_lines_are_not_remembered_and_the_memory_is_bounded() {
    let regex = Regex::new(r"^(\w+) (.*)$").unwrap();
    let mut memory = LineMemory::default();
    let long = format!("word {}", "x".repeat(MAX_LINE_BYTES));
    find(Some(&mut memory), &regex, &long).unwrap();
    let again = find(Some(&mut memory), &regex, &long).unwrap();
    assert!(matches!(again, Found::Captures(_)));
    for n in 0..MAX_LINES + 10 {
        find(Some(&mut memory), &regex, &format!("line {n}")).unwrap();
        assert!(memory.lines.len() <= MAX_LINES);
    }
}
