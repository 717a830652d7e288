//! The shapes of CI framing, byte by byte: timestamps, job and step prefixes, GitLab's stream
//! tags and section markers (where each comes from: [`super`]). Each returns how much of a line
//! the shape covers, or `None`; none allocates.

pub(super) fn without_bom(raw: &[u8]) -> &[u8] {
    raw.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(raw)
}

/// `n` ASCII digits at the start of `bytes`.
fn digits(bytes: &[u8], n: usize) -> bool {
    bytes.len() >= n && bytes[..n].iter().all(u8::is_ascii_digit)
}

/// The length of an ISO 8601 UTC timestamp `YYYY-MM-DDTHH:MM:SS[.f…]Z` at the start of
/// `bytes`, and its number of decimals.
fn iso_timestamp(bytes: &[u8]) -> Option<(usize, usize)> {
    let date = digits(bytes, 4)
        && bytes.get(4) == Some(&b'-')
        && digits(&bytes[5..], 2)
        && bytes.get(7) == Some(&b'-')
        && digits(&bytes[8..], 2)
        && bytes.get(10) == Some(&b'T');
    if !date || !clock(&bytes[11..]) {
        return None;
    }
    let mut end = 19;
    let mut decimals = 0;
    if bytes.get(end) == Some(&b'.') {
        decimals = bytes[end + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if decimals == 0 || decimals > 9 {
            return None;
        }
        end += 1 + decimals;
    }
    (bytes.get(end) == Some(&b'Z')).then_some((end + 1, decimals))
}

/// `HH:MM:SS` at the start of `bytes`.
fn clock(bytes: &[u8]) -> bool {
    digits(bytes, 2)
        && bytes.get(2) == Some(&b':')
        && digits(&bytes[3..], 2)
        && bytes.get(5) == Some(&b':')
        && digits(&bytes[6..], 2)
}

/// The length of a separator after a prefix ending at `end`: one space, or none at the end.
fn separated(bytes: &[u8], end: usize) -> Option<usize> {
    match bytes.get(end) {
        Some(b' ') => Some(end + 1),
        None => Some(end),
        Some(_) => None,
    }
}

/// GitHub Actions: `2026-11-30T10:00:00.0041100Z ` (the runner writes 7 decimals).
pub(super) fn github_prefix(line: &[u8]) -> Option<usize> {
    let (end, decimals) = iso_timestamp(line)?;
    if decimals != 7 {
        return None;
    }
    separated(line, end)
}

/// `gh run view --log`: `<job>\t<step>\t` and the GitHub Actions timestamp.
pub(super) fn gh_prefix(line: &[u8]) -> Option<usize> {
    let first = memchr::memchr(b'\t', line)?;
    let second = first + 1 + memchr::memchr(b'\t', &line[first + 1..])?;
    let stamp = &line[second + 1..];
    Some(second + 1 + github_prefix(stamp)?)
}

/// GitLab: `2026-11-30T10:00:00.004112Z 00O ` (`+` instead of the space: the line continues
/// the one before; nothing after `00O`: an empty line).
pub(super) fn gitlab_prefix(line: &[u8]) -> Option<(usize, bool)> {
    let (end, _) = iso_timestamp(line)?;
    let tag = line.get(end + 1..end + 4)?;
    let stream = line[end] == b' '
        && tag[0].is_ascii_hexdigit()
        && tag[1].is_ascii_hexdigit()
        && matches!(tag[2], b'O' | b'E');
    if !stream {
        return None;
    }
    match line.get(end + 4) {
        Some(b' ') => Some((end + 5, false)),
        Some(b'+') => Some((end + 5, true)),
        None => Some((end + 4, false)),
        Some(_) => None,
    }
}

/// Jenkins Pipeline: `[2026-11-30T10:00:00.004Z] `.
pub(super) fn jenkins_iso_prefix(line: &[u8]) -> Option<usize> {
    let rest = line.strip_prefix(b"[")?;
    let (end, _) = iso_timestamp(rest)?;
    if rest.get(end) != Some(&b']') {
        return None;
    }
    separated(line, end + 2)
}

/// The Jenkins timestamper's plain text: `10:00:00 ` or elapsed `00:00:01.234 `.
pub(super) fn jenkins_clock_prefix(line: &[u8]) -> Option<usize> {
    if !clock(line) {
        return None;
    }
    let mut end = 8;
    if line.get(end) == Some(&b'.') {
        let decimals = line[end + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if decimals == 0 || decimals > 3 {
            return None;
        }
        end += 1 + decimals;
    }
    separated(line, end)
}

/// For a line of GitLab section markers (`section_start:1:name[opts]`, `section_end:2:name`,
/// each with its `\e[0K` and `\r`), what follows them; `None` when the line is not one.
pub(super) fn after_sections(line: &[u8]) -> Option<&[u8]> {
    let mut rest = line;
    let mut found = false;
    loop {
        while let Some(after) = rest
            .strip_prefix(b"\x1b[0K")
            .or_else(|| rest.strip_prefix(b"\r"))
        {
            rest = after;
        }
        let Some(after) = section_marker(rest) else {
            break;
        };
        rest = after;
        found = true;
    }
    found.then_some(rest)
}

/// After one `section_start:<epoch>:<name>[options]` or `section_end:<epoch>:<name>`.
fn section_marker(line: &[u8]) -> Option<&[u8]> {
    let rest = line
        .strip_prefix(b"section_start:")
        .or_else(|| line.strip_prefix(b"section_end:"))?;
    let epoch = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let rest = rest[epoch..].strip_prefix(b":").filter(|_| epoch > 0)?;
    let name = rest
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
        .count();
    if name == 0 {
        return None;
    }
    let mut rest = &rest[name..];
    if rest.first() == Some(&b'[')
        && let Some(close) = memchr::memchr(b']', rest)
    {
        rest = &rest[close + 1..];
    }
    Some(rest)
}
