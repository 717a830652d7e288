//! Appending to a file the runner reads after the step: created when missing, never truncated.

use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use crate::ci::CiError;

/// Appends `text` to `path`, creating the file when it is missing. When the file does not end
/// with a line break (another tool wrote a last line without one), one is written first, so
/// that `text` starts on a line of its own; `text` is ended with one when it lacks it. Returns
/// the size the file had before.
pub(super) fn append_text(path: &Path, text: &str) -> Result<u64, CiError> {
    let error = |source| CiError::Append {
        path: path.to_path_buf(),
        source,
    };
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
        .map_err(error)?;
    let size = file.metadata().map_err(error)?.len();
    let mut bytes = Vec::with_capacity(text.len() + 2);
    if size > 0 && !ends_with_line_break(&mut file).map_err(error)? {
        bytes.push(b'\n');
    }
    bytes.extend_from_slice(text.as_bytes());
    if !text.is_empty() && !text.ends_with('\n') {
        bytes.push(b'\n');
    }
    file.write_all(&bytes).map_err(error)?;
    Ok(size)
}

/// The size of `path` in bytes, 0 when it does not exist.
pub(super) fn size_of(path: &Path) -> Result<u64, CiError> {
    match std::fs::metadata(path) {
        Ok(metadata) => Ok(metadata.len()),
        Err(source) if source.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(source) => Err(CiError::Append {
            path: path.to_path_buf(),
            source,
        }),
    }
}

fn ends_with_line_break(file: &mut std::fs::File) -> Result<bool, std::io::Error> {
    let mut last = [0u8];
    file.seek(SeekFrom::End(-1))?;
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_and_keeps_lines_apart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("file");
        let table = [
            // (text appended, file afterwards, size before)
            ("first\n", "first\n", 0),
            ("second", "first\nsecond\n", 6),
            ("", "first\nsecond\n", 13),
        ];
        for (text, expected, size_before) in table {
            assert_eq!(append_text(&path, text).unwrap(), size_before, "{text:?}");
            assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
        }
        std::fs::write(&path, "no line break").unwrap();
        append_text(&path, "next\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "no line break\nnext\n"
        );
        assert_eq!(size_of(&path).unwrap(), 19);
        assert_eq!(size_of(&dir.path().join("missing")).unwrap(), 0);
    }

    #[test]
    fn a_missing_folder_is_an_error_naming_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing").join("file");
        let error = append_text(&path, "x").unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with(&format!("cannot append to {}: ", path.display())),
            "{error}"
        );
    }
}
