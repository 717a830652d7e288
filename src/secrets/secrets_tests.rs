use super::*;

impl Redactor {
    /// A redactor for the given variables (name, value), as if they were the environment.
    pub fn new(
        environment: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Self, SecretsError> {
        Self::from_variables(
            environment
                .into_iter()
                .map(|(name, value)| (name, value.into_bytes())),
        )
    }
}

fn redactor(environment: &[(&str, &str)]) -> Redactor {
    Redactor::new(
        environment
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string())),
    )
    .unwrap()
}

/// A GitHub token built at run time, so that no credential-shaped literal sits in the source.
fn github_token() -> String {
    format!("ghp_{}", "aZ09".repeat(9))
}

#[test]
fn environment_values_are_redacted() {
    let redactor = redactor(&[
        ("GITHUB_TOKEN", "s3cr3t-value-1"),
        ("DB_PASSWORD", " p@ss w0rd! \n"),
        ("API_TOKEN", "short"),
        ("HOME", "/home/runner/work"),
        ("GIT_AUTHOR_NAME", "refine-loop bot"),
    ]);
    let table = [
        (
            "push s3cr3t-value-1 done",
            "push [REDACTED:GITHUB_TOKEN] done",
        ),
        // Inside a longer word: a secret is a secret.
        ("xxs3cr3t-value-1yy", "xx[REDACTED:GITHUB_TOKEN]yy"),
        (
            "s3cr3t-value-1s3cr3t-value-1",
            "[REDACTED:GITHUB_TOKEN][REDACTED:GITHUB_TOKEN]",
        ),
        ("login p@ss w0rd!", "login [REDACTED:DB_PASSWORD]"),
        (
            "https://user:p%40ss%20w0rd%21@example.com",
            "https://user:[REDACTED:DB_PASSWORD]@example.com",
        ),
        // A short value, a variable that is no secret, an author's name: left alone.
        ("short /home/runner/work", "short /home/runner/work"),
        ("by refine-loop bot", "by refine-loop bot"),
        ("s3cr3t-value-", "s3cr3t-value-"),
    ];
    for (input, expected) in table {
        assert_eq!(redactor.redact_str(input), expected);
    }
    assert_eq!(redactor.secret_variable_names().len(), 2);
    assert_eq!(
        redactor.secret_variable_names(),
        ["DB_PASSWORD", "GITHUB_TOKEN"]
    );
}

#[test]
fn every_rendered_form_of_a_secret_is_redacted() {
    let secret = r#"Tr0ub4dor&3#x*y@z<"'\_"#;
    let redactor = redactor(&[("DEPLOY_PASSWORD", secret)]);
    let markdown = crate::escape::markdown_inline(secret);
    let json = serde_json::to_string(secret).unwrap();
    let xml = "Tr0ub4dor&amp;3#x*y@z&lt;&quot;&apos;\\_";
    let url = crate::encoding::percent_encoded(secret.as_bytes(), b"");
    // (the form, as a report, a log or a URL writes it)
    for form in [
        secret.to_string(),
        markdown,
        json[1..json.len() - 1].to_string(),
        xml.to_string(),
        url,
    ] {
        let text = format!("before {form} after");
        assert_eq!(
            redactor.redact_str(&text),
            "before [REDACTED:DEPLOY_PASSWORD] after",
            "{form}"
        );
    }
}

#[test]
fn nothing_to_redact_borrows() {
    let redactor = redactor(&[("GITHUB_TOKEN", "s3cr3t-value-1")]);
    assert!(matches!(
        redactor.redact(b"nothing here"),
        Cow::Borrowed(b"nothing here")
    ));
    assert!(matches!(redactor.redact_str("nothing"), Cow::Borrowed(_)));
}

