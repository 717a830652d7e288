//! `refine-loop init`: a starter config for the project it finds, valid as written, and never
//! over an existing file.

use refine_loop::config::{Overrides, load};

use crate::support::{Repo, stderr, stdout};

#[test]
fn starter_configs_load_and_name_the_project_tools() {
    // (project files, what init says it found, the check names written)
    let table: [(&[&str], &str, &[&str]); 5] = [
        (&["Cargo.toml"], "found Rust", &["clippy", "cargo-test"]),
        (&["pyproject.toml"], "found Python", &["ruff", "pytest"]),
        (&["setup.cfg"], "found Python", &["ruff", "pytest"]),
        (&["package.json"], "found Node.js", &["eslint", "npm-test"]),
        (&[], "no known project file", &["gate"]),
    ];
    for (files, found, checks) in table {
        let repo = Repo::new();
        for file in files {
            repo.write(file, "");
        }
        let output = repo.run(&["init"]);
        assert_eq!(output.status.code(), Some(0), "{files:?}: {output:?}");
        assert!(
            stdout(&output).contains(found),
            "{files:?}: {}",
            stdout(&output)
        );
        let settings = load(&Overrides {
            target: Some(repo.path().to_path_buf()),
            ..Overrides::default()
        })
        .unwrap_or_else(|e| panic!("{files:?}: {e}"));
        let names: Vec<&str> = settings
            .gate
            .checks
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(names, checks, "{files:?}");
    }
}

#[test]
fn a_polyglot_project_gets_every_kind() {
    let repo = Repo::new();
    repo.write("Cargo.toml", "");
    repo.write("package.json", "{}");
    let output = repo.run(&["init", "--print"]);
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    assert!(
        text.contains("name = \"clippy\"") && text.contains("name = \"eslint\""),
        "{text}"
    );
    assert!(
        !repo.join("refine-loop.toml").exists(),
        "--print writes nothing"
    );
}

#[test]
fn init_never_overwrites() {
    let repo = Repo::new();
    repo.write("refine-loop.toml", "# mine\n");
    let output = repo.run(&["init"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("refine-loop.toml: already exists; init never overwrites it"));
    assert_eq!(
        std::fs::read_to_string(repo.join("refine-loop.toml")).unwrap(),
        "# mine\n"
    );
}

/// The Python starter's ruff check only reads, even where the project's own config tells ruff to
/// fix (`fix = true`): it reports the finding and leaves the file as it was.
#[test]
fn the_python_starter_gate_does_not_fix_what_it_reads() {
    let repo = Repo::new();
    repo.write("pyproject.toml", "[tool.ruff]\nfix = true\n");
    let source = "import os\n\n\nprint('hi')\n";
    repo.write("app.py", source);
    repo.commit("a package whose ruff config fixes");
    let output = repo.run(&["init"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let settings = load(&Overrides {
        target: Some(repo.path().to_path_buf()),
        ..Overrides::default()
    })
    .unwrap();
    let ruff = settings
        .gate
        .checks
        .iter()
        .find(|c| c.name == "ruff")
        .unwrap();
    let output = std::process::Command::new("sh")
        .args(["-c", &ruff.run])
        .current_dir(repo.path())
        .env("PATH", crate::support::path_with_tools())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(stdout(&output).contains("F401"), "{output:?}");
    assert_eq!(
        std::fs::read_to_string(repo.join("app.py")).unwrap(),
        source
    );
}

/// init keeps the run's reports out of `git status`: the state dir goes to `.git/info/exclude`,
/// once, anchored where the project sits in the work tree.
#[test]
fn init_excludes_the_state_dir_from_git() {
    let repo = Repo::new();
    repo.write("pyproject.toml", "");
    repo.write("sub/package.json", "{}");
    repo.commit("two projects");
    let output = repo.run(&["init"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(
        stdout(&output).contains("added /.refine-loop/ to .git/info/exclude"),
        "{output:?}"
    );
    let exclude = || std::fs::read_to_string(repo.join(".git/info/exclude")).unwrap();
    assert_eq!(
        exclude().matches("\n/.refine-loop/\n").count(),
        1,
        "{}",
        exclude()
    );
    let output = repo.run(&["init", "--target", "sub"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(
        exclude().contains("\n/sub/.refine-loop/\n"),
        "{}",
        exclude()
    );
    // A folder name with glob characters is written as a literal.
    repo.write("prix été [v2]/setup.py", "");
    let output = repo.run(&["init", "--target", "prix été [v2]"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(
        exclude().contains("\n/prix été \\[v2]/.refine-loop/\n"),
        "{}",
        exclude()
    );
    std::fs::create_dir_all(repo.join("prix été [v2]/.refine-loop")).unwrap();
    std::fs::write(repo.join("prix été [v2]/.refine-loop/report.md"), "x").unwrap();
    let before = exclude();
    std::fs::remove_file(repo.join("refine-loop.toml")).unwrap();
    assert_eq!(repo.run(&["init"]).status.code(), Some(0));
    assert_eq!(exclude(), before, "the line is written once");
    std::fs::create_dir_all(repo.join(".refine-loop/cycle-0")).unwrap();
    std::fs::write(repo.join(".refine-loop/cycle-0/report.md"), "x").unwrap();
    let status = std::process::Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=all"])
        .current_dir(repo.path())
        .output()
        .unwrap();
    assert!(!stdout(&status).contains(".refine-loop"), "{status:?}");
}
