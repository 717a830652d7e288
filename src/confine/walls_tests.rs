use std::path::{Path, PathBuf};

use super::*;

/// `root` with: `.git/hooks/`, `.refine-loop/`, `src/lib.rs`, `README.md`, `target/`,
/// `link -> /etc`, and `deep/state/` beside `deep/code/`.
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for folder in [
        ".git/hooks",
        ".refine-loop",
        "src",
        "target",
        "deep/state",
        "deep/code",
    ] {
        std::fs::create_dir_all(root.join(folder)).unwrap();
    }
    std::fs::write(root.join("src/lib.rs"), "").unwrap();
    std::fs::write(root.join("README.md"), "").unwrap();
    std::fs::write(root.join("deep/notes.txt"), "").unwrap();
    std::os::unix::fs::symlink("/etc", root.join("link")).unwrap();
    dir
}

fn names(root: &Path, grants: &[Grant]) -> Vec<String> {
    let root = root.canonicalize().unwrap();
    grants
        .iter()
        .map(|grant| match grant {
            Grant::Beneath(path) => format!("{}/", shown(&root, path)),
            Grant::File(path) => shown(&root, path),
        })
        .collect()
}

fn shown(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .map_or_else(|_| path.display().to_string(), |p| p.display().to_string())
}

/// What a case is about, the sealed paths, the fenced ones, and the grants expected.
type Case<'a> = (&'a str, Vec<PathBuf>, Vec<PathBuf>, Vec<&'a str>);

#[test]
fn a_tree_is_granted_around_what_is_sealed() {
    let dir = tree();
    let root = dir.path();
    let table: Vec<Case> = vec![
        ("nothing sealed: the whole tree", vec![], vec![], vec!["/"]),
        (
            "the git dir and the state dir sealed",
            vec![root.join(".git"), root.join(".refine-loop")],
            vec![],
            vec!["README.md", "deep/", "src/", "target/"],
        ),
        (
            "a state dir deep inside: its folder is split too",
            vec![root.join(".git"), root.join("deep/state")],
            vec![],
            vec![
                ".refine-loop/",
                "README.md",
                "deep/code/",
                "deep/notes.txt",
                "src/",
                "target/",
            ],
        ),
        (
            "a fenced folder is left out like a sealed one",
            vec![root.join(".git")],
            vec![root.join("target")],
            vec![".refine-loop/", "README.md", "deep/", "src/"],
        ),
        (
            "a sealed path that does not exist changes nothing",
            vec![root.join("absent")],
            vec![],
            vec!["/"],
        ),
    ];
    for (what, sealed, fenced, expected) in table {
        let grants = plan(
            &Walls {
                tree: root.to_path_buf(),
                writable: vec![root.to_path_buf()],
                sealed,
                fenced,
                ..Walls::default()
            },
            false,
        );
        let mut got = names(root, &grants);
        got.sort();
        assert_eq!(got, expected, "{what}");
    }
}

#[test]
fn a_link_is_never_followed_nor_granted() {
    let dir = tree();
    let root = dir.path();
    let grants = plan(
        &Walls {
            tree: root.to_path_buf(),
            writable: vec![root.to_path_buf()],
            sealed: vec![root.join(".git")],
            ..Walls::default()
        },
        false,
    );
    assert!(
        grants.iter().all(|grant| match grant {
            Grant::Beneath(path) | Grant::File(path) =>
                path.starts_with(root.canonicalize().unwrap()),
        }),
        "{grants:?}"
    );
}

#[test]
fn writable_folders_inside_sealed_ones_are_dropped_and_fenced_ones_kept() {
    let dir = tree();
    let root = dir.path();
    let grants = plan(
        &Walls {
            tree: root.to_path_buf(),
            writable: vec![root.join(".git/hooks"), root.join("target")],
            sealed: vec![root.join(".git")],
            fenced: vec![root.to_path_buf()],
            ..Walls::default()
        },
        false,
    );
    assert_eq!(names(root, &grants), ["target/"]);
}

#[test]
fn files_are_granted_when_they_exist_and_are_no_folder() {
    let dir = tree();
    let root = dir.path();
    let grants = plan(
        &Walls {
            files: vec![
                root.join("src/lib.rs"),
                root.join("absent.txt"),
                root.join("src"),
            ],
            ..Walls::default()
        },
        false,
    );
    assert_eq!(names(root, &grants), ["src/lib.rs"]);
}

#[test]
fn with_the_seal_bound_the_tree_is_granted_whole() {
    let dir = tree();
    let root = dir.path();
    let walls = Walls {
        tree: root.to_path_buf(),
        writable: vec![root.to_path_buf(), root.join(".git/hooks")],
        sealed: vec![root.join(".git"), root.join(".refine-loop")],
        ..Walls::default()
    };
    // The top itself: a delegate may create, rename and delete there; the read-only binds keep
    // `.git` and the state dir. A writable folder inside a sealed one is still dropped.
    assert_eq!(names(root, &plan(&walls, true)), ["/"]);
    let fenced = Walls {
        fenced: vec![root.join("target")],
        ..walls
    };
    assert_eq!(
        names(root, &plan(&fenced, true)),
        [".git/", ".refine-loop/", "deep/", "src/", "README.md"]
    );
}

/// The gate's tools: with the seal bound they are read-only binds, and the tree that holds them
/// is still granted whole (its top writable); without, the grant goes around them, but for a
/// writable folder inside one (a cache in `node_modules`).
#[test]
fn the_gates_tools_are_granted_around_only_without_a_mount_namespace() {
    let dir = tree();
    let root = dir.path();
    std::fs::create_dir_all(root.join("src/node_modules/.cache")).unwrap();
    let walls = Walls {
        tree: root.to_path_buf(),
        writable: vec![root.to_path_buf(), root.join("src/node_modules/.cache")],
        sealed: vec![root.join(".git")],
        tools: vec![root.join("src/node_modules")],
        ..Walls::default()
    };
    assert_eq!(
        names(root, &plan(&walls, true)),
        ["/", "src/node_modules/.cache/"]
    );
    let mut unbound = names(root, &plan(&walls, false));
    unbound.sort();
    assert_eq!(
        unbound,
        [
            ".refine-loop/",
            "README.md",
            "deep/",
            "src/lib.rs",
            "src/node_modules/.cache/",
            "target/"
        ]
    );
}
