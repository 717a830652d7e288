//! refine-loop: headless, bounded improvement cycles on a repository's quality gate, for CI.
//!
//! The binary is a thin shell around [`main`]; everything else is library code. Public
//! are only the modules the binary, the integration tests and the fuzz targets use; the rest is
//! `pub(crate)`, so that the compiler reports what nothing uses.

pub(crate) mod campaign;
pub mod cancel;
pub(crate) mod ci;
pub(crate) mod cli;
pub(crate) mod clock;
pub(crate) mod command;
pub use command::main;
pub mod config;
pub(crate) mod confine;
pub(crate) mod delegate;
pub(crate) mod deliver;
pub(crate) mod encoding;
pub(crate) mod engine;
pub(crate) mod escape;
pub mod exit_code;
pub(crate) mod files;
pub(crate) mod gate;
pub mod integrity;
mod markdown;
pub mod model;
pub(crate) mod net;
pub(crate) mod new_since;
pub mod parse;
pub(crate) mod process;
pub(crate) mod report;
pub(crate) mod scope;
pub(crate) mod secrets;
pub(crate) mod spending;
pub(crate) mod state;
pub(crate) mod stop;
pub mod sweep;
pub(crate) mod template;
#[cfg(test)]
pub(crate) mod test_git;
#[cfg(test)]
pub(crate) mod test_json_schema;
pub(crate) mod workspace;

/// The final report's section on a sweep, for the sweep's integration tests.
pub use report::sweep_section;
