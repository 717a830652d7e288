//! The persisted data model: diagnostics and gate summaries, as serde types with `format_version`.

mod diagnostic;
mod summary;

pub use diagnostic::{Diagnostic, Severity, SeverityCounts, TestCounts};
pub use summary::{
    CategorySummary, CheckRecord, CheckStatus, ExpectedCount, GateResult, GateSummary,
};

/// The version written into every persisted file of this model.
pub const FORMAT_VERSION: u32 = 1;
