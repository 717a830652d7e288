//! What a run tells whoever watches it. The engine emits these events and prints nothing; the
//! command that started the run subscribes (its console: the spinner on a terminal, the lines a
//! person reads, the CI log's groups), the way a test runner's reporter consumes test events.

use crate::model::StopReason;

/// One thing that happened in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event<'a> {
    /// What the loop is doing now ("cycle 2: verifying with the gate").
    Doing(&'a str),
    /// A cycle opened.
    CycleStarted { cycle: u32 },
    /// A cycle closed, with its one line for a person (the preset's card).
    CycleClosed { cycle: u32, line: &'a str },
    /// A line for a person outside the cycles: a campaign's kickoff, or why nothing ran.
    Note(&'a str),
    /// The cycles stopped, by this rule.
    Stopped(StopReason),
}

/// Whoever watches a run.
pub trait Observer {
    fn observe(&mut self, event: Event<'_>);
}
