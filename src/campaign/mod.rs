//! Campaigns: presets that carry state across runs.

pub mod candidates;
pub mod request;
pub mod state;
