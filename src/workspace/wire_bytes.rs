//! Bytes that are usually text (paths, link targets) in JSON: a string when they are UTF-8, an
//! array of numbers when not, so that any file name comes back exactly.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Wire {
    Text(String),
    Bytes(Vec<u8>),
}

pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
    match std::str::from_utf8(bytes) {
        Ok(text) => serializer.serialize_str(text),
        Err(_) => serializer.collect_seq(bytes),
    }
}

pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
    Ok(match Wire::deserialize(deserializer)? {
        Wire::Text(text) => text.into_bytes(),
        Wire::Bytes(bytes) => bytes,
    })
}

/// The same for a path on disk.
pub mod path {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    use std::path::{Path, PathBuf};

    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(path: &Path, serializer: S) -> Result<S::Ok, S::Error> {
        super::serialize(path.as_os_str().as_bytes(), serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<PathBuf, D::Error> {
        super::deserialize(deserializer)
            .map(|bytes| PathBuf::from(std::ffi::OsString::from_vec(bytes)))
    }
}

#[cfg(test)]
mod tests {
    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Holder(#[serde(with = "super")] Vec<u8>);

    #[test]
    fn text_stays_text_and_other_bytes_come_back_exactly() {
        for (bytes, json) in [
            (b"src/a b.rs".to_vec(), "\"src/a b.rs\""),
            ("café".as_bytes().to_vec(), "\"café\""),
            (b"caf\xe9".to_vec(), "[99,97,102,233]"),
            (Vec::new(), "\"\""),
        ] {
            let written = serde_json::to_string(&Holder(bytes.clone())).unwrap();
            assert_eq!(written, json);
            assert_eq!(serde_json::from_str::<Holder>(&written).unwrap().0, bytes);
        }
    }
}
