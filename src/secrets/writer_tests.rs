use std::cell::RefCell;
use std::rc::Rc;

use super::*;

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

/// An output that the test can read while a writer holds it.
#[derive(Debug, Clone, Default)]
struct Shared(Rc<RefCell<Vec<u8>>>);

impl Shared {
    fn bytes(&self) -> Vec<u8> {
        self.0.borrow().clone()
    }
}

impl Write for Shared {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Writes `parts` one by one (flushing after each when asked) and returns the output.
fn stream(redactor: &Redactor, parts: &[&[u8]], flush_each: bool) -> Vec<u8> {
    let mut writer = RedactingWriter::new(redactor, Vec::new());
    for part in parts {
        writer.write_all(part).unwrap();
        if flush_each {
            writer.flush().unwrap();
        }
    }
    writer.finish().unwrap()
}

fn mixed_input() -> String {
    format!(
        "start\nthe value s3cr3t-value-1 and\nmulti line\nvalue here {} end\n\
         Authorization: Bearer abcdefghijkl\n-----BEGIN PRIVATE KEY-----\nMIIE\n\
         -----END PRIVATE KEY-----\ntail s3cr3t-value-1",
        github_token()
    )
}

#[test]
fn a_secret_split_at_every_point_is_redacted() {
    let redactor = redactor(&[
        ("GITHUB_TOKEN", "s3cr3t-value-1"),
        ("MULTI_SECRET", "multi line\nvalue here"),
    ]);
    let input = mixed_input();
    let input = input.as_bytes();
    let expected = redactor.redact(input).into_owned();
    assert!(!String::from_utf8_lossy(&expected).contains("s3cr3t"));
    for split in 0..=input.len() {
        for flush_each in [false, true] {
            let (first, second) = input.split_at(split);
            let output = stream(&redactor, &[first, second], flush_each);
            assert_eq!(
                String::from_utf8_lossy(&output),
                String::from_utf8_lossy(&expected),
                "split at {split}"
            );
        }
    }
}

#[test]
fn every_pair_of_split_points_and_single_bytes() {
    let redactor = redactor(&[("GITHUB_TOKEN", "s3cr3t-value-1")]);
    let input = format!("a s3cr3t-value-1\n{} z", github_token());
    let input = input.as_bytes();
    let expected = redactor.redact(input).into_owned();
    for first in 0..=input.len() {
        for second in first..=input.len() {
            let parts = [&input[..first], &input[first..second], &input[second..]];
            assert_eq!(
                stream(&redactor, &parts, true),
                expected,
                "{first} {second}"
            );
        }
    }
    let bytes: Vec<&[u8]> = input.chunks(1).collect();
    assert_eq!(stream(&redactor, &bytes, true), expected);
}

#[test]
fn flush_holds_back_only_what_could_be_a_secret() {
    let redactor = redactor(&[("GITHUB_TOKEN", "s3cr3t-value-1")]);
    let output = Shared::default();
    let mut writer = RedactingWriter::new(&redactor, output.clone());
    // (written, what the output holds after a flush)
    let table: [(&str, &str); 5] = [
        ("one line\n", "one line\n"),
        // A shape may start anywhere in an unfinished line of up to 512 bytes.
        ("partial s3cr3t-va", "one line\n"),
        ("lue-1 rest", "one line\n"),
        (
            " more\n",
            "one line\npartial [REDACTED:GITHUB_TOKEN] rest more\n",
        ),
        (
            "ghp_",
            "one line\npartial [REDACTED:GITHUB_TOKEN] rest more\n",
        ),
    ];
    for (written, expected) in table {
        writer.write_all(written.as_bytes()).unwrap();
        writer.flush().unwrap();
        assert_eq!(
            String::from_utf8_lossy(&output.bytes()),
            expected,
            "{written}"
        );
    }
    writer.finish().unwrap();
    assert!(output.bytes().ends_with(b"more\nghp_"));
}

#[test]
fn a_private_key_across_many_writes_never_shows() {
    let redactor = redactor(&[]);
    let body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n".repeat(40);
    let input = format!(
        "log\n-----BEGIN RSA PRIVATE KEY-----\n{body}-----END RSA PRIVATE KEY-----\nafter\n"
    );
    for size in [1, 7, 64, 1000] {
        let output = Shared::default();
        let mut writer = RedactingWriter::new(&redactor, output.clone());
        for part in input.as_bytes().chunks(size) {
            writer.write_all(part).unwrap();
            writer.flush().unwrap();
            let shown = output.bytes();
            for hidden in [&b"MIIE"[..], b"BEGI", b"END "] {
                assert!(!shown.windows(4).any(|window| window == hidden), "{size}");
            }
        }
        writer.finish().unwrap();
        assert_eq!(
            output.bytes(),
            b"log\n[REDACTED:private-key]\nafter\n",
            "{size}"
        );
    }
}

#[test]
fn an_unterminated_private_key_is_redacted_to_the_end() {
    let redactor = redactor(&[]);
    let input = format!(
        "x\n-----BEGIN PRIVATE KEY-----\n{}",
        "QUJD\n".repeat(100_000)
    );
    let parts: Vec<&[u8]> = input.as_bytes().chunks(4096).collect();
    assert_eq!(
        stream(&redactor, &parts, false),
        b"x\n[REDACTED:private-key]"
    );
}

#[test]
fn dropping_the_writer_writes_the_rest() {
    let redactor = redactor(&[("GITHUB_TOKEN", "s3cr3t-value-1")]);
    let output = Shared::default();
    {
        let mut writer = RedactingWriter::new(&redactor, output.clone());
        writer.write_all(b"end s3cr3t-value-1").unwrap();
    }
    assert_eq!(output.bytes(), b"end [REDACTED:GITHUB_TOKEN]");
}

#[test]
fn non_text_around_a_secret() {
    let redactor = redactor(&[("GITHUB_TOKEN", "s3cr3t-value-1")]);
    let input: &[u8] = b"\xff\x00\xfes3cr3t-value-1\x80\n\xc3";
    for split in 0..=input.len() {
        let (first, second) = input.split_at(split);
        assert_eq!(
            stream(&redactor, &[first, second], true),
            b"\xff\x00\xfe[REDACTED:GITHUB_TOKEN]\x80\n\xc3"
        );
    }
}

#[test]
fn a_large_clean_stream_passes_through_unchanged_in_bounded_memory() {
    let redactor = redactor(&[("GITHUB_TOKEN", "s3cr3t-value-1")]);
    let line = b"   Compiling serde v1.0.229 (sk- task- AKIA ghp_ Authorization: x)\n";
    let mut input = line.repeat(8 * 1024 * 1024 / line.len());
    // A long stretch with no line break in it.
    input.extend(std::iter::repeat_n(b'x', 1024 * 1024));
    for size in [65_536, 100_000, 4093] {
        let mut writer = RedactingWriter::new(&redactor, Vec::with_capacity(input.len()));
        let mut most = 0;
        for part in input.chunks(size) {
            writer.write_all(part).unwrap();
            most = most.max(writer.stream.buffer.len());
        }
        let output = writer.finish().unwrap();
        assert!(output == input, "{size}");
        assert!(most <= PASS_AT + MAX_TAKE + 2 * 512, "{size}: {most}");
    }
}

#[test]
fn a_run_of_overlapping_secrets_stays_bounded_and_hidden() {
    let redactor = redactor(&[("A_TOKEN", "abababab"), ("B_TOKEN", "babababa")]);
    let input = b"ab".repeat(1024 * 1024);
    let mut writer = RedactingWriter::new(&redactor, Vec::new());
    let mut most = 0;
    for part in input.chunks(65_536) {
        writer.write_all(part).unwrap();
        most = most.max(writer.stream.buffer.len());
    }
    let output = writer.finish().unwrap();
    assert!(most <= MAX_HOLD + MAX_TAKE + PASS_AT + 2 * 512, "{most}");
    let text = String::from_utf8(output).unwrap();
    let left = text
        .replace("[REDACTED:A_TOKEN]", "")
        .replace("[REDACTED:B_TOKEN]", "");
    assert!(left.len() <= 2, "{}", &left[..left.len().min(80)]);
}

#[test]
fn debug_shows_no_bytes() {
    let redactor = redactor(&[("GITHUB_TOKEN", "s3cr3t-value-1")]);
    let mut writer = RedactingWriter::new(&redactor, Vec::new());
    writer.write_all(b"s3cr3t-val").unwrap();
    let shown = format!("{writer:?}");
    assert!(!shown.contains("s3cr3t"), "{shown}");
    assert!(shown.contains("held_back: 10"), "{shown}");
}

/// A small linear congruential generator: the same "random" inputs on every run.
struct Sequence(u64);

impl Sequence {
    fn below(&mut self, bound: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        usize::try_from(self.0 >> 33).unwrap() % bound
    }
}

#[test]
fn streams_of_mixed_pieces_equal_the_whole_redacted() {
    let redactor = redactor(&[
        ("GITHUB_TOKEN", "s3cr3t-value-1"),
        ("MULTI_SECRET", "multi line\nvalue here"),
        ("DB_PASSWORD", "p@ss w0rd!"),
    ]);
    let token = github_token();
    let pieces: Vec<Vec<u8>> = [
        "s3cr3t-value-1",
        "s3cr3t-",
        "value-1",
        "multi line\nvalue here",
        "p%40ss%20w0rd%21",
        &token,
        &token[..20],
        "Authorization: Bearer ",
        "abcdefghijkl",
        "-----BEGIN PRIVATE KEY-----",
        "-----END PRIVATE KEY-----",
        "MIIE",
        "\n",
        "\n",
        " ",
        "word",
        "_",
        "sk-",
    ]
    .iter()
    .map(|piece| piece.as_bytes().to_vec())
    .chain([b"\xff\x80".to_vec(), vec![b'x'; 700]])
    .collect();
    let mut sequence = Sequence(7);
    for round in 0..300 {
        let mut input = Vec::new();
        for _ in 0..sequence.below(40) {
            input.extend_from_slice(&pieces[sequence.below(pieces.len())]);
        }
        let expected = redactor.redact(&input).into_owned();
        let mut parts = Vec::new();
        let mut rest = input.as_slice();
        while !rest.is_empty() {
            let (part, after) = rest.split_at(sequence.below(rest.len().min(90)) + 1);
            parts.push(part);
            rest = after;
        }
        let flush_each = round % 2 == 0;
        assert_eq!(
            stream(&redactor, &parts, flush_each)
                .escape_ascii()
                .to_string(),
            expected.escape_ascii().to_string(),
            "round {round}"
        );
        let text = String::from_utf8_lossy(&expected);
        // Environment values go wherever they are; a token glued to a word is left alone.
        for secret in ["s3cr3t-value-1", "value here", "w0rd"] {
            assert!(!text.contains(secret), "round {round}: {text}");
        }
    }
}
