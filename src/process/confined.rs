//! A command under the kernel's confinement (a delegate, or a gate check that may run what a
//! delegate planted): the files of the state dir it may write, made empty beforehand (written
//! in place), a temp folder of its own, and the ruleset its starting thread takes on.

use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::{ProcessEnd, ProcessError, ProcessSpec, run_in_group, run_in_group_with};
use crate::cancel::Cancel;
use crate::confine::{Confiner, Prepared};

/// What one confined command needs: the ruleset, and its temp folder (removed when dropped).
#[derive(Debug)]
pub struct Confinement {
    prepared: Prepared,
    temp: tempfile::TempDir,
    /// The files made for it, empty.
    own: Vec<PathBuf>,
    /// Variables its process is given (see [`Confiner::environment`]).
    environment: Vec<(String, String)>,
}

impl Confinement {
    /// Makes the `own` files afresh, empty (a delegate's verdict and report), and its temp
    /// folder; opens everything its ruleset grants.
    pub fn prepare(
        confiner: &Confiner,
        own: &[&Path],
        given: &[(String, String)],
    ) -> io::Result<Self> {
        for path in own {
            fresh_empty_file(path)?;
        }
        let temp = tempfile::Builder::new()
            .prefix("refine-loop-delegate-")
            .tempdir()?;
        let prepared = confiner.prepare(own, temp.path())?;
        Ok(Self {
            prepared,
            temp,
            own: own.iter().map(|path| path.to_path_buf()).collect(),
            environment: confiner.environment(given),
        })
    }

    /// What its process is given in its environment: `TMPDIR`, its temp folder (a tool that
    /// keeps results in the temp folder, Jest's cache or anything under `os.tmpdir()`, finds
    /// none there but its own: a delegate may write the run's temp folder, never this one), and
    /// the search paths its confiner settled where the command does not set them.
    pub fn environment(&self) -> Vec<(String, String)> {
        let temp = (
            "TMPDIR".to_string(),
            self.temp.path().to_string_lossy().into_owned(),
        );
        std::iter::once(temp)
            .chain(self.environment.iter().cloned())
            .collect()
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
        ..
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
