//! refine-loop: headless, bounded improvement cycles on a repository's quality gate, for CI.
//!
//! The binary is a thin shell around [`app::main`]; everything else is library code.

pub mod app;
pub mod campaign;
pub mod cancel;
pub mod ci;
pub mod cli;
pub mod clock;
pub mod command;
pub mod config;
pub mod delegate;
pub mod deliver;
pub mod engine;
pub mod exit_code;
pub mod gate;
pub mod model;
pub mod net;
pub mod parse;
pub mod process;
pub mod report;

pub mod scope;
pub mod secrets;
pub mod state;
pub mod stop;
pub mod sweep;
pub mod workspace;
