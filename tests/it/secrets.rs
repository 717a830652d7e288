//! No file the loop writes holds a secret: a gate and a delegate that print the value of a
//! secret environment variable (and a token of a well-known shape) leave only redaction marks.

use crate::support::Repo;

const SECRET: &str = "s3cr3t-v4lue-0042-do-not-leak";

fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            if entry.file_type().unwrap().is_dir() {
                stack.push(entry.path());
            } else {
                files.push(entry.path());
            }
        }
    }
    files
}

#[test]
fn a_gate_that_prints_a_secret_leaves_no_file_with_it() {
    // A token shape, built at run time so that no token-like literal sits in the source.
    let token = format!("ghp_{}", "a1B2c3D4e5".repeat(4));
    let repo = Repo::new();
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write("findings.txt", "one\ntwo\n");
    repo.write(
        "refine-loop.toml",
        r#"[loop]

[[gate.check]]
name = "lint"
category = "lint"
run = "echo \"deploying with $DEPLOY_TOKEN and $OTHER\"; while read -r f; do echo \"src/a.rs:1:1: error: $f uses $DEPLOY_TOKEN and $OTHER\"; done < findings.txt; test ! -s findings.txt"
parser = "clippy"

[[delegate]]
categories = ["lint"]
run = "echo \"the delegate sees $DEPLOY_TOKEN\"; cat \"$REFINE_LOOP_PROMPT_FILE\"; echo \"partial $DEPLOY_TOKEN\" > \"$REFINE_LOOP_VERDICT_FILE\"; sed -i 1d findings.txt"
"#,
    );
    repo.commit("gate");
    let output = repo
        .command(&["run", "--max-cycles", "3"])
        .env("DEPLOY_TOKEN", SECRET)
        .env("OTHER", &token)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let state = repo.join(".refine-loop");
    let files = files_under(&state);
    assert!(files.len() > 10, "{files:?}");
    let mut marked = 0;
    for file in &files {
        let bytes = std::fs::read(file).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains(SECRET),
            "{} holds the secret",
            file.display()
        );
        // Nor in any form a report renders it in (`ghp\_…` in Markdown).
        assert!(
            !text.contains(&token[4..]),
            "{} holds the token",
            file.display()
        );
        marked += usize::from(text.contains("[REDACTED:DEPLOY_TOKEN]"));
    }
    // The gate's log, its summary, the delegate's prompt, report and verdict all had it.
    assert!(marked >= 5, "only {marked} files were redacted");
    let log = std::fs::read_to_string(state.join("cycle-0/gate-output.txt")).unwrap();
    assert!(log.contains("[REDACTED:github-token]"), "{log}");
}

#[test]
fn a_delegate_that_writes_a_secret_into_the_code_is_rolled_back_and_nothing_records_it() {
    let repo = Repo::new();
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write("findings.txt", "a.rs:1:1: error: one\n");
    repo.write("config.py", "TOKEN = None\n");
    repo.write(
        "refine-loop.toml",
        r#"[loop]

[[gate.check]]
name = "lint"
category = "lint"
run = "cat findings.txt; test ! -s findings.txt"
parser = "clippy"

[[delegate]]
categories = ["lint"]
run = "sed -i 1d findings.txt; echo \"TOKEN = '$DEPLOY_TOKEN'\" > config.py"
"#,
    );
    repo.commit("config");
    let output = repo
        .command(&["run", "--max-cycles", "1"])
        .env("DEPLOY_TOKEN", SECRET)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    assert_eq!(
        std::fs::read_to_string(repo.join("config.py")).unwrap(),
        "TOKEN = None\n"
    );
    let report =
        std::fs::read_to_string(repo.join(".refine-loop/cycle-1/delegate-reports/fix-lint.md"))
            .unwrap();
    assert!(
        report.contains("wrote a secret into `config.py` (DEPLOY_TOKEN): rolled back"),
        "{report}"
    );
    for file in files_under(&repo.join(".refine-loop")) {
        let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
        assert!(
            !text.contains(SECRET),
            "{} holds the secret",
            file.display()
        );
    }
}

