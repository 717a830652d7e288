//! What a person (or a CI log) sees while a run goes: a spinner naming what the loop is doing,
//! on a terminal only; one line per cycle; and in GitHub Actions, each cycle's log folded into
//! a group. It is the run's one [`Observer`]: the engine emits events and prints nothing.

#![expect(
    clippy::disallowed_methods,
    reason = "the spinner is drawn only when stderr is a terminal"
)]

use std::io::{IsTerminal, Write};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::engine::{Event, Observer};

/// The console of a run.
pub struct Console<'l, 'c> {
    /// Where the lines go (standard error: stdout keeps the outcome and the step's outputs).
    lines: &'l mut dyn Write,
    /// Where GitHub workflow commands go (the runner reads them from stdout); `None` outside
    /// GitHub Actions.
    commands: Option<&'c mut dyn Write>,
    spinner: Option<ProgressBar>,
    grouped: bool,
}

impl<'l, 'c> Console<'l, 'c> {
    /// A console writing its lines to `lines`, with a spinner when standard error is a
    /// terminal, and with GitHub groups written to `commands` when one is given.
    pub fn new(lines: &'l mut dyn Write, commands: Option<&'c mut dyn Write>) -> Self {
        let spinner = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new_spinner();
            if let Ok(style) = ProgressStyle::with_template("{spinner} {elapsed} {msg}") {
                bar.set_style(style);
            }
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        Self {
            lines,
            commands,
            spinner,
            grouped: false,
        }
    }

    fn line(&mut self, line: &str) {
        let lines = &mut *self.lines;
        let mut print = || {
            let _ = writeln!(lines, "{line}");
            let _ = lines.flush();
        };
        match &self.spinner {
            Some(bar) => bar.suspend(print),
            None => print(),
        }
    }

    fn command(&mut self, line: &str) {
        if let Some(commands) = self.commands.as_mut() {
            let _ = writeln!(commands, "{line}");
            let _ = commands.flush();
        }
    }

    fn end_group(&mut self) {
        if std::mem::take(&mut self.grouped) {
            self.command(crate::ci::github::endgroup());
        }
    }
}

impl Observer for Console<'_, '_> {
    fn observe(&mut self, event: Event<'_>) {
        match event {
            Event::Doing(what) => {
                if let Some(bar) = &self.spinner {
                    bar.set_message(what.to_string());
                }
            }
            Event::CycleStarted { cycle } => {
                self.end_group();
                if self.commands.is_some()
                    && let Ok(redactor) = crate::ci::process_redactor()
                {
                    let name = format!("refine-loop cycle {cycle}");
                    self.command(&crate::ci::github::group(&name, redactor));
                    self.grouped = true;
                }
            }
            Event::CycleClosed { line, .. } => {
                self.line(line);
                self.end_group();
            }
            Event::Note(line) => self.line(line),
            Event::Stopped(_) => {
                self.end_group();
                if let Some(bar) = self.spinner.take() {
                    bar.finish_and_clear();
                }
            }
        }
    }
}

impl Drop for Console<'_, '_> {
    fn drop(&mut self) {
        self.end_group();
        if let Some(bar) = self.spinner.take() {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StopReason;

    fn seen(github: bool, events: &[Event<'_>]) -> (String, String) {
        let (mut lines, mut commands) = (Vec::new(), Vec::new());
        {
            let commands: Option<&mut dyn Write> = github.then_some(&mut commands);
            let mut console = Console::new(&mut lines, commands);
            for event in events {
                console.observe(*event);
            }
        }
        (
            String::from_utf8(lines).unwrap(),
            String::from_utf8(commands).unwrap(),
        )
    }

    #[test]
    fn each_cycle_is_one_line_and_in_github_one_group() {
        let events = [
            Event::Doing("cycle 0: the baseline gate"),
            Event::Note("kickoff"),
            Event::CycleStarted { cycle: 1 },
            Event::Doing("cycle 1: verifying with the gate"),
            Event::CycleClosed {
                cycle: 1,
                line: "cycle 1 line",
            },
            Event::CycleStarted { cycle: 2 },
            Event::Stopped(StopReason::Cancelled),
        ];
        let (lines, commands) = seen(true, &events);
        assert_eq!(lines, "kickoff\ncycle 1 line\n");
        assert_eq!(
            commands,
            "::group::refine-loop cycle 1\n::endgroup::\n::group::refine-loop cycle 2\n::endgroup::\n"
        );
        let (lines, commands) = seen(false, &events);
        assert_eq!(lines, "kickoff\ncycle 1 line\n");
        assert_eq!(commands, "");
    }

    #[test]
    fn a_group_left_open_by_an_error_is_closed() {
        let (_, commands) = seen(true, &[Event::CycleStarted { cycle: 3 }]);
        assert_eq!(commands, "::group::refine-loop cycle 3\n::endgroup::\n");
    }
}
