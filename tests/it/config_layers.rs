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
