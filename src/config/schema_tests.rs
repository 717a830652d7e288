//! The committed schema is the generated one; every config the project ships matches it; and it
//! refuses a typo'd key and a badly written value as the loader does.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{FILE, generate};
use crate::config::{Overrides, load};

const UPDATE: &str = "run `UPDATE_SCHEMA=1 cargo test --lib schema` and commit the file";

/// A gate of one check: the least a loadable config holds.
const GATE: &str = "[[gate.check]]\nname = \"g\"\nrun = \"true\"\n";

fn crate_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Why the committed schema (the drift test holds it equal to the generated one), itself
/// checked against the draft-07 meta-schema, refuses each config (TOML text); an empty list
/// for one it accepts.
fn schema_errors<T: AsRef<str>>(texts: &[T]) -> Vec<Vec<String>> {
    let documents: Vec<Value> = texts
        .iter()
        .map(|text| {
            let text = text.as_ref();
            toml::from_str(text).unwrap_or_else(|error| panic!("not TOML: {error}\n{text}"))
        })
        .collect();
    crate::test_json_schema::errors(&crate_root().join(FILE), &documents)
}

/// Whether the loader takes a config (TOML text), in a target of its own.
fn loads(text: &str) -> Result<(), String> {
    let target = tempfile::tempdir().unwrap();
    std::fs::write(target.path().join("refine-loop.toml"), text).unwrap();
    load(&Overrides {
        target: Some(target.path().to_path_buf()),
        ..Overrides::default()
    })
    .map(drop)
    .map_err(|error| error.to_string())
}

#[test]
fn the_committed_schema_is_the_generated_one() {
    let path = crate_root().join(FILE);
    let generated = generate();
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != generated {
        let line = committed
            .lines()
            .zip(generated.lines())
            .position(|(old, new)| old != new)
            .unwrap_or_else(|| committed.lines().count().min(generated.lines().count()));
        panic!(
            "{FILE} differs from the config types (src/config/wire.rs) from its line {}: {UPDATE}",
            line + 1
        );
    }
}

/// The entries of one of the crate's folders, sorted; none when it is missing.
fn sorted_entries(folder: &str) -> Vec<PathBuf> {
    let entries = std::fs::read_dir(crate_root().join(folder));
    let mut paths: Vec<_> = entries
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .collect();
    paths.sort();
    paths
}

