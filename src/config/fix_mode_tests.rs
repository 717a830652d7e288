use super::fix_command;

#[test]
fn each_tool_in_its_fix_mode_with_the_gates_own_selection() {
    // (the gate's check, the delegate it makes)
    let table: &[(&str, Option<&str>)] = &[
        (
            "ruff check --no-fix --output-format=concise .",
            Some("ruff check --fix --output-format=concise ."),
        ),
        (
            "ruff check --select E,F,UP --ignore E501 --no-fix src tests",
            Some("ruff check --fix --select E,F,UP --ignore E501 src tests"),
        ),
        (
            "uv run ruff check --config ci/ruff.toml .",
            Some("uv run ruff check --fix --config ci/ruff.toml ."),
        ),
        (
            "python -m ruff check --diff .",
            Some("python -m ruff check --fix ."),
        ),
        ("ruff format --check .", Some("ruff format .")),
        (
            "cargo clippy --all-targets --message-format=short -- -D warnings -W clippy::pedantic",
            Some(
                "cargo clippy --fix --allow-dirty --allow-staged --all-targets --message-format=short -- -D warnings -W clippy::pedantic",
            ),
        ),
        (
            "cargo clippy --lib --bins --tests --examples -- -D warnings",
            Some(
                "cargo clippy --fix --allow-dirty --allow-staged --lib --bins --tests --examples -- -D warnings",
            ),
        ),
        ("cargo fmt --all --check", Some("cargo fmt --all")),
        ("cargo fmt --all -- --check", Some("cargo fmt --all --")),
        ("cargo test", None),
        (
            "npx --no-install eslint --format unix --max-warnings 0 .",
            Some("npx --no-install eslint --fix --max-warnings 0 ."),
        ),
        ("npx eslint -f=json src", Some("npx eslint --fix src")),
        (
            "./node_modules/.bin/eslint --rule no-var:error .",
            Some("./node_modules/.bin/eslint --fix --rule no-var:error ."),
        ),
        (
            "npx --no-install prettier --check .",
            Some("npx --no-install prettier --write ."),
        ),
        ("npx prettier .", None),
        ("black --check --diff src", Some("black src")),
        (
            "isort --check-only --profile black .",
            Some("isort --profile black ."),
        ),
        ("gofmt -l .", Some("gofmt -w .")),
        (
            "golangci-lint run ./...",
            Some("golangci-lint run --fix ./..."),
        ),
        (
            "npx --no-install markdownlint-cli2 '**/*.md'",
            Some("npx --no-install markdownlint-cli2 --fix '**/*.md'"),
        ),
        (
            "npx --no-install prettier --check . '!.refine-loop/**'",
            Some("npx --no-install prettier --write . '!.refine-loop/**'"),
        ),
        ("ruff check 'my dir'", None),
        (
            "npx --no-install markdownlint-cli2 README.md docs",
            Some("npx --no-install markdownlint-cli2 --fix README.md docs"),
        ),
        (
            "npx stylelint src/**/*.css",
            Some("npx stylelint --fix src/**/*.css"),
        ),
        (
            "npx @biomejs/biome check .",
            Some("npx @biomejs/biome check --write ."),
        ),
        ("npx biome lint src", Some("npx biome lint --write src")),
        ("shellcheck -f gcc a.sh", None),
        ("hadolint Dockerfile", None),
        ("yamllint -f parsable .", None),
        ("mypy src", None),
        ("ruff check . && pytest", None),
        ("sh -c 'ruff check .'", None),
        ("ruff", None),
    ];
    for (check, delegate) in table {
        assert_eq!(fix_command(check).as_deref(), *delegate, "{check}");
    }
}

#[test]
fn a_fixer_that_takes_paths_loses_the_checks_own() {
    let dir = tempfile::tempdir().unwrap();
    for path in ["src", "tests", "docs/guide.md", "ci/ruff.toml"] {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        if path.extension().is_some() {
            std::fs::write(&path, "").unwrap();
        } else {
            std::fs::create_dir_all(&path).unwrap();
        }
    }
    // (the fix command, without its paths)
    let table: &[(&str, Option<&str>)] = &[
        (
            "ruff check --fix --output-format=concise .",
            Some("ruff check --fix --output-format=concise"),
        ),
        (
            "ruff check --fix --select E,F --ignore E501 src tests",
            Some("ruff check --fix --select E,F --ignore E501"),
        ),
        (
            "uv run ruff check --fix --config ci/ruff.toml .",
            Some("uv run ruff check --fix --config ci/ruff.toml"),
        ),
        ("ruff format .", Some("ruff format")),
        ("ruff check --fix", Some("ruff check --fix")),
        (
            "npx eslint --fix --max-warnings 0 .",
            Some("npx eslint --fix --max-warnings 0"),
        ),
        (
            "markdownlint-cli2 --fix '**/*.md' '#node_modules'",
            Some("markdownlint-cli2 --fix"),
        ),
        (
            "markdownlint --fix -c .markdownlint.json docs/guide.md",
            Some("markdownlint --fix -c .markdownlint.json"),
        ),
        ("npx prettier --write .", Some("npx prettier --write")),
        ("black -l 100 src", Some("black -l 100")),
        ("gofmt -w .", Some("gofmt -w")),
        ("biome check --write src", Some("biome check --write")),
        ("eslint --fix -- src", Some("eslint --fix --")),
        // Not clearly a path: a flag's value this table does not know of. Left as it is.
        ("ruff check --fix --unknown-flag value .", None),
        ("ruff check --fix nowhere", None),
        // A tool that takes no paths, or a verb whose operands are not paths.
        ("cargo clippy --fix --allow-dirty --allow-staged", None),
        ("cargo fmt --all", None),
        ("golangci-lint run --fix ./...", None),
        ("biome migrate --write", None),
    ];
    for (fixed, expected) in table {
        assert_eq!(
            super::without_paths(fixed, dir.path()).as_deref(),
            *expected,
            "{fixed}"
        );
    }
}
