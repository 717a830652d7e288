//! What the source may send over the network, read from the source itself: only `net` talks to
//! ureq; the only POSTs are the http delegate's to its configured endpoint and the sweep's
//! GraphQL queries; the forge is otherwise only read with GET; no GraphQL mutation exists.

use std::path::{Path, PathBuf};

fn sources(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push((path.clone(), std::fs::read_to_string(&path).unwrap()));
        }
    }
    found
}

/// The files (relative to `src/`) whose text matches `pattern`, with how many times.
fn uses(pattern: &str) -> Vec<(String, usize)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let pattern = regex::Regex::new(pattern).unwrap();
    let mut found: Vec<(String, usize)> = sources(&src)
        .into_iter()
        .filter_map(|(path, text)| {
            let count = pattern.find_iter(&text).count();
            let name = path.strip_prefix(&src).unwrap().display().to_string();
            (count > 0).then_some((name, count))
        })
        .collect();
    found.sort();
    found
}

#[test]
fn only_net_sends_and_only_get_and_post_exist() {
    // The HTTP client's request builders are called in net/mod.rs alone, for GET and POST.
    assert_eq!(
        uses(r"agent\s*\.\s*[a-z_]+\s*\("),
        [("net/mod.rs".to_string(), 2)]
    );
    assert_eq!(
        uses(r"agent\s*\.\s*(get|post)\s*\("),
        [("net/mod.rs".to_string(), 2)]
    );
    // ureq itself appears in net alone.
    assert_eq!(
        uses(r"ureq::[A-Za-z_]+")
            .into_iter()
            .map(|(file, _)| file)
            .collect::<Vec<_>>(),
        ["net/mod.rs"]
    );
}

#[test]
fn the_only_posts_are_the_model_endpoint_and_graphql_queries() {
    // net/mod.rs dispatches the variant; the two senders each build one.
    assert_eq!(
        uses(r"Method::Post\("),
        [
            ("delegate/http/mod.rs".to_string(), 1),
            ("net/mod.rs".to_string(), 1),
            ("sweep/github.rs".to_string(), 1)
        ]
    );
    assert!(uses(r"Method::(Put|Patch|Delete|Head)").is_empty());
    // The sweep refuses a document that is not a query, and holds no mutation at all.
    assert!(
        uses(r"(?i)mutation").is_empty(),
        "{:?}",
        uses(r"(?i)mutation")
    );
    let github =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sweep/github.rs"))
            .unwrap();
    assert!(github.contains(r#"if !document.trim_start().starts_with("query")"#));
    assert!(github.contains(r#"pub const PULL_REQUESTS_QUERY: &str = r"query "#));
}
