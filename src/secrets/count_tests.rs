use super::*;

fn redactor() -> Redactor {
    Redactor::new([("API_TOKEN".to_string(), "s3cr3t-value-0042".to_string())]).unwrap()
}

/// A reader that gives out `step` bytes at a time.
struct Trickle<'a> {
    bytes: &'a [u8],
    step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let take = self.step.min(out.len()).min(self.bytes.len());
        out[..take].copy_from_slice(&self.bytes[..take]);
        self.bytes = &self.bytes[take..];
        Ok(take)
    }
}

fn counted_at_once(redactor: &Redactor, input: &[u8]) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for finding in redactor.findings(input) {
        *counts.entry(finding.what).or_default() += 1;
    }
    counts
}

#[test]
fn a_stream_counts_what_the_whole_input_holds() {
    let redactor = redactor();
    let token = format!("ghp_{}", "aZ09".repeat(9));
    let filler = "x".repeat(70_000);
    // (what, input): secrets at the start, across chunk and pass boundaries, at the end.
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("nothing", b"plain text\n".to_vec()),
        ("empty", Vec::new()),
        ("a variable", b"key = s3cr3t-value-0042\n".to_vec()),
        (
            "across a chunk",
            format!("{}{token}\n{}s3cr3t-value-0042", &filler[..65_530], &filler[..100])
                .into_bytes(),
        ),
        (
            "no line breaks",
            format!("{filler}{token} {filler} s3cr3t-value-0042 {filler}{token}").into_bytes(),
        ),
        (
            "a private key block",
            format!("{filler}\n-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----\n{token}")
                .into_bytes(),
        ),
    ];
    for (what, input) in cases {
        let expected = counted_at_once(&redactor, &input);
        for step in [1, 7, 4096, 1 << 20] {
            if step == 1 && input.len() > 1000 {
                continue;
            }
            let counted = redactor
                .count_in(Trickle {
                    bytes: &input,
                    step,
                })
                .unwrap();
            assert_eq!(counted, expected, "{what}, {step} bytes at a time");
        }
    }
}

#[test]
fn many_mebibytes_of_zeros_are_read_through() {
    // Not timed: only that it ends with nothing found (memory is measured by
    // scripts/bench/rss-sparse.sh).
    let counted = redactor()
        .count_in(io::repeat(0).take(64 * 1024 * 1024))
        .unwrap();
    assert!(counted.is_empty());
}
