//! How the reports' Markdown escapes text, secrets left in: what [`crate::markdown`] writes
//! after it has redacted them, and what the redactor looks for, to find a secret written so.

/// `text` with line breaks as spaces and syntax characters escaped, as
/// [`crate::markdown::inline`] writes it, secrets left in.
pub(crate) fn markdown_inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '\r' | '\n' => out.push(' '),
            // A backslash does not stop a mention: a zero-width space after the `@` does.
            '@' => out.push_str("@\u{200b}"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '&' | '~' | '#' | '!' => {
                out.push('\\');
                out.push(character);
            }
            other => out.push(other),
        }
    }
    out
}
