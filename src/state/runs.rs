//! Runs one after another in one state dir: the files a run or a `check` left at the top are
//! set aside before the next one writes its own (a run's, which may hold changes, under
//! `runs/<id>/`; a check's, which holds none, cleared), so the top never mixes two runs; and the
//! oldest of those folders are pruned. Only files the loop itself writes, by name, are touched.

use std::path::{Path, PathBuf};

use super::StateError;
use super::layout::{
    CODE_QUALITY_FILE, FINAL_REPORT_FILE, FINDINGS_FILE, HEURISTICS_FILE, HISTORY_FILE, JUNIT_FILE,
    Layout, MANIFEST_FILE, PATCH_FILE, PATCHES_DIR, RUN_FILE, SARIF_FILE, SUMMARY_FILE, TREND_FILE,
};

/// The folder of a run whose files were set aside without a manifest naming it, while they
/// held a patch (a run that stopped between writing its patch and its manifest).
const UNRECORDED: &str = "unrecorded";

/// The files at the top of the state dir that belong to one run or one check (besides its
/// `cycle-N/` folders).
const RUN_FILES: &[&str] = &[
    SUMMARY_FILE,
    FINDINGS_FILE,
    TREND_FILE,
    HISTORY_FILE,
    RUN_FILE,
    FINAL_REPORT_FILE,
    PATCH_FILE,
    PATCHES_DIR,
    MANIFEST_FILE,
    JUNIT_FILE,
    SARIF_FILE,
    CODE_QUALITY_FILE,
];

/// `cycle-N/`, N a number.
fn is_cycle_folder(name: &str) -> bool {
    name.strip_prefix("cycle-")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The entries at the top of `dir` that a run or a check wrote, by name.
fn run_entries(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| RUN_FILES.contains(&name.as_str()) || is_cycle_folder(name))
        .collect();
    names.sort();
    names
}

/// A run id as a folder name: one plain path component, else none.
fn folder_name(id: &str) -> Option<&str> {
    let plain = !id.is_empty()
        && id != "."
        && id != ".."
        && !id.contains(['/', '\\', '\0'])
        && !id.starts_with('.');
    plain.then_some(id)
}

/// Sets aside the files an earlier run or check left at the top of the state dir, before a
/// new one writes there: a run's (`id`, from its manifest) move to `runs/<id>/` (a fresh
/// `runs/<id>-2/` when that exists), with a copy of the lessons (`heuristics.json`, which stay
/// at the top for the runs after it); without an id they are removed, unless they hold a patch,
/// which is never lost (`runs/unrecorded/`). Returns the folder they went to, if any.
pub fn set_aside(layout: &Layout, id: Option<&str>) -> Result<Option<PathBuf>, StateError> {
    let dir = layout.dir();
    let names = run_entries(dir);
    if names.is_empty() {
        return Ok(None);
    }
    let holds_patch = names.iter().any(|n| n == PATCH_FILE || n == PATCHES_DIR);
    let name = match (id.and_then(folder_name), holds_patch) {
        (Some(name), _) => name,
        (None, true) => UNRECORDED,
        (None, false) => {
            for name in &names {
                remove(&dir.join(name))?;
            }
            return Ok(None);
        }
    };
    let folder = fresh_folder(&layout.runs(), name)?;
    for name in &names {
        let to = folder.join(name);
        std::fs::rename(dir.join(name), &to).map_err(|source| StateError { path: to, source })?;
    }
    let lessons = dir.join(HEURISTICS_FILE);
    if lessons.is_file() {
        let to = folder.join(HEURISTICS_FILE);
        std::fs::copy(&lessons, &to).map_err(|source| StateError { path: to, source })?;
    }
    Ok(Some(folder))
}

