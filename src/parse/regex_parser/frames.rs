//! Which stack or traceback frame is the user's: a test runner prints the frames of a failure
//! from the innermost out (node, Rust backtraces) or from the test in (Python), and the place to
//! show is the first frame inside the repository, not one in installed packages, a language's
//! standard library or the runtime. A pattern with `user_frames = true` passes over the others.

use super::CompiledPattern;
use crate::parse::ParseContext;
use crate::parse::paths::resolve_path;

/// Path parts that mark installed or vendored code, wherever they stand in a path.
const LIBRARY_PARTS: &[&str] = &[
    "node_modules",
    "site-packages",
    "dist-packages",
    ".pnpm",
    ".yarn",
    ".cargo",
    ".rustup",
];

/// Path prefixes of runtimes' own code: node's internals and built-in modules, Deno's and Bun's.
const RUNTIME_PREFIXES: &[&str] = &["node:", "internal/", "ext:", "bun:", "<"];

/// Whether `raw`, a frame's path as the tool printed it, is in the user's code: inside the
/// target once resolved, and neither installed code nor a standard library.
pub fn is_user_frame(raw: &str, context: &ParseContext) -> bool {
    let raw = raw.trim();
    let raw = raw.strip_prefix("file://").unwrap_or(raw);
    if raw.is_empty() || RUNTIME_PREFIXES.iter().any(|p| raw.starts_with(p)) {
        return false;
    }
    let resolved = resolve_path(raw, &context.target, &context.cwd_relative);
    if resolved.outside_target {
        return false;
    }
    !resolved
        .path
        .split('/')
        .any(|part| LIBRARY_PARTS.contains(&part) || is_python_lib(part))
        && !is_rust_library(&resolved.path)
}

/// The place a JavaScript stack frame names, without its `at `: `fn (path:line:col)` (the
/// function may hold spaces, `new X`; the path parentheses, `cas (1)/a.js`) or `path:line:col`.
/// The path is as printed (a `file://` URL stays one).
pub fn frame_place(frame: &str) -> Option<(&str, u32, u32)> {
    let frame = frame.trim();
    let place = match frame.strip_suffix(')') {
        Some(inner) => inner.split_once(" (").map_or(inner, |(_, p)| p),
        None => frame,
    };
    let (rest, column) = place.rsplit_once(':')?;
    let (path, line) = rest.rsplit_once(':')?;
    let (line, column) = (line.parse().ok()?, column.parse().ok()?);
    (!path.is_empty()).then_some((path, line, column))
}

/// What the place a line gives may do for a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Nothing: a frame outside the user's code, for a pattern that takes only the user's.
    None,
    /// Fill what is missing.
    Fill,
    /// A frame in the user's code: fills what is missing, or replaces a place without a line.
    UserFrame,
}

/// What the place a line gives (its `file`, as the line's rule matched it) may do for a finding
/// of `pattern`.
pub fn gives_place(pattern: &CompiledPattern, file: Option<&str>, context: &ParseContext) -> Place {
    if !pattern.user_frames {
        return Place::Fill;
    }
    match file {
        Some(file) if !is_user_frame(file, context) => Place::None,
        Some(_) => Place::UserFrame,
        None => Place::Fill,
    }
}

/// `python3.11`, `python3`, `Python311`: a folder of a Python installation's library.
fn is_python_lib(part: &str) -> bool {
    let lower = part.to_ascii_lowercase();
    lower.strip_prefix("python").is_some_and(|rest| {
        !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit() || b == b'.')
    })
}

/// The standard library's sources as a Rust panic or backtrace names them
/// (`/rustc/<hash>/library/core/src/…`, or `library/std/src/…` once made relative).
fn is_rust_library(path: &str) -> bool {
    [
        "library/core/src/",
        "library/std/src/",
        "library/alloc/src/",
    ]
    .iter()
    .any(|p| path.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn user_frames() {
        let context = ParseContext {
            target: PathBuf::from("/fixture/js"),
            cwd_relative: String::new(),
            sample: false,
        };
        let table = [
            ("tests/cart.test.js", true),
            ("/fixture/js/tests/prix été/cart (1).test.js", true),
            ("file:///fixture/js/src/a.js", true),
            ("tests/integration/test_api v2.py", true),
            ("src/python3x/a.py", true),
            ("/fixture/js/node_modules/expect/build/index.js", false),
            ("node_modules/.pnpm/x/index.js", false),
            ("node:internal/test_runner/test", false),
            ("node:assert", false),
            ("internal/process/task_queues.js", false),
            (
                "/root/.pyenv/versions/3.11.7/lib/python3.11/json/decoder.py",
                false,
            ),
            (
                "../pytools/lib/python3.11/site-packages/yaml/parser.py",
                false,
            ),
            ("venv/lib/python3.11/site-packages/yaml/parser.py", false),
            ("/usr/lib/python3/dist-packages/x.py", false),
            ("/rustc/0123abcd/library/core/src/panicking.rs", false),
            (
                "/root/.cargo/registry/src/index.crates.io-1/x-1.0/src/lib.rs",
                false,
            ),
            ("<frozen importlib._bootstrap>", false),
            ("", false),
        ];
        for (raw, user) in table {
            assert_eq!(is_user_frame(raw, &context), user, "{raw}");
        }
    }
}
