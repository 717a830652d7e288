//! Campaigns: presets that carry state across runs.

pub mod request;
pub mod state;