/// `runs/<name>/`, made new: `<name>-2`, `-3`… when it exists.
fn fresh_folder(runs: &Path, name: &str) -> Result<PathBuf, StateError> {
    std::fs::create_dir_all(runs).map_err(|source| StateError {
        path: runs.to_path_buf(),
        source,
    })?;
    let mut suffix = 1;
    loop {
        let folder = match suffix {
            1 => runs.join(name),
            n => runs.join(format!("{name}-{n}")),
        };
        match std::fs::create_dir(&folder) {
            Ok(()) => return Ok(folder),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => suffix += 1,
            Err(source) => {
                return Err(StateError {
                    path: folder,
                    source,
                });
            }
        }
    }
}

/// Removes one of the loop's own entries: a file, or a folder with what is in it (never
/// through a symbolic link: one is removed as the link it is).
fn remove(path: &Path) -> Result<(), StateError> {
    let removed = match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(error),
    };
    removed.map_err(|source| StateError {
        path: path.to_path_buf(),
        source,
    })
}

/// The folders under `runs/`, newest first (by when their files were set aside, then by name).
pub fn earlier_folders(layout: &Layout) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(layout.runs()) else {
        return Vec::new();
    };
    let mut folders: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
        .map(|entry| {
            let modified = entry
                .metadata()
                .and_then(|meta| meta.modified())
                .unwrap_or(std::time::UNIX_EPOCH);
            (modified, entry.path())
        })
        .collect();
    folders.sort_by(|a, b| b.cmp(a));
    folders.into_iter().map(|(_, path)| path).collect()
}

/// Which of `folders` (newest first) are pruned: all but the first `keep`, and never one in
/// `held` (a run whose changes the work tree still holds: its patch is the way back).
pub fn pruned<'a>(folders: &'a [PathBuf], keep: usize, held: &[PathBuf]) -> Vec<&'a PathBuf> {
    folders
        .iter()
        .skip(keep)
        .filter(|folder| !held.contains(folder))
        .collect()
}

