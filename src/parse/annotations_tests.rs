use super::*;

/// What a test compares: file, line, column, severity, code and message.
type Fields = (
    Option<String>,
    Option<u32>,
    Option<u32>,
    Severity,
    Option<String>,
    String,
);

fn found(line: &str) -> Option<Fields> {
    read(line).map(|f| {
        (
            f.file,
            f.line,
            f.column,
            f.severity.unwrap(),
            f.code,
            f.message,
        )
    })
}

#[test]
fn annotation_commands_of_every_shape_are_read() {
    let s = |v: &str| Some(v.to_string());
    let cases: &[(&str, Option<Fields>)] = &[
        // ruff --output-format=github: the code in the title, the location repeated in the
        // message, the help after an escaped newline.
        (
            "::error title=ruff (F401),file=/tmp/fx/app/calc.py,line=1,col=8,endLine=1,endColumn=10::app/calc.py:1:8: F401 `os` imported but unused%0A  help: Remove unused import: `os`",
            Some((
                s("/tmp/fx/app/calc.py"),
                Some(1),
                Some(8),
                Severity::Error,
                s("F401"),
                "`os` imported but unused".into(),
            )),
        ),
        // pylint -f github: an empty endline, a code alone as the title, a notice.
        (
            "::notice file=app/storage.py,line=1,endline=,col=0,title=C0114::Missing module docstring",
            Some((
                s("app/storage.py"),
                Some(1),
                Some(0),
                Severity::Note,
                s("C0114"),
                "Missing module docstring".into(),
            )),
        ),
        // yamllint -f github: the place and the rule before the message.
        (
            "::warning file=config/app.yaml,line=4,col=8::4:8 [truthy] truthy value should be one of [false, true]",
            Some((
                s("config/app.yaml"),
                Some(4),
                Some(8),
                Severity::Warning,
                s("truthy"),
                "truthy value should be one of [false, true]".into(),
            )),
        ),
        (
            "::warning file=config/a.yaml,line=1,col=1::1:1 [document-start] missing document start \"---\"",
            Some((
                s("config/a.yaml"),
                Some(1),
                Some(1),
                Severity::Warning,
                s("document-start"),
                "missing document start \"---\"".into(),
            )),
        ),
        // A title with words and no code; escaped commas and colons in a property.
        (
            "::warning file=src/a%2Cb%3A.css,line=3,col=5,title=Stylelint problem::Unexpected empty block (block-no-empty)",
            Some((
                s("src/a,b:.css"),
                Some(3),
                Some(5),
                Severity::Warning,
                None,
                "Unexpected empty block (block-no-empty)".into(),
            )),
        ),
        // ruff leaves `col` out of a multi-line annotation; its message still has it.
        (
            "::error title=ruff (I001),file=/tmp/fx/app/storage.py,line=1,endLine=3::app/storage.py:1:1: I001 Import block is un-sorted or un-formatted%0A  help: Organize imports",
            Some((
                s("/tmp/fx/app/storage.py"),
                Some(1),
                Some(1),
                Severity::Error,
                s("I001"),
                "Import block is un-sorted or un-formatted".into(),
            )),
        ),
        // A script's error with no properties at all.
        (
            "::error::Deployment failed",
            Some((
                None,
                None,
                None,
                Severity::Error,
                None,
                "Deployment failed".into(),
            )),
        ),
        // Leading spaces and an upper-case command name.
        (
            "  ::ERROR file=a.py,line=2::boom",
            Some((
                s("a.py"),
                Some(2),
                None,
                Severity::Error,
                None,
                "boom".into(),
            )),
        ),
        // A message whose location names another line is kept whole.
        (
            "::error file=a.py,line=2::a.py:9: see here",
            Some((
                s("a.py"),
                Some(2),
                None,
                Severity::Error,
                None,
                "a.py:9: see here".into(),
            )),
        ),
        // Azure Pipelines.
        (
            "##vso[task.logissue type=error;sourcepath=/tmp/fx/app/calc.py;linenumber=1;columnnumber=8;code=F401;]`os` imported but unused",
            Some((
                s("/tmp/fx/app/calc.py"),
                Some(1),
                Some(8),
                Severity::Error,
                s("F401"),
                "`os` imported but unused".into(),
            )),
        ),
        (
            "##vso[task.logissue type=warning]50%AZP25 done",
            Some((None, None, None, Severity::Warning, None, "50% done".into())),
        ),
        // Not annotations.
        ("::group::Run tests", None),
        ("::debug::value", None),
        ("::add-mask::secret", None),
        ("##vso[task.setvariable variable=x]1", None),
        ("##vso[task.logissue type=debug]x", None),
        ("::error no separator", None),
        ("src/a.rs:1:2: error: x", None),
        ("std::error::Error is a trait", None),
    ];
    for (line, want) in cases {
        assert_eq!(&found(line), want, "{line}");
    }
}

#[test]
fn a_multi_line_message_keeps_its_rest_as_the_body() {
    let found = read("::error file=a.py,line=1::first%0Asecond%0D%0Athird%25").unwrap();
    assert_eq!(found.message, "first");
    assert_eq!(found.body.as_deref(), Some("second\r\nthird%"));
}

#[test]
fn any_line_parser_reads_annotations_as_its_own_tool() {
    let catalogue = crate::parse::Catalogue::built_in().unwrap();
    let context = ParseContext {
        target: "/tmp/fx".into(),
        cwd_relative: String::new(),
        sample: false,
    };
    let log = "app/calc.py:1:8: F401 [*] `os` imported but unused\n\
               ::error title=ruff (F841),file=/tmp/fx/app/b.py,line=4,col=1::b\n";
    let findings =
        crate::parse::parse_bytes(catalogue.get("ruff").unwrap(), &context, log.as_bytes());
    let files: Vec<_> = findings
        .diagnostics()
        .iter()
        .map(|d| (d.file.clone().unwrap(), d.code.clone().unwrap()))
        .collect();
    assert_eq!(
        files,
        [
            ("app/calc.py".to_string(), "F401".to_string()),
            ("app/b.py".into(), "F841".into())
        ]
    );
}
