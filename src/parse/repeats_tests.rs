//! Tests of the findings counted once.

use super::*;

fn identity<'a>(line: u32, message: &'a str) -> Identity<'a> {
    Identity {
        file: Some("src/lib.rs"),
        line: Some(line),
        column: Some(5),
        severity: Severity::Warning,
        code: Some("clippy::needless_return"),
        message,
    }
}

#[test]
fn a_repeat_is_left_out_and_taken_off_the_printed_count() {
    let mut repeats = Repeats::default();
    assert!(repeats.first_time(&identity(3, "unneeded `return` statement")));
    assert!(!repeats.first_time(&identity(3, "unneeded `return` statement")));
    // Another line, or another message at the same place, is another finding.
    assert!(repeats.first_time(&identity(4, "unneeded `return` statement")));
    assert!(repeats.first_time(&identity(3, "another message")));
    let mut expected = ExpectedCount {
        error: None,
        warning: Some(4),
    };
    repeats.discount(Some(&mut expected));
    assert_eq!((expected.error, expected.warning), (None, Some(3)));
}
