use super::*;

fn changes(file: &str, patch: &str) -> Vec<(String, String, String, Bump)> {
    version_changes(file, patch)
        .into_iter()
        .map(|c| (c.dependency, c.from, c.to, c.bump))
        .collect()
}

fn one(name: &str, from: &str, to: &str, bump: Bump) -> Vec<(String, String, String, Bump)> {
    vec![(name.into(), from.into(), to.into(), bump)]
}

#[test]
fn dependency_files_are_manifests_and_lock_files() {
    let cases = [
        ("Cargo.toml", true),
        ("crates/a/Cargo.toml", true),
        ("Cargo.lock", true),
        ("package.json", true),
        ("web/package-lock.json", true),
        ("yarn.lock", true),
        ("requirements.txt", true),
        ("requirements-dev.txt", true),
        ("pyproject.toml", true),
        ("go.mod", true),
        ("go.sum", true),
        ("Gemfile", true),
        ("Gemfile.lock", true),
        ("src/main.rs", false),
        ("docs/requirements.md", false),
        ("package.json.bak", false),
        ("rustfmt.toml", false),
    ];
    for (path, expected) in cases {
        assert_eq!(is_dependency_file(path), expected, "{path}");
    }
    assert!(is_lock_file("Cargo.lock") && is_lock_file("a/go.sum"));
    assert!(!is_lock_file("Cargo.toml"));
}

#[test]
fn bumps_at_every_boundary() {
    let cases = [
        ("1.0.1", "2.0.0", Bump::Major),
        ("2.0.0", "1.9.0", Bump::Major),
        ("^4.17.20", "^5.0.0", Bump::Major),
        ("1.2.3", "1.3.0", Bump::Minor),
        ("1.2.3", "1.2.4", Bump::Patch),
        ("0.3.1", "0.4.0", Bump::ZeroMinor),
        ("0.3.1", "0.3.2", Bump::Patch),
        ("0.0.3", "0.0.4", Bump::ZeroMinor),
        ("0.9", "1.0", Bump::Major),
        ("1", "1.1", Bump::Minor),
        ("~> 6.1", "~> 7.0", Bump::Major),
        ("v1.4.0", "v1.5.0", Bump::Minor),
        (">=1.2,<2", ">=1.3,<2", Bump::Minor),
        ("^1.2.3", "1.2.3", Bump::Other),
        ("1.0.0-beta.1", "1.0.0-beta.2", Bump::Other),
        ("*", "1.0", Bump::Other),
    ];
    for (from, to, expected) in cases {
        assert_eq!(bump(from, to), expected, "{from} → {to}");
    }
}

#[test]
fn cargo_manifest_and_lock_file() {
    let manifest = "@@ -8,7 +8,7 @@ edition = \"2021\"\n [dependencies]\n-serde = \"1.0.1\"\n+serde = \"2.0.0\"\n-tokio = { version = \"1.3\", features = [\"full\"] }\n+tokio = { version = \"1.4\", features = [\"full\"] }\n clap = \"4\"\n";
    assert_eq!(
        changes("Cargo.toml", manifest),
        [
            ("serde".into(), "1.0.1".into(), "2.0.0".into(), Bump::Major),
            ("tokio".into(), "1.3".into(), "1.4".into(), Bump::Minor),
        ]
    );
    let table =
        "@@ -20,3 +20,3 @@\n [dependencies.rand]\n-version = \"0.8.5\"\n+version = \"0.9.0\"\n";
    assert_eq!(
        changes("Cargo.toml", table),
        one("rand", "0.8.5", "0.9.0", Bump::ZeroMinor)
    );
    let own = "@@ -1,4 +1,4 @@\n [package]\n name = \"mine\"\n-version = \"0.1.0\"\n+version = \"0.2.0\"\n";
    assert_eq!(changes("Cargo.toml", own), []);
    let lock = "@@ -100,7 +100,7 @@ dependencies = [\n [[package]]\n name = \"serde\"\n-version = \"1.0.1\"\n+version = \"2.0.0\"\n source = \"registry+https://github.com/rust-lang/crates.io-index\"\n-checksum = \"aaa\"\n+checksum = \"bbb\"\n";
    assert_eq!(
        changes("Cargo.lock", lock),
        one("serde", "1.0.1", "2.0.0", Bump::Major)
    );
}

#[test]
fn npm_manifest_and_lock_file() {
    let manifest = "@@ -10,7 +10,7 @@\n   \"dependencies\": {\n-    \"lodash\": \"^4.17.20\",\n+    \"lodash\": \"^5.0.0\",\n     \"react\": \"^18.2.0\"\n";
    assert_eq!(
        changes("package.json", manifest),
        one("lodash", "^4.17.20", "^5.0.0", Bump::Major)
    );
    let lock = "@@ -50,9 +50,9 @@\n     \"node_modules/lodash\": {\n-      \"version\": \"4.17.20\",\n-      \"resolved\": \"https://registry.npmjs.org/lodash/-/lodash-4.17.20.tgz\",\n-      \"integrity\": \"sha512-aaa\"\n+      \"version\": \"5.0.0\",\n+      \"resolved\": \"https://registry.npmjs.org/lodash/-/lodash-5.0.0.tgz\",\n+      \"integrity\": \"sha512-bbb\"\n     },\n";
    assert_eq!(
        changes("package-lock.json", lock),
        one("lodash", "4.17.20", "5.0.0", Bump::Major)
    );
    let yarn =
        "@@ -1,4 +1,4 @@\n lodash@^4.17.20:\n-  version \"4.17.20\"\n+  version \"4.17.21\"\n";
    assert_eq!(
        changes("yarn.lock", yarn),
        one("lodash", "4.17.20", "4.17.21", Bump::Patch)
    );
}

