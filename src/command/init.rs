//! `refine-loop init`: write a commented starter `refine-loop.toml` for the project it finds.
//! It never overwrites a file.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::CommandError;
use crate::cli::InitArgs;
use crate::config::{ConfigError, defaults};
use crate::exit_code;
use crate::state::StateError;

const HEADER: &str = include_str!("../../templates/init/header.toml");
const GENERIC: &str = include_str!("../../templates/init/generic.toml");

/// Project kinds, the files that reveal them, and their checks.
const KINDS: &[(&str, &[&str], &str)] = &[
    (
        "Rust",
        &["Cargo.toml"],
        include_str!("../../templates/init/rust.toml"),
    ),
    (
        "Python",
        &["pyproject.toml", "setup.cfg", "setup.py"],
        include_str!("../../templates/init/python.toml"),
    ),
    (
        "Node.js",
        &["package.json"],
        include_str!("../../templates/init/node.toml"),
    ),
];

/// Writes (or prints) the starter config; returns the exit code.
pub fn init(args: &InitArgs, stdout: &mut dyn Write) -> Result<i32, CommandError> {
    let target = args.target.clone().unwrap_or_else(|| PathBuf::from("."));
    if !target.is_dir() {
        return Err(ConfigError::TargetNotDirectory { path: target }.into());
    }
    let (kinds, text) = starter_config(&target);
    if args.print {
        write_out(stdout, &text);
        return Ok(exit_code::SUCCESS);
    }
    let path = target.join(defaults::CONFIG_FILE);
    let created = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path);
    let written = created.and_then(|mut file| {
        file.write_all(text.as_bytes()).inspect_err(|_| {
            // Leave no partial file behind: init would refuse to overwrite it next time.
            let _ = std::fs::remove_file(&path);
        })
    });
    match written {
        Ok(()) => {
            let found = if kinds.is_empty() {
                "no known project file; wrote a generic gate to edit".to_string()
            } else {
                format!("found {}", kinds.join(", "))
            };
            write_out(stdout, &format!("wrote {} ({found})\n", path.display()));
            Ok(exit_code::SUCCESS)
        }
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
            Err(CommandError::Usage(format!(
                "{}: already exists; init never overwrites it (use --print to see the starter config)",
                path.display()
            )))
        }
        Err(source) => Err(StateError { path, source }.into()),
    }
}

/// The starter config for the project in `target`, and the kinds of project found.
pub fn starter_config(target: &Path) -> (Vec<&'static str>, String) {
    let mut text = HEADER.to_string();
    let mut kinds = Vec::new();
    for (kind, markers, checks) in KINDS {
        if markers.iter().any(|marker| target.join(marker).is_file()) {
            kinds.push(*kind);
            text.push_str(checks);
        }
    }
    if kinds.is_empty() {
        text.push_str(GENERIC);
    }
    (kinds, text)
}

fn write_out(stdout: &mut dyn Write, text: &str) {
    if let Err(error) = stdout.write_all(text.as_bytes())
        && error.kind() != std::io::ErrorKind::BrokenPipe
    {
        tracing::warn!(%error, "could not print");
    }
}
