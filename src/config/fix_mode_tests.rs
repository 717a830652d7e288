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
