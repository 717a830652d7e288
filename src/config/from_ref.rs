//! `--config-from-ref REF`: the config file, and what it names that is read with it (parser
//! folders, integrity folders, prompt templates), taken from a commit rather than the work tree.
//! On a pull request the base branch's settings then decide how the pull request's code is
//! judged: the pull request cannot turn confinement off, widen `writable`, pick its own
//! delegates or parsers, or relax integrity. (The gate's own scripts are the pull request's, as
//! in any CI job.)

use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use super::error::ConfigError;
use super::wire::ConfigFile;

/// The config as a commit has it, written out to a folder of its own for the loader to read.
#[derive(Debug)]
pub struct FromRef {
    _folder: tempfile::TempDir,
    /// Where the commit's config file is written.
    pub config_file: PathBuf,
}

/// Writes out `config_file` (a path of the work tree holding `target`) as `reference` has it,
/// with the folders and files it names that the loader reads.
pub fn materialize(
    target: &Path,
    config_file: &Path,
    reference: &str,
) -> Result<FromRef, ConfigError> {
    let fail = |reason: String| ConfigError::InvalidOverride {
        source_name: format!("--config-from-ref {reference}"),
        reason,
    };
    let repo = git2::Repository::discover(target)
        .map_err(|error| fail(format!("not in a git repository: {}", error.message())))?;
    let root = repo
        .workdir()
        .ok_or_else(|| fail("a bare repository has no working tree".into()))?;
    let relative = in_tree(root, config_file).ok_or_else(|| {
        fail(format!(
            "{} is not in the repository",
            config_file.display()
        ))
    })?;
    let tree = repo
        .revparse_single(reference)
        .and_then(|object| object.peel_to_commit())
        .and_then(|commit| commit.tree())
        .map_err(|error| fail(format!("no such commit: {}", error.message())))?;
    let text = blob(&repo, &tree, &relative).ok_or_else(|| {
        fail(format!(
            "{reference} has no {} (a config must be committed there to be read from it)",
            relative.display()
        ))
    })?;
    let origin = format!("{reference}:{}", relative.display());
    let text = String::from_utf8(text).map_err(|_| fail(format!("{origin}: not UTF-8")))?;
    let file: ConfigFile = crate::parse::from_toml(&origin, &text)?;
    let folder = tempfile::Builder::new()
        .prefix("refine-loop-config-")
        .tempdir()
        .map_err(|error| fail(error.to_string()))?;
    let write = |path: &Path, bytes: &[u8]| -> Result<(), ConfigError> {
        let full = folder.path().join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent).map_err(|error| fail(error.to_string()))?;
        }
        std::fs::write(&full, bytes).map_err(|error| fail(error.to_string()))
    };
    write(&relative, text.as_bytes())?;
    let config_dir = relative.parent().unwrap_or(Path::new(""));
    let named = (file.parser_dirs.iter().flatten())
        .chain(file.integrity.iter().flat_map(|i| i.dirs.iter().flatten()))
        .chain(file.delegate.iter().filter_map(|d| d.template.as_ref()));
    for path in named {
        let Some(path) = lexical(&config_dir.join(path)) else {
            continue;
        };
        for (file, bytes) in files_under(&repo, &tree, &path) {
            write(&file, &bytes)?;
        }
    }
    Ok(FromRef {
        config_file: folder.path().join(&relative),
        _folder: folder,
    })
}

/// `path` relative to the work tree's `root`, when it is in it.
fn in_tree(root: &Path, path: &Path) -> Option<PathBuf> {
    let path = std::path::absolute(path).ok()?;
    let parent = path.parent()?.canonicalize().ok()?;
    let path = parent.join(path.file_name()?);
    let root = root.canonicalize().ok()?;
    path.strip_prefix(root).ok().map(Path::to_path_buf)
}

/// `path` with `.` and `..` resolved by name; `None` when it leaves the repository.
fn lexical(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(part) => out.push(part),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// The bytes of the file at `path` in `tree`.
fn blob(repo: &git2::Repository, tree: &git2::Tree<'_>, path: &Path) -> Option<Vec<u8>> {
    let entry = tree.get_path(path).ok()?;
    let object = entry.to_object(repo).ok()?;
    object.as_blob().map(|blob| blob.content().to_vec())
}

/// Every file at or beneath `path` in `tree`, with its bytes.
fn files_under(
    repo: &git2::Repository,
    tree: &git2::Tree<'_>,
    path: &Path,
) -> Vec<(PathBuf, Vec<u8>)> {
    let Ok(entry) = tree.get_path(path) else {
        return Vec::new();
    };
    let Ok(object) = entry.to_object(repo) else {
        return Vec::new();
    };
    if let Some(blob) = object.as_blob() {
        return vec![(path.to_path_buf(), blob.content().to_vec())];
    }
    let Some(subtree) = object.as_tree() else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let _ = subtree.walk(git2::TreeWalkMode::PreOrder, |folder, entry| {
        if let Some(blob) = entry
            .to_object(repo)
            .ok()
            .as_ref()
            .and_then(|o| o.as_blob())
        {
            let name = std::ffi::OsStr::from_bytes(entry.name_bytes());
            found.push((path.join(folder).join(name), blob.content().to_vec()));
        }
        git2::TreeWalkResult::Ok
    });
    found
}
