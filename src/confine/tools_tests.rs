use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::*;

/// A home with cargo, rustup and npm folders, a tree with dependency folders, and a folder of
/// programs in a temp folder; each made as named.
fn layout(root: &Path) {
    for folder in [
        "home/.cargo/bin",
        "home/.cargo/registry",
        "home/.rustup/toolchains/stable/bin",
        "home/.npm/_npx",
        "home/.cache/pre-commit",
        "tmp/tools/bin",
        "tree/node_modules/.bin",
        "tree/node_modules/.cache",
        "tree/web/node_modules/pkg",
        "tree/.venv/bin",
        "tree/envs/py311/bin",
        "tree/target/debug",
        "tree/bin",
        "tree/.tools/bin",
    ] {
        std::fs::create_dir_all(root.join(folder)).unwrap();
    }
    std::fs::write(root.join("tree/.venv/pyvenv.cfg"), "").unwrap();
    std::fs::write(root.join("tree/envs/py311/pyvenv.cfg"), "").unwrap();
}

fn found(root: &Path, writable: &[&str], variables: &[(&str, String)], pre_commit: bool) -> Tools {
    let variables: HashMap<String, String> = variables
        .iter()
        .map(|(name, value)| (name.to_string(), value.clone()))
        .collect();
    let lookup = move |name: &str| variables.get(name).cloned();
    let tree = root.join("tree");
    let ignored: Vec<PathBuf> = [
        "node_modules",
        "web/node_modules",
        ".venv",
        "envs",
        "target",
        ".tools",
    ]
    .iter()
    .map(|folder| tree.join(folder))
    .collect();
    let writable: Vec<PathBuf> = writable.iter().map(|folder| root.join(folder)).collect();
    let canonical_tree = tree.canonicalize().unwrap();
    let is_ignored = move |path: &Path| {
        path.strip_prefix(&canonical_tree)
            .is_ok_and(|rest| rest.starts_with(".tools"))
    };
    find(&Places {
        tree: &tree,
        ignored: &ignored,
        writable: &writable,
        lookup: &lookup,
        is_ignored: &is_ignored,
        pre_commit,
    })
}

fn shown(root: &Path, paths: &[PathBuf]) -> Vec<String> {
    let root = root.canonicalize().unwrap();
    paths
        .iter()
        .map(|path| path.strip_prefix(&root).unwrap().display().to_string())
        .collect()
}

/// What a case is about, the writable folders, whether the gate runs pre-commit, the read-only
/// folders and the caches expected.
type Case<'a> = (&'a str, Vec<&'a str>, bool, Vec<&'a str>, Vec<&'a str>);

#[test]
fn the_tools_are_the_installed_folders_search_paths_and_toolchains_in_writable_places() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    layout(root);
    let home = root.join("home").display().to_string();
    let path = format!(
        "{r}/tmp/tools/bin:{r}/home/.cargo/bin:{r}/tree/bin:{r}/tree/.tools/bin:/usr/bin:relative",
        r = root.display()
    );
    let table: Vec<Case> = vec![
        (
            "the defaults: the tree, the temp folder and the home's caches",
            vec![
                "tree",
                "tmp",
                "home/.cargo",
                "home/.rustup",
                "home/.npm",
                "home/.cache",
            ],
            false,
            vec![
                "home/.cargo/bin",
                "home/.npm/_npx",
                "home/.rustup/toolchains",
                "tmp/tools/bin",
                "tree/.tools/bin",
                "tree/.venv",
                "tree/envs",
                "tree/node_modules",
                "tree/web/node_modules",
            ],
            vec![
                "tree/node_modules/.cache",
                "tree/node_modules/.vite",
                "tree/web/node_modules/.cache",
                "tree/web/node_modules/.vite",
            ],
        ),
        (
            "pre-commit's environments when the gate runs it",
            vec!["tree", "home/.cache"],
            true,
            vec![
                "home/.cache/pre-commit",
                "tree/.tools/bin",
                "tree/.venv",
                "tree/envs",
                "tree/node_modules",
                "tree/web/node_modules",
            ],
            vec![
                "tree/node_modules/.cache",
                "tree/node_modules/.vite",
                "tree/web/node_modules/.cache",
                "tree/web/node_modules/.vite",
            ],
        ),
        (
            "a folder no delegate may write needs no seal",
            vec!["tree"],
            false,
            vec![
                "tree/.tools/bin",
                "tree/.venv",
                "tree/envs",
                "tree/node_modules",
                "tree/web/node_modules",
            ],
            vec![
                "tree/node_modules/.cache",
                "tree/node_modules/.vite",
                "tree/web/node_modules/.cache",
                "tree/web/node_modules/.vite",
            ],
        ),
        (
            "a tool listed as writable itself, or a folder inside one, stays writable",
            vec![
                "tree",
                "tree/node_modules",
                "tree/.venv/bin",
                "home/.cargo/bin",
            ],
            false,
            vec!["tree/.tools/bin", "tree/envs", "tree/web/node_modules"],
            vec![
                "tree/web/node_modules/.cache",
                "tree/web/node_modules/.vite",
            ],
        ),
        (
            "the temp folder itself on PATH is no tool",
            vec!["tmp/tools/bin"],
            false,
            vec![],
            vec![],
        ),
    ];
    for (what, writable, pre_commit, read_only, caches) in table {
        let got = found(
            root,
            &writable,
            &[("HOME", home.clone()), ("PATH", path.clone())],
            pre_commit,
        );
        assert_eq!(shown(root, &got.read_only), read_only, "{what}");
        assert_eq!(shown(root, &got.caches), caches, "{what}");
    }
}

