//! The human-readable summary at the top of the backlog file: counters, candidates, handoffs,
//! cooldowns and the rest, one line each.

use std::fmt::Write as _;

use super::Backlog;
use super::render::one_line;

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
