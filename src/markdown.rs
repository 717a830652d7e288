//! Text from a run or a forge (paths, messages, names, titles) made safe in Markdown: on one line, with every
//! character Markdown or HTML would read as syntax escaped, so that `__init__.py` stays a name
//! and a message cannot open a link, an image, a table cell or a tag, nor mention anyone
//! (`@typescript-eslint`, a pull request's title).

/// `text` as inline Markdown: secrets redacted (escaped, a token no longer has its shape), line
/// breaks become spaces, syntax characters are escaped.
pub(crate) fn inline(text: &str) -> String {
    crate::escape::markdown_inline(&crate::secrets::redacted_text(text))
}

/// `text` as a Markdown code span on one line, secrets redacted: fenced by one more backtick than its longest run
/// of backticks, padded with a space where it starts or ends with one. Other control
/// characters and the marks that reorder text (U+202E) are shown as `\u{…}`: a file name can
/// neither ring nor make a line read backwards.
pub(crate) fn code_span(text: &str) -> String {
    let text: String = crate::secrets::redacted_text(text)
        .replace(['\r', '\n'], " ")
        .chars()
        .map(|character| {
            let reorders = matches!(character, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
            if character.is_control() || reorders {
                format!("\\u{{{:x}}}", u32::from(character))
            } else {
                character.to_string()
            }
        })
        .collect();
    let mut longest = 0;
    let mut run = 0;
    for character in text.chars() {
        run = if character == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// `text` (a command's output, an error) as the body of a fenced code block: a fence in it
/// cannot close the block, and control characters but line breaks and tabs (a terminal's
/// escape sequences, which `cat` on the report would act on: a title, the clipboard, a cleared
/// screen) and the marks that reorder text are shown as `\u{…}`.
pub(crate) fn code_block(text: &str) -> String {
    text.trim_end()
        .replace("```", "` ` `")
        .chars()
        .map(|character| {
            let reorders = matches!(character, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
            if (character.is_control() && !matches!(character, '\n' | '\t')) || reorders {
                format!("\\u{{{:x}}}", u32::from(character))
            } else {
                character.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_block_holds_no_terminal_sequence_and_no_fence() {
        // (the text, the block's body)
        let cases = [
            ("ok\n\tindented\n", "ok\n\tindented"),
            (
                "\u{1b}]52;c;ZXZpbA==\u{7}title",
                "\\u{1b}]52;c;ZXZpbA==\\u{7}title",
            ),
            ("\u{1b}[2J\0cle\rared", "\\u{1b}[2J\\u{0}cle\\u{d}ared"),
            ("```\n# forged", "` ` `\n# forged"),
        ];
        for (text, body) in cases {
            assert_eq!(code_block(text), body, "{text:?}");
        }
    }

    #[test]
    fn a_name_in_a_code_span_cannot_ring_reorder_or_break_the_line() {
        // (the name, the span)
        let cases = [
            ("a\u{7}b", "`a\\u{7}b`"),
            ("evil\u{202e}txt.sh", "`evil\\u{202e}txt.sh`"),
            ("src/a`\n\n## Scope\n", "``src/a`  ## Scope ``"),
        ];
        for (name, span) in cases {
            assert_eq!(code_span(name), span, "{name:?}");
        }
    }

    #[test]
    fn code_spans_hold_any_backticks() {
        let table = [
            ("# noqa: F401", "`# noqa: F401`"),
            ("a `b` c", "``a `b` c``"),
            ("`x`", "`` `x` ``"),
            ("two\nlines", "`two lines`"),
        ];
        for (text, expected) in table {
            assert_eq!(code_span(text), expected, "{text:?}");
        }
    }

    #[test]
    fn names_and_messages_stay_text() {
        let table = [
            ("shopcart/__init__.py", "shopcart/\\_\\_init\\_\\_.py"),
            ("a | b", "a \\| b"),
            ("<script>", "\\<script\\>"),
            ("[x](y)", "\\[x\\](y)"),
            ("![x](y)", "\\!\\[x\\](y)"),
            ("two\nlines", "two lines"),
            ("# heading", "\\# heading"),
            (
                "@typescript-eslint/no-unused-vars",
                "@\u{200b}typescript-eslint/no-unused-vars",
            ),
            ("plain", "plain"),
        ];
        for (text, expected) in table {
            assert_eq!(inline(text), expected, "{text}");
        }
    }

    #[test]
    fn a_credential_is_redacted_before_it_is_escaped() {
        // Built at run time, so that no token-like literal sits in the source.
        let token = format!("ghp_{}", "a1B2c3D4e5".repeat(4));
        let key = format!("sk-ant-{}", "x_Y-z".repeat(6));
        for text in [
            format!("leaked {token} here"),
            format!("key *{key}*"),
            format!("Authorization: Bearer {}", "a_b".repeat(8)),
        ] {
            for (form, rendered) in [("inline", inline(&text)), ("code", code_span(&text))] {
                assert!(rendered.contains("REDACTED"), "{form}: {rendered}");
                for secret in [&token[4..], &key[7..], "a_b"] {
                    assert!(!rendered.contains(secret), "{form}: {rendered}");
                }
            }
        }
    }
}
