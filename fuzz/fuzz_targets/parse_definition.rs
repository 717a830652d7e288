//! Compiles arbitrary bytes as a parser definition through `Catalogue::add_file` (as a GitHub
//! problem matcher when they start with `{`, else as TOML); an error is fine, a panic is not. Bytes after the first NUL are an output the compiled parser (if any)
//! then reads, alone and through `auto` ranking.
#![no_main]

use std::cell::RefCell;
use std::io::Write;
use std::path::PathBuf;

use libfuzzer_sys::fuzz_target;
use refine_loop::parse::{Catalogue, ParseContext, parse_bytes, rank};

thread_local! {
    static STATE: RefCell<(Catalogue, tempfile::NamedTempFile, tempfile::NamedTempFile)> =
        RefCell::new((
            Catalogue::built_in().expect("built-in parsers compile"),
            tempfile::Builder::new().suffix(".toml").tempfile().expect("temp file"),
            tempfile::Builder::new().suffix(".json").tempfile().expect("temp file"),
        ));
}

fuzz_target!(|data: &[u8]| {
    let (definition, output) = match data.iter().position(|&b| b == 0) {
        Some(nul) => (&data[..nul], &data[nul + 1..]),
        None => (data, &b"src/a.rs:1:2: error: boom\nok\n"[..]),
    };
    STATE.with(|state| {
        let mut state = state.borrow_mut();
        // Parsers with new names pile up; start afresh now and then to bound memory.
        if state.0.names().count() > 500 {
            state.0 = Catalogue::built_in().expect("built-in parsers compile");
        }
        let (catalogue, toml, json) = &mut *state;
        let is_json = definition.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
        let file = if is_json { json } else { toml };
        let handle = file.as_file_mut();
        handle.set_len(0).expect("truncate");
        std::io::Seek::rewind(handle).expect("rewind");
        handle.write_all(definition).expect("write");
        handle.flush().expect("flush");
        let path = file.path().to_path_buf();
        // `replace`: the result depends on this input only, not on earlier ones.
        let Ok(names) = catalogue.add_file(&path, true) else {
            return;
        };
        let context = ParseContext {
            target: PathBuf::from("/work/target"),
            cwd_relative: "sub".to_string(),
        };
        for name in &names {
            let parser = catalogue.get(name).expect("added name");
            let _ = parse_bytes(parser, &context, output);
        }
        let mut reader = output;
        let _ = rank(catalogue, &context, &mut reader);
    });
});
