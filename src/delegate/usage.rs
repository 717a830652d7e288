//! What a command delegate spent, read from its own machine-readable output (`[[delegate]]
//! usage = "<reader>"`): tokens in and out, cost in USD where the tool gives it, and turns. Each
//! reader is data: which lines carry the figures, and where in them each figure sits. The
//! reader also takes the agent's closing text out of its JSON, for the delegate's report.

use std::sync::LazyLock;

use serde_json::Value;

use crate::model::TokenUsage;

/// The readers a delegate may name, `none` last.
pub const READERS: &[&str] = &[
    "claude-json",
    "claude-stream-json",
    "codex-json",
    "aider",
    "none",
];

/// How a delegate's usage is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsageReader {
    /// Lines of JSON, read by this shape.
    Json(&'static JsonShape),
    /// aider's printed `Tokens: … sent, … received.` and `Cost: $… message, $… session.`.
    Aider,
    /// `usage = "none"`: the delegate has no usage to report, on purpose (a local fixer).
    None,
}

impl UsageReader {
    /// The reader named `name`, or `None` when no reader has that name.
    pub fn named(name: &str) -> Option<Self> {
        match name {
            "claude-json" => Some(Self::Json(&CLAUDE_JSON)),
            "claude-stream-json" => Some(Self::Json(&CLAUDE_STREAM_JSON)),
            "codex-json" => Some(Self::Json(&CODEX_JSON)),
            "aider" => Some(Self::Aider),
            "none" => Some(Self::None),
            _ => None,
        }
    }

    /// Its output gives the cost in US dollars (or, for `none`, there is none).
    pub fn reads_cost(self) -> bool {
        match self {
            Self::Json(shape) => shape.cost_usd.is_some(),
            Self::Aider | Self::None => true,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Json(shape) => shape.name,
            Self::Aider => "aider",
            Self::None => "none",
        }
    }
}

/// How the figures add up over the lines that carry them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fold {
    /// Each line holds the run's totals so far: the last one counts.
    Last,
    /// Each line holds one turn's figures: they add up.
    Sum,
}

/// Where the turns are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Turns {
    /// A number in the line.
    At(&'static str),
    /// One turn per line that carries the figures.
    Lines,
}

/// A JSON-lines reader: lines whose `type` is `event` carry the figures, at these JSON pointers.
#[derive(Debug, PartialEq, Eq)]
pub struct JsonShape {
    pub name: &'static str,
    pub event: &'static str,
    pub fold: Fold,
    /// Summed into the tokens in (the prompt tokens).
    pub input: &'static [&'static str],
    pub output: &'static str,
    pub cache_read: Option<&'static str>,
    pub cache_write: Option<&'static str>,
    pub cost_usd: Option<&'static str>,
    pub turns: Turns,
    /// While it runs, before the line with the figures: lines whose `type` is `live.event` each
    /// carry one model message's `usage` at `live.usage` (read with the `/usage/…` pointers
    /// above), the message named at `live.id` (a message printed again counts once).
    pub live: Option<Live>,
    /// The agent's text: the string at `text.2` in lines whose `type` is `text.0` and, when
    /// `text.1` is given, whose pointer holds that value.
    pub text: (
        &'static str,
        Option<(&'static str, &'static str)>,
        &'static str,
    ),
}

/// Where a streaming output gives each message's usage while the agent runs.
#[derive(Debug, PartialEq, Eq)]
pub struct Live {
    pub event: &'static str,
    pub usage: &'static str,
    pub id: &'static str,
}

/// Claude Code's `--output-format json`: one `result` object at the end, its `usage` counting
/// cache reads and writes apart from `input_tokens`.
pub const CLAUDE_JSON: JsonShape = JsonShape {
    name: "claude-json",
    event: "result",
    fold: Fold::Last,
    input: &[
        "/usage/input_tokens",
        "/usage/cache_creation_input_tokens",
        "/usage/cache_read_input_tokens",
    ],
    output: "/usage/output_tokens",
    cache_read: Some("/usage/cache_read_input_tokens"),
    cache_write: Some("/usage/cache_creation_input_tokens"),
    cost_usd: Some("/total_cost_usd"),
    turns: Turns::At("/num_turns"),
    live: None,
    text: ("result", None, "/result"),
};

/// Claude Code's `--output-format stream-json`: one message a line, ending with the same
/// `result` object as `json`; each `assistant` message carries its own `usage` (tokens, no
/// cost) as it comes.
pub const CLAUDE_STREAM_JSON: JsonShape = JsonShape {
    name: "claude-stream-json",
    live: Some(Live {
        event: "assistant",
        usage: "/message/usage",
        id: "/message/id",
    }),
    ..CLAUDE_JSON
};

