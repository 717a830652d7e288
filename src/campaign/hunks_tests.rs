//! Hunks found at any offset, applied there, and a patch made exact for a moved file.

use super::*;

const BEFORE: &str = "a\nb\nc\nd\ne\nf\ng\nh\n";
const AFTER: &str = "a\nb\nc\nD\ne\nf\ng\nh\n";

fn patch_of(before: &str, after: &str) -> Vec<u8> {
    let mut patch = git2::Patch::from_buffers(
        before.as_bytes(),
        Some(Path::new("f.txt")),
        after.as_bytes(),
        Some(Path::new("f.txt")),
        None,
    )
    .unwrap();
    patch.to_buf().unwrap().to_vec()
}

#[test]
fn hunks_are_found_at_any_offset_and_in_order() {
    let files = parse(&patch_of(BEFORE, AFTER)).unwrap();
    let [file] = &files[..] else {
        panic!("{files:?}")
    };
    assert_eq!(file.change, Change::Modified);
    let table: [(&str, Side, Option<usize>); 6] = [
        (BEFORE, Side::Before, Some(0)),
        (AFTER, Side::After, Some(0)),
        ("0\n1\na\nb\nc\nd\ne\nf\ng\nh\n", Side::Before, Some(2)),
        ("0\na\nb\nc\nD\ne\nf\ng\nh\nz\n", Side::After, Some(1)),
        (AFTER, Side::Before, None),
        ("a\nb\nc\nX\ne\nf\ng\nh\n", Side::Before, None),
    ];
    for (content, side, expected) in table {
        let found = file.locate(content.as_bytes(), side).map(|at| at[0]);
        assert_eq!(found, expected, "{content:?} {side:?}");
    }
    assert_eq!(
        file.apply(b"0\na\nb\nc\nd\ne\nf\ng\nh\n").unwrap(),
        b"0\na\nb\nc\nD\ne\nf\ng\nh\n"
    );
}

#[test]
fn a_patch_is_made_exact_for_a_file_that_moved() {
    let patch = patch_of(BEFORE, AFTER);
    let moved = format!("top\n{BEFORE}");
    let exact = rebase(&patch, |_| Some(moved.clone().into_bytes())).unwrap();
    assert!(exact.contains("@@ -2,7 +2,7 @@"), "{exact}");
    let error = rebase(&patch, |_| Some(AFTER.as_bytes().to_vec())).unwrap_err();
    assert!(error.contains("a hunk is not there any more"), "{error}");
}

/// A hunk whose context occurs twice is applied at the copy nearest its header's line, as `git
/// apply` searches outward from it; the offset one hunk was found at carries to the next.
#[test]
fn a_hunk_whose_context_occurs_twice_goes_where_its_header_says() {
    let block =
        "fn f() {\n    a();\n    b();\n    c();\n    two();\n    d();\n    e();\n    f();\n}\n";
    let before = format!("{block}\n// middle\n\n{block}");
    let after = before
        .replacen("two();", "TWO();", 2)
        .replacen("TWO();", "two();", 1);
    assert_eq!(after.matches("TWO();").count(), 1, "{after}");
    let patch = patch_of(&before, &after);
    let files = parse(&patch).unwrap();
    let file = &files[0];
    // The change is to the second copy; its three lines of context each side are the first's too.
    let table: [(String, Option<String>); 4] = [
        (before.clone(), Some(after.clone())),
        // Lines added above both copies: the offset carries, still the second copy.
        (format!("x\ny\n{before}"), Some(format!("x\ny\n{after}"))),
        // Lines added between them: the copy nearest the header's line is still the second.
        (
            before.replace("// middle\n", "// middle\n// more\n"),
            Some(after.replace("// middle\n", "// middle\n// more\n")),
        ),
        // The second copy gone: the first is the only one, so it is found there.
        (
            format!("{block}\n// middle\n"),
            Some(format!(
                "{}\n// middle\n",
                block.replace("two();", "TWO();")
            )),
        ),
    ];
    for (content, expected) in table {
        let applied = file
            .apply(content.as_bytes())
            .map(|out| String::from_utf8(out).unwrap());
        assert_eq!(applied, expected, "{content}");
    }
}

/// A file of one line repeated and a long hunk of the same line that is not there (its last line
/// differs): every start is a near miss. The search tries each by its window's hash, so the
/// answer comes in one pass; it must still be exact where windows only look alike.
#[test]
fn a_long_hunk_against_repeated_lines_is_found_or_refused_exactly() {
    let lines = 20_000;
    // The whole file is one hunk: every line of it replaced.
    let before = format!("{}w\n", "x\n".repeat(lines - 1));
    let after = "y\n".repeat(lines);
    let patch = patch_of(&before, &after);
    let file = &parse(&patch).unwrap()[0];
    // The patch's own file, with repeated lines above and below: found, and applied to the byte.
    let padded = |middle: &str| format!("{}{middle}{}", "x\n".repeat(lines), "x\n".repeat(3));
    assert_eq!(
        file.apply(padded(&before).as_bytes()).unwrap(),
        padded(&after).as_bytes()
    );
    // Twice as many of the repeated line, but not the last one: near misses everywhere.
    let repeated = "x\n".repeat(2 * lines);
    assert_eq!(file.locate(repeated.as_bytes(), Side::Before), None);
}
