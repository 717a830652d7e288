//! A command delegate under the kernel's confinement: its verdict, report and candidates files
//! made empty beforehand (the only files of the state dir it may write, in place), a temp folder
//! of its own (`TMPDIR`), and the ruleset its starting thread takes on.

use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::DelegateFiles;
use crate::cancel::Cancel;
use crate::confine::{Confiner, Prepared};
use crate::process::{ProcessEnd, ProcessError, ProcessSpec, run_in_group, run_in_group_with};

/// What one confined delegate needs: the ruleset, and its temp folder (removed when dropped).
#[derive(Debug)]
pub struct Confinement {
    prepared: Prepared,
    temp: tempfile::TempDir,
    /// The files made for it, empty.
    own: Vec<PathBuf>,
}

impl Confinement {
    /// Makes the delegate's verdict and report files afresh, empty, and its temp folder; opens
    /// everything its ruleset grants.
    pub fn prepare(confiner: &Confiner, files: &DelegateFiles) -> io::Result<Self> {
        let own = [&files.verdict, &files.report, &files.candidates];
        for path in own {
            fresh_empty_file(path)?;
        }
        let temp = tempfile::Builder::new()
            .prefix("refine-loop-delegate-")
            .tempdir()?;
        let prepared = confiner.prepare(&own.map(PathBuf::as_path), temp.path())?;
        Ok(Self {
            prepared,
            temp,
            own: own.map(PathBuf::clone).to_vec(),
        })
    }

    /// The delegate's `TMPDIR`.
    pub fn temp(&self) -> &Path {
        self.temp.path()
    }
}

/// Runs `process`, confined when `confinement` is given. When it ends its temp folder goes, and
/// so do the files made for it that it left empty: none was written.
pub fn run(
    process: ProcessSpec<'_>,
    confinement: Option<Confinement>,
    cancel: &Cancel,
    on_output: &mut dyn FnMut(&[u8]) -> io::Result<()>,
) -> Result<ProcessEnd, ProcessError> {
    let Some(Confinement {
        prepared,
        temp,
        own,
    }) = confinement
    else {
        return run_in_group(process, cancel, on_output);
    };
    let launcher = prepared.launcher().to_vec();
    // Its stdin (the prompt) is a copy in its own temp folder: the file in the state dir, opened
    // by the loop, could be opened again for writing through `/proc/self/fd/0`, and that open
    // reaches the file beneath the seal.
    let prompt = temp.path().join("prompt");
    if let Some(original) = process.stdin {
        std::fs::copy(original, &prompt).map_err(ProcessError::Spawn)?;
    }
    let process = ProcessSpec {
        launcher: &launcher,
        stdin: process.stdin.map(|_| prompt.as_path()),
        ..process
    };
    let mut prepared = Some(prepared);
    let ran = run_in_group_with(
        process,
        &mut |command| match prepared.take() {
            Some(prepared) => prepared.spawn(command),
            None => Err(io::Error::other("a confined delegate starts once")),
        },
        cancel,
        on_output,
    );
    drop(temp);
    for path in own {
        if std::fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_file() && meta.len() == 0) {
            let _ = std::fs::remove_file(&path);
        }
    }
    ran
}

/// Replaces whatever is at `path` (a file; never followed if a link) with a new empty file.
fn fresh_empty_file(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::NotFound => {}
        Err(error) => return Err(error),
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map(drop)
}
