//! The README is the landing page: short, and every link in it leads to a file of the
//! repository (the reference is the book in docs/, checked in `book.rs`).

use std::path::Path;

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap()
}

#[test]
fn the_readme_is_a_landing_page_of_at_most_200_lines() {
    let lines = readme().lines().count();
    assert!(
        lines <= 200,
        "README.md has {lines} lines: the reference belongs in the book (docs/src/)"
    );
}

#[test]
fn every_link_in_the_readme_leads_to_a_file() {
    let text = readme();
    let link = regex::Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let mut checked = 0;
    for found in link.captures_iter(&text) {
        let target = &found[1];
        if target.starts_with("https://") || target.starts_with('#') {
            continue;
        }
        let path = target.split('#').next().unwrap_or_default();
        assert!(
            Path::new(env!("CARGO_MANIFEST_DIR")).join(path).exists(),
            "README.md links to {target}, which is not a file of the repository"
        );
        checked += 1;
    }
    assert!(checked >= 5, "only {checked} links into the repository");
}
