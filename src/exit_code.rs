//! The process exit codes, in one place: the constants, the one mapping from a run's outcome,
//! and [`TABLE`], from which the book's table is checked (`tests/it/book.rs`).

/// The gate passed (or the command did its job).
pub const SUCCESS: i32 = 0;
/// The gate failed; findings remain.
pub const NEEDS_FIX: i32 = 1;
/// Usage or configuration error: nothing ran.
pub const USAGE: i32 = 2;
/// A budget (cycles, time, rounds or a spending cap) ran out.
pub const BUDGET: i32 = 3;
/// The gate could not run, or a check could not give a result (infrastructure failure).
pub const ERROR: i32 = 4;
/// `sweep`: GitHub answered an error status, or could not be reached in time.
pub const SWEEP_UNREADABLE: i32 = 5;
/// Stopped by SIGINT or SIGTERM.
pub const CANCELLED: i32 = 130;

/// The exit code of a run's outcome.
pub fn of_outcome(outcome: crate::model::Outcome) -> i32 {
    use crate::model::Outcome;
    match outcome {
        Outcome::Success => SUCCESS,
        Outcome::NeedsFix => NEEDS_FIX,
        Outcome::Budget => BUDGET,
        Outcome::Error => ERROR,
        Outcome::Cancelled => CANCELLED,
    }
}

/// Which endings `run --exit-zero` turns into exit 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExitZero {
    /// No flag: every outcome keeps its code.
    #[default]
    Off,
    /// `--exit-zero`: the endings that are the run's own verdict on the code (NEEDS-FIX, BUDGET).
    /// An ERROR (the gate could not run: a missing tool, an unusable state dir) and a CANCELLED
    /// run (stopped from outside before it could end on its own) keep their codes, so a job that
    /// ran nothing is never green.
    Findings,
    /// `--exit-zero=all`: every outcome, ERROR and CANCELLED too.
    All,
}

impl ExitZero {
    /// Reads the flag's value or `REFINE_LOOP_EXIT_ZERO`: `findings` (also `true`, `1`, `yes`,
    /// `on`, and the bare flag), `all`, or `false` (also `0`, `no`, `off`).
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "findings" | "true" | "1" | "yes" | "on" => Ok(Self::Findings),
            "all" => Ok(Self::All),
            "false" | "0" | "no" | "off" => Ok(Self::Off),
            _ => Err(format!(
                "`{text}` is not `findings` (NEEDS-FIX and BUDGET exit 0) or `all` (every outcome exits 0)"
            )),
        }
    }
}

/// The code `run` exits with: `code` (its outcome's, or its error's), unless `--exit-zero`
/// covers it. A usage or configuration error (nothing ran) is never covered.
pub fn with_exit_zero(code: i32, exit_zero: ExitZero) -> i32 {
    match (exit_zero, code) {
        (_, USAGE) | (ExitZero::Off, _) => code,
        (ExitZero::Findings, NEEDS_FIX | BUDGET) | (ExitZero::All, _) => SUCCESS,
        (ExitZero::Findings, _) => code,
    }
}

/// Every exit code with what it means, as the book's "Exit codes" page lists them.
pub const TABLE: &[(i32, &str)] = &[
    (
        SUCCESS,
        "the gate passed (or the command did its job); `run`: SUCCESS (also: a finished campaign that `--continue=auto` leaves at rest)",
    ),
    (
        NEEDS_FIX,
        "the gate failed; `run`: NEEDS-FIX: findings remain, or a stop rule (diminishing returns, oscillation, no progress, same error, a plateau or the round budget with handoffs, a critical finding, a campaign's pending earlier work) ended it",
    ),
    (
        USAGE,
        "usage or configuration error; nothing ran (also: a bad campaign request, `sweep` offline or given a repository that is not `owner/name`, a symlinked state dir or state file, a state dir the run's uid cannot create or lock (run as the checkout's owner: `docker run --user`), a campaign configuration changed without `--continue`, `merge` of a folder that is not a state dir or a shard with no cycles, a delegate whose spending a cap cannot read: no `usage` reader, or one without cost under a cost cap)",
    ),
    (
        BUDGET,
        "`run`: BUDGET: a budget ran out (cycles, time, rounds, or a spending cap: `cost-budget`)",
    ),
    (
        ERROR,
        "ERROR: the gate could not run, or a check could not give a result (`infra`); `check`, `run` at the baseline: a check changed the repository's files, tracked or the user's untracked ones (put back; a gate must only read); `run`: a check's tool is missing at the baseline (after its `install`, if any), or the run failed several cycles in a row; a campaign's state cannot be used (a partial set of files, another repository's state, a corrupt file) or another run holds its lock; `run`, `check`: a killed run left a turn in progress (run `refine-loop recover` first); `recover`: the tree could not be put back; `run`: an error or an internal panic mid-turn (the tree is put back first); `sweep` could not write `sweep.json`",
    ),
    (
        SWEEP_UNREADABLE,
        "`sweep`: GitHub answered an error status or did not answer in time",
    ),
    (
        CANCELLED,
        "CANCELLED: stopped by SIGINT or SIGTERM; the state is saved",
    ),
];

/// The book's "Exit codes" table (docs/src/exit-codes.md), from [`TABLE`].
pub fn markdown_table() -> String {
    let mut text = String::from("| code | meaning |\n|---|---|\n");
    for (code, meaning) in TABLE {
        text.push_str(&format!("| {code} | {meaning} |\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_zero_covers_the_verdicts_and_all_covers_every_ending_but_a_usage_error() {
        // (code, without the flag, --exit-zero, --exit-zero=all)
        let table = [
            (SUCCESS, SUCCESS, SUCCESS, SUCCESS),
            (NEEDS_FIX, NEEDS_FIX, SUCCESS, SUCCESS),
            (BUDGET, BUDGET, SUCCESS, SUCCESS),
            (ERROR, ERROR, ERROR, SUCCESS),
            (CANCELLED, CANCELLED, CANCELLED, SUCCESS),
            (USAGE, USAGE, USAGE, USAGE),
        ];
        for (code, off, findings, all) in table {
            assert_eq!(
                with_exit_zero(code, ExitZero::Off),
                off,
                "{code} without the flag"
            );
            assert_eq!(
                with_exit_zero(code, ExitZero::Findings),
                findings,
                "{code} --exit-zero"
            );
            assert_eq!(
                with_exit_zero(code, ExitZero::All),
                all,
                "{code} --exit-zero=all"
            );
        }
    }

    #[test]
    fn exit_zero_reads_its_values_and_the_old_booleans() {
        for (text, expected) in [
            ("findings", ExitZero::Findings),
            ("true", ExitZero::Findings),
            ("1", ExitZero::Findings),
            ("YES", ExitZero::Findings),
            ("all", ExitZero::All),
            ("false", ExitZero::Off),
            ("0", ExitZero::Off),
            ("off", ExitZero::Off),
        ] {
            assert_eq!(ExitZero::parse(text), Ok(expected), "{text}");
        }
        assert!(ExitZero::parse("error").is_err());
    }
}
