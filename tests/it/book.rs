//! The book in docs/: it builds with the pinned mdbook (installed by scripts/test), every link
//! between its pages and every `#anchor` leads somewhere, and its examples are real: the parser
//! definition loads, the exit codes are the binary's, the ready-made delegates it lists load.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::process::Command;

use refine_loop::parse::Catalogue;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A page of the book's sources.
fn page(name: &str) -> String {
    std::fs::read_to_string(root().join("docs/src").join(name)).unwrap()
}

/// Builds the book into a new temporary folder; fails on an error or warning from mdbook (an
/// `{{#include}}` that finds no file is only logged, and the build succeeds).
fn build_book() -> tempfile::TempDir {
    let out = tempfile::tempdir().unwrap();
    let output = Command::new(crate::support::tool("mdbook"))
        .args(["build", "docs", "--dest-dir"])
        .arg(out.path())
        .current_dir(root())
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "mdbook build docs failed:\n{log}");
    let complaints: Vec<&str> = log
        .lines()
        .filter(|line| {
            let line = line.trim_start();
            line.starts_with("WARN") || line.starts_with("ERROR")
        })
        .collect();
    assert!(complaints.is_empty(), "{complaints:#?}");
    out
}

/// Every file below `dir`, as paths relative to it.
fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                found.push(path.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    found.sort();
    found
}

