//! Layers: embedded defaults < file < `REFINE_LOOP_*` environment < flags; an empty variable
//! counts as unset.

use crate::support::Repo;

const CONFIG: &str = "state_dir = \"from-file\"\n[gate]\ntimeout = \"1s\"\n\
                      [[gate.check]]\nname = \"t\"\nrun = \"sleep 3\"\n";

fn summary_in(repo: &Repo, dir: &str) -> serde_json::Value {
    let path = repo.join(dir).join("cycle-0/gate-summary.json");
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("{path:?}")))
        .unwrap()
}

#[test]
fn state_dir_layers() {
    // (environment value, flag, where the summary lands)
    let table: [(Option<&str>, Option<&str>, &str); 4] = [
        (None, None, "from-file"),
        (Some(""), None, "from-file"),
        (Some("from-env"), None, "from-env"),
        (Some("from-env"), Some("from-flag"), "from-flag"),
    ];
    for (env, flag, expected) in table {
        let repo = Repo::new();
        repo.write("refine-loop.toml", CONFIG);
        let mut command = repo.command(&["check", "--gate-timeout", "10s"]);
        if let Some(env) = env {
            command.env("REFINE_LOOP_STATE_DIR", env);
        }
        if let Some(flag) = flag {
            command.args(["--state-dir", flag]);
        }
        let output = command.output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "{env:?} {flag:?}: {output:?}"
        );
        assert!(
            repo.join(expected)
                .join("cycle-0/gate-output.txt")
                .is_file(),
            "{expected}"
        );
    }
}

#[test]
fn gate_timeout_layers() {
    // The file says 1s, so `sleep 3` is stopped; the environment or a flag can lift it.
    // (environment value, flag, status of the check)
    let table: [(Option<&str>, Option<&str>, &str); 4] = [
        (None, None, "infra"),
        (Some(""), None, "infra"),
        (Some("10s"), None, "passed"),
        (Some("10s"), Some("1s"), "infra"),
    ];
    for (env, flag, expected) in table {
        let repo = Repo::new();
        repo.write("refine-loop.toml", CONFIG);
        let mut command = repo.command(&["check", "--kill-grace", "1s"]);
        if let Some(env) = env {
            command.env("REFINE_LOOP_GATE_TIMEOUT", env);
        }
        if let Some(flag) = flag {
            command.args(["--gate-timeout", flag]);
        }
        command.output().unwrap();
        let summary = summary_in(&repo, "from-file");
        assert_eq!(summary["checks"][0]["status"], expected, "{env:?} {flag:?}");
    }
}

#[test]
fn the_config_and_the_parsers_it_names_are_read_from_a_commit_when_asked() {
    // The base branch: one check, read by a parser of the project's own folder.
    let base = "parser_dirs = [\"parsers\"]\n[[gate.check]]\nname = \"base-lint\"\n\
                category = \"lint\"\nrun = \"echo 'src/a.rs:1:1: error: one'\"\nparser = \"mine\"\n";
    let parser = "name = \"mine\"\ndescription = \"the project's own\"\n\n[[pattern]]\n\
                  regex = '^(?P<file>[^:]+):(?P<line>\\d+):(?P<column>\\d+): error: (?P<message>.*)$'\n\
                  severity = \"error\"\n";
    let repo = Repo::new();
    repo.write("refine-loop.toml", base);
    repo.write("parsers/mine.toml", parser);
    repo.commit("base");
    // The pull request's tree: its own check, confinement off, and the parser broken.
    repo.write(
        "refine-loop.toml",
        "[loop]\nconfine = \"off\"\nparser_dirs = [\"parsers\"]\n[[gate.check]]\nname = \"pr-lint\"\nrun = \"true\"\n",
    );
    repo.write("parsers/mine.toml", "not a parser\n");
    let output = repo
        .command(&["check", "--config-from-ref", "HEAD"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let summary = repo.summary();
    assert_eq!(summary["checks"][0]["name"], "base-lint", "{summary}");
    assert_eq!(summary["categories"]["lint"]["failures"], 1, "{summary}");
    // From the environment too; a ref that is not there is a usage error naming it.
    let output = repo
        .command(&["check"])
        .env("REFINE_LOOP_CONFIG_FROM_REF", "no-such-branch")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--config-from-ref no-such-branch: no such commit"),
        "{stderr}"
    );
}

/// Run from a folder inside the repository, `check` finds the config in a folder above, up to
/// the repository's root (as git and cargo find theirs), and works on that folder; outside a
/// repository it looks no further than where it was started.
#[test]
fn a_command_run_in_a_subfolder_finds_the_config_above_it() {
    let repo = Repo::new();
    repo.write(
        "refine-loop.toml",
        "[[gate.check]]\nname = \"here\"\nrun = \"test -f README.md\"\n",
    );
    repo.write("src/deep/er/x.txt", "x\n");
    // (folder started in, exit code, where the state dir lands)
    let table = [
        ("src/deep/er", Some(0), ".refine-loop"),
        ("src", Some(0), ".refine-loop"),
        (".", Some(0), ".refine-loop"),
    ];
    for (folder, code, state) in table {
        let _ = std::fs::remove_dir_all(repo.join(".refine-loop"));
        let output =
            crate::support::command_in(&repo.join(folder), crate::support::binary(), &["check"])
                .output()
                .unwrap();
        assert_eq!(output.status.code(), code, "{folder}: {output:?}");
        assert!(
            repo.join(state).join("cycle-0/gate-summary.json").is_file(),
            "{folder}"
        );
    }
    // A nested repository is a boundary: the outer config is not its own.
    let inner = repo.join("vendor/inner");
    std::fs::create_dir_all(&inner).unwrap();
    crate::support::git_in(&inner, &["init", "-q"]);
    let output = crate::support::command_in(&inner, crate::support::binary(), &["check"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(
        crate::support::stderr(&output).contains("refine-loop.toml"),
        "{output:?}"
    );
}
