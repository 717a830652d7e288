//! Bytes as text: lowercase hex (fingerprints, digests) and percent-encoding (URLs).

/// A finished sha256 as lowercase hex, as every fingerprint is written.
pub(crate) fn hex_digest(hasher: sha2::Sha256) -> String {
    use sha2::Digest;
    hex(&hasher.finalize())
}

/// `bytes` percent-encoded as in a URL: every byte but `A-Z a-z 0-9 - . _ ~` and those in `keep`
/// is `%XX` (upper-case hex, as RFC 3986 recommends).
pub(crate) fn percent_encoded(bytes: &[u8], keep: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &byte in bytes {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) || keep.contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// `bytes` as lowercase hex, two digits a byte.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut hex = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        hex.push(char::from(DIGITS[usize::from(byte >> 4)]));
        hex.push(char::from(DIGITS[usize::from(byte & 0xf)]));
    }
    hex
}
