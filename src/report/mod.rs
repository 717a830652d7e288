//! Renderers: one concept a file, each turning the model into something a person or a CI system
//! reads.

mod table;

pub use table::render_table;
