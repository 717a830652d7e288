//! Bad input exits 2 with one line naming the file, the key and what is expected, and changes
//! nothing: no state dir is created, no check runs.

use crate::support::{Repo, stderr};

const GOOD_CHECK: &str = "[[gate.check]]\nname = \"t\"\nrun = \"touch ran\"\n";

struct Case {
    name: &'static str,
    config: Option<&'static str>,
    args: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
    expected: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        name: "a fixer derived from a check names it with a typo",
        config: Some(
            "[[gate.check]]\nname = \"lint\"\nrun = \"ruff check .\"\n[[gate.check]]\nname = \"types\"\nrun = \"mypy .\"\n[[delegate]]\nfrom_check = \"lnit\"\n",
        ),
        args: &[],
        env: &[],
        expected: &[
            "delegate[0].from_check",
            "there is no gate check named \"lnit\"; did you mean \"lint\"? (the checks: lint, types)",
        ],
    },
    Case {
        name: "a fixer derived from a check names one far from any",
        config: Some(
            "[[gate.check]]\nname = \"lint\"\nrun = \"ruff check .\"\n[[delegate]]\nfrom_check = \"formatting\"\n",
        ),
        args: &[],
        env: &[],
        expected: &["there is no gate check named \"formatting\" (the checks: lint)"],
    },
    Case {
        name: "the tree watch is neither on nor off",
        config: Some(GOOD_CHECK),
        args: &[],
        env: &[("REFINE_LOOP_WATCH", "maybe")],
        expected: &[
            "environment REFINE_LOOP_WATCH",
            "\"maybe\" is neither on nor off",
        ],
    },
    Case {
        name: "the improve campaign's cycle limit is not a positive number",
        config: Some(GOOD_CHECK),
        args: &[],
        env: &[("IMPROVE_LOOP_MAX_CYCLES", "0")],
        expected: &[
            "environment IMPROVE_LOOP_MAX_CYCLES",
            "\"0\" is not a positive number of cycles",
        ],
    },
    Case {
        name: "a delegate's template names an unknown placeholder",
        config: Some(
            "[[gate.check]]\nname = \"t\"\nrun = \"touch ran\"\n[[delegate]]\nrun = \"true\"\ntemplate = \"prompts/typo.md\"\n",
        ),
        args: &[],
        env: &[],
        expected: &[
            "delegate[0].template",
            "unknown placeholder {categroy} (known: {category}, {scope}, {details})",
        ],
    },
    Case {
        name: "missing config",
        config: None,
        args: &[],
        env: &[],
        expected: &[
            "refine-loop.toml: no such file",
            "refine-loop init",
            "--config",
        ],
    },
    Case {
        name: "--config names a missing file",
        config: Some(GOOD_CHECK),
        args: &["--config", "nowhere.toml"],
        env: &[],
        expected: &["nowhere.toml: no such file"],
    },
    Case {
        name: "config is unreadable (a directory)",
        config: Some(GOOD_CHECK),
        args: &["--config", "."],
        env: &[],
        expected: &[".: cannot read:"],
    },
    Case {
        name: "invalid TOML",
        config: Some("[gate\nname = 1\n"),
        args: &[],
        env: &[],
        expected: &["refine-loop.toml:1:", "(syntax):"],
    },
    Case {
        name: "unknown key in a check",
        config: Some("[[gate.check]]\nname = \"t\"\nrun = \"true\"\ntmeout = \"1s\"\n"),
        args: &[],
        env: &[],
        expected: &[
            "refine-loop.toml:4:1: gate.check[0].tmeout: unknown field `tmeout`, expected one of",
            "`timeout`",
        ],
    },
    Case {
        name: "unknown top-level key",
        config: Some("stat_dir = \"x\"\n[[gate.check]]\nname = \"t\"\nrun = \"true\"\n"),
        args: &[],
        env: &[],
        expected: &["refine-loop.toml:1:1: stat_dir: unknown field `stat_dir`"],
    },
    Case {
        name: "unknown parser",
        config: Some("[[gate.check]]\nname = \"t\"\nrun = \"true\"\nparser = \"clipy\"\n"),
        args: &[],
        env: &[],
        expected: &[
            "refine-loop.toml: gate.check[0].parser: unknown parser \"clipy\"; expected one of:",
            "clippy",
        ],
    },
    Case {
        name: "unknown parser among several",
        config: Some("[[gate.check]]\nname = \"t\"\nrun = \"true\"\nparser = \"ruff,pytset\"\n"),
        args: &[],
        env: &[],
        expected: &[
            "refine-loop.toml: gate.check[0].parser: \"ruff,pytset\": \"pytset\" is not a parser",
        ],
    },
    Case {
        name: "empty run",
        config: Some("[[gate.check]]\nname = \"t\"\nrun = \"  \"\n"),
        args: &[],
        env: &[],
        expected: &["refine-loop.toml: gate.check[0].run: must not be empty"],
    },
    Case {
        name: "timeout written in words",
        config: Some("[[gate.check]]\nname = \"t\"\nrun = \"true\"\ntimeout = \"10 minutes\"\n"),
        args: &[],
        env: &[],
        expected: &[
            "refine-loop.toml:4:11: gate.check[0].timeout: invalid duration \"10 minutes\"",
            "\"10m\"",
        ],
    },
    Case {
        name: "no checks",
        config: Some("[gate]\ntimeout = \"1m\"\n"),
        args: &[],
        env: &[],
        expected: &["refine-loop.toml: gate.check: the gate has no checks"],
    },
    Case {
        name: "duplicate check names",
        config: Some(
            "[[gate.check]]\nname = \"t\"\nrun = \"true\"\n[[gate.check]]\nname = \"t\"\nrun = \"true\"\n",
        ),
        args: &[],
        env: &[],
        expected: &["gate.check[1].name: \"t\" is used by another check"],
    },
    Case {
        name: "cwd outside the target",
        config: Some("[[gate.check]]\nname = \"t\"\nrun = \"true\"\ncwd = \"../elsewhere\"\n"),
        args: &[],
        env: &[],
        expected: &[
            "gate.check[0].cwd: \"../elsewhere\" must be a relative path inside the target",
        ],
    },
    Case {
        name: "empty success_codes",
        config: Some("[[gate.check]]\nname = \"t\"\nrun = \"true\"\nsuccess_codes = []\n"),
        args: &[],
        env: &[],
        expected: &["gate.check[0].success_codes: must list at least one exit code"],
    },
    Case {
        name: "a NUL in an environment value",
        config: Some("[[gate.check]]\nname = \"t\"\nrun = \"true\"\nenv = { X = \"a\\u0000b\" }\n"),
        args: &[],
        env: &[],
        expected: &["refine-loop.toml: gate.check[0].env.X: must not contain a NUL character"],
    },
    Case {
        name: "--target is not a directory",
        config: Some(GOOD_CHECK),
        args: &["--target", "README.md"],
        env: &[],
        expected: &["--target README.md: not a directory"],
    },
    Case {
        name: "a duration from the environment in words",
        config: Some(GOOD_CHECK),
        args: &[],
        env: &[("REFINE_LOOP_GATE_TIMEOUT", "10 minutes")],
        expected: &[
            "error: environment REFINE_LOOP_GATE_TIMEOUT: invalid duration \"10 minutes\": expected",
        ],
    },
    Case {
        name: "no run kept, not even this one",
        config: Some("[loop]\nkeep_runs = 0\n[[gate.check]]\nname = \"t\"\nrun = \"touch ran\"\n"),
        args: &[],
        env: &[],
        expected: &[
            "refine-loop.toml: loop.keep_runs: 0 is out of range; expected 1 (this run's alone) to 1000",
        ],
    },
    Case {
        name: "more runs kept than the limit",
        config: Some(
            "[loop]\nkeep_runs = 1001\n[[gate.check]]\nname = \"t\"\nrun = \"touch ran\"\n",
        ),
        args: &[],
        env: &[],
        expected: &["refine-loop.toml: loop.keep_runs: 1001 is out of range"],
    },
    Case {
        name: "a confinement that is not one",
        config: Some(
            "[loop]\nconfine = \"on\"\n[[gate.check]]\nname = \"t\"\nrun = \"touch ran\"\n",
        ),
        args: &[],
        env: &[],
        expected: &[
            "refine-loop.toml: loop.confine: \"on\" is not a confinement; expected auto, off or required",
        ],
    },
    Case {
        name: "a writable folder that is blank",
        config: Some(
            "[loop]\nwritable = [\" \"]\n[[gate.check]]\nname = \"t\"\nrun = \"touch ran\"\n",
        ),
        args: &[],
        env: &[],
        expected: &["refine-loop.toml: loop.writable: \" \" is not a folder"],
    },
    Case {
        name: "a broken parser file",
        config: Some("parser_dirs = [\"parsers\"]\n[[gate.check]]\nname = \"t\"\nrun = \"true\"\n"),
        args: &[],
        env: &[],
        expected: &["parsers/broken.toml: pattern[1].regex: invalid regex /(unclosed/"],
    },
    Case {
        name: "an unknown integrity mode",
        config: Some(
            "[loop]\nintegrity = \"warn\"\n[[gate.check]]\nname = \"t\"\nrun = \"touch ran\"\n",
        ),
        args: &[],
        env: &[],
        expected: &[
            "refine-loop.toml: loop.integrity: \"warn\" is not an integrity mode; expected refuse, report or off",
        ],
    },
    Case {
        name: "an allow entry of an unknown class",
        config: Some(
            "[[integrity.allow]]\nclass = \"lint\"\n[[gate.check]]\nname = \"t\"\nrun = \"touch ran\"\n",
        ),
        args: &[],
        env: &[],
        expected: &[
            "refine-loop.toml: integrity.allow[0].class: \"lint\" is not one of suppression, tests, config, evasion",
        ],
    },
    Case {
        name: "an allow entry that sets no condition",
        config: Some(
            "[[integrity.allow]]\nreason = \"all of it\"\n[[gate.check]]\nname = \"t\"\nrun = \"touch ran\"\n",
        ),
        args: &[],
        env: &[],
        expected: &[
            "integrity.allow[0].class: an allow entry needs at least one of class, rule, pattern and paths",
        ],
    },
    Case {
        name: "pull-request mode judged neither by lines nor by the gate",
        config: Some(
            "[loop]\nnew_since = \"diff\"\n[[gate.check]]\nname = \"t\"\nrun = \"touch ran\"\n",
        ),
        args: &[],
        env: &[],
        expected: &[
            "loop.new_since",
            "\"diff\" is not a way to judge findings new; expected lines or gate",
        ],
    },
    Case {
        name: "a broken integrity entry",
        config: Some(
            "[integrity]\ndirs = [\"integrity\"]\n[[gate.check]]\nname = \"t\"\nrun = \"touch ran\"\n",
        ),
        args: &[],
        env: &[],
        expected: &["integrity/broken.toml: marker[0].regex: "],
    },
];

