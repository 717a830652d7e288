//! The built-in model delegate (`kind = "http"`): the rendered prompt and the files the findings
//! name (bounded) go to an OpenAI-compatible chat-completions endpoint, which is asked for one
//! unified diff. The diff is applied only when it parses, stays inside the repository and off
//! the user's protected work, and applies cleanly; otherwise nothing is written and the attempt
//! ends `no-change` with the reason. What was asked and answered is the delegate's output.

mod apply;
mod guard;
mod plain;
mod reply;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

pub use apply::apply_diff;

use super::{Assignment, DelegateFiles, DelegateRun, HttpSpec, Transcript, Verdict};
use crate::cancel::Cancel;
use crate::net::{self, NetError};
use crate::process::Interruption;
use crate::workspace::{PathState, RepoPath};

/// How the model is asked to answer.
const SYSTEM: &str = "You fix findings of a repository's quality gate. Answer with exactly one \
unified diff in a ```diff block, in `git diff` form with paths relative to the repository root \
(`--- a/path`, `+++ b/path`), whose context lines match the files exactly. Change only what the \
findings need and keep behaviour. Fix the code itself: never add a suppression comment, skip, \
delete or weaken a test, or change a tool's configuration or the gate's scripts; such a change is \
rolled back. If no safe fix exists, answer `NO-CHANGE: <reason>` instead.";

/// A reply may hold this much beside its tokens (JSON, headers of the body).
const REPLY_OVERHEAD: u64 = 1 << 20;
/// Bytes per token a reply may use at most (tokens are rarely over 8 bytes; JSON escaping can
/// double them).
const BYTES_PER_TOKEN: u64 = 32;

/// Asks the endpoint for a fix of the assignment and applies the diff it gives, if it may; what
/// was asked and answered is the delegate's output.
pub fn ask(
    http: &HttpSpec,
    timeout: Duration,
    prompt: &str,
    assignment: &Assignment<'_>,
    protected: &BTreeMap<RepoPath, PathState>,
    cancel: &Cancel,
    files: DelegateFiles,
) -> DelegateRun {
    let mut transcript = Transcript::new(files);
    let started = transcript.started;
    let Some(root) = super::repository_root(assignment.target) else {
        let note = "the target is not inside a git work tree".to_string();
        return transcript.end(None, 1, None, None, Some(note));
    };
    let key = match http.key() {
        Ok(key) => key,
        Err(note) => return transcript.end(None, 1, None, None, Some(note)),
    };
    let (files, omitted) = files_for(http, assignment, &root);
    let body = request_body(http, prompt, &files);
    note_request(&mut transcript, http, body.len(), &files, &omitted);
    let limit = REPLY_OVERHEAD + u64::from(http.max_tokens) * BYTES_PER_TOKEN;
    let reply = match net::send(request(http, key, body, limit), started + timeout, cancel) {
        Ok(reply) => reply,
        Err(NetError::Cancelled) => {
            let note = "the run was cancelled before the endpoint answered".to_string();
            return transcript.end(Some(Interruption::Cancelled), 1, None, None, Some(note));
        }
        Err(NetError::Deadline(waited)) => {
            let note = format!("the endpoint gave no answer within {waited:.1?}");
            return transcript.end(Some(Interruption::Deadline), 1, None, None, Some(note));
        }
        Err(error) => {
            let note = format!("the request failed: {error}");
            return transcript.end(None, 1, None, None, Some(note));
        }
    };
    let _ = writeln!(
        transcript.text,
        "answer: {} after {} request(s), {} bytes",
        reply.status,
        reply.attempts,
        reply.body.len()
    );
    if !reply.is_success() {
        let note = format!(
            "the endpoint answered {}: {}",
            reply.status,
            reply.body_excerpt(500).trim()
        );
        return transcript.end(None, 1, None, None, Some(note));
    }
    let answer = match reply::read_completion(&reply.body) {
        Ok(answer) => answer,
        Err(note) => return transcript.end(None, 1, None, None, Some(note)),
    };
    let mut run = apply_answer(transcript, &answer, &root, assignment, protected);
    if answer.usage.is_none() {
        run.usage_unknown = Some("the endpoint's answer held no usage".to_string());
    }
    run
}

