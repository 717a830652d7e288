//! Feeds arbitrary bytes to the built-in parsers: byte 0 picks the parser, byte 1 the working
//! directory and the line-cut length, the rest is the check's output. Also runs `auto` ranking
//! and the line assembler with a small limit and odd chunk sizes.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use refine_loop::parse::{Catalogue, LineAssembler, ParseContext, clean_line, parse_bytes, rank};

const CWDS: &[&str] = &["", "sub", "crates/core", "a/b/c", "..", "./x", "/abs"];

fn catalogue() -> &'static Catalogue {
    static CATALOGUE: OnceLock<Catalogue> = OnceLock::new();
    CATALOGUE.get_or_init(|| Catalogue::built_in().expect("built-in parsers compile"))
}

fuzz_target!(|data: &[u8]| {
    let [pick, knobs, rest @ ..] = data else {
        return;
    };
    let catalogue = catalogue();
    let names: Vec<&str> = catalogue.names().collect();
    let name = names[usize::from(*pick) % names.len()];
    let parser = catalogue.get(name).expect("listed name");
    let context = ParseContext {
        target: PathBuf::from("/work/target"),
        cwd_relative: CWDS[usize::from(knobs & 7) % CWDS.len()].to_string(),
    };

    let _ = parse_bytes(parser, &context, rest);

    let mut reader = rest;
    let _ = rank(catalogue, &context, &mut reader);

    // The assembler with a tiny limit and chunks of odd sizes.
    let max_line = usize::from(knobs >> 3) + 1;
    let mut assembler = LineAssembler::new(max_line);
    let mut on_line = |line: &str| {
        let _ = clean_line(line.as_bytes());
    };
    for chunk in rest.chunks(max_line * 2 + 1) {
        assembler.push(chunk, &mut on_line);
    }
    assembler.finish(&mut on_line);
});