#[test]
fn bad_input_exits_2_with_one_line_and_changes_nothing() {
    for case in CASES {
        let repo = Repo::new();
        if let Some(config) = case.config {
            repo.write("refine-loop.toml", config);
        }
        repo.write(
            "parsers/broken.toml",
            "name = \"broken\"\n[[pattern]]\nregex = '(?P<message>.*)'\n[[pattern]]\nregex = '(unclosed'\n",
        );
        repo.write(
            "prompts/typo.md",
            "Fix the {categroy} failures in {scope}.\n",
        );
        repo.write(
            "integrity/broken.toml",
            "name = \"broken\"\nfiles = [\"*.py\"]\n[[marker]]\nname = \"x\"\nclass = \"suppression\"\nregex = '#\\s*x(?P<rule>'\n",
        );
        let mut command = repo.command(&["check"]);
        command.args(case.args);
        for (key, value) in case.env {
            command.env(key, value);
        }
        let output = command.output().unwrap();
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{}: {err}", case.name);
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(
            lines.len(),
            1,
            "{}: one line expected, got: {err}",
            case.name
        );
        for expected in case.expected {
            assert!(
                err.contains(expected),
                "{}: {expected:?} not in {err}",
                case.name
            );
        }
        assert!(
            !repo.join(".refine-loop").exists(),
            "{}: state dir created",
            case.name
        );
        assert!(!repo.join("ran").exists(), "{}: a check ran", case.name);
    }
}

#[test]
fn usage_errors_exit_2() {
    let repo = Repo::new();
    let output = repo.run(&["check", "--no-such-flag"]);
    assert_eq!(output.status.code(), Some(2));
    let output = repo.run(&["frobnicate"]);
    assert_eq!(output.status.code(), Some(2));
    let output = repo.run(&["--help"]);
    assert_eq!(output.status.code(), Some(0));
}
