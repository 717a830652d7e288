//! The README's examples are real: its parser definition compiles.

use std::path::Path;

use refine_loop::parse::Catalogue;

fn toml_block_after(readme: &str, marker: &str) -> String {
    let start = readme.find(marker).expect("marker in README");
    let rest = &readme[start..];
    let open = rest.find("```toml\n").expect("a toml block") + "```toml\n".len();
    let close = rest[open..].find("```").expect("closed block");
    rest[open..open + close].to_string()
}

#[test]
fn the_readme_parser_definition_compiles() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let definition = toml_block_after(&readme, "A definition of your own:");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("my-linter.toml");
    std::fs::write(&path, definition).unwrap();
    let mut catalogue = Catalogue::built_in().unwrap();
    let names = catalogue.add_file(&path, false).unwrap();
    assert_eq!(names, ["my-linter"]);
}
