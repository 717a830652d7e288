//! Restore first: a run that ends in an error or a panic while a change is not judged yet puts
//! the tree back from the turn's journal before it ends.

use super::{Engine, RunError};

impl Engine<'_> {
    /// The run ends in `error` (or a panic): the tree goes back to the state before the changes
    /// not judged yet, and then the error is returned; when that fails too, both are.
    pub(super) fn restore_pending(&mut self, error: RunError) -> RunError {
        let Some(journal) = self.pending.take() else {
            return error;
        };
        // What a delegate or a gate check left running could write while the tree is restored.
        crate::process::kill_marked(crate::process::run_mark());
        match self.workspace.restore(&journal) {
            Ok(restored) => {
                tracing::warn!(
                    paths = restored.len(),
                    "the run ends in an error: the tree was put back as it was before `{}`",
                    journal.turn
                );
                error
            }
            Err(failed) => RunError::NotRestored {
                error: Box::new(error),
                restore: failed,
            },
        }
    }
}

/// What a panic said.
pub(super) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|text| (*text).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}
