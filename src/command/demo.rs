//! `refine-loop demo`: hardens a small, deliberately flawed Rust crate with the real `cargo fmt`
//! and `cargo clippy --fix`, in a folder of its own, and says where everything is.

#![expect(
    clippy::disallowed_methods,
    reason = "the demo's console lines go to stderr"
)]

use std::io::Write;
use std::path::{Path, PathBuf};

use super::CommandError;
use crate::cancel::Cancel;
use crate::cli::DemoArgs;
use crate::config::{self, Overrides};
use crate::engine::run_loop;
use crate::state::StateError;

/// The demo crate, embedded: (path, contents).
const FILES: &[(&str, &str)] = &[
    (
        "Cargo.toml",
        include_str!("../../templates/demo/Cargo.toml.in"),
    ),
    (
        "src/lib.rs",
        include_str!("../../templates/demo/src/lib.rs"),
    ),
    (
        "refine-loop.toml",
        include_str!("../../templates/demo/refine-loop.toml"),
    ),
    (".gitignore", "/target\n/.refine-loop\n"),
];

/// Writes the demo crate, commits it, runs the loop; returns the exit code.
pub fn demo(args: &DemoArgs, cancel: &Cancel, stdout: &mut dyn Write) -> Result<i32, CommandError> {
    let dir = match &args.dir {
        Some(dir) => dir.clone(),
        None => tempfile::Builder::new()
            .prefix("refine-loop-demo-")
            .tempdir()
            .map_err(|source| write_error(Path::new("(temporary folder)"), source))?
            .keep(),
    };
    if dir.join("refine-loop.toml").exists() {
        return Err(CommandError::Usage(format!(
            "{}: already holds a project; demo writes only into a new or empty folder",
            dir.display()
        )));
    }
    for (path, contents) in FILES {
        let full = dir.join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent).map_err(|source| write_error(parent, source))?;
        }
        std::fs::write(&full, contents).map_err(|source| write_error(&full, source))?;
    }
    commit(&dir).map_err(|error| {
        CommandError::Usage(format!(
            "{}: cannot make a git repository: {error}",
            dir.display()
        ))
    })?;
    say(
        stdout,
        &format!(
            "demo crate written to {}; hardening it with cargo clippy --fix and cargo fmt\n",
            dir.display()
        ),
    );
    let settings = config::load(&Overrides {
        target: Some(dir.clone()),
        ..Overrides::default()
    })?;
    let mut lines = std::io::stderr();
    let mut console = super::console::Console::new(&mut lines, None);
    let report = run_loop(
        &settings,
        crate::engine::EngineOptions {
            cancel,
            observer: &mut console,
            earlier_work: Vec::new(),
        },
    )?;
    drop(console);
    say(
        stdout,
        &format!(
            "{}: {}; failed {} → {}\nthe hardened crate: {}\nthe record: {}\n",
            report.outcome.as_str(),
            report.stop_reason.map_or("", |r| r.as_str()),
            report.baseline.failed_count,
            report.last.failed_count,
            dir.display(),
            report.layout.final_report().display()
        ),
    );
    Ok(crate::exit_code::of_outcome(report.outcome))
}

fn write_error(path: &Path, source: std::io::Error) -> CommandError {
    CommandError::State(StateError {
        path: PathBuf::from(path),
        source,
    })
}

/// `git init` and a first commit, through the library (no git program needed).
fn commit(dir: &Path) -> Result<(), git2::Error> {
    let repo = git2::Repository::init(dir)?;
    let mut index = repo.index()?;
    index.add_all(["*"].iter(), git2::IndexAddOption::DEFAULT, None)?;
    index.write()?;
    let tree = repo.find_tree(index.write_tree()?)?;
    let signature = git2::Signature::now("refine-loop demo", "demo@refine-loop.invalid")?;
    repo.commit(
        Some("HEAD"),
        &signature,
        &signature,
        "the flawed demo crate",
        &tree,
        &[],
    )?;
    Ok(())
}

fn say(stdout: &mut dyn Write, text: &str) {
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}
