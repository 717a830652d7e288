//! ECMAScript regexes (GitHub problem matchers are .NET regexes in ECMAScript mode) rewritten for
//! the `regex` crate where the two read the same escape differently.

/// Rewrites the ECMAScript escapes the `regex` crate reads differently: `\d`, `\w` and `\b` are
/// ASCII there (Unicode in the crate; `\s` is Unicode in both), `\<` and `\>` are plain
/// characters (word boundaries in the crate).
pub fn translate_ecmascript(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            _ => {}
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(escaped) = chars.next() else {
            out.push('\\');
            break;
        };
        let ascii = match escaped {
            'd' => Some(("0-9", false)),
            'D' => Some(("0-9", true)),
            'w' => Some(("0-9A-Za-z_", false)),
            'W' => Some(("0-9A-Za-z_", true)),
            _ => None,
        };
        match (ascii, in_class) {
            (Some((set, false)), true) => out.push_str(set),
            // A negated class inside a class cannot be spelled with ranges: keep the crate's.
            (Some((_, true)), true) => {
                out.push('\\');
                out.push(escaped);
            }
            (Some((set, negated)), false) => {
                out.push_str(if negated { "[^" } else { "[" });
                out.push_str(set);
                out.push(']');
            }
            (None, _) => match escaped {
                '<' | '>' => out.push(escaped),
                'b' if !in_class => out.push_str("(?-u:\\b)"),
                'B' if !in_class => out.push_str("(?-u:\\B)"),
                _ => {
                    out.push('\\');
                    out.push(escaped);
                }
            },
        }
    }
    out
}