/// The chat request: the system text and the prompt with the files, redacted.
fn request_body(http: &HttpSpec, prompt: &str, files: &[(String, String)]) -> Vec<u8> {
    let mut user = prompt.to_string();
    if !files.is_empty() {
        user.push_str("\n\n## Files\n");
        for (path, text) in files {
            let _ = write!(user, "\n### `{path}`\n\n````\n{text}");
            if !text.ends_with('\n') {
                user.push('\n');
            }
            user.push_str("````\n");
        }
    }
    let user = String::from_utf8_lossy(&crate::secrets::redacted(user.as_bytes())).into_owned();
    let body = serde_json::json!({
        "model": http.model,
        "max_tokens": http.max_tokens,
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": user},
        ],
    });
    serde_json::to_vec(&body).unwrap_or_default()
}

/// The transcript's account of the request: where it went, which files were sent, which were
/// not, and which were sent redacted.
fn note_request(
    transcript: &mut Transcript,
    http: &HttpSpec,
    bytes: usize,
    files: &[(String, String)],
    omitted: &[String],
) {
    let names: Vec<&str> = files.iter().map(|(path, _)| path.as_str()).collect();
    let _ = writeln!(
        transcript.text,
        "POST {} (model {}, {bytes} bytes; files: {})",
        http.endpoint,
        http.model,
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    );
    for note in omitted {
        let _ = writeln!(transcript.text, "not sent: {note}");
    }
    // A secret in a file is sent as its marker: a diff whose context holds it cannot apply.
    for (path, text) in files {
        if matches!(
            crate::secrets::redacted(text.as_bytes()),
            std::borrow::Cow::Owned(_)
        ) {
            let _ = writeln!(transcript.text, "sent redacted (it holds a secret): {path}");
        }
    }
}

/// What the model answered: its diff applied whole when it may be, or why not.
fn apply_answer(
    mut transcript: Transcript,
    answer: &reply::Answer,
    root: &Path,
    assignment: &Assignment<'_>,
    protected: &BTreeMap<RepoPath, PathState>,
) -> DelegateRun {
    if let Some(usage) = &answer.usage {
        let _ = writeln!(
            transcript.text,
            "tokens: {} prompt + {} completion = {}",
            usage.prompt_tokens, usage.completion_tokens, usage.total_tokens
        );
    }
    let _ = writeln!(
        transcript.text,
        "\n--- the model's answer ---\n{}\n---",
        answer.content
    );
    let no_change = Some(Verdict::NoChange);
    let note = match reply::proposal(&answer.content) {
        reply::Proposal::Declined(reason) => format!("the model declined: {reason}"),
        reply::Proposal::Nothing if answer.truncated => {
            "the answer was cut at max_tokens before a diff".to_string()
        }
        reply::Proposal::Nothing => "the answer holds no diff".to_string(),
        reply::Proposal::Diff(diff) if writes_a_marker(&diff) => {
            "the diff would write a redaction marker ([REDACTED:…]) into a file".to_string()
        }
        reply::Proposal::Diff(diff) => {
            match apply_diff(root, &diff, protected, assignment.state_dir) {
                Ok(paths) => {
                    let _ = writeln!(transcript.text, "applied to: {}", paths.join(", "));
                    return transcript.end(None, 0, Some(Verdict::Fixed), answer.usage, None);
                }
                Err(reason) => reason,
            }
        }
    };
    transcript.end(None, 0, no_change, answer.usage, Some(note))
}

/// Whether a diff adds a line holding a redaction marker (the model copied what it was sent).
fn writes_a_marker(diff: &str) -> bool {
    diff.lines().any(|line| {
        line.starts_with('+') && !line.starts_with("+++") && line.contains("[REDACTED:")
    })
}

