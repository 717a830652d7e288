use super::*;
use crate::secrets::Redactor;

/// Test tokens are built at run time, so that no credential-shaped literal sits in the source.
fn token(prefix: &str, unit: &str, length: usize) -> String {
    let body: String = unit.chars().cycle().take(length).collect();
    format!("{prefix}{body}")
}

fn redactor() -> Redactor {
    Redactor::new([]).unwrap()
}

#[test]
fn every_shape_is_redacted() {
    let table = [
        (token("ghp_", "aZ09", 36), "github-token"),
        (token("gho_", "aZ09", 36), "github-token"),
        (token("ghu_", "aZ09", 40), "github-token"),
        (token("ghs_", "aZ09", 36), "github-token"),
        (token("ghr_", "aZ09", 36), "github-token"),
        (token("github_pat_", "aZ0_9", 82), "github-token"),
        (token("glpat-", "aZ0_-9", 20), "gitlab-token"),
        (token("xoxb-", "1234-", 30), "slack-token"),
        (token("xoxp-", "aZ09-", 60), "slack-token"),
        (token("AKIA", "Z0", 16), "aws-access-key-id"),
        (token("ASIA", "Z0", 16), "aws-access-key-id"),
        (token("AIza", "aZ0_-", 35), "google-api-key"),
        (token("sk-", "aZ0", 48), "sk-api-key"),
        (token("sk-ant-api03-", "aZ0_-", 95), "sk-api-key"),
        (token("sk-proj-", "aZ0_-", 120), "sk-api-key"),
        (token("npm_", "aZ09", 36), "npm-token"),
    ];
    let redactor = redactor();
    for (secret, name) in table {
        for (before, after) in [("", ""), ("token=", "\n"), ("\"", "\","), ("(", ") x")] {
            let input = format!("{before}{secret}{after}");
            assert_eq!(
                redactor.redact_str(&input),
                format!("{before}[REDACTED:{name}]{after}"),
                "{input}"
            );
        }
    }
}

#[test]
fn near_misses_are_left_alone() {
    let table = [
        token("ghp_", "aZ09", 35),
        token("mask_ghp_", "aZ09", 36),
        token("ghx_", "aZ09", 36),
        token("github_pat_", "aZ0_9", 21),
        token("glpat-", "aZ0", 19),
        token("xoxz-", "1234-", 30),
        token("xoxb-", "1", 9),
        token("AKIA", "Z0", 15),
        token("AKIA", "Z0", 17),
        token("AKIA", "az", 16),
        token("XAKIA", "Z0", 16),
        token("AIza", "aZ0_-", 34),
        token("sk-", "aZ0", 19),
        token("task-", "aZ0", 40),
        token("npm_", "aZ09", 35),
        token("npm_", "aZ09", 37),
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBg\n-----END PUBLIC KEY-----".into(),
        "-----BEGIN CERTIFICATE-----\nMIIBIjANBg\n-----END CERTIFICATE-----".into(),
        "Authorization: Bearer $GITHUB_TOKEN".into(),
        "Authorization: Bearer short".into(),
        "the authorization: bearer of bad news".into(),
        "Authorization:\nBearer abcdefghijkl".into(),
        "ghp_ is the prefix of a GitHub token".into(),
    ];
    let redactor = redactor();
    for input in table {
        assert_eq!(redactor.redact_str(&input), input);
    }
}

#[test]
fn headers_keep_their_name_and_scheme() {
    let table = [
        (
            "curl -H 'Authorization: Bearer eyJhbGciOi.eyJzdWIi.SflKxwRJ' x",
            "curl -H 'Authorization: Bearer [REDACTED:authorization-header]' x",
        ),
        (
            "authorization: basic dXNlcjpwYXNzd29yZA==",
            "authorization: basic [REDACTED:authorization-header]",
        ),
        (
            "Proxy-Authorization:Basic\tdXNlcjpwYXNzd29yZA==\r\n",
            "Proxy-Authorization:Basic\t[REDACTED:authorization-header]\r\n",
        ),
        (
            r#"{"Authorization": "token abcdef0123456789"}"#,
            r#"{"Authorization": "token [REDACTED:authorization-header]"}"#,
        ),
        (
            "AUTHORIZATION=Bearer abc/def+ghi=",
            "AUTHORIZATION=Bearer [REDACTED:authorization-header]",
        ),
    ];
    let redactor = redactor();
    for (input, expected) in table {
        assert_eq!(redactor.redact_str(input), expected);
    }
}

#[test]
fn private_key_blocks() {
    let table = [
        (
            "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nabc+/=\n-----END RSA PRIVATE KEY-----\nafter",
            "before\n[REDACTED:private-key]\nafter",
        ),
        (
            "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----",
            "[REDACTED:private-key]",
        ),
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEA\n",
            "[REDACTED:private-key]",
        ),
        (
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQdGBF\n-----END PGP PRIVATE KEY BLOCK-----\n",
            "[REDACTED:private-key]\n",
        ),
        (
            "+-----BEGIN EC PRIVATE KEY-----\n+MHcCAQEEI\n+-----END EC PRIVATE KEY-----\n+x\n",
            "+[REDACTED:private-key]\n+x\n",
        ),
        (
            r#"{"key": "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n"}"#,
            r#"{"key": "[REDACTED:private-key]\n"}"#,
        ),
        (
            "-----BEGIN PRIVATE KEY-----\nA\n-----END PRIVATE KEY-----\nmid\n-----BEGIN PRIVATE KEY-----\nB",
            "[REDACTED:private-key]\nmid\n[REDACTED:private-key]",
        ),
    ];
    let redactor = redactor();
    for (input, expected) in table {
        assert_eq!(redactor.redact_str(input), expected, "{input}");
    }
}

#[test]
fn a_long_run_is_redacted_up_to_the_longest_shape() {
    let redactor = redactor();
    let input = token("ghp_", "aZ09", 600);
    let redacted = redactor.redact_str(&input);
    assert_eq!(
        redacted,
        format!("[REDACTED:github-token]{}", &input[4 + 251..])
    );
}

#[test]
fn no_shape_matches_more_than_the_longest_shape() {
    let shapes = Shapes::new().unwrap();
    let blanks = " ".repeat(40);
    let table = [
        token("ghp_", "a", 2000),
        token("github_pat_", "_", 2000),
        token("glpat-", "-", 2000),
        token("xoxb-", "-", 2000),
        token("AIza", "-", 2000),
        token("sk-", "-", 2000),
        format!("-----BEGIN{blanks}PRIVATE KEY BLOCK-----"),
        format!(
            "Authorization\"{}:{}'Bearer{}{}",
            &blanks[..16],
            &blanks[..16],
            &blanks[..16],
            "=".repeat(2000)
        ),
    ];
    for input in table {
        let found = shapes.any.find(input.as_bytes()).unwrap();
        assert!(
            found.len() <= MAX_SHAPE_LEN,
            "{}: {}",
            &input[..12],
            found.len()
        );
    }
    let end = format!("-----END{blanks}PRIVATE KEY BLOCK-----");
    assert!(end.len() <= MAX_END_MARKER_LEN);
    assert!(shapes.end_marker.is_match(end.as_bytes()));
}

#[test]
fn one_group_per_shape() {
    let shapes = Shapes::new().unwrap();
    assert_eq!(shapes.any.captures_len(), SHAPES.len() + 1);
}
