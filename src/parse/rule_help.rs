//! Where a tool documents each of its codes: a definition's `[[rule_help]]` list, each entry a
//! code pattern and a URL template (`https://eslint.org/docs/latest/rules/{code}`). The report
//! links a rule to its page when one entry matches its code (the first that does).

use serde::Deserialize;

use super::lazy_regex::LazyRegex;

/// The codes an entry without `code` applies to: those a URL can hold as they are (no `/`, so
/// that `@typescript-eslint/no-unused-vars` is not sent to ESLint's page of core rules).
const DEFAULT_CODE: &str = "[A-Za-z0-9._~-]+";

/// The placeholder of a template.
const PLACEHOLDER: &str = "{code}";

/// One `[[rule_help]]` entry of a parser definition.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleHelpFile {
    /// A regex matched against the whole code; its `code` group, if any, is what goes in the URL.
    code: Option<String>,
    /// An https URL with `{code}` where the code goes.
    uri: String,
}

/// A parser's rule documentation, compiled.
#[derive(Debug, Clone, Default)]
pub struct RuleHelp {
    entries: Vec<Entry>,
}

#[derive(Debug, Clone)]
struct Entry {
    /// Anchored: it matches the whole code. Built when a code is first looked up.
    code: LazyRegex,
    uri: String,
}

impl RuleHelp {
    /// Compiles a definition's `[[rule_help]]` list; an error names the key
    /// (`rule_help[i].code` or `.uri`) and what is wrong.
    pub fn from_definition(entries: &[RuleHelpFile]) -> Result<Self, (String, String)> {
        let pairs: Vec<(Option<&str>, &str)> = entries
            .iter()
            .map(|entry| (entry.code.as_deref(), entry.uri.as_str()))
            .collect();
        Self::compile(&pairs)
            .map_err(|(index, key, reason)| (format!("rule_help[{index}].{key}"), reason))
    }

