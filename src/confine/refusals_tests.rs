use super::*;
use crate::confine::namespace::Namespace;
use crate::confine::{Decision, Walls};

#[test]
fn tools_name_the_path_they_were_refused() {
    // (a line as the tool prints it, the paths it names)
    let table: [(&str, &[&str]); 9] = [
        (
            "sh: 1: cannot create /tmp/x/new.txt: Permission denied",
            &["/tmp/x/new.txt"],
        ),
        (
            "sed: couldn't open temporary file ./sedAb12Cd: Permission denied",
            &["./sedAb12Cd"],
        ),
        (
            "sh: 1: cannot create .git/config: Read-only file system",
            &[".git/config"],
        ),
        (
            "PermissionError: [Errno 13] Permission denied: 'conftest.py'",
            &["conftest.py"],
        ),
        (
            "Error: EROFS: read-only file system, open '/w/.git/hooks/pre-commit'",
            &["/w/.git/hooks/pre-commit"],
        ),
        (
            "ln: failed to create hard link 'src/l.txt' => '/tmp/s.txt': Invalid cross-device link",
            &["src/l.txt", "/tmp/s.txt"],
        ),
        (
            "mkdir: cannot create directory ‘build/out’: Read-only file system",
            &["build/out"],
        ),
        // No error, or no path: nothing.
        ("wrote src/lib.rs", &[]),
        ("Permission denied (os error 13)", &[]),
    ];
    for (line, expected) in table {
        let mut refusals = Refusals::default();
        refusals.push(format!("{line}\n").as_bytes());
        let mut got: Vec<&str> = refusals.named.iter().map(|(p, _)| p.as_str()).collect();
        got.sort_unstable();
        let mut expected = expected.to_vec();
        expected.sort_unstable();
        assert_eq!(got, expected, "{line}");
    }
}

#[test]
fn only_what_the_walls_forbid_is_blamed_on_them() {
    let folder = tempfile::tempdir().unwrap();
    let tree = folder.path().canonicalize().unwrap().join("tree");
    std::fs::create_dir_all(tree.join(".git")).unwrap();
    std::fs::create_dir_all(tree.join("src")).unwrap();
    std::fs::write(tree.join("src/locked.txt"), "").unwrap();
    let walls = |bound: bool| {
        let walls = Walls {
            tree: tree.clone(),
            writable: vec![tree.clone()],
            sealed: vec![tree.join(".git")],
            ..Walls::default()
        };
        let decision = Decision::Confine {
            abi: 7,
            missing: Vec::new(),
        };
        Confiner::new(
            &decision,
            walls,
            (bound.then_some(Namespace::Thread), false),
        )
        .unwrap()
    };
    let output = "\
        sh: 1: cannot create .git/config: Read-only file system\n\
        sh: 1: cannot create /etc/outside.conf: Permission denied\n\
        sh: 1: cannot create src/locked.txt: Permission denied\n\
        sed: couldn't open temporary file ./sedX1: Permission denied";
    let explain = |bound| {
        let mut refusals = Refusals::default();
        // In two chunks, split inside a line.
        let (a, b) = output.split_at(70);
        refusals.push(a.as_bytes());
        refusals.push(b.as_bytes());
        refusals.explain(&walls(bound), &tree)
    };
    let bound = explain(true);
    assert_eq!(bound.len(), 2, "{bound:#?}");
    assert!(
        bound[0].starts_with("`.git/config` (read-only): in `"),
        "{bound:#?}"
    );
    assert!(
        bound[1].starts_with("`/etc/outside.conf` (permission denied): outside the folders")
            && bound[1].ends_with("add its folder to `[loop] writable` to allow it"),
        "{bound:#?}"
    );
    // Without a mount namespace the top of the tree is refused too; a file's own permissions
    // (src/locked.txt) are never the walls'.
    let split = explain(false);
    assert_eq!(split.len(), 3, "{split:#?}");
    assert!(
        split[0].starts_with("`./sedX1` (permission denied): at the top of the work tree"),
        "{split:#?}"
    );
}

#[test]
fn what_a_delegate_prints_stays_code_and_is_bounded() {
    let folder = tempfile::tempdir().unwrap();
    let tree = folder.path().canonicalize().unwrap();
    let walls = Walls {
        tree: tree.clone(),
        writable: vec![tree.clone()],
        ..Walls::default()
    };
    let decision = Decision::Confine {
        abi: 7,
        missing: Vec::new(),
    };
    let confiner = Confiner::new(&decision, walls, (Some(Namespace::Thread), false)).unwrap();
    let mut refusals = Refusals::default();
    refusals.push(b"sh: 1: cannot create /etc/x`[y](z): Permission denied\n");
    let said = refusals.explain(&confiner, &tree);
    assert!(
        said[0].starts_with("``/etc/x`[y](z)`` (permission denied)"),
        "{said:?}"
    );
    // A line that names three hundred paths adds no more than the limit.
    let mut refusals = Refusals::default();
    let many: String = (0..300).map(|i| format!("'/e/{i}' ")).collect();
    refusals.push(format!("{many}: Permission denied\n").as_bytes());
    assert_eq!(refusals.named.len(), MAX_PATHS);
}
