//! Embeds the catalogues kept as data into the binary: every parser definition in
//! `gate-parsers/` and every integrity entry in `gate-integrity/`. Writes the lists the
//! catalogues include, so that adding a file is all it takes.

#![allow(
    clippy::disallowed_macros,
    reason = "a build script talks to cargo on stdout"
)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it"));
    embed(
        &manifest.join("gate-parsers"),
        &["toml", "json"],
        &out.join("built_in_parsers.rs"),
    );
    embed(
        &manifest.join("gate-integrity"),
        &["toml"],
        &out.join("built_in_integrity.rs"),
    );
}

/// Writes to `target` a slice of `(file name, contents)` of the files in `dir` with one of
/// `extensions`, in name order.
fn embed(dir: &Path, extensions: &[&str], target: &Path) {
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("{} is readable: {error}", dir.display()))
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.extension()
                .is_some_and(|ext| extensions.iter().any(|wanted| ext == *wanted))
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
    std::fs::write(target, out).expect("OUT_DIR is writable");
}
