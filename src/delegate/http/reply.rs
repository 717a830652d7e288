//! What the endpoint said: the chat-completions body, the token usage, and the diff in the
//! model's answer.

use serde::Deserialize;

use crate::model::TokenUsage;

#[derive(Debug, Deserialize)]
struct Completion {
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    message: Message,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Message {
    #[serde(default)]
    content: Option<String>,
}

#[derive(Debug, Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    total_tokens: Option<u64>,
}

/// The model's answer, read from a chat-completions body.
#[derive(Debug, PartialEq)]
pub struct Answer {
    pub content: String,
    pub usage: Option<TokenUsage>,
    /// The reply was cut at `max_tokens`.
    pub truncated: bool,
}

/// Reads the first choice's message and the usage; an error says what is missing.
pub fn read_completion(body: &[u8]) -> Result<Answer, String> {
    let completion: Completion = serde_json::from_slice(body)
        .map_err(|error| format!("the reply is not a chat completion: {error}"))?;
    let usage = completion.usage.map(|usage| TokenUsage {
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
        total_tokens: usage
            .total_tokens
            .unwrap_or(usage.prompt_tokens.saturating_add(usage.completion_tokens)),
        turns: Some(1),
        ..TokenUsage::default()
    });
    let choice = completion
        .choices
        .into_iter()
        .next()
        .ok_or("the reply has no choices")?;
    Ok(Answer {
        content: choice.message.content.unwrap_or_default(),
        usage,
        truncated: choice.finish_reason.as_deref() == Some("length"),
    })
}

/// What the model's answer asks for.
#[derive(Debug, PartialEq, Eq)]
pub enum Proposal {
    Diff(String),
    /// It declined, with its reason.
    Declined(String),
    /// Neither a diff nor a refusal.
    Nothing,
}

/// Finds the diff in an answer: a fenced ```diff (or ```patch) block, else a fenced block or the
/// whole answer when it starts like a diff. `NO-CHANGE: <reason>` is the model declining.
pub fn proposal(content: &str) -> Proposal {
    let trimmed = content.trim();
    if let Some(reason) = strip_prefix_ignore_case(trimmed, "NO-CHANGE") {
        return Proposal::Declined(reason.trim_start_matches(':').trim().to_string());
    }
    let blocks = fenced_blocks(content);
    let chosen = blocks
        .iter()
        .find(|(info, _)| matches!(*info, "diff" | "patch" | "udiff"))
        .or_else(|| blocks.iter().find(|(_, body)| looks_like_diff(body)))
        .map(|(_, body)| body.to_string());
    match chosen {
        Some(diff) => Proposal::Diff(diff),
        None if looks_like_diff(trimmed) => Proposal::Diff(format!("{trimmed}\n")),
        None => Proposal::Nothing,
    }
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

fn looks_like_diff(text: &str) -> bool {
    let text = text.trim_start();
    text.starts_with("diff --git ") || text.starts_with("--- ")
}

/// A fence line's backticks and what follows them (three or more backticks).
fn fence_of(line: &str) -> Option<(usize, &str)> {
    let ticks = line.len() - line.trim_start_matches('`').len();
    (ticks >= 3).then(|| (ticks, &line[ticks..]))
}

/// The fenced blocks of a markdown answer: (info string, body with its line endings as they
/// were). A block opens with three or more backticks and closes with at least as many at the
/// start of a line and nothing after them: a diff's context line (` ````) never closes it.
fn fenced_blocks(content: &str) -> Vec<(&str, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, &str, String)> = None;
    for line in content.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        match &mut open {
            None => {
                if let Some((ticks, info)) = fence_of(bare.trim_start()) {
                    open = Some((ticks, info.trim(), String::new()));
                }
            }
            Some((ticks, _, body)) => match fence_of(bare) {
                Some((closing, rest)) if closing >= *ticks && rest.trim().is_empty() => {
                    if let Some((_, info, body)) = open.take() {
                        blocks.push((info, body));
                    }
                }
                _ => body.push_str(line),
            },
        }
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIFF: &str = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n";
    const MARKDOWN: &str =
        "--- a/README.md\n+++ b/README.md\n@@ -1,3 +1,3 @@\n ```\n-a\n+b\n ```\n";

    #[test]
    fn the_diff_is_found_where_models_put_it() {
        let cases: [(&str, Proposal); 11] = [
            (DIFF, Proposal::Diff(DIFF.into())),
            (
                &format!("Here is the fix:\n\n```diff\n{DIFF}```\nDone."),
                Proposal::Diff(DIFF.into()),
            ),
            (&format!("```\n{DIFF}```"), Proposal::Diff(DIFF.into())),
            (
                &format!("```python\nprint(1)\n```\n```patch\n{DIFF}```"),
                Proposal::Diff(DIFF.into()),
            ),
            (
                &format!("diff --git a/x.py b/x.py\n{DIFF}"),
                Proposal::Diff(format!("diff --git a/x.py b/x.py\n{DIFF}")),
            ),
            (
                "NO-CHANGE: the finding is a false positive",
                Proposal::Declined("the finding is a false positive".into()),
            ),
            ("no-change", Proposal::Declined(String::new())),
            ("I would rename the variable.", Proposal::Nothing),
            // A markdown file's fence as a context line does not close the block.
            (
                &format!("```diff\n{MARKDOWN}```\n"),
                Proposal::Diff(MARKDOWN.into()),
            ),
            // Four backticks open, and only four or more close.
            (
                &format!("````diff\n{MARKDOWN}```\n````"),
                Proposal::Diff(format!("{MARKDOWN}```\n")),
            ),
            // CRLF line endings are kept.
            (
                &format!("```diff\r\n{}```\r\n", DIFF.replace('\n', "\r\n")),
                Proposal::Diff(DIFF.replace('\n', "\r\n")),
            ),
        ];
        for (content, expected) in cases {
            assert_eq!(proposal(content), expected, "{content}");
        }
    }

    #[test]
    fn a_completion_gives_its_content_usage_and_whether_it_was_cut() {
        let body = br#"{"id":"x","object":"chat.completion","choices":[{"index":0,
            "message":{"role":"assistant","content":"NO-CHANGE"},"finish_reason":"length"}],
            "usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}"#;
        let answer = read_completion(body).unwrap();
        assert_eq!(answer.content, "NO-CHANGE");
        assert!(answer.truncated);
        assert_eq!(
            answer.usage,
            Some(TokenUsage {
                prompt_tokens: 12,
                completion_tokens: 3,
                total_tokens: 15,
                turns: Some(1),
                ..TokenUsage::default()
            })
        );
        let no_usage = br#"{"choices":[{"message":{"content":"x"}}]}"#;
        assert_eq!(read_completion(no_usage).unwrap().usage, None);
        assert!(read_completion(br#"{"choices":[]}"#).is_err());
        assert!(read_completion(b"<html>").is_err());
    }
}
