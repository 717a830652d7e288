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
