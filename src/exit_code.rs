//! The process exit codes, in one place. The README's table lists the same.

/// The gate passed (or the command did its job).
pub const SUCCESS: i32 = 0;
/// The gate failed; findings remain.
pub const NEEDS_FIX: i32 = 1;
/// Usage or configuration error: nothing ran.
pub const USAGE: i32 = 2;
/// A budget (cycles or time) ran out.
pub const BUDGET: i32 = 3;
/// The gate could not run, or a check could not give a result (infrastructure failure).
pub const ERROR: i32 = 4;
/// `sweep`: GitHub answered an error status, or could not be reached in time.
pub const SWEEP_UNREADABLE: i32 = 1;
/// Stopped by SIGINT or SIGTERM.
pub const CANCELLED: i32 = 130;
