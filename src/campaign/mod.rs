//! Campaigns: presets that carry state across runs.

pub mod state;
