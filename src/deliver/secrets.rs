//! The secret scan hook: a patch whose text, or any blob it carries, has findings is not written.

use std::path::Path;

use super::patch::PatchFile;
use super::{DeliverError, git};

/// Looks for secrets in some bytes. Findings describe what was found and where, never the secret.
pub trait SecretScan {
    fn scan(&self, content: &[u8]) -> Vec<String>;
}

impl<F: Fn(&[u8]) -> Vec<String>> SecretScan for F {
    fn scan(&self, content: &[u8]) -> Vec<String> {
        self(content)
    }
}

/// Fails with [`DeliverError::SecretRefused`] (naming `path`, where `file` would go) when the scan
/// finds anything in the patch text or in a blob the patch carries: binary patches are encoded,
/// so their blobs are scanned as they are, and every file a patch brings in is scanned whole.
pub(super) fn refuse(
    repo: &git2::Repository,
    path: &Path,
    file: &PatchFile,
    scan: &dyn SecretScan,
) -> Result<(), DeliverError> {
    let mut findings: Vec<String> = scan
        .scan(&file.contents)
        .into_iter()
        .map(|finding| format!("patch text: {finding}"))
        .collect();
    for blob in &file.blobs {
        let content = repo
            .find_blob(blob.id)
            .map_err(git(format!("read blob {}", blob.id)))?;
        findings.extend(scan.scan(content.content()).into_iter().map(|finding| {
            format!(
                "{} ({}): {finding}",
                String::from_utf8_lossy(&blob.path),
                blob.side.as_str()
            )
        }));
    }
    if findings.is_empty() {
        Ok(())
    } else {
        Err(DeliverError::SecretRefused {
            path: path.to_path_buf(),
            findings,
        })
    }
}