#[test]
fn python_go_and_ruby_pins() {
    let requirements = "@@ -1,3 +1,3 @@\n-foo==0.3.1\n+foo==0.4.0\n bar>=1.0\n";
    assert_eq!(
        changes("requirements.txt", requirements),
        one("foo", "0.3.1", "0.4.0", Bump::ZeroMinor)
    );
    let pyproject =
        "@@ -5,4 +5,4 @@ dependencies = [\n-    \"httpx>=0.24\",\n+    \"httpx>=0.27\",\n";
    assert_eq!(
        changes("pyproject.toml", pyproject),
        one("httpx", "0.24", "0.27", Bump::ZeroMinor)
    );
    let poetry = "@@ -5,4 +5,4 @@\n [tool.poetry.dependencies]\n-requests = \"^2.28\"\n+requests = \"^2.31\"\n";
    assert_eq!(
        changes("pyproject.toml", poetry),
        one("requests", "^2.28", "^2.31", Bump::Minor)
    );
    let go = "@@ -5,4 +5,4 @@ require (\n-\tgithub.com/x/y v1.5.0\n+\tgithub.com/x/y/v2 v2.0.0\n \tgolang.org/x/net v0.1.0 // indirect\n";
    assert_eq!(
        changes("go.mod", go),
        one("github.com/x/y", "v1.5.0", "v2.0.0", Bump::Major)
    );
    let gemfile = "@@ -1,2 +1,2 @@\n-gem 'rails', '~> 6.1'\n+gem 'rails', '~> 7.0'\n";
    assert_eq!(
        changes("Gemfile", gemfile),
        one("rails", "~> 6.1", "~> 7.0", Bump::Major)
    );
    let gemfile_lock = "@@ -1,2 +1,2 @@\n-    rails (6.1.7)\n+    rails (7.0.4)\n";
    assert_eq!(
        changes("Gemfile.lock", gemfile_lock),
        one("rails", "6.1.7", "7.0.4", Bump::Major)
    );
}

#[test]
fn lines_that_only_move_are_not_changes() {
    let moved = "@@ -1,3 +1,3 @@\n-serde = \"1.0\"\n clap = \"4\"\n+serde = \"1.0\"\n";
    assert_eq!(changes("Cargo.toml", moved), []);
    let added_only = "@@ -1,2 +1,3 @@\n clap = \"4\"\n+anyhow = \"1\"\n";
    assert_eq!(changes("Cargo.toml", added_only), []);
}

#[test]
fn human_only_for_major_zero_minor_lockstep_and_unreadable() {
    let change = |file: &str, dependency: &str, from: &str, to: &str| VersionChange {
        file: file.into(),
        dependency: dependency.into(),
        bump: bump(from, to),
        from: from.into(),
        to: to.into(),
    };
    let cases: [(Vec<VersionChange>, Vec<String>, Vec<&str>); 6] = [
        (
            vec![change("Cargo.toml", "serde", "1.0.1", "1.0.2")],
            vec![],
            vec![],
        ),
        (
            vec![change("Cargo.toml", "serde", "1.0.1", "1.1.0")],
            vec![],
            vec![],
        ),
        (
            vec![
                change("Cargo.toml", "serde", "1.0.1", "2.0.0"),
                change("Cargo.lock", "serde", "1.0.1", "2.0.0"),
            ],
            vec![],
            vec![
                "serde 1.0.1 → 2.0.0 in Cargo.toml: a major bump",
                "serde 1.0.1 → 2.0.0 in Cargo.lock: a major bump",
            ],
        ),
        (
            vec![change("requirements.txt", "foo", "0.3.1", "0.4.0")],
            vec![],
            vec!["foo 0.3.1 → 0.4.0 in requirements.txt: a 0.x minor bump (breaking below 1.0)"],
        ),
        (
            vec![
                change("a/Cargo.toml", "log", "0.4.1", "0.4.2"),
                change("b/Cargo.toml", "log", "0.4.1", "0.4.2"),
                change("Cargo.lock", "log", "0.4.1", "0.4.2"),
            ],
            vec![],
            vec![
                "log changed in lockstep in a/Cargo.toml, b/Cargo.toml: a version pinned across files",
            ],
        ),
        (
            vec![],
            vec!["package-lock.json".into()],
            vec![
                "package-lock.json: GitHub sent no diff (too large or binary); the version change cannot be read",
            ],
        ),
    ];
    for (changes, unreadable, expected) in cases {
        assert_eq!(human_only_reasons(&changes, &unreadable), expected);
    }
}
