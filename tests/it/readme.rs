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

#[test]
fn the_ready_made_delegates_load() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("templates/delegates");
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let delegate = std::fs::read_to_string(entry.path()).unwrap();
        let repo = tempfile::tempdir().unwrap();
        std::fs::write(
            repo.path().join("refine-loop.toml"),
            format!("[[gate.check]]\nname = \"g\"\nrun = \"true\"\n\n{delegate}"),
        )
        .unwrap();
        let settings = refine_loop::config::load(&refine_loop::config::Overrides {
            target: Some(repo.path().to_path_buf()),
            ..Default::default()
        })
        .unwrap_or_else(|e| panic!("{:?}: {e}", entry.path()));
        assert_eq!(settings.delegates.len(), 1, "{:?}", entry.path());
        count += 1;
    }
    assert_eq!(count, 11);
}

#[test]
fn the_readme_exit_codes_are_the_binarys() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let start = readme
        .find("## Exit codes\n\n")
        .expect("an exit code section")
        + 15;
    let table = &readme[start..];
    let end = table.find("\n\n").map_or(table.len(), |end| end + 1);
    assert_eq!(
        &table[..end],
        refine_loop::exit_code::markdown_table(),
        "the README's exit codes differ from src/exit_code.rs (TABLE)"
    );
}
