//! Campaigns: presets that carry state across runs.

pub mod books;
pub mod candidates;
pub mod history;
pub mod hunks;
pub mod identity;
pub mod request;
