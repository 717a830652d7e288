//! The `generic` parser: the shapes most tools share, one line each, in a table; and `auto`, which
//! must rank it below a parser of the tool itself that explains the same lines.

use std::path::PathBuf;

use refine_loop::parse::{Catalogue, ParseContext, parse_bytes, rank};

fn context() -> ParseContext {
    ParseContext {
        target: PathBuf::from("/work"),
        cwd_relative: String::new(),
        sample: false,
    }
}

/// (line, file, line, column, severity, code, message); `None` file: the line is not a finding.
type Row = (
    &'static str,
    Option<&'static str>,
    Option<u32>,
    Option<u32>,
    &'static str,
    Option<&'static str>,
    &'static str,
);

#[test]
fn generic_reads_the_shared_shapes() {
    let rows: &[Row] = &[
        // path:line:col: severity: message [code]
        (
            "src/a.c:3:5: warning: unused variable [-Wunused-variable]",
            Some("src/a.c"),
            Some(3),
            Some(5),
            "warning",
            Some("-Wunused-variable"),
            "unused variable",
        ),
        // path:line: severity: message (no column), any case of the severity word
        (
            "docs/index.rst:12: WARNING: Title underline too short.",
            Some("docs/index.rst"),
            Some(12),
            None,
            "warning",
            None,
            "Title underline too short.",
        ),
        // path:line:col severity: message (no colon after the column)
        (
            "lib/x.lua:7:2 error: unexpected symbol",
            Some("lib/x.lua"),
            Some(7),
            Some(2),
            "error",
            None,
            "unexpected symbol",
        ),
        // a space, non-ASCII, parentheses and brackets in the path
        (
            "src/prix été (v2)/[old] a.c:9:1: error: expected ';' [syntax]",
            Some("src/prix été (v2)/[old] a.c"),
            Some(9),
            Some(1),
            "error",
            Some("syntax"),
            "expected ';'",
        ),
        // a bracketed tail with a space is message, not code
        (
            "a.py:1:1: note: see [the docs here]",
            Some("a.py"),
            Some(1),
            Some(1),
            "note",
            None,
            "see [the docs here]",
        ),
        // "fatal error" is an error
        (
            "a.c:1:10: fatal error: x.h: No such file or directory",
            Some("a.c"),
            Some(1),
            Some(10),
            "error",
            None,
            "x.h: No such file or directory",
        ),
        // path(line,col): severity code: message [project]  (MSBuild)
        (
            "src/Shop.cs(12,5): error CS0103: The name 'x' does not exist [/w/shop.csproj]",
            Some("src/Shop.cs"),
            Some(12),
            Some(5),
            "error",
            Some("CS0103"),
            "The name 'x' does not exist",
        ),
        // path(line,col): severity: message [code]  (clang -fdiagnostics-format=msvc)
        (
            "native/prix été (v2)/stock.c(15,12): warning: index past the end [-Warray-bounds]",
            Some("native/prix été (v2)/stock.c"),
            Some(15),
            Some(12),
            "warning",
            Some("-Warray-bounds"),
            "index past the end",
        ),
        // path(line): severity: message (no column)
        (
            "Build (2)/x.f90(4): error: bad statement",
            Some("Build (2)/x.f90"),
            Some(4),
            None,
            "error",
            None,
            "bad statement",
        ),
        // path:line:col - severity: message, indented (pyright-like)
        (
            "  /work/src/app v2.py:3:5 - error: \"x\" is not defined",
            Some("src/app v2.py"),
            Some(3),
            Some(5),
            "error",
            None,
            "\"x\" is not defined",
        ),
        // path:line:col - severity code: message (tsc --pretty-like)
        (
            "src/a.ts:3:7 - error TS2322: Type 'number' is not assignable",
            Some("src/a.ts"),
            Some(3),
            Some(7),
            "error",
            Some("TS2322"),
            "Type 'number' is not assignable",
        ),
        // not findings: no severity word, a URL, a bare message
        (
            "src/a.py:3:5: E501 line too long",
            None,
            None,
            None,
            "",
            None,
            "",
        ),
        (
            "see https://example.com:443/x: error: no",
            None,
            None,
            None,
            "",
            None,
            "",
        ),
        ("error: could not compile", None, None, None, "", None, ""),
    ];
    let catalogue = Catalogue::built_in().unwrap();
    let parser = catalogue.get("generic").unwrap();
    for &(input, file, line, column, severity, code, message) in rows {
        let findings = parse_bytes(parser, &context(), input.as_bytes());
        let found = findings.diagnostics();
        let Some(file) = file else {
            assert!(found.is_empty(), "{input}: {found:?}");
            continue;
        };
        assert_eq!(found.len(), 1, "{input}: {found:?}");
        let d = &found[0];
        assert_eq!(d.file.as_deref(), Some(file), "{input}");
        assert_eq!((d.line, d.column), (line, column), "{input}");
        assert_eq!(d.severity.as_str(), severity, "{input}");
        assert_eq!(d.code.as_deref(), code, "{input}");
        assert_eq!(d.message, message, "{input}");
    }
}

#[test]
fn auto_ranks_generic_below_the_tool_own_parser() {
    let catalogue = Catalogue::built_in().unwrap();
    // (output, the parser auto must choose)
    let table = [
        // gcc and generic read every line; gcc's own reading wins
        (
            "a.c: In function 'f':\na.c:3:5: warning: unused variable 'x' [-Wunused-variable]\n    3 |     int x;\n      |         ^\n",
            "gcc",
        ),
        // mypy's shape, mypy's summary
        (
            "a.py:3: error: Name \"x\" is not defined  [name-defined]\nFound 1 error in 1 file (checked 1 source file)\n",
            "mypy",
        ),
        // tsc --pretty false
        (
            "src/a.ts(3,7): error TS2322: Type 'number' is not assignable to type 'string'.\n",
            "tsc",
        ),
        // a tool outside the catalogue
        (
            "docs/index.rst:12: WARNING: Title underline too short.\ndocs/api.rst:3: ERROR: Unknown directive type \"foo\".\n",
            "generic",
        ),
    ];
    for (output, expected) in table {
        let (ranked, _) = rank(&catalogue, &context(), &mut output.as_bytes()).unwrap();
        assert_eq!(ranked[0].parser.name(), expected, "{output}");
    }
}
