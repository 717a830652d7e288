//! Campaigns: presets that carry state across runs.

pub mod candidates;
pub mod history;
pub mod hunks;
pub mod identity;
pub mod request;
pub mod state;