/// The values of `attribute="…"` in an HTML page, with `&amp;` decoded.
fn attribute_values(html: &str, attribute: &str) -> Vec<String> {
    let pattern = regex::Regex::new(&format!(r#"\s{attribute}="([^"]*)""#)).unwrap();
    pattern
        .captures_iter(html)
        .map(|found| found[1].replace("&amp;", "&"))
        .collect()
}

/// `link` (a path relative to the page `from`, both relative to the book) as a path relative
/// to the book, or `None` when it climbs out of it.
fn resolve(from: &Path, link: &str) -> Option<PathBuf> {
    let mut resolved = PathBuf::new();
    let joined = from.parent().unwrap_or(Path::new("")).join(link);
    for part in joined.components() {
        match part {
            Component::Normal(name) => resolved.push(name),
            Component::ParentDir => {
                if !resolved.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(resolved)
}

/// The links of every HTML page of the built book (`book`) that lead nowhere: a file that is
/// not there, or an `#anchor` its page does not have. Links to other sites are not followed.
/// Returns them with how many links were checked.
fn broken_links(book: &Path) -> (Vec<String>, usize) {
    let pages: BTreeMap<PathBuf, String> = files_below(book)
        .into_iter()
        .filter(|path| path.extension().is_some_and(|e| e == "html"))
        .map(|path| {
            let html = std::fs::read_to_string(book.join(&path)).unwrap();
            (path, html)
        })
        .collect();
    let ids: BTreeMap<&PathBuf, BTreeSet<String>> = pages
        .iter()
        .map(|(path, html)| (path, attribute_values(html, "id").into_iter().collect()))
        .collect();
    let external = regex::Regex::new(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|//)").unwrap();
    let (mut broken, mut checked) = (Vec::new(), 0);
    for (path, html) in &pages {
        // The not-found page's `<base href="/">` (mdbook's `site-url`) is the book's root,
        // where that page is too; it is not a link.
        let base = html.contains(r#"<base href="/">"#);
        let mut links = attribute_values(html, "href");
        if base {
            links.retain(|link| link != "/");
        }
        links.extend(attribute_values(html, "src"));
        for link in links.iter().filter(|link| !external.is_match(link)) {
            checked += 1;
            let (file, anchor) = link.split_once('#').unwrap_or((link, ""));
            let target = match file {
                "" => Some(path.clone()),
                _ => resolve(path, file).map(|t| match book.join(&t).is_dir() {
                    true => t.join("index.html"),
                    false => t,
                }),
            };
            let fine = target.is_some_and(|target| {
                book.join(&target).is_file()
                    && (anchor.is_empty()
                        || ids.get(&target).is_some_and(|ids| ids.contains(anchor)))
            });
            if !fine {
                broken.push(format!("{}: {link}", path.display()));
            }
        }
    }
    (broken, checked)
}

#[test]
fn the_book_builds_and_every_internal_link_resolves() {
    let book = build_book();
    let built = files_below(book.path());
    // Every page of the sources is in the book (SUMMARY.md lists it), and every include was
    // replaced by the file it names.
    for source in files_below(&root().join("docs/src")) {
        if source.extension().is_some_and(|e| e == "md") && source != Path::new("SUMMARY.md") {
            let html = source.with_extension("html");
            assert!(
                built.contains(&html),
                "docs/src/{} is not in the book: list it in docs/src/SUMMARY.md",
                source.display()
            );
            let text = std::fs::read_to_string(book.path().join(&html)).unwrap();
            assert!(
                !text.contains("{{#"),
                "{}: an include left as it was",
                html.display()
            );
        }
    }
    let (broken, checked) = broken_links(book.path());
    let pages = built
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "html"));
    eprintln!(
        "the book: {} HTML pages, {checked} links and anchors checked, {} lead nowhere",
        pages.count(),
        broken.len()
    );
    assert!(
        checked > 500,
        "only {checked} links: is the checker reading the pages?"
    );
    assert!(
        broken.is_empty(),
        "{} of {checked} links in the book lead nowhere:\n{}",
        broken.len(),
        broken.join("\n")
    );
}

#[test]
fn the_link_checker_finds_a_missing_page_and_a_missing_anchor() {
    let book = tempfile::tempdir().unwrap();
    std::fs::create_dir(book.path().join("sub")).unwrap();
    std::fs::write(
        book.path().join("index.html"),
        r##"<h1 id="top">x</h1><a href="sub/page.html#here">fine</a><a href="#top">fine</a>
           <a href="https://example.com/nowhere.html">not followed</a><img src="sub/">
           <a href="sub/page.html#gone">anchor</a><a href="missing.html">page</a>
           <a href="../outside.html">outside</a>"##,
    )
    .unwrap();
    std::fs::write(book.path().join("sub/index.html"), "").unwrap();
    std::fs::write(
        book.path().join("sub/page.html"),
        r##"<p id="here"><a href="../index.html#top">up</a>"##,
    )
    .unwrap();
    let (broken, checked) = broken_links(book.path());
    assert_eq!(
        broken,
        [
            "index.html: sub/page.html#gone",
            "index.html: missing.html",
            "index.html: ../outside.html"
        ]
    );
    assert_eq!(checked, 7);
}

#[test]
fn the_books_parser_definition_loads() {
    let text = page("writing-parsers.md");
    let start = text.find("A definition of your own:").expect("the marker");
    let rest = &text[start..];
    let open = rest.find("```toml\n").expect("a toml block") + "```toml\n".len();
    let close = rest[open..].find("```").expect("a closed block");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("my-linter.toml");
    std::fs::write(&path, &rest[open..open + close]).unwrap();
    let mut catalogue = Catalogue::built_in().unwrap();
    let names = catalogue.add_file(&path, false).unwrap();
    assert_eq!(names, ["my-linter"]);
}

/// The integrity page's example entry loads beside the built-in ones, and its table lists every
/// built-in entry.
#[test]
fn the_books_integrity_entry_loads_and_every_entry_is_listed() {
    let text = page("integrity.md");
    let start = text.find("name = \"mytool\"").expect("the example entry");
    let close = text[start..].find("```").expect("a closed block");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("mytool.toml"), &text[start..start + close]).unwrap();
    let catalogue = refine_loop::integrity::Catalogue::load(&[dir.path().to_path_buf()]).unwrap();
    assert!(catalogue.get("mytool").is_some());
    let built_in = refine_loop::integrity::Catalogue::built_in().unwrap();
    for entry in built_in.entries() {
        assert!(
            text.contains(&format!("| `{}` |", entry.name)),
            "docs/src/integrity.md does not list the entry {}",
            entry.name
        );
    }
}

#[test]
fn the_books_exit_codes_are_the_binarys() {
    let text = page("exit-codes.md");
    let start = text
        .find("| code | meaning |")
        .expect("the exit code table");
    let table = &text[start..];
    let end = table.find("\n\n").map_or(table.len(), |end| end + 1);
    assert_eq!(
        &table[..end],
        refine_loop::exit_code::markdown_table(),
        "docs/src/exit-codes.md differs from src/exit_code.rs (TABLE)"
    );
}

#[test]
fn the_ready_made_delegates_load_and_the_book_lists_each() {
    let dir = root().join("templates/delegates");
    let listed = page("delegates.md");
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
        let name = entry.file_name().to_string_lossy().into_owned();
        assert!(
            listed.contains(&format!("| `{name}` |")),
            "docs/src/delegates.md does not list templates/delegates/{name}"
        );
        count += 1;
    }
    assert_eq!(count, 11);
}