/// Codex's `exec --json`: one event a line; each `turn.completed` holds that turn's `usage`,
/// whose `input_tokens` include the cached ones; the agent speaks in `agent_message` items.
pub const CODEX_JSON: JsonShape = JsonShape {
    name: "codex-json",
    event: "turn.completed",
    fold: Fold::Sum,
    input: &["/usage/input_tokens"],
    output: "/usage/output_tokens",
    cache_read: Some("/usage/cached_input_tokens"),
    cache_write: None,
    cost_usd: None,
    turns: Turns::Lines,
    live: None,
    text: (
        "item.completed",
        Some(("/item/type", "agent_message")),
        "/item/text",
    ),
};

/// A line longer than this is not read (it still reaches the output).
const MAX_LINE: usize = 8 * 1024 * 1024;
/// The agent's text kept for the report.
const MAX_TEXT: usize = 64 * 1024;

/// Reads a delegate's output as it arrives, one line at a time.
#[derive(Debug)]
pub struct UsageTally {
    reader: UsageReader,
    line: Vec<u8>,
    /// The line being read passed [`MAX_LINE`]: skipped to its end.
    skipping: bool,
    usage: Option<TokenUsage>,
    /// Before the figures' line: each live message's usage, by its id, in order.
    live: Vec<(String, TokenUsage)>,
    text: Option<String>,
}

impl UsageTally {
    pub fn new(reader: UsageReader) -> Self {
        Self {
            reader,
            line: Vec::new(),
            skipping: false,
            usage: None,
            live: Vec::new(),
            text: None,
        }
    }

    /// What the output has reported while the agent still works, to hold it to a cap: the
    /// running sums of a streaming output (live messages, each turn's or reply's figures); not a
    /// closing figures' line (Claude Code's `result`), which comes when its work is done.
    pub fn in_flight(&self) -> Option<TokenUsage> {
        match self.reader {
            UsageReader::Json(shape) if shape.fold == Fold::Last && self.usage.is_some() => None,
            _ => self.so_far(),
        }
    }

    /// What the output has reported so far: the figures' line once read, else the sum of the
    /// live messages (tokens only: their cost comes with the figures' line).
    pub fn so_far(&self) -> Option<TokenUsage> {
        self.usage.or_else(|| {
            let turns = self.live.len() as u64;
            TokenUsage::total(self.live.iter().map(|(_, usage)| usage)).map(|sum| TokenUsage {
                cost_usd: None,
                turns: Some(turns),
                ..sum
            })
        })
    }

    /// Reads what the delegate printed next.
    pub fn push(&mut self, mut chunk: &[u8]) {
        if self.reader == UsageReader::None {
            return;
        }
        while let Some(end) = chunk.iter().position(|&b| b == b'\n') {
            self.take(&chunk[..end]);
            self.end_line();
            chunk = &chunk[end + 1..];
        }
        self.take(chunk);
    }

    fn take(&mut self, part: &[u8]) {
        if self.skipping {
            return;
        }
        if self.line.len() + part.len() > MAX_LINE {
            self.line.clear();
            self.skipping = true;
        } else {
            self.line.extend_from_slice(part);
        }
    }

    fn end_line(&mut self) {
        let line = std::mem::take(&mut self.line);
        if !std::mem::take(&mut self.skipping) {
            self.read_line(&String::from_utf8_lossy(&line));
        }
    }

    fn read_line(&mut self, line: &str) {
        let line = line.trim();
        match self.reader {
            UsageReader::Json(shape) => self.read_json(shape, line),
            UsageReader::Aider => self.read_aider(line),
            UsageReader::None => {}
        }
    }

