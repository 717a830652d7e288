//! A check that failed because of where it ran, not because of the code: no network (cargo or
//! go fetching a dependency, npm a package), an offline mode, a tool or toolchain not there. The
//! same rule for every tool: the output's last lines say so in a tool's or a runtime's own
//! words, and nothing the parser read is a finding of the code's (a finding in a file whose
//! message is not such words). Such a check is `infra`, not a failure of its category: the gate
//! could not judge the code.

use crate::model::{Diagnostic, Severity};

/// Words a tool or runtime prints when the environment, not the code, failed it.
const SIGNS: &[&str] = &[
    // No network: curl's (cargo), Go's, Node's and Python's words.
    "Could not resolve host",
    "Could not resolve proxy",
    "Couldn't resolve host",
    "Could not connect to server",
    "Temporary failure in name resolution",
    "Name or service not known",
    ": no such host",
    "Network is unreachable",
    "proxyconnect tcp",
    "getaddrinfo ENOTFOUND",
    "getaddrinfo EAI_AGAIN",
    "code ENOTFOUND",
    "code ECONNREFUSED",
    "code ETIMEDOUT",
    "code ENOTCACHED",
    "Failed to establish a new connection",
    // An offline mode asked for what it does not have.
    "you're using offline mode",
    "module lookup disabled by GOPROXY=off",
    // A tool that is not there.
    "npx canceled due to missing packages",
    // A cargo older than the lock file the project keeps (an MSRV check).
    "this version of Cargo does not understand this lock file",
    "could not determine executable to run",
    // A project's own words for its dependencies not installed (nvm's Makefile).
    "to run `npm install`",
    "to run `npm ci`",
];

/// Lines of the output's end looked at.
const TAIL_LINES: usize = 200;

/// The line that shows the environment failed the check, when it did: among `tail` (the
/// output's last lines), with no finding in `diagnostics` that is the code's own.
pub fn failure<'t>(tail: &'t [String], diagnostics: &[Diagnostic]) -> Option<&'t str> {
    let sign = tail.iter().find(|line| is_sign(line))?;
    let codes_own = diagnostics.iter().any(|d| {
        d.severity == Severity::Error
            && d.file.is_some()
            && !is_sign(&d.message)
            && !d.body.as_deref().is_some_and(is_sign)
    });
    (!codes_own).then_some(sign.as_str())
}

/// The last lines `failure` reads.
pub fn tail_lines() -> usize {
    TAIL_LINES
}

fn is_sign(line: &str) -> bool {
    SIGNS.iter().any(|sign| line.contains(sign))
        || missing_toolchain(line)
        || missing_module(line)
        || command_not_found(line)
}

/// A shell's or make's word that a command is not there: dash's `sh: 1: jest: not found`,
/// bash's `bash: line 1: jest: command not found`, make's `make: *** [Makefile:2: test] Error
/// 127` (127: the shell's exit for a command not found).
fn command_not_found(line: &str) -> bool {
    let line = line.trim_end();
    let shell = line
        .split(": ")
        .next()
        .is_some_and(|first| matches!(first.rsplit('/').next(), Some("sh" | "bash" | "dash")));
    (shell && (line.ends_with(": not found") || line.ends_with(": command not found")))
        || (line.starts_with("make") && line.contains("] Error 127"))
}

/// rustup's `error: toolchain '1.60-x86_64-unknown-linux-gnu' is not installed`.
fn missing_toolchain(line: &str) -> bool {
    line.contains("toolchain '") && line.contains("' is not installed")
}

