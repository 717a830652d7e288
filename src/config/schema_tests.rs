//! The committed schema is the generated one.

use std::path::Path;

use super::{FILE, generate};

const UPDATE: &str = "run `UPDATE_SCHEMA=1 cargo test --lib schema` and commit the file";

fn crate_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_committed_schema_is_the_generated_one() {
    let path = crate_root().join(FILE);
    let generated = generate();
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != generated {
        let line = committed
            .lines()
            .zip(generated.lines())
            .position(|(old, new)| old != new)
            .unwrap_or_else(|| committed.lines().count().min(generated.lines().count()));
        panic!(
            "{FILE} differs from the config types (src/config/wire.rs) from its line {}: {UPDATE}",
            line + 1
        );
    }
}