#[test]
fn a_secret_the_gate_prints_appears_in_no_output_file_or_annotation() {
    let token = format!("glpat-{}", "Zx9Yw8Vu7T".repeat(2));
    let repo = Repo::new();
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write("findings.txt", "one\n");
    repo.write(
        "refine-loop.toml",
        r#"[loop]

[[gate.check]]
name = "lint"
category = "lint"
run = "echo \"using $DEPLOY_TOKEN and $GITLAB_PAT\"; while read -r f; do echo \"src/a.rs:1:1: error: $f $DEPLOY_TOKEN $GITLAB_PAT $DB_PASSWORD\"; done < findings.txt; test ! -s findings.txt"
parser = "clippy"

[[delegate]]
categories = ["lint"]
run = "echo \"the delegate sees $DEPLOY_TOKEN\" >&2; sed -i 1d findings.txt"
"#,
    );
    repo.commit("gate");
    let github = tempfile::tempdir().unwrap();
    for args in [
        &["check", "-vvv"][..],
        &["run", "-vvv", "--max-cycles", "1"][..],
    ] {
        let output = repo
            .command(args)
            .env("DEPLOY_TOKEN", SECRET)
            .env("GITLAB_PAT", &token)
            // Characters XML and JSON escape: the reports must not carry an escaped copy.
            .env("DB_PASSWORD", "zz\"top<secret&42-unique-tail")
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_WORKSPACE", repo.path())
            .env("GITHUB_OUTPUT", github.path().join("output"))
            .env("GITHUB_STEP_SUMMARY", github.path().join("summary"))
            .output()
            .unwrap();
        let printed = [output.stdout.as_slice(), output.stderr.as_slice()].concat();
        let printed = String::from_utf8_lossy(&printed);
        assert!(
            !printed.contains(SECRET),
            "{args:?} printed the secret:\n{printed}"
        );
        assert!(
            !printed.contains(&token),
            "{args:?} printed the token:\n{printed}"
        );
        if args[0] == "check" {
            assert!(printed.contains("::error "), "annotations: {printed}");
        }
    }
    let mut files = files_under(&repo.join(".refine-loop"));
    files.extend(files_under(github.path()));
    for file in files {
        let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
        assert!(
            !text.contains(SECRET),
            "{} holds the secret",
            file.display()
        );
        // Nor in any form a report renders it in (`ghp\_…` in Markdown).
        assert!(
            !text.contains(&token[4..]),
            "{} holds the token",
            file.display()
        );
        assert!(
            !text.contains("unique-tail"),
            "{} holds the password",
            file.display()
        );
    }
}

#[test]
fn a_token_left_in_a_finding_is_redacted_in_every_rendered_form() {
    // Markdown writes `ghp_` as `ghp\_`, which the shape no longer matches once escaped: every
    // report must render from redacted text.
    let token = format!("ghp_{}", "a1B2c3D4e5".repeat(4));
    let repo = Repo::new();
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write(
        "refine-loop.toml",
        r#"[[gate.check]]
name = "lint"
category = "lint"
run = "echo \"src/a_b.rs:1:1: error: leaked $OTHER in *here*\"; exit 1"
parser = "clippy"

[[delegate]]
categories = ["lint"]
run = "echo \"still $OTHER\" > \"$REFINE_LOOP_REPORT_FILE\"; true"
"#,
    );
    repo.commit("gate");
    let output = repo
        .command(&["run", "--max-cycles", "1"])
        .env("OTHER", &token)
        // In a GitHub workflow: a step summary, and annotations on stdout.
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", repo.join(".refine-loop-summary.md"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    let mut files = files_under(&repo.join(".refine-loop"));
    files.push(repo.join(".refine-loop-summary.md"));
    let mut rendered = 0;
    for file in &files {
        let text = String::from_utf8_lossy(&std::fs::read(file).unwrap()).into_owned();
        assert!(
            !text.contains(&token[4..]),
            "{} holds the token:\n{text}",
            file.display()
        );
        rendered += usize::from(text.contains("REDACTED:github-token"));
    }
    assert!(rendered >= 4, "only {rendered} files show the mark");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stdout.contains("::error"), "{stdout}");
    assert!(!stdout.contains(&token[4..]), "{stdout}");
    assert!(!stderr.contains(&token[4..]), "{stderr}");
}
