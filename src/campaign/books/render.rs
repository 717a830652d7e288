//! The text of the state files: the templates filled in, the backlog's summary with its
//! machine-readable block (and the parser that reads the block back), the worklog's entries.
//! Every text goes through the secret redactor before it is written.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::transition::TERMINAL_OUTCOMES;
use super::{Backlog, BaselineFacts, CampaignError, FORMAT, Provenance, SegmentConfig};

const GOAL_TEMPLATE: &str = include_str!("../../../templates/campaign/REFINE-GOAL.md");
const BACKLOG_TEMPLATE: &str = include_str!("../../../templates/campaign/REFINE-BACKLOG.md");
const WORKLOG_TEMPLATE: &str = include_str!("../../../templates/campaign/REFINE-WORKLOG.md");

/// The line that opens the backlog's machine-readable block; the summary never holds it, since
/// each of its lines starts with text of its own.
const BLOCK_OPEN: &str = "```json";
const BLOCK_CLOSE: &str = "```";

/// A built-in template filled (a test fills each one: they name only the values given here).
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    crate::template::fill(template, values)
        .expect("the campaign's built-in templates name only the values they are given")
}

fn redacted(text: &str) -> Cow<'_, str> {
    crate::secrets::process_redactor()
        .map_or(Cow::Borrowed(text), |redactor| redactor.redact_str(text))
}

/// `text` on one line: control characters (line breaks first) become spaces.
pub(super) fn one_line(text: &str) -> String {
    text.chars()
        .map(|character| {
            if character.is_control() {
                ' '
            } else {
                character
            }
        })
        .collect()
}