/// Removes the folders under `runs/` beyond the newest `keep` (see [`pruned`]); returns them.
pub fn prune(layout: &Layout, keep: usize, held: &[PathBuf]) -> Result<Vec<PathBuf>, StateError> {
    let folders = earlier_folders(layout);
    let mut removed = Vec::new();
    for folder in pruned(&folders, keep, held) {
        remove(folder)?;
        removed.push(folder.clone());
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state_dir(files: &[&str]) -> (tempfile::TempDir, Layout) {
        let temp = tempfile::tempdir().unwrap();
        let layout = Layout::new(temp.path().join(".refine-loop"));
        for file in files {
            let path = layout.dir().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, file.as_bytes()).unwrap();
        }
        (temp, layout)
    }

    fn listing(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = walkdir(dir)
            .into_iter()
            .map(|path| path.strip_prefix(dir).unwrap().display().to_string())
            .collect();
        names.sort();
        names
    }

    fn walkdir(dir: &Path) -> Vec<PathBuf> {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if entry.file_type().unwrap().is_dir() {
                files.extend(walkdir(&entry.path()));
            } else {
                files.push(entry.path());
            }
        }
        files
    }

    #[test]
    fn cycle_folders_are_named_by_a_number() {
        for (name, is) in [
            ("cycle-0", true),
            ("cycle-12", true),
            ("cycle-", false),
            ("cycle-x", false),
            ("cycle-1a", false),
            ("cycles-1", false),
            ("history", false),
        ] {
            assert_eq!(is_cycle_folder(name), is, "{name}");
        }
    }

    #[test]
    fn a_run_id_is_a_folder_name_only_when_plain() {
        for (id, name) in [
            ("20261201-120000-42", Some("20261201-120000-42")),
            ("", None),
            (".", None),
            ("..", None),
            (".hidden", None),
            ("a/b", None),
            ("a\\b", None),
        ] {
            assert_eq!(folder_name(id), name, "{id:?}");
        }
    }

    /// What is left at the top, and under `runs/`, after an earlier run or check is set aside.
    #[test]
    fn the_top_keeps_nothing_of_an_earlier_run() {
        let run = &[
            "REFINE-LOOP-FINAL.md",
            "gate-summary.json",
            "manifest.json",
            "refine-loop.patch",
            "patches/0001-a.patch",
            "cycle-0/gate-summary.json",
            "cycle-1/gate-output.txt",
            "heuristics.json",
            ".lock",
            "sweep.json",
            "notes-of-mine.txt",
        ];
        let check = &[
            "REFINE-LOOP-FINAL.md",
            "gate-summary.json",
            "findings.json",
            "junit.xml",
            "cycle-0/gate-summary.json",
            ".lock",
        ];
        // (files, id, what stays at the top, what goes under runs/)
        type Case<'a> = (&'a [&'a str], Option<&'a str>, &'a [&'a str], &'a [&'a str]);
        let cases: &[Case<'_>] = &[
            (
                run,
                Some("run-1"),
                &[
                    ".lock",
                    "heuristics.json",
                    "notes-of-mine.txt",
                    "sweep.json",
                ],
                &[
                    "run-1/REFINE-LOOP-FINAL.md",
                    "run-1/cycle-0/gate-summary.json",
                    "run-1/cycle-1/gate-output.txt",
                    "run-1/gate-summary.json",
                    "run-1/heuristics.json",
                    "run-1/manifest.json",
                    "run-1/patches/0001-a.patch",
                    "run-1/refine-loop.patch",
                ],
            ),
            // A check's files hold no change: cleared.
            (check, None, &[".lock"], &[]),
            // A patch without a manifest is never lost.
            (
                &["refine-loop.patch", "findings.json"],
                None,
                &[],
                &["unrecorded/findings.json", "unrecorded/refine-loop.patch"],
            ),
            // An id that is no folder name is not one.
            (
                &["refine-loop.patch"],
                Some("../out"),
                &[],
                &["unrecorded/refine-loop.patch"],
            ),
            (&[".lock"], Some("run-1"), &[".lock"], &[]),
        ];
        for (files, id, top, runs) in cases {
            let (_temp, layout) = state_dir(files);
            let folder = set_aside(&layout, *id).unwrap();
            let at_top: Vec<String> = listing(layout.dir())
                .into_iter()
                .filter(|name| !name.starts_with("runs/"))
                .collect();
            assert_eq!(at_top, *top, "{files:?} {id:?}");
            assert_eq!(listing(&layout.runs()), *runs, "{files:?} {id:?}");
            assert_eq!(folder.is_some(), !runs.is_empty(), "{files:?} {id:?}");
        }
    }

    #[test]
    fn the_same_id_twice_gets_a_folder_of_its_own() {
        let (_temp, layout) = state_dir(&["manifest.json"]);
        let first = set_aside(&layout, Some("run-1")).unwrap().unwrap();
        std::fs::write(layout.manifest(), "again").unwrap();
        let second = set_aside(&layout, Some("run-1")).unwrap().unwrap();
        assert_eq!(first, layout.runs().join("run-1"));
        assert_eq!(second, layout.runs().join("run-1-2"));
        assert_eq!(
            std::fs::read_to_string(second.join("manifest.json")).unwrap(),
            "again"
        );
    }

    #[test]
    fn pruning_keeps_the_newest_and_every_held_run() {
        let folders: Vec<PathBuf> = ["d", "c", "b", "a"].iter().map(PathBuf::from).collect();
        let names = |kept: Vec<&PathBuf>| -> Vec<String> {
            kept.iter().map(|p| p.display().to_string()).collect()
        };
        // (keep, held, pruned)
        let cases: &[(usize, &[&str], &[&str])] = &[
            (0, &[], &["d", "c", "b", "a"]),
            (1, &[], &["c", "b", "a"]),
            (3, &[], &["a"]),
            (4, &[], &[]),
            (9, &[], &[]),
            (1, &["a"], &["c", "b"]),
            (0, &["d", "b"], &["c", "a"]),
        ];
        for (keep, held, expected) in cases {
            let held: Vec<PathBuf> = held.iter().map(PathBuf::from).collect();
            assert_eq!(
                names(pruned(&folders, *keep, &held)),
                *expected,
                "keep {keep}, held {held:?}"
            );
        }
    }
}
