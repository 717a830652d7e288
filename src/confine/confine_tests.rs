use std::path::{Path, PathBuf};

use super::*;

#[test]
fn writable_entries_expand() {
    let lookup = |name: &str| match name {
        "HOME" => Some("/home/ci".to_string()),
        "CARGO_HOME" => Some("/opt/cargo".to_string()),
        "EMPTY" => Some(String::new()),
        _ => None,
    };
    let root = Path::new("/work/repo");
    let table: [(&str, Option<&str>); 8] = [
        ("~/.cache", Some("/home/ci/.cache")),
        ("~", Some("/home/ci")),
        ("$CARGO_HOME", Some("/opt/cargo")),
        ("$CARGO_HOME/registry", Some("/opt/cargo/registry")),
        ("$UNSET", None),
        ("$EMPTY", None),
        ("/var/cache/apt", Some("/var/cache/apt")),
        (
            "node_modules/.cache",
            Some("/work/repo/node_modules/.cache"),
        ),
    ];
    for (entry, expected) in table {
        assert_eq!(
            expand(entry, root, &lookup),
            expected.map(PathBuf::from),
            "{entry}"
        );
    }
}

#[test]
fn only_a_confining_decision_makes_a_confiner() {
    assert!(Confiner::new(&Decision::Off, Walls::default(), (None, false)).is_none());
    assert!(Confiner::new(&Decision::Unavailable, Walls::default(), (None, false)).is_none());
    let decision = Decision::Confine {
        abi: 7,
        missing: vec![],
    };
    let confiner = Confiner::new(&decision, Walls::default(), (None, false)).unwrap();
    assert!(confiner.full);
    assert!(confiner.walls.files.contains(&PathBuf::from("/dev/null")));
    // Without a mount namespace the tree's top is not granted: the gate is not confined.
    assert!(!confiner.whole_tree());
    let bound = (Some(namespace::Namespace::Thread), true);
    let confiner = Confiner::new(&decision, Walls::default(), bound).unwrap();
    assert!(confiner.whole_tree());
    assert!(confiner.private);
    // Private layers need the namespace.
    let confiner = Confiner::new(&decision, Walls::default(), (None, true)).unwrap();
    assert!(!confiner.private);
}

#[test]
fn a_cache_is_known_by_its_tag_to_a_depth() {
    let tag =
        "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag.\n";
    let dir = tempfile::tempdir().unwrap();
    let build = dir.path().join("build");
    // (the folder, what its CACHEDIR.TAG is, found)
    let cases: [(&str, Option<&str>, bool); 6] = [
        ("cargo", Some(tag), true),
        ("tools/ruff", Some(tag), true),
        ("tools/deep/mypy", Some(tag), false),
        ("forged", Some("Signature: 0000\n"), false),
        ("untagged", None, false),
        ("linked", None, false),
    ];
    for (folder, content, _) in cases {
        std::fs::create_dir_all(build.join(folder)).unwrap();
        if let Some(content) = content {
            std::fs::write(build.join(folder).join("CACHEDIR.TAG"), content).unwrap();
        }
    }
    // A tag reached through a link is not followed.
    std::os::unix::fs::symlink(
        build.join("cargo/CACHEDIR.TAG"),
        build.join("linked/CACHEDIR.TAG"),
    )
    .unwrap();
    std::os::unix::fs::symlink(build.join("cargo"), build.join("link-to-cargo")).unwrap();
    let mut found = tagged_caches(&build);
    found.sort();
    let expected: Vec<PathBuf> = (cases.iter())
        .filter(|(_, _, found)| *found)
        .map(|(folder, _, _)| build.join(folder))
        .collect();
    assert_eq!(found, expected);
    // The folder itself may be the cache.
    assert_eq!(
        tagged_caches(&build.join("cargo")),
        vec![build.join("cargo")]
    );
}
