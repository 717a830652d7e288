//! `refine-loop init`: a starter config for the project it finds, valid as written, and never
//! over an existing file.

use refine_loop::config::{Overrides, load};

use crate::support::{Repo, stderr, stdout};

#[test]
fn starter_configs_load_and_name_the_project_tools() {
    // (project files, what init says it found, the check names written)
    let table: [(&[&str], &str, &[&str]); 5] = [
        (
            &["Cargo.toml"],
            "found Rust",
            &["rustfmt", "clippy", "cargo-test"],
        ),
        (&["pyproject.toml", "ruff.toml"], "found Python", &["ruff"]),
        (
            &["setup.cfg", ".ruff.toml", "tests/test_a.py"],
            "found Python",
            &["ruff", "pytest"],
        ),
        (
            &["package.json", "eslint.config.mjs"],
            "found JavaScript/TypeScript",
            &["eslint"],
        ),
        // Repo::new's README.md alone: markdownlint is not installed here.
        (&[], "found Markdown", &["gate"]),
    ];
    for (files, found, checks) in table {
        let repo = Repo::new();
        for file in files {
            repo.write(file, "");
        }
        if !files.is_empty() {
            repo.commit("project files");
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
fn a_polyglot_project_gets_every_kind_and_a_fixer_per_category() {
    let repo = Repo::new();
    repo.write("Cargo.toml", "");
    repo.write("package.json", "{\"devDependencies\": {\"eslint\": \"9\"}}");
    repo.write("pyproject.toml", "[tool.ruff]\n");
    repo.commit("three kinds");
    let output = repo.run(&["init", "--dry-run"]);
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    for line in [
        "name = \"clippy\"\ncategory = \"lint\"",
        "name = \"ruff\"\ncategory = \"lint-ruff\"",
        "name = \"eslint\"\ncategory = \"lint-eslint\"",
        // Formatting first, then each linter's fixer.
        "[[delegate]]\nfrom_check = \"rustfmt\"\n\n[[delegate]]\nfrom_check = \"clippy\"\n\n\
         [[delegate]]\nfrom_check = \"ruff\"\n\n[[delegate]]\nfrom_check = \"eslint\"\n",
        "# [[delegate]]\n# categories = [\"*\"]\n# run = \"claude -p",
    ] {
        assert!(text.contains(line), "{line:?} not in:\n{text}");
    }
    assert!(
        !repo.join("refine-loop.toml").exists(),
        "--dry-run writes nothing"
    );
    assert!(
        !std::fs::read_to_string(repo.join(".git/info/exclude"))
            .unwrap_or_default()
            .contains(".refine-loop"),
        "--dry-run writes nothing"
    );
}

#[test]
fn every_kind_is_found_and_a_missing_tool_gets_its_install_line() {
    let repo = Repo::new();
    for file in [
        "go.mod",
        "Dockerfile",
        "docker/worker.Dockerfile",
        "ci/build.sh",
        "config/app.yaml",
        "docs/guide.md",
        "Cargo.toml",
    ] {
        repo.write(file, "");
    }
    repo.commit("every kind");
    // No tool can be found: every check is written commented out, with how to install it.
    let output = repo
        .command(&["init", "--dry-run"])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let text = stdout(&output);
    for line in [
        "# Rust: ",
        "# Go: ",
        "# Shell: ",
        "# Dockerfile: ",
        "# YAML: ",
        "# Markdown: ",
        "# `cargo-clippy` is not installed here: install it (`rustup component add clippy`), then uncomment this check.\n# [[gate.check]]\n# name = \"clippy\"",
        "# name = \"go-vet\"",
        "# run = \"git ls-files -z -- '*.sh' '*.bash' '*.bats' | xargs -0 -r shellcheck -f gcc\"",
        "# run = \"hadolint --no-color 'Dockerfile' 'docker/worker.Dockerfile'\"",
        // No config of the project's for them: offered, not enabled.
        "# Optional: yamllint checks YAML syntax and style",
        "# Optional: markdownlint checks Markdown style",
        "# No check here has a fix mode (or its tool is not installed): uncomment an agent below.",
    ] {
        assert!(text.contains(line), "{line:?} not in:\n{text}");
    }
    // The one check that runs is the generic one to replace.
    assert_eq!(text.matches("\n[[gate.check]]").count(), 1, "{text}");
    assert!(text.contains("[[gate.check]]\nname = \"gate\""), "{text}");
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

/// A tracked Cargo.lock is read, not rewritten: the Rust checks run with --locked.
#[test]
fn a_tracked_cargo_lock_makes_the_rust_checks_locked() {
    let repo = Repo::new();
    repo.write("Cargo.toml", "");
    repo.write("Cargo.lock", "");
    repo.commit("a crate with its lock file");
    let output = repo.run(&["init", "--dry-run"]);
    let text = stdout(&output);
    assert!(
        text.contains("run = \"cargo clippy --locked --all-targets")
            && text.contains("run = \"cargo test --locked --no-fail-fast\""),
        "{text}"
    );
}

/// `init` adds a tool's check where the project uses the tool (its config, its manifest entry,
/// its pre-commit hook), lists the others as optional, commented out with why, and finds shell
/// scripts by their shebang too. (issue 35: a gate as strict as the project's own.)
#[test]
fn a_check_is_added_where_the_project_uses_its_tool_and_offered_elsewhere() {
    struct Case {
        files: &'static [(&'static str, &'static str)],
        /// Lines the config has.
        has: &'static [&'static str],
        /// Lines it has not.
        not: &'static [&'static str],
    }
    let cases = [
        // Prose and YAML linters with no config of the project's: offered, not enabled.
        Case {
            files: &[
                ("docs/guide.md", "# Guide\n"),
                ("config/app.yaml", "a: 1\n"),
            ],
            has: &[
                "# Optional: markdownlint checks Markdown style",
                "# Optional: yamllint checks YAML syntax and style",
                "# [[gate.check]]\n# name = \"yamllint\"",
            ],
            not: &["\nname = \"yamllint\"", "\nname = \"markdownlint\""],
        },
        // With the project's config: enabled (or its install line), on tracked files only.
        Case {
            files: &[
                (".yamllint", "extends: default\n"),
                ("config/app.yaml", "a: 1\n"),
                (".markdownlint.json", "{}\n"),
                ("docs/guide.md", "# Guide\n"),
            ],
            has: &[
                "git ls-files -z -- '*.yml' '*.yaml' | xargs -0 -r yamllint -f standard",
                "name = \"markdownlint\"",
            ],
            not: &[
                "# Optional: yamllint",
                "# Optional: markdownlint",
                "yamllint -f standard .\"",
            ],
        },
        // A package.json with no ESLint and no JavaScript: no ESLint, not even offered.
        Case {
            files: &[
                ("package.json", "{\"devDependencies\": {\"bats\": \"1\"}}\n"),
                ("test/a.bats", "#!/usr/bin/env bats\n"),
            ],
            has: &["'*.bats'"],
            not: &["eslint"],
        },
        // JavaScript without ESLint: offered.
        Case {
            files: &[("package.json", "{}\n"), ("src/a.js", "x\n")],
            has: &["# Optional: ESLint finds bugs in JavaScript and TypeScript"],
            not: &["\nname = \"eslint\""],
        },
        // ESLint in the manifest, or a config of its own: enabled.
        Case {
            files: &[
                (
                    "package.json",
                    "{\"devDependencies\": {\"eslint\": \"9\"}}\n",
                ),
                ("src/a.js", "x\n"),
            ],
            has: &["name = \"eslint\""],
            not: &["# Optional: ESLint"],
        },
        Case {
            files: &[
                ("package.json", "{}\n"),
                ("eslint.config.mjs", "export default [];\n"),
                ("src/a.js", "x\n"),
            ],
            has: &["name = \"eslint\""],
            not: &["# Optional: ESLint"],
        },
        // biome: its check, and no ESLint offered in its place.
        Case {
            files: &[
                (
                    "package.json",
                    "{\"devDependencies\": {\"@biomejs/biome\": \"2\"}}\n",
                ),
                ("biome.json", "{}\n"),
                ("src/a.ts", "x\n"),
            ],
            has: &[
                "name = \"biome\"",
                "run = \"npx --no-install biome check .\"",
            ],
            not: &["eslint"],
        },
        // black configured only as a pre-commit hook.
        Case {
            files: &[
                ("pyproject.toml", "[project]\nname = \"x\"\n"),
                (
                    ".pre-commit-config.yaml",
                    "repos:\n  - repo: https://github.com/psf/black\n    rev: 24.1.0\n    hooks:\n      - id: black\n",
                ),
            ],
            has: &["name = \"black\""],
            not: &[],
        },
        // Python: ruff where configured; flake8 and pylint where they are, and then no ruff
        // offered; ruff offered where there is no linter at all.
        Case {
            files: &[("pyproject.toml", "[project]\nname = \"x\"\n")],
            has: &["# Optional: ruff finds bugs"],
            not: &["\nname = \"ruff\""],
        },
        Case {
            files: &[
                ("setup.cfg", "[flake8]\nmax-line-length = 100\n"),
                (".pylintrc", "[MAIN]\n"),
            ],
            has: &[
                "name = \"flake8\"\n# category = \"lint\"\n# run = \"flake8 .\"",
                "run = \"pylint --recursive=y --score=n .\"",
            ],
            not: &["name = \"ruff\"", "Optional: ruff"],
        },
        Case {
            files: &[
                ("pyproject.toml", "[project]\nname = \"x\"\n"),
                ("requirements-dev.txt", "ruff==0.8.0\npytest\n"),
            ],
            has: &["name = \"ruff\""],
            not: &["# Optional: ruff"],
        },
        // mypy reads the project's own `files`; without them, the tree.
        Case {
            files: &[(
                "pyproject.toml",
                "[tool.ruff]\n[tool.mypy]\nfiles = [\"src\"]\nstrict = true\n[tool.black]\n",
            )],
            has: &["run = \"mypy\"\n"],
            not: &["run = \"mypy .\""],
        },
        Case {
            files: &[
                ("setup.cfg", "[mypy]\nstrict = True\n[flake8]\nfiles = x\n"),
                ("ruff.toml", ""),
            ],
            has: &["run = \"mypy .\""],
            not: &[],
        },
        // ShellCheck and hadolint where the project runs them (its CI, a script named after
        // the tool, a config); offered elsewhere.
        Case {
            files: &[
                ("deploy.sh", "#!/bin/sh\n"),
                ("Dockerfile", "FROM debian\n"),
            ],
            has: &[
                "# Optional: ShellCheck finds bugs",
                "# Optional: hadolint checks Dockerfiles",
            ],
            not: &["\nname = \"shellcheck\"", "\nname = \"hadolint\""],
        },
        Case {
            files: &[
                ("deploy.sh", "#!/bin/sh\n"),
                ("Dockerfile", "FROM debian\n"),
                (
                    ".github/workflows/lint.yml",
                    "jobs:\n  lint:\n    steps:\n      - run: shellcheck *.sh\n",
                ),
                (".hadolint.yaml", "ignored: [DL3008]\n"),
            ],
            has: &["name = \"shellcheck\"", "name = \"hadolint\""],
            not: &["# Optional: ShellCheck", "# Optional: hadolint"],
        },
        Case {
            files: &[
                ("deploy.sh", "#!/bin/sh\n"),
                ("ci/shellcheck.sh", "#!/bin/sh\nshellcheck -x *.sh\n"),
            ],
            has: &["name = \"shellcheck\""],
            not: &["# Optional: ShellCheck"],
        },
        // Shell scripts known by their shebang, and bats files.
        Case {
            files: &[
                ("bin/deploy", "#!/usr/bin/env bash\necho hi\n"),
                ("libexec/helper", "#!/bin/sh\n:\n"),
                ("bin/tool.py", "#!/usr/bin/env python3\n"),
                ("test/deploy.bats", "#!/usr/bin/env bats\n"),
            ],
            has: &["'*.bats'", "'bin/deploy'", "'libexec/helper'"],
            not: &["tool.py"],
        },
        // markdownlint reads the project's .gitignore, unless it has an ignore file of its own.
        Case {
            files: &[
                (".markdownlint.json", "{}\n"),
                (".gitignore", "site/\n"),
                ("docs/a.md", "# A\n"),
            ],
            has: &["markdownlint --ignore-path .gitignore --ignore node_modules"],
            not: &[],
        },
        Case {
            files: &[
                (".markdownlint.json", "{}\n"),
                (".gitignore", "site/\n"),
                (".markdownlintignore", "CHANGELOG.md\n"),
                ("docs/a.md", "# A\n"),
            ],
            has: &["markdownlint --ignore node_modules"],
            not: &["--ignore-path"],
        },
        // Tools the project configures or runs, with a parser of their own.
        Case {
            files: &[
                (
                    "pyproject.toml",
                    "[tool.isort]\nprofile = \"black\"\n[tool.pyright]\n",
                ),
                (".codespellrc", "[codespell]\nskip = ./docs\n"),
                (
                    "package.json",
                    r#"{"devDependencies": {"stylelint": "16"}}"#,
                ),
                ("web/a.css", "a {}\n"),
                ("pkg/a.py", ""),
            ],
            has: &[
                "run = \"isort --check-only .\"",
                "run = \"pyright\"",
                "run = \"codespell --skip './node_modules,./target,./vendor,./.refine-loop'\"",
                "run = \"npx --no-install stylelint '**/*.css'\"",
            ],
            not: &["also runs"],
        },
        // Tools it runs that init writes no check for: named, not silently left out.
        Case {
            files: &[
                ("package.json", r#"{"scripts": {"lint": "xo && tsc"}}"#),
                (
                    ".github/workflows/ci.yml",
                    "    - run: shfmt -d scripts\n    - run: echo typos\n",
                ),
                ("scripts/a.sh", "#!/bin/sh\n"),
            ],
            has: &[
                "# The project also runs xo (package.json), shfmt (.github/workflows/ci.yml), which",
            ],
            not: &["typos ("],
        },
    ];
    for (index, case) in cases.iter().enumerate() {
        let repo = Repo::new();
        for (file, text) in case.files {
            repo.write(file, text);
        }
        repo.commit("project files");
        let output = repo.run(&["init", "--dry-run"]);
        assert_eq!(output.status.code(), Some(0), "case {index}: {output:?}");
        let text = stdout(&output);
        for line in case.has {
            assert!(
                text.contains(line),
                "case {index}: {line:?} not in:\n{text}"
            );
        }
        for line in case.not {
            assert!(!text.contains(line), "case {index}: {line:?} in:\n{text}");
        }
    }
}

/// A fixer of prose (markdownlint --fix) rewrites text people read: written commented out.
#[test]
fn a_prose_fixer_is_offered_commented_out() {
    let repo = Repo::new();
    repo.write(".markdownlint.json", "{}\n");
    repo.write("docs/guide.md", "# Guide\n");
    repo.commit("markdown");
    let bin = tempfile::tempdir().unwrap();
    let fake = bin.path().join("markdownlint");
    std::fs::write(&fake, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let output = repo
        .command(&["init", "--dry-run"])
        .env("PATH", format!("{}:/usr/bin:/bin", bin.path().display()))
        .output()
        .unwrap();
    let text = stdout(&output);
    assert!(
        text.contains("\n[[gate.check]]\nname = \"markdownlint\""),
        "{text}"
    );
    assert!(
        text.contains("# [[delegate]]\n# from_check = \"markdownlint\""),
        "{text}"
    );
    assert!(
        !text.contains("\n[[delegate]]\nfrom_check = \"markdownlint\""),
        "{text}"
    );
    assert!(text.contains("changes text people read"), "{text}");
}

/// A crate that declares `rust-version` gets a check on that compiler (its lib and bins, as an
/// MSRV job builds them), which installs the toolchain with rustup when it is missing; without
/// rustup the check is written commented out with its install line.
#[test]
fn a_declared_rust_version_gets_a_check_on_that_compiler() {
    // (Cargo.toml, a lock file, rustup on PATH, lines the config has, lines it has not)
    type Case<'a> = (&'a str, bool, bool, &'a [&'a str], &'a [&'a str]);
    let table: [Case<'_>; 5] = [
        (
            "[package]\nname = \"a\"\nversion = \"0.1.0\"\nrust-version = \"1.60\"\n",
            true,
            true,
            &[
                "\n[[gate.check]]\nname = \"msrv\"\ncategory = \"build\"\nrun = \"cargo +1.60 check --locked --lib --bins --message-format=short\"\nparser = \"clippy\"\n",
                "install = \"rustup toolchain install 1.60 --profile minimal\"",
                "missing_tool = ",
            ],
            &[],
        ),
        (
            "[workspace.package]\nrust-version = \"1.74.1\"\n[workspace]\nmembers = []\n",
            false,
            true,
            &["run = \"cargo +1.74.1 check --lib --bins --message-format=short\""],
            &[],
        ),
        (
            "[package]\nname = \"a\"\nversion = \"0.1.0\"\nrust-version = \"1.60\"\n",
            false,
            false,
            &["# `rustup` is not installed here", "# name = \"msrv\""],
            &["\nname = \"msrv\""],
        ),
        (
            "[package]\nname = \"a\"\nversion = \"0.1.0\"\n",
            false,
            true,
            &[],
            &["msrv"],
        ),
        // No lock file kept, target/ ignored: a fresh copy, as the project's MSRV job has.
        (
            "[package]\nname = \"a\"\nversion = \"0.1.0\"\nrust-version = \"1.63\"\n",
            false,
            true,
            &[
                "git ls-files -z -co --exclude-standard -- . ':!:Cargo.lock' | tar --null -T - -cf \
               - 2>/dev/null | tar -xmf - -C target/msrv-tree && cd target/msrv-tree && \
               CARGO_TARGET_DIR=../msrv cargo +1.63 check --lib --bins",
            ],
            &[],
        ),
    ];
    for (index, (manifest, lock, rustup, has, not)) in table.into_iter().enumerate() {
        let repo = Repo::new();
        repo.write("Cargo.toml", manifest);
        if index == 4 {
            repo.write(".gitignore", "/target\n");
        }
        if lock {
            repo.write("Cargo.lock", "version = 3\n");
        }
        repo.commit("crate");
        let bin = tempfile::tempdir().unwrap();
        if rustup {
            let fake = bin.path().join("rustup");
            std::fs::write(&fake, "#!/bin/sh\nexit 0\n").unwrap();
            std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .unwrap();
        }
        let output = repo
            .command(&["init", "--dry-run"])
            .env("PATH", format!("{}:/usr/bin:/bin", bin.path().display()))
            .output()
            .unwrap();
        let text = stdout(&output);
        for line in has {
            assert!(
                text.contains(line),
                "case {index}: {line:?} not in:\n{text}"
            );
        }
        for line in not {
            assert!(!text.contains(line), "case {index}: {line:?} in:\n{text}");
        }
    }
}

/// The project's own lint scripts say what its linters read: init takes their paths and
/// options (not a fix mode), else the whole tree.
#[test]
fn eslint_and_prettier_read_what_the_projects_own_scripts_read() {
    // (package.json's scripts, the eslint run, the prettier run)
    let table = [
        (
            r#"{"lint": "eslint src test --ext .ts", "format:check": "prettier --check 'src/**/*.ts'"}"#,
            "run = \"npx --no-install eslint src test --ext .ts\"",
            "run = \"npx --no-install prettier --check 'src/**/*.ts' '!.refine-loop/**'\"",
        ),
        (
            r#"{"lint": "tsc --noEmit && eslint --fix --max-warnings=0 src", "format": "prettier --write ."}"#,
            "run = \"npx --no-install eslint --max-warnings=0 src\"",
            "run = \"npx --no-install prettier --check . '!.refine-loop/**'\"",
        ),
        (
            r#"{"test": "jest"}"#,
            "run = \"npx --no-install eslint .\"",
            "run = \"npx --no-install prettier --check . '!.refine-loop/**'\"",
        ),
    ];
    for (scripts, eslint, prettier) in table {
        let repo = Repo::new();
        repo.write(
            "package.json",
            &format!(
                "{{\"scripts\": {scripts}, \"devDependencies\": {{\"eslint\": \"9\", \"prettier\": \"3\"}}}}"
            ),
        );
        repo.write("src/a.ts", "x\n");
        repo.commit("package");
        let output = repo.run(&["init", "--dry-run"]);
        let text = stdout(&output);
        assert!(text.contains(eslint), "{scripts}: {eslint} not in:\n{text}");
        assert!(
            text.contains(prettier),
            "{scripts}: {prettier} not in:\n{text}"
        );
        // Valid as written, each fixer made from its check.
        repo.write("refine-loop.toml", &text);
        let settings = load(&Overrides {
            target: Some(repo.path().to_path_buf()),
            ..Overrides::default()
        })
        .unwrap_or_else(|e| panic!("{scripts}: {e}"));
        assert!(!settings.delegates.is_empty(), "{text}");
        assert!(
            text.contains("\n[[delegate]]\nfrom_check = \"eslint\""),
            "{text}"
        );
    }
}

#[test]
fn checks_read_the_paths_the_projects_own_commands_give_their_tools() {
    let hatch = "[tool.ruff]\nline-length = 100\n[tool.black]\n[tool.mypy]\n\
                 [tool.hatch.envs.style]\ndependencies = [\"black\", \"ruff\"]\n\
                 [tool.hatch.envs.style.scripts]\ncheck = [\"black -q --check --diff pkg docs\", \
                 \"lint\"]\nlint = [\"ruff check pkg docs {args}\"]\nfix = [\"lint --fix\"]\n\
                 [tool.hatch.envs.types.scripts]\ncheck = \"mypy pkg\"\n\
                 [tool.hatch.envs.lint.scripts]\nmarkdown = \"npm exec --yes -- markdownlint-cli \
                 README.md docs/ --ignore docs/CNAME\"\n";
    let ci = "jobs:\n  lint:\n    steps:\n      - run: ./shellcheck.sh\n      - run: |\n          \
              python -m pytest tests/unit --junitxml=out.xml\n";
    // (files, lines the config holds)
    type Files<'a> = &'a [(&'a str, &'a str)];
    let table: &[(Files<'_>, &[&str])] = &[
        (
            &[
                ("pyproject.toml", hatch),
                (".markdownlint.yaml", "{}\n"),
                ("pkg/a.py", ""),
            ],
            &[
                "# Taken from the project's own pyproject.toml.\n\
                 [[gate.check]]\nname = \"ruff\"",
                "run = \"ruff check --no-fix --output-format=concise pkg docs\"",
                "run = \"black --check pkg docs\"",
                "run = \"mypy pkg\"",
                "--ignore .refine-loop README.md docs/ --ignore docs/CNAME\"",
            ],
        ),
        (
            &[
                ("shellcheck.sh", "#!/bin/bash\nshellcheck -x lib/*.sh\n"),
                ("lib/a.sh", "#!/bin/bash\n"),
                ("setup.py", ""),
                ("tests/unit/test_a.py", ""),
                (".github/workflows/ci.yml", ci),
            ],
            &[
                "own .github/workflows/ci.yml.\n[[gate.check]]\nname = \"shellcheck\"",
                "run = \"SHELLCHECK_OPTS='-f gcc' ./shellcheck.sh\"",
                "run = \"python3 -m pytest tests/unit\"",
            ],
        ),
        (
            &[
                ("setup.cfg", "[flake8]\nmax-line-length = 100\n"),
                (
                    "tox.ini",
                    "[testenv:lint]\ncommands =\n    flake8 src tests {posargs}\n",
                ),
                ("Makefile", "test:\n\tpytest -q tests\n"),
                ("tests/test_a.py", ""),
            ],
            &["run = \"flake8 src tests\"", "run = \"pytest -q tests\""],
        ),
        // pre-commit hooks: ruff's format hook, and a hook's args.
        (
            &[
                ("pyproject.toml", "[tool.ruff]\n"),
                (
                    ".pre-commit-config.yaml",
                    "repos:\n  - repo: https://github.com/astral-sh/ruff-pre-commit\n    hooks:\n      \
                     - id: ruff-check\n      - id: ruff-format\n  - repo: \
                     https://github.com/codespell-project/codespell\n    hooks:\n      - id: \
                     codespell\n        args: ['--write-changes', '--ignore-words-list=inout,te']\n",
                ),
            ],
            &[
                "run = \"ruff format --check .\"",
                "run = \"codespell --ignore-words-list=inout,te --skip \
                 './node_modules,./target,./vendor,./.refine-loop'\"",
            ],
        ),
        // clippy as the project runs it: no -D warnings where its CI denies none, and its
        // other runs and the checks init has none for named.
        (
            &[
                (
                    "Cargo.toml",
                    "[package]\nname = \"a\"\nversion = \"0.1.0\"\n",
                ),
                (
                    ".github/workflows/ci.yml",
                    "    - run: cargo clippy --verbose\n    - run: cargo clippy --verbose \
                     --manifest-path sub/Cargo.toml\n    - run: cargo doc --verbose\n    - run: \
                     cargo fmt -- --check\n    - run: cargo fmt --manifest-path sub/Cargo.toml -- \
                     --check\n",
                ),
            ],
            &[
                "The project also runs it with: `--manifest-path sub/Cargo.toml` \
                 (.github/workflows/ci.yml)",
                "run = \"cargo clippy --message-format=short\"",
                "also runs cargo doc (.github/workflows/ci.yml)",
                "for each that matters.\n[[gate.check]]\nname = \"rustfmt\"",
            ],
        ),
        (
            &[
                (
                    "Cargo.toml",
                    "[package]\nname = \"a\"\nversion = \"0.1.0\"\n",
                ),
                (
                    ".github/workflows/ci.yml",
                    "env:\n  RUSTFLAGS: -Dwarnings\njobs:\n  a:\n    steps:\n      - run: cargo \
                     clippy --all-features --tests\n",
                ),
            ],
            &[
                "run = \"cargo clippy --all-features --tests --message-format=short -- -D warnings\"",
            ],
        ),
        // A run of the tool init cannot read: said so, the check reads the default.
        (
            &[
                ("lib/a.sh", "#!/bin/sh\n"),
                (
                    ".github/workflows/lint.yml",
                    "    - run: shellcheck -s ${{ matrix.shell }} ${{ matrix.file }}\n",
                ),
            ],
            &[
                "# The project's own run of it (.github/workflows/lint.yml) has values init cannot \
                 read",
                "xargs -0 -r shellcheck -f gcc\"",
            ],
        ),
        // Nothing the project runs gives paths: the tools read the whole tree.
        (
            &[
                ("pyproject.toml", "[tool.ruff]\n"),
                (".github/workflows/ci.yml", "- run: ruff check .\n"),
            ],
            &["run = \"ruff check --no-fix --output-format=concise .\""],
        ),
    ];
    for (files, lines) in table {
        let repo = Repo::new();
        for (name, text) in *files {
            repo.write(name, text);
        }
        repo.commit("project");
        let output = repo.run(&["init", "--dry-run"]);
        let text = stdout(&output);
        for line in *lines {
            assert!(text.contains(line), "{line}\nnot in:\n{text}");
        }
        // Valid as written.
        repo.write("refine-loop.toml", &text);
        load(&Overrides {
            target: Some(repo.path().to_path_buf()),
            ..Overrides::default()
        })
        .unwrap_or_else(|e| panic!("{files:?}: {e}\n{text}"));
    }
}
