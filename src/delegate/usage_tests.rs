use super::*;

/// The fixtures in `tests/fixtures/usage/`: `<name>.out` is what the tool prints (see the
/// folder's README for the source of each shape), `<name>.ok.json` what its reader makes of it.
const FIXTURES: &[(&str, &str)] = &[
    ("claude-json", "claude-json"),
    ("claude-stream-json", "claude-stream-json"),
    ("codex-json", "codex-json"),
    ("aider", "aider"),
    ("aider-no-cost", "aider"),
];

fn fixture_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/usage")
}

/// Reads `bytes` with `reader`, fed in chunks of `chunk` bytes (as a pipe delivers them).
fn read(reader: &str, bytes: &[u8], chunk: usize) -> (Option<TokenUsage>, Option<String>) {
    let mut tally = UsageTally::new(UsageReader::named(reader).unwrap());
    for part in bytes.chunks(chunk) {
        tally.push(part);
    }
    tally.finish()
}

#[test]
fn each_reader_reads_its_tools_documented_output() {
    for (name, reader) in FIXTURES {
        let dir = fixture_dir();
        let out = std::fs::read(dir.join(format!("{name}.out"))).unwrap();
        let (usage, answer) = read(reader, &out, 1 << 20);
        let got = serde_json::to_string_pretty(&serde_json::json!({
            "usage": usage,
            "answer": answer,
        }))
        .unwrap()
            + "\n";
        let golden = dir.join(format!("{name}.ok.json"));
        if std::env::var_os("UPDATE_FIXTURES").is_some() {
            std::fs::write(&golden, &got).unwrap();
        }
        let want = std::fs::read_to_string(&golden).unwrap_or_default();
        assert_eq!(
            got, want,
            "{name}: its reader's result differs from {golden:?}"
        );
        // A pipe may cut a line anywhere: the result is the same.
        assert_eq!(
            read(reader, &out, 7),
            (usage, answer),
            "{name} in small chunks"
        );
    }
}

#[test]
fn the_figures_each_reader_takes() {
    let dir = fixture_dir();
    let claude = read(
        "claude-json",
        &std::fs::read(dir.join("claude-json.out")).unwrap(),
        64,
    );
    let usage = claude.0.unwrap();
    // Cache reads and writes are tokens in too: Claude counts them apart from input_tokens.
    assert_eq!(usage.prompt_tokens, 21 + 9460 + 61203);
    assert_eq!(usage.completion_tokens, 1184);
    assert_eq!(usage.cost_usd, Some(0.0734215));
    assert_eq!(usage.turns, Some(7));
    assert!(claude.1.unwrap().starts_with("I removed the unused import"));

    let codex = read(
        "codex-json",
        &std::fs::read(dir.join("codex-json.out")).unwrap(),
        64,
    );
    let usage = codex.0.unwrap();
    // Each turn.completed holds one turn's figures: they add up.
    assert_eq!(usage.prompt_tokens, 24763 + 25102);
    assert_eq!(usage.cache_read_tokens, Some(24448 + 24832));
    assert_eq!(usage.completion_tokens, 122 + 58);
    assert_eq!((usage.cost_usd, usage.turns), (None, Some(2)));
    assert_eq!(
        codex.1.as_deref(),
        Some("Checked again: no findings remain in src/app.py.")
    );

    let aider = read("aider", &std::fs::read(dir.join("aider.out")).unwrap(), 64);
    let usage = aider.0.unwrap();
    assert_eq!(usage.prompt_tokens, 12_000 + 4_800);
    assert_eq!(usage.completion_tokens, 1_200 + 163);
    // The session's cost, printed last, is the run's (not the sum of the session figures).
    assert_eq!(usage.cost_usd, Some(0.07));
    assert_eq!(usage.turns, Some(2));
    assert_eq!(aider.1, None);
}

#[test]
fn output_a_reader_cannot_read_gives_no_usage() {
    for reader in [
        "claude-json",
        "claude-stream-json",
        "codex-json",
        "aider",
        "none",
    ] {
        let text = b"plain text\n{\"type\":\"result\"\nnot json}\n{\"type\":\"result\"}\n\
            {\"type\":\"turn.completed\"}\nTokens: many sent\n";
        // A line without the figures is no account of them, never zero.
        assert_eq!(read(reader, text, 5).0, None, "{reader}");
        assert_eq!(read(reader, b"", 5), (None, None), "{reader}");
    }
    // `none` reads nothing, even what another reader would.
    let claude = std::fs::read(fixture_dir().join("claude-json.out")).unwrap();
    assert_eq!(read("none", &claude, 64), (None, None));
}

#[test]
fn a_line_over_the_limit_is_skipped_and_the_next_read() {
    let mut tally = UsageTally::new(UsageReader::named("codex-json").unwrap());
    let long = vec![b'x'; MAX_LINE + 10];
    tally.push(&long);
    tally.push(
        b"\n{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":5,\"output_tokens\":2}}\n",
    );
    let (usage, _) = tally.finish();
    assert_eq!(usage.map(|u| u.total_tokens), Some(7));
}

#[test]
fn aider_counts_as_printed() {
    for (text, count) in [
        ("950", 950),
        ("1.2k", 1200),
        ("12k", 12_000),
        ("1.5M", 1_500_000),
    ] {
        assert_eq!(aider_count(text), Some(count), "{text}");
    }
    assert_eq!(aider_count("k"), None);
}

#[test]
fn reader_names_and_their_typos() {
    for name in READERS {
        assert_eq!(UsageReader::named(name).map(UsageReader::name), Some(*name));
    }
    assert_eq!(UsageReader::named("claude"), None);
    assert_eq!(nearest_reader("claude-jsn"), Some("claude-json"));
    assert_eq!(nearest_reader("codex"), Some("codex-json"));
    assert_eq!(nearest_reader("xyz"), None);
}
