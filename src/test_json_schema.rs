//! JSON Schema validation for the tests, by python-jsonschema (the reference implementation,
//! installed by scripts/test into .tools/python): `scripts/tools/json_schema_errors.py` checks
//! the schema against its draft's meta-schema, then each document, formats included.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

/// For each of `documents`, why the schema at `schema` refuses it (empty when it is valid).
/// Panics when the schema itself is invalid, or python-jsonschema is missing.
pub fn errors(schema: &Path, documents: &[Value]) -> Vec<Vec<String>> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/tools/json_schema_errors.py");
    let mut child = Command::new("python3")
        .arg(&script)
        .arg(schema)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs the schema check");
    let input = serde_json::to_vec(documents).expect("documents serialise");
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(&input)
        .expect("the schema check reads its documents");
    let output = child.wait_with_output().expect("the schema check ends");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the schema check of {} failed (python-jsonschema comes with scripts/test): {stderr}",
        schema.display()
    );
    serde_json::from_slice(&output.stdout).expect("the schema check prints JSON")
}