fn crate_relative(path: &Path) -> String {
    path.strip_prefix(crate_root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Every config the project ships, as a user's file holds it, named by where it comes from:
/// the demo's, what `init` writes for each kind of project, each ready-made delegate below a
/// gate, and the examples'.
fn shipped_configs() -> Vec<(String, String)> {
    let root = crate_root();
    let mut configs = vec![(
        "templates/demo/refine-loop.toml".to_string(),
        std::fs::read_to_string(root.join("templates/demo/refine-loop.toml")).unwrap(),
    )];
    let projects: [&[&str]; 5] = [
        &["Cargo.toml"],
        &["pyproject.toml"],
        &["package.json"],
        &[],
        &["Cargo.toml", "pyproject.toml", "package.json"],
    ];
    for markers in projects {
        let target = tempfile::tempdir().unwrap();
        for marker in markers {
            std::fs::write(target.path().join(marker), "").unwrap();
        }
        let (_, text) = crate::command::starter_config(target.path());
        configs.push((format!("init with {markers:?}"), text));
    }
    for path in sorted_entries("templates/delegates") {
        if path.extension().is_some_and(|ext| ext == "toml") {
            let delegate = std::fs::read_to_string(&path).unwrap();
            configs.push((crate_relative(&path), format!("{GATE}\n{delegate}")));
        }
    }
    for path in sorted_entries("examples") {
        let path = path.join("refine-loop.toml");
        if let Ok(text) = std::fs::read_to_string(&path) {
            configs.push((crate_relative(&path), text));
        }
    }
    configs
}

#[test]
fn every_shipped_config_matches_the_schema() {
    let configs = shipped_configs();
    let delegates = configs
        .iter()
        .filter(|(name, _)| name.starts_with("templates/delegates/"))
        .count();
    assert!(delegates > 0, "no ready-made delegate was found");
    let texts: Vec<&str> = configs.iter().map(|(_, text)| text.as_str()).collect();
    for ((name, _), errors) in configs.iter().zip(schema_errors(&texts)) {
        assert!(
            errors.is_empty(),
            "{name} does not match {FILE}: {errors:#?}"
        );
    }
}

#[test]
fn a_typo_d_key_is_refused_by_the_schema_as_by_the_loader() {
    let typos = [
        ("timout", format!("[gate]\ntimout = \"5m\"\n\n{GATE}")),
        ("parsr", format!("{GATE}parsr = \"ruff\"\n")),
        ("max_cycle", format!("{GATE}\n[loop]\nmax_cycle = 3\n")),
        ("stat_dir", format!("stat_dir = \"runs\"\n{GATE}")),
        (
            "category",
            format!("{GATE}\n[[delegate]]\ncategory = [\"lint\"]\nrun = \"true\"\n"),
        ),
        ("gates", GATE.replace("gate.check", "gates.check")),
    ];
    let texts: Vec<&str> = typos.iter().map(|(_, text)| text.as_str()).collect();
    for ((key, text), errors) in typos.iter().zip(schema_errors(&texts)) {
        assert!(
            errors
                .iter()
                .any(|error| error.contains(&format!("'{key}'"))),
            "the schema should refuse `{key}`, but says {errors:#?}"
        );
        let loaded = loads(text);
        assert!(
            loaded.as_ref().is_err_and(|error| error.contains(key)),
            "the loader should refuse `{key}`: {loaded:?}"
        );
    }
}

/// Written forms the schema and the loader agree on: each config, and whether both take it.
const FORMS: &[(&str, bool)] = &[
    // Durations and sizes as the README writes them.
    (
        "[gate]\ntimeout = \"1h30m\"\nkill_grace = \"500ms\"\nlog_limit = \"64MiB\"",
        true,
    ),
    ("[gate]\ntimeout = \"90s\"\nlog_limit = \"65536\"", true),
    ("[gate]\nlog_limit = \"1GiB\"\nkill_grace = \"0s\"", true),
    ("[gate]\ntimeout = \"10 minutes\"", false),
    ("[gate]\ntimeout = \"10\"", false),
    ("[gate]\ntimeout = 600", false),
    ("[gate]\ntimeout = \"1.5s\"", false),
    ("[gate]\ntimeout = \"10M\"", false),
    ("[gate]\nlog_limit = \"64MB\"", false),
    ("[gate]\nlog_limit = 65536", false),
    // `[loop]`: every choice the loader knows, and the bounds.
    (
        "[loop]\nmax_cycles = 10\ntime_budget = \"45m\"\nverify = \"per-delegate\"\n\
         isolate = \"worktree\"\nconfine = \"off\"\nbaseline_confirm_runs = 5\n\
         protect_ignored_max = \"16MiB\"\nscope = [\"src\"]\npriority = [\"lint\"]",
        true,
    ),
    (
        "[loop]\nmax_cycles = 1\nverify = \"per-cycle\"\nisolate = \"none\"\n\
         confine = \"required\"",
        true,
    ),
    (
        "[loop]\nconfine = \"auto\"\nbaseline_confirm_runs = 0",
        true,
    ),
    ("[loop]\nmax_cycles = 0", false),
    ("[loop]\nmax_cycles = 11", false),
    ("[loop]\nbaseline_confirm_runs = 6", false),
    ("[loop]\nkeep_runs = 1", true),
    ("[loop]\nkeep_runs = 1000", true),
    ("[loop]\nkeep_runs = 0", false),
    ("[loop]\nkeep_runs = 1001", false),
    ("[loop]\nkeep_runs = -1", false),
    ("[loop]\nkeep_runs = \"10\"", false),
    ("[loop]\nverify = \"per-run\"", false),
    ("[loop]\nisolate = \"docker\"", false),
    ("[loop]\nconfine = \"yes\"", false),
    ("sweep = \"yes\"", false),
    // `[[delegate]]`: each role, lens and kind.
    (
        "[[delegate]]\ncategories = [\"lint\"]\nrun = \"true\"\nrole = \"discover\"\n\
         lens = \"architecture\"\nstdin = \"prompt\"\ntimeout = \"10m\"\nidle_timeout = \"3m\"\n\
         env = { RUST_LOG = \"warn\" }",
        true,
    ),
    (
        "[[delegate]]\nkind = \"command\"\nrun = \"true\"\nrole = \"execute\"",
        true,
    ),
    ("[[delegate]]\nrun = \"true\"\nrole = \"reviewer\"", true),
    (
        "[[delegate]]\nkind = \"http\"\nendpoint = \"http://localhost:11434/v1/chat/completions\"\n\
         model = \"m\"\nmax_tokens = 1\nmax_files = 1\nmax_file_bytes = \"64KiB\"",
        true,
    ),
    ("[[delegate]]\nrun = \"true\"\nrole = \"fixer\"", false),
    ("[[delegate]]\nkind = \"grpc\"\nrun = \"true\"", false),
    ("[[delegate]]\nrun = \"true\"\nstdin = \"file\"", false),
    (
        "[[delegate]]\nrun = \"true\"\nusage = \"claude-stream-json\"",
        true,
    ),
    ("[[delegate]]\nrun = \"true\"\nusage = \"none\"", true),
    ("[[delegate]]\nrun = \"true\"\nusage = \"claude\"", false),
    (
        "[[delegate]]\nrun = \"true\"\nrole = \"discover\"\nlens = \"speed\"",
        false,
    ),
    ("[[delegate]]\nrun = \"true\"\ncategories = []", false),
    (
        "[[delegate]]\nkind = \"http\"\nendpoint = \"https://e/v1\"\nmodel = \"m\"\nmax_tokens = 0",
        false,
    ),
];

/// A check of every optional key, and checks missing what they need.
const CHECK_FORMS: &[(&str, bool)] = &[
    (
        "[[gate.check]]\nname = \"pytest\"\ncategory = \"tests\"\nrun = \"python -m pytest\"\n\
         parser = \"ruff,pytest\"\ntimeout = \"20m\"\nenv = { CI = \"1\" }\n\
         success_codes = [0, 5]\n\
         install = \"pip install pytest\"\nmissing_tool = \"No module named (\\\\w+)\"\n\
         rerun = \"pytest {test}\"",
        true,
    ),
    ("[[gate.check]]\nname = \"g\"", false),
    ("[[gate.check]]\nrun = \"true\"", false),
    ("[[gate.check]]\nname = \"\"\nrun = \"true\"", false),
    (
        "[[gate.check]]\nname = \"g\"\nrun = \"true\"\nsuccess_codes = []",
        false,
    ),
];

#[test]
fn the_schema_takes_what_the_loader_takes() {
    let with_gate = FORMS
        .iter()
        .map(|(form, ok)| (format!("{GATE}\n{form}\n"), *ok));
    let checks = CHECK_FORMS
        .iter()
        .map(|(form, ok)| (format!("{form}\n"), *ok));
    let cases: Vec<(String, bool)> = with_gate.chain(checks).collect();
    let texts: Vec<&str> = cases.iter().map(|(text, _)| text.as_str()).collect();
    for ((text, expected), errors) in cases.iter().zip(schema_errors(&texts)) {
        let expected = *expected;
        assert_eq!(
            errors.is_empty(),
            expected,
            "the schema on\n{text}\nsays {errors:#?}"
        );
        let loaded = loads(text);
        assert_eq!(
            loaded.is_ok(),
            expected,
            "the loader on\n{text}\nsays {loaded:?}"
        );
    }
}

#[test]
fn an_unknown_usage_reader_is_refused_with_the_nearest_one() {
    let error = loads(&format!(
        "{GATE}\n[[delegate]]\nrun = \"claude -p\"\nusage = \"claude-jsn\"\n"
    ))
    .expect_err("an unknown reader is refused");
    assert!(error.contains("usage"), "{error}");
    assert!(error.contains("did you mean \"claude-json\"?"), "{error}");
    assert!(
        error.contains("claude-json, claude-stream-json, codex-json, aider, none"),
        "{error}"
    );
    // An http delegate's endpoint reports its usage: the key is for commands.
    let error = loads(&format!(
        "{GATE}\n[[delegate]]\nkind = \"http\"\nendpoint = \"https://e/v1\"\nmodel = \"m\"\n\
         usage = \"none\"\n"
    ))
    .expect_err("usage is for a command");
    assert!(error.contains("usage"), "{error}");
}
