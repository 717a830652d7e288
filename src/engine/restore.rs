//! A turn and its journal, and restore first: a run that ends in an error or a panic while a
//! change is not judged yet puts the tree back from the turn's journal before it ends.

use super::{Attempt, Engine, RunError, turn};
use crate::delegate::{Assignment, DelegateSpec};

/// What a read-only delegate did when it was consulted.
#[derive(Debug)]
pub struct Consulted {
    pub attempt: Attempt,
    /// It changed the tree (a consulted delegate must only read): undone.
    pub changed: bool,
}

impl Engine<'_> {
    /// Consults `delegate`, which must only read (a discover delegate, a reviewer): it runs on
    /// `assignment` from the tree as it is now, and whatever it changed is undone at once. When
    /// a change before it is still to be judged (a reviewer reads the executor's change), that
    /// change stays in the tree and pending; else nothing is left pending after it.
    pub fn consult(
        &mut self,
        delegate: usize,
        spec: &DelegateSpec,
        assignment: &Assignment<'_>,
    ) -> Result<Consulted, RunError> {
        let judging = self.pending.is_some();
        if judging {
            // The change to judge is not the consulted delegate's.
            self.refresh()?;
        }
        let attempt = self.take_turn(delegate, spec, assignment)?;
        let changed = !attempt.changes.is_empty();
        self.roll_back(&attempt)?;
        if !judging {
            self.settle()?;
        }
        Ok(Consulted { attempt, changed })
    }

    /// Undoes an attempt that was not undone already.
    pub(super) fn roll_back(&mut self, attempt: &Attempt) -> Result<(), RunError> {
        if !attempt.settled && !attempt.changes.is_empty() {
            self.workspace
                .roll_back_attempts(&attempt.changes, attempt.started)?;
        }
        Ok(())
    }

    /// Looks at the tree afresh: what a delegate leaves from now on is its own.
    fn refresh(&mut self) -> Result<(), RunError> {
        self.snapshot = self.workspace.snapshot()?;
        Ok(())
    }

    /// One delegate's turn on `assignment`, from the tree as last seen; what it must not have
    /// done is undone at once (see [`turn`]).
    pub(super) fn take_turn(
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
                allowance: self.ledger.allowance(delegate),
            },
            self.confiner.as_ref(),
            self.cancel,
            &mut self.pending,
        );
        if let Ok(attempt) = &attempt {
            self.delegate_time += attempt.ran_for;
            let run = &attempt.run;
            let free = spec.spends_nothing() || run.spawn_error.is_some();
            self.ledger.record(delegate, run.usage.as_ref(), free);
            if let (Some(why), None) = (self.ledger.refuses(delegate), self.ledger.spent_cap()) {
                self.standing.cap(delegate);
                let line = format!(
                    "refine-loop: `{}` sits out the rest of the run: {why}",
                    spec.describe()
                );
                self.emit(super::Event::Note(&line));
            }
        }
        attempt
    }

    /// Every change so far was judged (kept or rolled back): nothing is left to put back.
    pub(super) fn settle(&mut self) -> Result<(), RunError> {
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
        crate::process::kill_marked(
            crate::process::run_mark(),
            Some(self.workspace.store().dir()),
        );
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
