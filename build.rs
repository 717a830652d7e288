//! Embeds every parser definition in `gate-parsers/` into the binary: writes the list the
//! catalogue includes, so that adding a definition file is all it takes.

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=gate-parsers");
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let dir = manifest.join("gate-parsers");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("gate-parsers/ is readable")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.extension()
                .is_some_and(|ext| ext == "toml" || ext == "json")
        })
        .collect();
    files.sort();
    let mut out = String::from("&[\n");
    for path in files {
        let name = path
            .file_name()
            .expect("a file")
            .to_string_lossy()
            .into_owned();
        writeln!(
            out,
            "    ({name:?}, include_str!({:?})),",
            path.display().to_string()
        )
        .expect("writing to a String");
    }
    out.push(']');
    let target =
        PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it")).join("built_in_parsers.rs");
    std::fs::write(target, out).expect("OUT_DIR is writable");
}
