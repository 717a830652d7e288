//! A turn and its journal, and restore first: a run that ends in an error or a panic while a
//! change is not judged yet puts the tree back from the turn's journal before it ends.

use super::{Attempt, Engine, RunError, turn};
use crate::delegate::{Assignment, DelegateSpec};

impl Engine<'_> {
    /// Undoes an attempt that was not undone already.
    pub fn roll_back(&mut self, attempt: &Attempt) -> Result<(), RunError> {
        if !attempt.settled && !attempt.changes.is_empty() {
            self.workspace
                .roll_back(&attempt.changes, attempt.started)?;
        }
        Ok(())
    }

    /// Looks at the tree afresh: what a delegate leaves from now on is its own.
    pub fn refresh(&mut self) -> Result<(), RunError> {
        self.snapshot = self.workspace.snapshot()?;
        Ok(())
    }

    /// One delegate's turn on `assignment`, from the tree as last seen; what it must not have
    /// done is undone at once (see [`turn`]).
    pub fn take_turn(
        &mut self,
        delegate: usize,
        spec: &DelegateSpec,
        assignment: &Assignment<'_>,
    ) -> Result<Attempt, RunError> {
        let attempt = turn::take_turn(
            self.settings,
            self.workspace,
            &self.snapshot,
            &turn::Turn {
                delegate,
                spec,
                assignment,
            },
            self.confiner.as_ref(),
            self.cancel,
            &mut self.pending,
        );
        if let Ok(attempt) = &attempt {
            self.delegate_time += attempt.ran_for;
        }
        attempt
    }

    /// Every change so far was judged (kept or rolled back): nothing is left to put back.
    pub fn settle(&mut self) -> Result<(), RunError> {
        if self.pending.take().is_some() {
            self.workspace.end_turn()?;
        }
        Ok(())
    }

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
