//! The one way a template is filled: each `{name}` (a lowercase name: letters, digits and `_`)
//! replaced by its value, in one pass, so a value that holds `{name}` stays as it is. A name the
//! template does not know is an error, never left in the text; `{{name}}` is the text `{name}`,
//! and every other brace is text.

/// A placeholder the values do not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown placeholder {{{name}}} (known: {known}); write {{{{{name}}}}} for the text")]
pub struct UnknownPlaceholder {
    pub name: String,
    /// The names there are, `{a}, {b}`.
    pub known: String,
}

/// `template` with each `{name}` replaced by its value in `values`.
pub fn fill(template: &str, values: &[(&str, &str)]) -> Result<String, UnknownPlaceholder> {
    let mut output = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        output.push_str(&rest[..open]);
        if let Some(literal) = escaped(&rest[open..]) {
            output.push_str(literal);
            rest = &rest[open + literal.len() + 2..];
            continue;
        }
        let after = &rest[open + 1..];
        let length = name_length(after);
        let name = &after[..length];
        if length == 0 || !after[length..].starts_with('}') {
            output.push('{');
            rest = after;
            continue;
        }
        let Some((_, value)) = values.iter().find(|(key, _)| *key == name) else {
            return Err(UnknownPlaceholder {
                name: name.to_string(),
                known: values
                    .iter()
                    .map(|(key, _)| format!("{{{key}}}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        output.push_str(value);
        rest = &after[length + 1..];
    }
    output.push_str(rest);
    Ok(output)
}

/// How long the name at the start of `text` is: a lowercase letter or `_`, then letters, digits
/// and `_` (0 when there is none).
fn name_length(text: &str) -> usize {
    let first = text
        .bytes()
        .next()
        .is_some_and(|byte| byte.is_ascii_lowercase() || byte == b'_');
    if !first {
        return 0;
    }
    text.bytes()
        .take_while(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || *byte == b'_')
        .count()
}

/// `{name}` when `text` starts with `{{name}}`: a placeholder written as text.
fn escaped(text: &str) -> Option<&str> {
    let inner = text.strip_prefix("{{")?;
    let length = name_length(inner);
    (length > 0 && inner[length..].starts_with("}}")).then(|| &text[1..length + 3])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_filled_once_and_unknown_ones_are_errors() {
        let values = [("a", "x"), ("b_2", "{a}"), ("empty", "")];
        let table: [(&str, Result<&str, &str>); 14] = [
            ("{a}", Ok("x")),
            ("{a}{a}", Ok("xx")),
            ("{b_2}", Ok("{a}")),
            ("-{empty}-", Ok("--")),
            ("{ \"json\": 1 }", Ok("{ \"json\": 1 }")),
            ("${{ secrets.TOKEN }}", Ok("${{ secrets.TOKEN }}")),
            ("{A} {1a} {} {a", Ok("{A} {1a} {} {a")),
            ("é{a}é", Ok("éxé")),
            ("{c}", Err("c")),
            ("text {a} then {missing_one}", Err("missing_one")),
            ("", Ok("")),
            ("{{a}} is {a}", Ok("{a} is x")),
            ("{{c}} {{ c }}", Ok("{c} {{ c }}")),
            ("{{{a}}}", Ok("{{a}}")),
        ];
        for (template, expected) in table {
            let filled = fill(template, &values);
            match expected {
                Ok(text) => assert_eq!(filled.as_deref(), Ok(text), "{template}"),
                Err(name) => {
                    let error = filled.unwrap_err();
                    assert_eq!(error.name, name, "{template}");
                    assert_eq!(error.known, "{a}, {b_2}, {empty}");
                }
            }
        }
    }
}