/// The interpreter's own `/usr/bin/python3: No module named pytest` (`python -m` of a tool that
/// is not installed), not a traceback's `ModuleNotFoundError` (the code's import).
fn missing_module(line: &str) -> bool {
    line.split_once(": No module named ")
        .is_some_and(|(before, _)| before.contains("python") && !before.contains("Error"))
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::parse::{Catalogue, ParseContext, parse_bytes};

    /// A fixture (real output) read by `parser`: its last lines and the findings.
    fn read(fixture: &str, parser: &str) -> (Vec<String>, Vec<Diagnostic>) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(fixture);
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let catalogue = Catalogue::load(&[]).unwrap();
        let context = ParseContext {
            target: PathBuf::from("/fixture"),
            cwd_relative: String::new(),
            sample: false,
        };
        let findings = parse_bytes(catalogue.get(parser).unwrap(), &context, &bytes);
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        let tail = lines[lines.len().saturating_sub(TAIL_LINES)..].to_vec();
        (tail, findings.into_diagnostics())
    }

    #[test]
    fn a_check_the_environment_failed_is_told_from_one_the_code_failed() {
        // (real output, its check's parser, the line that shows the environment failed it)
        let table: &[(&str, &str, Option<&str>)] = &[
            (
                "tests/fixtures/infra/go-vet-no-network.txt",
                "go",
                Some("off.go:3:8: github.com/pkg/errors@v0.9.1: Get"),
            ),
            (
                "tests/fixtures/infra/cargo-no-network.txt",
                "clippy",
                Some("warning: spurious network error (3 tries remaining): [7] Could not connect"),
            ),
            (
                "tests/fixtures/infra/cargo-no-dns.txt",
                "cargo-test",
                Some(
                    "warning: spurious network error (3 tries remaining): [5] Could not resolve proxy",
                ),
            ),
            (
                "tests/fixtures/infra/cargo-offline.txt",
                "clippy",
                Some("As a reminder, you're using offline mode"),
            ),
            (
                "tests/fixtures/infra/npx-no-modules.txt",
                "eslint",
                Some("npm error npx canceled due to missing packages"),
            ),
            (
                "tests/fixtures/infra/python-m-missing.txt",
                "pytest",
                Some("/root/.pyenv/versions/3.11.7/bin/python3: No module named no_such_tool_xyz"),
            ),
            (
                "tests/fixtures/infra/rustup-toolchain-missing.txt",
                "clippy",
                Some("error: toolchain '1.60-x86_64-unknown-linux-gnu' is not installed"),
            ),
            (
                "tests/fixtures/infra/npm-test-no-modules.txt",
                "exit-code",
                Some("sh: 1: jest: not found"),
            ),
            (
                "tests/fixtures/infra/make-utility-missing.txt",
                "exit-code",
                Some("Makefile:2: *** Did you forget to run `npm install`"),
            ),
            (
                "tests/fixtures/infra/make-command-missing.txt",
                "exit-code",
                Some("make: *** [Makefile2:2: test] Error 127"),
            ),
            (
                "tests/fixtures/infra/cargo-older-than-lock.txt",
                "clippy",
                Some("  lock file version `4` was found, but this version of Cargo does not"),
            ),
            // The code's own failures.
            ("tests/fixtures/parsers/go/vet.txt", "go", None),
            ("tests/fixtures/parsers/clippy/deny.txt", "clippy", None),
            ("tests/fixtures/parsers/pytest/failing.txt", "pytest", None),
            (
                "tests/fixtures/parsers/cargo-test/failing.txt",
                "cargo-test",
                None,
            ),
        ];
        for &(fixture, parser, expected) in table {
            let (tail, diagnostics) = read(fixture, parser);
            let found = failure(&tail, &diagnostics);
            match (found, expected) {
                (Some(line), Some(start)) => assert!(line.starts_with(start), "{fixture}: {line}"),
                (None, None) => {}
                _ => panic!("{fixture}: {found:?}, expected {expected:?}"),
            }
        }
    }

    #[test]
    fn a_finding_of_the_code_beside_a_network_error_keeps_the_check_the_codes() {
        let tail = vec!["error: Could not resolve host: example.com".to_string()];
        let finding = |file: Option<&str>, message: &str| Diagnostic {
            file: file.map(str::to_string),
            line: None,
            column: None,
            end_line: None,
            end_column: None,
            severity: Severity::Error,
            code: None,
            message: message.to_string(),
            category: None,
            fingerprint: String::new(),
            outside_target: false,
            body: None,
        };
        let table = [
            (vec![], true),
            (
                vec![finding(None, "failed to get `x` as a dependency")],
                true,
            ),
            (
                vec![finding(
                    Some("a.go"),
                    "Get \"https://x\": dial tcp: lookup x: no such host",
                )],
                true,
            ),
            (vec![finding(Some("src/a.rs"), "unused variable")], false),
        ];
        for (diagnostics, environment) in table {
            assert_eq!(
                failure(&tail, &diagnostics).is_some(),
                environment,
                "{diagnostics:?}"
            );
        }
        for (line, sign) in [
            ("/usr/bin/python3: No module named pytest", true),
            ("E   ModuleNotFoundError: No module named 'requests'", false),
            ("error: toolchain '1.60' is not installed", true),
            ("test result: FAILED. 1 passed; 1 failed", false),
            ("bash: line 1: jest: command not found", true),
            ("/bin/sh: 1: eslint: not found", true),
            ("sh: 1: jest: not found", true),
            ("make: *** [Makefile:5: lint] Error 127", true),
            ("make: *** [Makefile:5: lint] Error 1", false),
            ("AssertionError: user: not found", false),
            ("  expected 'sh: not found' to equal 'ok'", false),
        ] {
            assert_eq!(is_sign(line), sign, "{line}");
        }
    }
}