    /// Compiles `(code pattern, URL template)` pairs; an error names the pair's index, the key
    /// (`code` or `uri`) and what is wrong.
    pub fn compile(
        entries: &[(Option<&str>, &str)],
    ) -> Result<Self, (usize, &'static str, String)> {
        let entries = entries
            .iter()
            .enumerate()
            .map(|(index, (code, uri))| {
                check_template(uri).map_err(|reason| (index, "uri", reason))?;
                let code = compile_code(code.unwrap_or(DEFAULT_CODE))
                    .map_err(|reason| (index, "code", reason))?;
                Ok(Entry {
                    code,
                    uri: (*uri).to_string(),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { entries })
    }

    /// Whether no entry is defined.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The page of `code`: the template of the first entry whose pattern matches the whole code,
    /// with `{code}` replaced by the pattern's `code` group (else the whole code),
    /// percent-encoded.
    pub fn uri(&self, code: &str) -> Option<String> {
        self.entries.iter().find_map(|entry| {
            let captures = entry.code.captures(code)?;
            let part = captures
                .name("code")
                .or_else(|| captures.get(0))
                .map_or("", |m| m.as_str());
            (!part.is_empty()).then(|| {
                entry.uri.replace(
                    PLACEHOLDER,
                    &crate::encoding::percent_encoded(part.as_bytes(), b""),
                )
            })
        })
    }
}

/// A code pattern, anchored, whose only group name may be `code`.
fn compile_code(pattern: &str) -> Result<LazyRegex, String> {
    let regex = LazyRegex::new(&format!("^(?:{pattern})$")).map_err(|error| {
        format!(
            "invalid regex /{pattern}/: {}",
            super::error::one_line(&error)
        )
    })?;
    if let Some(unknown) = regex.capture_names().flatten().find(|name| *name != "code") {
        return Err(format!(
            "unknown group name \"{unknown}\": the only group a rule_help code takes is \
             (?P<code>…), the part of the code that goes in the URL"
        ));
    }
    Ok(regex)
}

/// A template is an https URL with a fixed host and `{code}` somewhere after it, made of the
/// characters a URL holds (`%` only as an escape), with no other placeholder.
fn check_template(uri: &str) -> Result<(), String> {
    let Some(rest) = uri.strip_prefix("https://") else {
        return Err(format!(
            "\"{uri}\" is not an https:// URL; expected a template like \
             \"https://example.com/rules/{PLACEHOLDER}\""
        ));
    };
    if !uri.contains(PLACEHOLDER) {
        return Err(format!(
            "\"{uri}\" has no {PLACEHOLDER}: the template needs it where the finding's code goes"
        ));
    }
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if host.is_empty() || host.contains(['{', '}', '@']) {
        return Err(format!(
            "\"{uri}\" has no fixed host: {PLACEHOLDER} goes in the path, query or fragment"
        ));
    }
    let fixed = uri.replace(PLACEHOLDER, "");
    if let Some(brace) = fixed.find(['{', '}']) {
        let rest = &fixed[brace..];
        let shown = rest.find('}').map_or(rest, |end| &rest[..=end]);
        return Err(format!(
            "\"{uri}\" has {shown}: the only placeholder is {PLACEHOLDER}"
        ));
    }
    if let Some(bad) = fixed
        .chars()
        .find(|c| !c.is_ascii_graphic() || "\"<>\\^`|".contains(*c))
    {
        return Err(format!(
            "\"{uri}\" has {bad:?}, which a URL cannot hold as it is (percent-encode it)"
        ));
    }
    let bytes = fixed.as_bytes();
    for (at, _) in fixed.match_indices('%') {
        let escape = bytes.get(at + 1..at + 3);
        if !escape.is_some_and(|pair| pair.iter().all(u8::is_ascii_hexdigit)) {
            return Err(format!("\"{uri}\" has a % that starts no %XX escape"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn help(entries: &[(Option<&str>, &str)]) -> RuleHelp {
        RuleHelp::compile(entries).unwrap()
    }

    #[test]
    fn the_first_matching_entry_gives_the_page() {
        let clippy = help(&[
            (
                Some("clippy::(?P<code>[a-z0-9_]+)"),
                "https://rust-lang.github.io/rust-clippy/master/index.html#{code}",
            ),
            (
                Some(r"E\d{4}"),
                "https://doc.rust-lang.org/error_codes/{code}.html",
            ),
        ]);
        assert_eq!(
            clippy.uri("clippy::needless_return").as_deref(),
            Some("https://rust-lang.github.io/rust-clippy/master/index.html#needless_return")
        );
        assert_eq!(
            clippy.uri("E0425").as_deref(),
            Some("https://doc.rust-lang.org/error_codes/E0425.html")
        );
        // Anchored: a code that only contains a match has no page.
        assert_eq!(clippy.uri("xE0425"), None);
        assert_eq!(clippy.uri("E04251"), None);
        assert_eq!(clippy.uri("needless_return"), None);
        assert_eq!(clippy.uri(""), None);
    }

    #[test]
    fn without_a_pattern_only_codes_a_url_holds_as_they_are_have_a_page() {
        let eslint = help(&[(None, "https://eslint.org/docs/latest/rules/{code}")]);
        assert_eq!(
            eslint.uri("no-unused-vars").as_deref(),
            Some("https://eslint.org/docs/latest/rules/no-unused-vars")
        );
        assert_eq!(eslint.uri("@typescript-eslint/no-unused-vars"), None);
        assert_eq!(eslint.uri("react/jsx-key"), None);
        assert_eq!(eslint.uri("a b"), None);
    }

    #[test]
    fn the_code_is_percent_encoded() {
        let any = help(&[(Some(".+"), "https://example.com/r?q={code}&x={code}")]);
        assert_eq!(
            any.uri("a b/ü#").as_deref(),
            Some("https://example.com/r?q=a%20b%2F%C3%BC%23&x=a%20b%2F%C3%BC%23")
        );
    }

    #[test]
    fn bad_templates_and_patterns_say_why() {
        let table: &[(Option<&str>, &str, &str, &str)] = &[
            (
                None,
                "http://example.com/{code}",
                "uri",
                "not an https:// URL",
            ),
            (
                None,
                "HTTPS://example.com/{code}",
                "uri",
                "not an https:// URL",
            ),
            (None, "example.com/{code}", "uri", "not an https:// URL"),
            (None, "", "uri", "not an https:// URL"),
            (None, "https://example.com/rules", "uri", "has no {code}"),
            (None, "https://example.com/{Code}", "uri", "has no {code}"),
            (None, "https://{code}.example.com/", "uri", "no fixed host"),
            (None, "https:///{code}", "uri", "no fixed host"),
            (
                None,
                "https://user@example.com/{code}",
                "uri",
                "no fixed host",
            ),
            (
                None,
                "https://example.com/{rule}/{code}",
                "uri",
                "has {rule}: the only",
            ),
            (None, "https://example.com/{code}}", "uri", "has }"),
            (None, "https://example.com/{{code}", "uri", "has {"),
            (None, "https://example.com/a b/{code}", "uri", "' '"),
            (None, "https://example.com/ü/{code}", "uri", "'ü'"),
            (
                None,
                "https://example.com/%zz/{code}",
                "uri",
                "% that starts no",
            ),
            (
                None,
                "https://example.com/{code}%4",
                "uri",
                "% that starts no",
            ),
            (
                Some("("),
                "https://example.com/{code}",
                "code",
                "invalid regex",
            ),
            (
                Some("(?P<rule>x)"),
                "https://example.com/{code}",
                "code",
                "unknown group name \"rule\"",
            ),
        ];
        for (code, uri, key, reason) in table {
            let (index, got_key, got) =
                RuleHelp::compile(&[(None, "https://ok.example/{code}"), (*code, uri)])
                    .unwrap_err();
            assert_eq!((index, got_key), (1, *key), "{uri}: {got}");
            assert!(got.contains(reason), "{uri}: {reason} not in {got}");
        }
        // The boundary on the right side: what is accepted.
        for uri in [
            "https://example.com/{code}",
            "https://example.com:8443/{code}",
            "https://example.com?rule={code}",
            "https://example.com#{code}",
            "https://example.com/%7E/{code}",
            "https://example.com/(x)/{code}",
        ] {
            assert!(RuleHelp::compile(&[(None, uri)]).is_ok(), "{uri}");
        }
    }
}