#[test]
fn overlapping_secrets_become_one_marker() {
    let token = github_token();
    let redactor = redactor(&[
        ("A_TOKEN", "abcdefgh1234"),
        ("B_TOKEN", "1234WXYZ5678"),
        ("GITHUB_TOKEN", &token),
        ("PREFIX_TOKEN", &token[..20]),
    ]);
    let table = [
        // Two values overlapping: their union goes, named after the first.
        ("<abcdefgh1234WXYZ5678>", "<[REDACTED:A_TOKEN]>"),
        ("<1234WXYZ5678>", "<[REDACTED:B_TOKEN]>"),
        // A value that is a token: named after the variable, whose match is the longest.
        (&*format!("t {token} t"), "t [REDACTED:GITHUB_TOKEN] t"),
        // A value that is the start of a token: the token (longest) names it.
        (
            &*format!("{}{}", &token[..20], "b".repeat(30)),
            "[REDACTED:github-token]",
        ),
    ];
    for (input, expected) in table {
        assert_eq!(redactor.redact_str(input), expected, "{input}");
    }
}

#[test]
fn bytes_that_are_not_text() {
    let redactor = Redactor::from_variables([
        ("GITHUB_TOKEN".to_string(), b"s3cr3t-value-1".to_vec()),
        ("RAW_SECRET".to_string(), b"\xff\xfe\x00secret\x80".to_vec()),
    ])
    .unwrap();
    let table: [(&[u8], &[u8]); 3] = [
        (
            b"\xff\xfe s3cr3t-value-1\x80\x00",
            b"\xff\xfe [REDACTED:GITHUB_TOKEN]\x80\x00",
        ),
        (
            b"\xc3(\xff\xfe\x00secret\x80\xc3",
            b"\xc3([REDACTED:RAW_SECRET]\xc3",
        ),
        (b"\xff\xfe\x00secre", b"\xff\xfe\x00secre"),
    ];
    for (input, expected) in table {
        assert_eq!(redactor.redact(input), expected, "{}", input.escape_ascii());
    }
}

#[test]
fn findings_say_where_and_what_but_not_the_secret() {
    let token = github_token();
    let redactor = redactor(&[("GITHUB_TOKEN", "s3cr3t-value-1")]);
    let patch = format!(
        "diff --git a/x b/x\n+one s3cr3t-value-1\n+two\n+three {token}\n+-----BEGIN PRIVATE KEY-----\n+MIIE\n"
    );
    let findings = redactor.findings(patch.as_bytes());
    let expected = [
        ("GITHUB_TOKEN", 24, 2),
        ("github-token", 51, 4),
        ("private-key", 93, 5),
    ];
    let actual: Vec<(&str, usize, usize)> = findings
        .iter()
        .map(|finding| (finding.what.as_str(), finding.offset, finding.line))
        .collect();
    assert_eq!(actual, expected);
    assert_eq!(findings[0].to_string(), "GITHUB_TOKEN on line 2 (byte 24)");
    for finding in &findings {
        let shown = format!("{finding:?} {finding}");
        assert!(
            !shown.contains("s3cr3t") && !shown.contains(&token[4..]),
            "{shown}"
        );
    }
    assert!(redactor.findings(b"clean\npatch\n").is_empty());
}

#[test]
fn debug_shows_names_not_values() {
    let redactor = redactor(&[("GITHUB_TOKEN", "s3cr3t-value-1")]);
    let shown = format!("{redactor:?}");
    assert!(shown.contains("GITHUB_TOKEN"), "{shown}");
    assert!(!shown.contains("s3cr3t"), "{shown}");
}

#[test]
fn a_large_clean_input_passes_through_unchanged() {
    let redactor = redactor(&[
        ("GITHUB_TOKEN", "s3cr3t-value-1"),
        ("NPM_TOKEN", "n0t-in-there"),
    ]);
    let line = "warning: unused variable `task` at src/main.rs:12:5 -- AKIA? sk-? ghp_? Bearer\n";
    let input = line.repeat(8 * 1024 * 1024 / line.len() + 1);
    match redactor.redact(input.as_bytes()) {
        Cow::Borrowed(output) => assert!(output == input.as_bytes()),
        Cow::Owned(_) => panic!("a clean input was copied"),
    }
}

#[test]
fn the_environment_of_this_process_can_be_read() {
    let redactor = Redactor::from_env().unwrap();
    assert!(redactor.secret_variable_names().len() <= std::env::vars_os().count());
}
