//! A sweep as a file: `sweep.json` in the state dir (through the secrets redactor). Its text
//! for people is rendered in `report::sweep_md`.

use std::path::{Path, PathBuf};

use super::Sweep;
use crate::state::{self, StateError};

/// The file a sweep is written to, in the state dir.
pub use crate::state::SWEEP_FILE;

/// Writes `sweep.json` into `state_dir` (created if missing), atomically and redacted; returns
/// its path.
pub fn write_sweep_json(state_dir: &Path, sweep: &Sweep) -> Result<PathBuf, StateError> {
    std::fs::create_dir_all(state_dir).map_err(|source| StateError {
        path: state_dir.to_path_buf(),
        source,
    })?;
    let path = state_dir.join(SWEEP_FILE);
    state::write_json(&path, sweep)?;
    Ok(path)
}
