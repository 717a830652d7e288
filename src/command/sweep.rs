//! `refine-loop sweep`: read the repository's open surface on GitHub (read-only), write
//! `sweep.json`, print a short summary. Exit 0 when done or skipped, 2 when refused (offline, a
//! bad repository name), 1 when GitHub could not be read.

use std::io::Write;
use std::path::PathBuf;

use super::CommandError;
use crate::cancel::Cancel;
use crate::cli::SweepArgs;
use crate::exit_code;
use crate::sweep::{self, RepositoryName, SweepError, SweepOptions};

/// Runs the sweep; returns the exit code.
pub fn sweep(
    args: &SweepArgs,
    cancel: &Cancel,
    stdout: &mut dyn Write,
) -> Result<i32, CommandError> {
    if args.offline {
        return Err(SweepError::Offline.into());
    }
    let repository = args
        .repo
        .as_deref()
        .map(|value| {
            RepositoryName::parse(value).ok_or_else(|| SweepError::BadRepository {
                from: "--repo",
                value: value.to_string(),
            })
        })
        .transpose()?;
    let target = args.target.clone().unwrap_or_else(|| PathBuf::from("."));
    if !target.is_dir() {
        return Err(CommandError::Usage(format!(
            "--target {}: not a folder",
            target.display()
        )));
    }
    let mut options = SweepOptions::from_environment(target.clone(), repository)?;
    options.merged = usize::from(args.merged);
    options.timeout = args.timeout.0;
    let result = sweep::run_sweep(&options, cancel)?;
    let state_dir = args
        .state_dir
        .clone()
        .unwrap_or_else(|| target.join(crate::config::defaults::STATE_DIR));
    let written = sweep::write_sweep_json(&state_dir, &result).map_err(SweepError::from)?;
    let summary = crate::report::sweep_summary_lines(&result, &written);
    let _ = stdout.write_all(&crate::secrets::redacted(summary.as_bytes()));
    Ok(exit_code::SUCCESS)
}