#[test]
fn the_variables_name_the_toolchains_where_they_are_set() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    layout(root);
    std::fs::create_dir_all(root.join("opt/cargo/bin")).unwrap();
    std::fs::create_dir_all(root.join("opt/pre-commit")).unwrap();
    let at = |folder: &str| root.join(folder).display().to_string();
    let got = found(
        root,
        &["opt", "home"],
        &[
            ("HOME", at("home")),
            ("CARGO_HOME", at("opt/cargo")),
            ("PRE_COMMIT_HOME", at("opt/pre-commit")),
        ],
        true,
    );
    assert_eq!(
        shown(root, &got.read_only),
        [
            "home/.npm/_npx",
            "home/.rustup/toolchains",
            "opt/cargo/bin",
            "opt/pre-commit"
        ]
    );
}

#[test]
fn an_ignored_folder_holds_tools_by_its_name_or_an_environment() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    layout(root);
    for (folder, installed) in [
        ("tree/node_modules", true),
        ("tree/.venv", true),
        ("tree/envs", true),
        ("tree/target", false),
        ("tree/bin", false),
        ("tree/absent", false),
    ] {
        assert_eq!(is_installed(&root.join(folder)), installed, "{folder}");
    }
}

#[test]
fn the_environments_tox_and_nox_write_on_every_run_are_private_where_they_can_be() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    for folder in [".tox/py312/bin", ".nox/tests/bin", "node_modules/.bin"] {
        std::fs::create_dir_all(tree.join(folder)).unwrap();
    }
    let ignored: Vec<PathBuf> = [".tox", ".nox", "node_modules"]
        .iter()
        .map(|folder| tree.join(folder))
        .collect();
    let got = find(&Places {
        tree: &tree,
        ignored: &ignored,
        writable: &[dir.path().to_path_buf()],
        lookup: &|_| None,
        is_ignored: &|_| false,
        pre_commit: false,
    });
    let root = dir.path();
    assert_eq!(
        shown(root, &got.read_only),
        ["tree/.nox", "tree/.tox", "tree/node_modules"]
    );
    assert_eq!(shown(root, &got.private), ["tree/.nox", "tree/.tox"]);
}

#[test]
fn search_paths_are_settled_where_a_delegate_could_change_them() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    layout(&root);
    std::fs::create_dir_all(root.join("tmp/tools/1.2/bin")).unwrap();
    std::fs::create_dir_all(root.join("opt/bin")).unwrap();
    std::os::unix::fs::symlink(root.join("tmp/tools/1.2"), root.join("tmp/tools/current")).unwrap();
    std::os::unix::fs::symlink(root.join("tmp"), root.join("opt/tmp-link")).unwrap();
    let at = |path: &str| root.join(path).display().to_string();
    // (PATH, what it is settled to: None when it stays as it is)
    let cases: [(String, Option<String>); 7] = [
        (format!("{}:/usr/bin", at("opt/bin")), None),
        (
            format!("{}:/usr/bin", at("tmp/tools/current/bin")),
            Some(format!("{}:/usr/bin", at("tmp/tools/1.2/bin"))),
        ),
        // Not there yet, in a folder delegates may write: left out.
        (
            format!("{}:/usr/bin", at("tmp/later/bin")),
            Some("/usr/bin".to_string()),
        ),
        // The same, reached through a link outside it.
        (
            format!("/usr/bin:{}", at("opt/tmp-link/later")),
            Some("/usr/bin".to_string()),
        ),
        // Not there yet, but in no folder delegates may write, or in the tree: kept.
        (format!("{}:/usr/bin", at("opt/later/bin")), None),
        (format!("{}:/usr/bin", at("tree/node_modules/later")), None),
        // Relative and empty entries are the tree's own.
        ("node_modules/.bin::/usr/bin".to_string(), None),
    ];
    for (path, settled) in cases {
        let value = path.clone();
        let lookup = move |name: &str| (name == "PATH").then(|| value.clone());
        let got = settle_search_paths(&root.join("tree"), &[root.join("tmp")], &lookup);
        let want: Vec<(String, String)> = settled
            .into_iter()
            .map(|settled| ("PATH".to_string(), settled))
            .collect();
        assert_eq!(got, want, "{path}");
    }
    let lookup = |name: &str| (name == "PYTHONPATH").then(|| at("tmp/tools/current/lib"));
    std::fs::create_dir_all(root.join("tmp/tools/1.2/lib")).unwrap();
    assert_eq!(
        settle_search_paths(&root.join("tree"), &[root.join("tmp")], &lookup),
        [("PYTHONPATH".to_string(), at("tmp/tools/1.2/lib"))]
    );
}