    fn read_json(&mut self, shape: &JsonShape, line: &str) {
        if !line.starts_with('{') {
            return;
        }
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            return;
        };
        let kind = value.get("type").and_then(Value::as_str);
        let (text_event, when, at) = shape.text;
        let speaks = when.is_none_or(|(pointer, wanted)| {
            value.pointer(pointer).and_then(Value::as_str) == Some(wanted)
        });
        if kind == Some(text_event)
            && speaks
            && let Some(text) = value.pointer(at).and_then(Value::as_str)
        {
            self.text = Some(bounded(text));
        }
        if let Some(live) = &shape.live
            && kind == Some(live.event)
        {
            self.read_live(shape, live, &value);
            return;
        }
        if kind != Some(shape.event) {
            return;
        }
        let count = |pointer: &str| value.pointer(pointer).and_then(Value::as_u64);
        // A line without the figures is no account of them: never read as zero.
        if count(shape.output).is_none() {
            return;
        }
        let prompt = shape.input.iter().filter_map(|p| count(p)).sum::<u64>();
        let completion = count(shape.output).unwrap_or(0);
        let line_usage = TokenUsage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            total_tokens: prompt.saturating_add(completion),
            cache_read_tokens: shape.cache_read.and_then(count),
            cache_write_tokens: shape.cache_write.and_then(count),
            cost_usd: (shape.cost_usd)
                .and_then(|p| value.pointer(p))
                .and_then(Value::as_f64)
                .filter(|cost| cost.is_finite() && *cost >= 0.0),
            turns: Some(match shape.turns {
                Turns::At(pointer) => count(pointer).unwrap_or(0),
                Turns::Lines => 1,
            }),
        };
        self.usage = Some(match (shape.fold, self.usage) {
            (Fold::Sum, Some(sum)) => sum.plus(&line_usage),
            _ => line_usage,
        });
    }

    /// One live message's usage: its figures under `/usage/…`, as the shape reads them.
    fn read_live(&mut self, shape: &JsonShape, live: &Live, value: &Value) {
        let Some(usage) = value.pointer(live.usage) else {
            return;
        };
        let wrapped = serde_json::json!({ "usage": usage });
        let count = |pointer: &str| wrapped.pointer(pointer).and_then(Value::as_u64);
        let Some(completion) = count(shape.output) else {
            return;
        };
        let prompt = shape.input.iter().filter_map(|p| count(p)).sum::<u64>();
        let message = TokenUsage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            total_tokens: prompt.saturating_add(completion),
            cache_read_tokens: shape.cache_read.and_then(count),
            cache_write_tokens: shape.cache_write.and_then(count),
            cost_usd: None,
            turns: Some(1),
        };
        let id = (value.pointer(live.id).and_then(Value::as_str))
            .map_or_else(|| format!("#{}", self.live.len()), str::to_string);
        match self.live.iter_mut().find(|(seen, _)| *seen == id) {
            Some((_, seen)) => *seen = message,
            None => self.live.push((id, message)),
        }
    }

    fn read_aider(&mut self, line: &str) {
        if let Some(found) = AIDER_TOKENS.captures(line) {
            let figure = |name: &str| found.name(name).and_then(|m| aider_count(m.as_str()));
            let sent = figure("sent").unwrap_or(0);
            let received = figure("received").unwrap_or(0);
            let turn = TokenUsage {
                prompt_tokens: sent,
                completion_tokens: received,
                total_tokens: sent.saturating_add(received),
                cache_read_tokens: figure("hit"),
                cache_write_tokens: figure("write"),
                cost_usd: None,
                turns: Some(1),
            };
            let sum = self.usage.map_or(turn, |sum| TokenUsage {
                cost_usd: sum.cost_usd,
                ..sum.plus(&turn)
            });
            self.usage = Some(sum);
        }
        if let Some(found) = AIDER_COST.captures(line) {
            // The session's cost so far: the last one printed is the run's.
            let session = found["session"].parse::<f64>().ok();
            if let (Some(usage), Some(session)) = (&mut self.usage, session) {
                usage.cost_usd = Some(session);
            }
        }
    }

    /// What the output said it spent (`None` when it said nothing the reader knows), and the
    /// agent's closing text where the output is JSON.
    pub fn finish(mut self) -> (Option<TokenUsage>, Option<String>) {
        if !self.line.is_empty() {
            self.end_line();
        }
        // Stopped before its figures' line: what its messages reported is what is known.
        (self.so_far(), self.text)
    }
}

/// aider's `Tokens: 12k sent, 1.1k cache write, 2.3k cache hit, 1.2k received.`
static AIDER_TOKENS: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(
        r"Tokens: (?<sent>[0-9.]+[kM]?) sent(?:, (?<write>[0-9.]+[kM]?) cache write)?(?:, (?<hit>[0-9.]+[kM]?) cache hit)?, (?<received>[0-9.]+[kM]?) received\.",
    )
    .expect("a valid pattern")
});

/// aider's `Cost: $0.02 message, $0.05 session.`
static AIDER_COST: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"Cost: \$(?<message>[0-9.]+) message, \$(?<session>[0-9.]+) session\.")
        .expect("a valid pattern")
});

/// A count as aider prints it: `950`, `1.2k`, `12k`, `1.5M` (rounded by aider).
fn aider_count(text: &str) -> Option<u64> {
    let (digits, scale) = match text.as_bytes().last()? {
        b'k' => (&text[..text.len() - 1], 1e3),
        b'M' => (&text[..text.len() - 1], 1e6),
        _ => (text, 1.0),
    };
    let value = digits.parse::<f64>().ok()? * scale;
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "a finite, non-negative count of tokens"
    )]
    (value.is_finite() && value >= 0.0).then(|| value.round() as u64)
}

/// The end of `text`, at most [`MAX_TEXT`] bytes, cut at a character.
fn bounded(text: &str) -> String {
    let mut start = text.len().saturating_sub(MAX_TEXT);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text[start..].to_string()
}

/// The reader named nearest to `name`, when `name` is likely a typo of it.
pub fn nearest_reader(name: &str) -> Option<&'static str> {
    READERS
        .iter()
        .map(|candidate| (strsim::jaro_winkler(name, candidate), *candidate))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, candidate)| candidate)
}

#[cfg(test)]
#[path = "usage_tests.rs"]
mod tests;