/// The request to the endpoint, with the key in its header: `api-key` for Azure OpenAI,
/// `Authorization: Bearer` for the rest. No redirect is followed: the key goes to the endpoint
/// configured, nowhere else.
fn request(http: &HttpSpec, key: Option<String>, body: Vec<u8>, limit: u64) -> net::Request {
    let azure = endpoint_host(&http.endpoint).is_some_and(|host| host.ends_with(".azure.com"));
    let request = net::Request::model_call(&http.endpoint, body).limit(limit);
    match key {
        Some(key) if azure => request.header("api-key", key),
        Some(key) => request.header("Authorization", format!("Bearer {key}")),
        None => request,
    }
}

/// The host of an http(s) URL, without user info or port.
fn endpoint_host(endpoint: &str) -> Option<&str> {
    let rest = endpoint.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    Some(host.rsplit_once(':').map_or(host, |(host, _)| host))
}

/// The files the findings name, in order of first mention, at most `max_files`, each read
/// whole if it is a text file of at most `max_file_bytes` inside the target; with a note for
/// each one left out. Paths are relative to the repository root, as the diff must name them.
fn files_for(
    http: &HttpSpec,
    assignment: &Assignment<'_>,
    root: &Path,
) -> (Vec<(String, String)>, Vec<String>) {
    let target = assignment
        .target
        .canonicalize()
        .unwrap_or_else(|_| assignment.target.to_path_buf());
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let repository = git2::Repository::open(&root).ok();
    let mut named: Vec<&str> = Vec::new();
    let from_findings = assignment
        .diagnostics
        .iter()
        .filter(|diagnostic| !diagnostic.outside_target)
        .filter_map(|diagnostic| diagnostic.file.as_deref());
    for file in from_findings.chain(assignment.files.iter().map(String::as_str)) {
        if !named.contains(&file) {
            named.push(file);
        }
    }
    let (mut files, mut omitted) = (Vec::new(), Vec::new());
    for file in named {
        if files.len() == http.max_files {
            omitted.push(format!(
                "{file} and the rest (max_files = {})",
                http.max_files
            ));
            break;
        }
        let full = target.join(file);
        let inside = full
            .canonicalize()
            .ok()
            .filter(|real| real.starts_with(&target) && real.starts_with(&root));
        let Some(real) = inside else {
            omitted.push(format!("{file} (not a file inside the target)"));
            continue;
        };
        let relative = real
            .strip_prefix(&root)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        // Never sent: git's own files (the config can hold a credential), and ignored files
        // (`.env` and the like).
        let private = Path::new(&relative)
            .components()
            .any(|part| part.as_os_str().eq_ignore_ascii_case(".git"))
            || repository
                .as_ref()
                .is_none_or(|repo| repo.is_path_ignored(Path::new(&relative)).unwrap_or(true));
        if private {
            omitted.push(format!(
                "{relative} (git's own or an ignored file: not sent)"
            ));
            continue;
        }
        match std::fs::symlink_metadata(&full) {
            Ok(meta) if meta.is_file() && meta.len() <= http.max_file_bytes => {}
            Ok(meta) if meta.is_file() => {
                omitted.push(format!(
                    "{relative} ({} bytes > max_file_bytes = {})",
                    meta.len(),
                    http.max_file_bytes
                ));
                continue;
            }
            _ => {
                omitted.push(format!("{relative} (not a regular file)"));
                continue;
            }
        }
        match text_of(&full, http.max_file_bytes) {
            Some(text) => files.push((relative, text)),
            None => omitted.push(format!("{relative} (not UTF-8 text)")),
        }
    }
    (files, omitted)
}

/// The text of a regular file of at most `limit` bytes: it may have changed since it was looked
/// at, and is never opened as anything else.
fn text_of(full: &Path, limit: u64) -> Option<String> {
    let bytes = crate::files::read_regular(full, limit).ok().flatten()?;
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;
