//! `refine-loop.schema.json`: the JSON Schema of `refine-loop.toml`, generated from the wire
//! types so that editors (taplo and the TOML extensions built on it) complete and check the
//! file. Built in tests only: the schema is committed, and a test fails when it drifts.

use serde_json::{Map, Value};

use super::wire::ConfigFile;

/// The committed schema, relative to the crate's root.
pub const FILE: &str = "refine-loop.schema.json";

/// The schema as committed: draft-07 (the draft editors support most widely), pretty-printed,
/// with a final newline.
pub fn generate() -> String {
    let schema = schemars::generate::SchemaSettings::draft07()
        .into_generator()
        .into_root_schema_for::<ConfigFile>();
    let mut value = schema.to_value();
    tidy(&mut value);
    let mut text = serde_json::to_string_pretty(&value).expect("a schema is JSON");
    text.push('\n');
    text
}

/// Tidies every schema in `value` for a TOML file read in an editor: no `null`, descriptions
/// unwrapped. Only values of the keywords' own types are touched, so a property's name is safe
/// even when it is a keyword's.
fn tidy(value: &mut Value) {
    match value {
        Value::Object(schema) => {
            drop_null(schema);
            unwrap_description(schema);
            schema.values_mut().for_each(tidy);
        }
        Value::Array(items) => items.iter_mut().for_each(tidy),
        _ => {}
    }
}

/// TOML has no null: a key is unset by leaving it out. Removes the `null` schemars allows for
/// every `Option` (from `type`, `enum` and `anyOf`), so that editors offer only the type a key
/// really takes. What one `anyOf` branch is left becomes an `allOf`, which, unlike a `$ref`
/// beside it, keeps the key's description in draft-07.
fn drop_null(schema: &mut Map<String, Value>) {
    let is_null = |value: &Value| value.get("type").is_some_and(|kind| kind == "null");
    if let Some(Value::Array(types)) = schema.get_mut("type") {
        types.retain(|kind| kind != "null");
        if let [kind] = types.as_slice() {
            let kind = kind.clone();
            schema.insert("type".into(), kind);
        }
    }
    if let Some(Value::Array(values)) = schema.get_mut("enum") {
        values.retain(|value| !value.is_null());
    }
    if let Some(Value::Array(branches)) = schema.get_mut("anyOf") {
        branches.retain(|branch| !is_null(branch));
        if branches.len() == 1 {
            let branches = schema.remove("anyOf").unwrap_or_default();
            schema.insert("allOf".into(), branches);
        }
    }
}

/// Doc comments wrap at 100 columns; an editor wraps by itself. Paragraphs are kept.
fn unwrap_description(schema: &mut Map<String, Value>) {
    if let Some(Value::String(text)) = schema.get_mut("description") {
        *text = text
            .split("\n\n")
            .map(|paragraph| paragraph.replace('\n', " "))
            .collect::<Vec<_>>()
            .join("\n\n");
    }
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