/// `items` as `` `a`, `b` ``, or `[]` when there are none.
fn code_list(items: &[String]) -> String {
    if items.is_empty() {
        return "[]".to_owned();
    }
    items
        .iter()
        .map(|item| format!("`{}`", one_line(item)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn focus(config: &SegmentConfig) -> String {
    if config.focus.is_empty() {
        "[]".to_owned()
    } else {
        one_line(&config.focus.join(","))
    }
}

/// The intent as a Markdown quote, every line of it, without a final line break.
fn quoted(intent: &str) -> String {
    if intent.trim().is_empty() {
        return "> (none)".to_owned();
    }
    intent
        .lines()
        .map(|line| format!("> {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn path_text(path: &Path) -> String {
    one_line(&path.to_string_lossy())
}

/// The values the goal and the worklog's header both start with: where and when.
fn origin(provenance: &Provenance, baseline: &BaselineFacts) -> Vec<(&'static str, String)> {
    vec![
        ("preset", one_line(&provenance.preset)),
        ("target", path_text(&provenance.target)),
        ("state_dir", path_text(&provenance.state_dir)),
        (
            "canonical_repository_root",
            path_text(&provenance.repository_root),
        ),
        ("git_common_dir", path_text(&provenance.git_common_dir)),
        ("date", one_line(&baseline.date)),
    ]
}

pub(super) fn goal(
    provenance: &Provenance,
    config: &SegmentConfig,
    baseline: &BaselineFacts,
) -> String {
    let mut values = origin(provenance, baseline);
    values.extend([
        ("baseline_revision", one_line(&baseline.baseline_revision)),
        (
            "protected_dirty_paths",
            code_list(&baseline.protected_paths),
        ),
        ("baseline_checks", code_list(&baseline.baseline_checks)),
        ("theta", one_line(&config.theta)),
        ("focus", focus(config)),
        ("intent", quoted(&config.intent)),
    ]);
    render(GOAL_TEMPLATE, &values)
}

pub(super) fn worklog_header(provenance: &Provenance, baseline: &BaselineFacts) -> String {
    render(WORKLOG_TEMPLATE, &origin(provenance, baseline))
}

/// A line for each cooldown a continuation released.
fn released_lines(text: &mut String, released: &[(String, String)]) {
    for (family, reason) in released {
        let _ = writeln!(
            text,
            "- Cooldown released: `{}`: {}",
            one_line(family),
            one_line(reason)
        );
    }
}

fn render(template: &str, values: &[(&str, String)]) -> String {
    let values: Vec<(&str, &str)> = values
        .iter()
        .map(|(key, value)| (*key, value.as_str()))
        .collect();
    redacted(&fill(template, &values)).into_owned()
}

/// The section appended to the goal when segment `segment` starts with `config`.
pub(super) fn goal_segment(
    segment: u32,
    config: &SegmentConfig,
    date: &str,
    released: &[(String, String)],
) -> String {
    let mut text = format!(
        "\n## Segment {segment} ({}, continued)\n\n- Theta: {}\n- Focus: {}\n",
        one_line(date),
        one_line(&config.theta),
        focus(config),
    );
    released_lines(&mut text, released);
    text.push_str("- Intent:\n\n");
    text.push_str(&quoted(&config.intent));
    text.push('\n');
    redacted(&text).into_owned()
}

/// The worklog entry of one open: what happened (`event`), where the campaign stands, and this
/// run's baseline.
pub(super) fn open_entry(
    event: &str,
    backlog: &Backlog,
    baseline: &BaselineFacts,
    released: &[(String, String)],
) -> String {
    let counters = &backlog.counters;
    let mut text = format!(
        "## {} · {event}\n\n- Segment {}, round {}{}\n- Baseline revision: {}\n\
         - Protected paths: {}\n- Baseline checks: {}\n",
        one_line(&baseline.date),
        counters.segment,
        counters.round,
        if counters.round_in_progress {
            " (in progress: resumed)"
        } else {
            ""
        },
        one_line(&baseline.baseline_revision),
        code_list(&baseline.protected_paths),
        code_list(&baseline.baseline_checks),
    );
    if let Some(config) = &backlog.config {
        let _ = writeln!(
            text,
            "- Theta {}, focus {}",
            one_line(&config.theta),
            focus(config)
        );
    }
    released_lines(&mut text, released);
    text
}

/// `entry` as appended to the worklog: after a blank line, ending in a line break.
pub(super) fn worklog_entry(entry: &str) -> String {
    let mut text = format!("\n{}", redacted(entry));
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

#[derive(Serialize)]
struct StateOut<'a> {
    format: u32,
    provenance: &'a Provenance,
    backlog: &'a Backlog,
}

#[derive(Deserialize)]
struct StateIn {
    provenance: Provenance,
    backlog: Backlog,
}

/// The whole backlog file: the summary, then the state as JSON.
pub(super) fn backlog(
    provenance: &Provenance,
    backlog: &Backlog,
    path: &Path,
) -> Result<String, CampaignError> {
    let serialize_error = |source: serde_json::Error| CampaignError::Serialize {
        path: path.to_path_buf(),
        source,
    };
    let mut state = serde_json::to_value(StateOut {
        format: FORMAT,
        provenance,
        backlog,
    })
    .map_err(serialize_error)?;
    redact_strings(&mut state);
    let state = serde_json::to_string_pretty(&state).map_err(serialize_error)?;
    let values = [
        ("preset", one_line(&provenance.preset)),
        ("target", path_text(&provenance.target)),
        ("summary", redacted(&summary(backlog)).into_owned()),
    ];
    let values: Vec<(&str, &str)> = values
        .iter()
        .map(|(key, value)| (*key, value.as_str()))
        .chain([("state", state.as_str())])
        .collect();
    Ok(fill(BACKLOG_TEMPLATE, &values))
}

fn redact_strings(value: &mut Value) {
    match value {
        Value::String(text) => {
            if let Cow::Owned(redacted) = redacted(text) {
                *text = redacted;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_strings),
        Value::Object(fields) => fields.values_mut().for_each(redact_strings),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// The provenance and the backlog stored in the backlog file `text` (read from `path`).
pub(super) fn parse_backlog(
    text: &str,
    path: &Path,
) -> Result<(Provenance, Backlog), CampaignError> {
    let corrupt = |reason: String| CampaignError::Corrupt {
        path: path.to_path_buf(),
        reason,
    };
    let lines: Vec<&str> = text.lines().collect();
    let opens: Vec<usize> = (0..lines.len())
        .filter(|&index| lines[index].trim_end() == BLOCK_OPEN)
        .collect();
    let [open] = opens[..] else {
        return Err(corrupt(format!(
            "expected one `{BLOCK_OPEN}` block of state, found {}",
            opens.len()
        )));
    };
    let close = (open + 1..lines.len())
        .find(|&index| lines[index].trim_end() == BLOCK_CLOSE)
        .ok_or_else(|| corrupt(format!("the `{BLOCK_OPEN}` block of state is not closed")))?;
    let block = lines[open + 1..close].join("\n");
    let value: Value = serde_json::from_str(&block)
        .map_err(|error| corrupt(format!("the block of state is not JSON: {error}")))?;
    match value.get("format").and_then(Value::as_u64) {
        Some(format) if format == u64::from(FORMAT) => {}
        Some(format) => {
            return Err(CampaignError::UnsupportedFormat {
                path: path.to_path_buf(),
                found: format,
            });
        }
        None => return Err(corrupt("the block of state has no `format`".to_owned())),
    }
    let state: StateIn = serde_path_to_error::deserialize(value)
        .map_err(|error| corrupt(format!("the block of state does not fit: {error}")))?;
    if state.provenance.format != FORMAT {
        return Err(CampaignError::UnsupportedFormat {
            path: path.to_path_buf(),
            found: u64::from(state.provenance.format),
        });
    }
    if let Some(outcome) = &state.backlog.counters.outcome
        && !TERMINAL_OUTCOMES.contains(&outcome.as_str())
    {
        return Err(corrupt(format!("unknown outcome `{outcome}`")));
    }
    Ok((state.provenance, state.backlog))
}

// The human-readable summary at the top of the backlog file: counters, candidates, handoffs,
// cooldowns and the rest, one line each.

/// The human-readable part of the backlog file.
pub(super) fn summary(backlog: &Backlog) -> String {
    let mut text = counters(&backlog.counters);
    section(&mut text, "Candidates", &backlog.candidates, |candidate| {
        format!(
            "`{}` {} [{}] {}: ROI {:.2} (impact {}, confidence {}, effort {}), round {}",
            candidate.id,
            candidate.family,
            candidate.status,
            candidate.title,
            candidate.roi,
            candidate.impact,
            candidate.confidence,
            candidate.effort,
            candidate.round
        )
    });
    section(&mut text, "Handoffs", &backlog.handoffs, |handoff| {
        format!(
            "{}{} {}: {}, round {}",
            if handoff.critical { "critical, " } else { "" },
            handoff.severity,
            handoff.family,
            handoff.title,
            handoff.round
        )
    });
    section(&mut text, "Cooldowns", &backlog.cooldowns, |cooldown| {
        format!(
            "{} since round {}: {}",
            cooldown.family, cooldown.since_round, cooldown.reason
        )
    });
    section(&mut text, "Rollbacks", &backlog.rollbacks, String::clone);
    section(
        &mut text,
        "Released cooldowns",
        &backlog.releases,
        String::clone,
    );
    if !backlog.open_items.is_empty() {
        text.push_str("\n## Open\n\n");
        for item in &backlog.open_items {
            // Markdown list items already (`- [ ] P0: ...`); anything else is made one.
            let item = one_line(item);
            let marker = if item.starts_with("- ") { "" } else { "- " };
            let _ = writeln!(text, "{marker}{item}");
        }
    }
    section(&mut text, "Deferred", &backlog.deferred, String::clone);
    text
}

/// The `## Counters` section: segment, round, the counters and the outcome.
fn counters(counters: &super::Counters) -> String {
    let mut text = String::from("## Counters\n\n");
    let _ = writeln!(
        text,
        "- Segment {}, round {} (lifetime rounds {}){}",
        counters.segment,
        counters.round,
        counters.lifetime_rounds,
        if counters.round_in_progress {
            "; a round is in progress"
        } else {
            ""
        }
    );
    let _ = writeln!(
        text,
        "- Plateau {}, failures {}, no progress {}, same error {}, residual streak {}",
        counters.plateau_count,
        counters.fail_count,
        counters.no_progress,
        counters.same_error,
        counters.residual_streak
    );
    let outcome = counters.outcome.as_deref().unwrap_or("running");
    match &counters.stop_reason {
        Some(reason) => {
            let _ = writeln!(
                text,
                "- Outcome: {} ({})",
                one_line(outcome),
                one_line(reason)
            );
        }
        None => {
            let _ = writeln!(text, "- Outcome: {}", one_line(outcome));
        }
    }
    text
}

fn section<T>(text: &mut String, title: &str, items: &[T], line: impl Fn(&T) -> String) {
    if items.is_empty() {
        return;
    }
    let _ = write!(text, "\n## {title} ({})\n\n", items.len());
    for item in items {
        let _ = writeln!(text, "- {}", one_line(&line(item)));
    }
}
