//! `refine-loop init`: write a commented starter `refine-loop.toml` for the project it finds:
//! read-only gate checks, fixers made from them, agents to uncomment. It never overwrites a file.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{CommandError, print};
use crate::cli::InitArgs;
use crate::config::{ConfigError, defaults};
use crate::exit_code;
use crate::state::StateError;

mod detect;
mod invocation;
mod kinds;
mod starter;

/// Writes (or prints) the starter config; returns the exit code.
pub fn init(args: &InitArgs, stdout: &mut dyn Write) -> Result<i32, CommandError> {
    let target = args.target.clone().unwrap_or_else(|| PathBuf::from("."));
    if !target.is_dir() {
        return Err(ConfigError::TargetNotDirectory { path: target }.into());
    }
    let (kinds, text) = starter_config(&target);
    if args.print || args.dry_run {
        print(stdout, &text);
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
            print(stdout, &format!("wrote {} ({found})\n", path.display()));
            match exclude_state_dir(&target) {
                Ok(Some(line)) => print(
                    stdout,
                    &format!("added {line} to .git/info/exclude (the run's reports and state)\n"),
                ),
                Ok(None) => {}
                Err(error) => {
                    tracing::warn!(%error, "could not add the state dir to .git/info/exclude")
                }
            }
            Ok(exit_code::SUCCESS)
        }
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
            Err(CommandError::Usage(format!(
                "{}: already exists; init never overwrites it (use --dry-run to see the starter config)",
                path.display()
            )))
        }
        Err(source) => Err(StateError { path, source }.into()),
    }
}

/// The starter config for the project in `target`, and the kinds of project found.
pub fn starter_config(target: &Path) -> (Vec<&'static str>, String) {
    let project = detect::Project::scan(target);
    let kinds = kinds::kinds(&project);
    let text = starter::render(&project, &kinds);
    (kinds.iter().map(|kind| kind.name).collect(), text)
}

/// Adds the state dir of a run in `target` (`.refine-loop/`, anchored at its place in the work
/// tree) to the repository's `info/exclude`, so that its reports never show as untracked files;
/// returns the line added, `None` when `target` is in no repository or the line is there.
fn exclude_state_dir(target: &Path) -> std::io::Result<Option<String>> {
    let Ok(repo) = git2::Repository::discover(target) else {
        return Ok(None);
    };
    let Some(workdir) = repo.workdir() else {
        return Ok(None);
    };
    let inside = target
        .canonicalize()?
        .strip_prefix(workdir.canonicalize()?)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let mut line = String::from("/");
    for part in inside.iter() {
        // A folder's name as a literal pattern: git reads `*?[\` in it as a glob.
        for c in part.to_string_lossy().chars() {
            if matches!(c, '*' | '?' | '[' | '\\') {
                line.push('\\');
            }
            line.push(c);
        }
        line.push('/');
    }
    line.push_str(defaults::STATE_DIR);
    line.push('/');
    let info = repo.commondir().join("info");
    let exclude = info.join("exclude");
    let existing = match std::fs::read_to_string(&exclude) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(error) => return Err(error),
    };
    if existing.lines().any(|known| known.trim() == line) {
        return Ok(None);
    }
    std::fs::create_dir_all(&info)?;
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(&exclude)?;
    let separator = if existing.is_empty() || existing.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    file.write_all(format!("{separator}# refine-loop's reports and state\n{line}\n").as_bytes())?;
    Ok(Some(line))
}
