//! `refine-loop recover`: after a run was killed in the middle of a turn (SIGKILL, the OOM
//! killer, a lost runner), puts the tree back exactly as it was before that turn, from the
//! journal and the kept bytes the run left in the git folder. No run or check starts while such
//! a journal is there.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::CommandError;
use crate::cli::RecoverArgs;
use crate::exit_code;
use crate::workspace::{JOURNAL_FILE, Owner, Workspace, journals_in, store_folders};

/// Puts back every turn left in progress in the target's repository, and stops what runs that
/// ended without cleaning up left running; returns the exit code.
pub fn recover(args: &RecoverArgs, stdout: &mut dyn Write) -> Result<i32, CommandError> {
    let target = args.target.clone().unwrap_or_else(|| PathBuf::from("."));
    let repository = git2::Repository::discover(&target).map_err(|source| {
        CommandError::Usage(crate::workspace::WorkspaceError::opening(&target, source).to_string())
    })?;
    let mut lines = Vec::new();
    for folder in store_folders(repository.commondir()) {
        if let Some(line) = recover_run(&folder)? {
            lines.push(line);
        }
    }
    if lines.is_empty() {
        lines
            .push("nothing to recover: no run was interrupted in the middle of a turn".to_string());
    }
    let mut text = lines.join("\n");
    text.push('\n');
    super::print(stdout, &text);
    Ok(exit_code::SUCCESS)
}

/// Recovers what the run keeping bytes in `folder` left: its processes are stopped, and the turn
/// it was in the middle of, if any, is put back. A run still going is left alone. One line
/// saying what was done, if anything was.
fn recover_run(folder: &Path) -> Result<Option<String>, CommandError> {
    let failed = |error: crate::workspace::WorkspaceError| {
        CommandError::Recover(format!("{}: {error}", folder.display()))
    };
    let journal_path = folder.join(JOURNAL_FILE);
    let has_journal = std::fs::symlink_metadata(&journal_path).is_ok();
    let owner = match Owner::read(folder) {
        Ok(owner) => owner,
        Err(_) if !has_journal => return Ok(None),
        Err(error) => return Err(failed(error)),
    };
    // A run that still holds its state dir is not interrupted: it is working.
    let _lock = match std::fs::symlink_metadata(&owner.state_dir) {
        Ok(_) => match crate::campaign::books::lock_state_dir(&owner.state_dir) {
            Ok(lock) => Some(lock),
            Err(crate::campaign::books::CampaignError::LockHeld { .. }) => return Ok(None),
            Err(error) => return Err(CommandError::Campaign(error)),
        },
        Err(_) => None,
    };
    let stopped = crate::process::kill_marked(&owner.run, Some(folder));
    let stopped = match stopped {
        0 => String::new(),
        count => format!("; {count} process(es) it left running were stopped"),
    };
    if !has_journal {
        // Seen to: the next recover passes it by; the bytes stay.
        let _ = std::fs::remove_file(folder.join(crate::workspace::OWNER_FILE));
        return Ok(Some(format!(
            "run {} (pid {}) ended between turns: nothing to put back; its kept bytes stay in {}{stopped}",
            owner.run,
            owner.pid,
            folder.display()
        )));
    }
    let (mut workspace, journal) = Workspace::reopen(&journal_path).map_err(failed)?;
    let restored = workspace.restore(&journal).map_err(failed)?;
    workspace.discard_store();
    let mut line = format!(
        "recovered {}: the turn {} of run {} (pid {}); {} path(s) put back",
        journal.root.display(),
        journal.turn,
        journal.run,
        journal.pid,
        restored.len()
    );
    if !restored.is_empty() {
        line.push_str(": ");
        line.push_str(&restored.join(", "));
    }
    line.push_str(&stopped);
    Ok(Some(line))
}

/// Refuses to start while a run's turn is left in progress in the repository holding `target`:
/// the tree holds a change nobody judged, and maybe the user's work half put back.
pub fn refuse_interrupted(target: &Path) -> Result<(), CommandError> {
    let Ok(repository) = git2::Repository::discover(target) else {
        return Ok(());
    };
    let journals = journals_in(repository.commondir());
    let Some(first) = journals.first() else {
        return Ok(());
    };
    Err(CommandError::Interrupted {
        journal: first.clone(),
    })
}
