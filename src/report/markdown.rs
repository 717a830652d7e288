//! Text from a run (paths, messages, names) made safe in Markdown: on one line, with every
//! character Markdown or HTML would read as syntax escaped, so that `__init__.py` stays a name
//! and a message cannot open a link, a table cell or a tag, nor mention (`@typescript-eslint`).

/// `text` as inline Markdown: line breaks become spaces, syntax characters are escaped.
pub(super) fn inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '\r' | '\n' => out.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '&' | '~' | '#' | '@' => {
                out.push('\\');
                out.push(character);
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_messages_stay_text() {
        let table = [
            ("shopcart/__init__.py", "shopcart/\\_\\_init\\_\\_.py"),
            ("a | b", "a \\| b"),
            ("<script>", "\\<script\\>"),
            ("[x](y)", "\\[x\\](y)"),
            ("two\nlines", "two lines"),
            ("# heading", "\\# heading"),
            (
                "@typescript-eslint/no-unused-vars",
                "\\@typescript-eslint/no-unused-vars",
            ),
            ("plain", "plain"),
        ];
        for (text, expected) in table {
            assert_eq!(inline(text), expected, "{text}");
        }
    }
}
