//! Which environment variables hold secrets, and the forms of their values to look for.

/// Parts of a variable's name (compared in upper case) that mark its value as a secret. They
/// cover `GITHUB_TOKEN`, `CI_JOB_TOKEN`, `NPM_TOKEN`, `AWS_SECRET_ACCESS_KEY`,
/// `ANTHROPIC_API_KEY`, `OPENAI_API_KEY` and the like.
const SECRET_NAME_PARTS: [&str; 11] = [
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "API_KEY",
    "APIKEY",
    "ACCESS_KEY",
    "PRIVATE_KEY",
    "CREDENTIAL",
    "AUTH",
];

/// Variables whose names contain `AUTH` but whose values are not secrets. Redacting them would
/// hide an ordinary path from every log and refuse every patch that mentions it.
const NOT_SECRET_NAMES: [&str; 1] = ["SSH_AUTH_SOCK"];

/// A value shorter than this (after trimming) is not treated as a secret: `1` or `true` would
/// match everywhere.
pub const MIN_SECRET_LEN: usize = 8;

/// Whether a variable's name says its value is a secret.
///
/// `AUTHOR` is not `AUTH`: `GIT_AUTHOR_NAME` and `XAUTHORITY` hold a name and a path, while
/// `AUTHORIZATION` stays a secret.
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if NOT_SECRET_NAMES.contains(&upper.as_str()) {
        return false;
    }
    let without_author = upper.replace("AUTHORIZ", "AUTHZ").replace("AUTHOR", "");
    SECRET_NAME_PARTS
        .iter()
        .any(|part| without_author.contains(part))
}

/// The part of a value to redact: trimmed, at least [`MIN_SECRET_LEN`] bytes, and not one byte
/// repeated (`********` is a placeholder, not a secret).
pub(super) fn secret_value(value: &[u8]) -> Option<&[u8]> {
    let trimmed = value.trim_ascii();
    let first = *trimmed.first()?;
    let long_enough = trimmed.len() >= MIN_SECRET_LEN;
    let varied = trimmed.iter().any(|&byte| byte != first);
    (long_enough && varied).then_some(trimmed)
}

/// The value as JSON writes it inside a string, when that differs.
pub(super) fn json_escaped(value: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(value).ok()?;
    let quoted = serde_json::to_string(text).ok()?;
    let inner = quoted.get(1..quoted.len().saturating_sub(1))?;
    (inner.as_bytes() != value).then(|| inner.as_bytes().to_vec())
}

/// The value as the reports' Markdown escapes it in text (see [`crate::markdown::inline`]), when
/// that differs.
pub(super) fn markdown_escaped(value: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(value).ok()?;
    let escaped = crate::escape::markdown_inline(text);
    (escaped.as_bytes() != value).then(|| escaped.into_bytes())
}

/// The value as XML writes it in text or an attribute, when that differs.
pub(super) fn xml_escaped(value: &[u8]) -> Option<Vec<u8>> {
    let mut escaped = Vec::with_capacity(value.len());
    for &byte in value {
        match byte {
            b'&' => escaped.extend_from_slice(b"&amp;"),
            b'<' => escaped.extend_from_slice(b"&lt;"),
            b'>' => escaped.extend_from_slice(b"&gt;"),
            b'"' => escaped.extend_from_slice(b"&quot;"),
            b'\'' => escaped.extend_from_slice(b"&apos;"),
            other => escaped.push(other),
        }
    }
    (escaped != value).then_some(escaped)
}

/// The value percent-encoded as in a URL (every byte but `A-Z a-z 0-9 - . _ ~`, upper-case hex),
/// when that differs from the value: a password inside a clone URL is written this way.
pub(super) fn url_encoded(value: &[u8]) -> Option<Vec<u8>> {
    let encoded = crate::encoding::percent_encoded(value, b"");
    (encoded.as_bytes() != value).then(|| encoded.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names() {
        let table = [
            ("GITHUB_TOKEN", true),
            ("CI_JOB_TOKEN", true),
            ("NPM_TOKEN", true),
            ("AWS_SECRET_ACCESS_KEY", true),
            ("AWS_ACCESS_KEY_ID", true),
            ("ANTHROPIC_API_KEY", true),
            ("OPENAI_API_KEY", true),
            ("SOME_APIKEY", true),
            ("DB_PASSWORD", true),
            ("MYSQL_PASSWD", true),
            ("GPG_PASSPHRASE", true),
            ("DEPLOY_PRIVATE_KEY", true),
            ("GOOGLE_APPLICATION_CREDENTIALS", true),
            ("DOCKER_AUTH_CONFIG", true),
            ("HTTP_AUTHORIZATION", true),
            ("oauth_client", true),
            ("github_token", true),
            ("AUTHORS_TOKEN", true),
            ("GIT_AUTHOR_NAME", false),
            ("GIT_AUTHOR_EMAIL", false),
            ("XAUTHORITY", false),
            ("SSH_AUTH_SOCK", false),
            ("HOME", false),
            ("PATH", false),
            ("CI", false),
            ("GITHUB_SHA", false),
        ];
        for (name, expected) in table {
            assert_eq!(is_secret_name(name), expected, "{name}");
        }
    }

    #[test]
    fn secret_values() {
        let table: [(&[u8], Option<&[u8]>); 8] = [
            (b"1", None),
            (b"true", None),
            (b"  short  ", None),
            (b"1234567", None),
            (b"********", None),
            (b"12345678", Some(b"12345678")),
            (b"  hunter2hunter2\n", Some(b"hunter2hunter2")),
            (b"ab\xffcdefgh", Some(b"ab\xffcdefgh")),
        ];
        for (value, expected) in table {
            assert_eq!(secret_value(value), expected, "{}", value.escape_ascii());
        }
    }

    #[test]
    fn url_encoding() {
        let table: [(&[u8], Option<&[u8]>); 4] = [
            (b"plain-Value_1.2~3", None),
            (b"p@ss word/1", Some(b"p%40ss%20word%2F1")),
            (b"a+b=c&d", Some(b"a%2Bb%3Dc%26d")),
            (b"\xc3\xa9t\xc3\xa9", Some(b"%C3%A9t%C3%A9")),
        ];
        for (value, expected) in table {
            assert_eq!(
                url_encoded(value).as_deref(),
                expected,
                "{}",
                value.escape_ascii()
            );
        }
    }
}
