//! The persisted data model: diagnostics and gate summaries, as serde types with `format_version`.

mod diagnostic;
mod findings;
mod outcome;
mod run;
mod spend;
mod summary;
mod trend;

pub use diagnostic::{Diagnostic, Severity, SeverityCounts, TestCounts};
pub use findings::FindingsFile;
pub use outcome::{Outcome, StopReason, is_breakthrough};
pub use run::{
    BaselineNotes, ConfinementNote, ConfinementState, FlakyTestNote, Installed, NewSinceNote,
    Preset, SignalBoundary,
};
pub use spend::{Spend, format_usd};
pub use summary::{
    CategorySummary, CheckRecord, CheckStatus, ExpectedCount, GateResult, GateSummary,
};
pub use trend::{
    CategoryCycle, CategoryHistory, IntegrityCounts, Regression, TokenUsage, Trend, TrendCycle,
};
