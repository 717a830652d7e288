//! Renderers: one concept a file, each turning the model into something a person or a CI system
//! reads.

mod ci;
pub mod codequality;
#[cfg(test)]
mod fixture;
pub mod junit;
pub mod sarif;
mod table;

pub use ci::{
    CODE_QUALITY_FILE, CiCheck, CiReportError, CiReportInput, JUNIT_FILE, SARIF_FILE,
    config_anchor, write_ci_reports,
};
pub use table::render_table;
