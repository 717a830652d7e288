//! The campaign report (`REFINE-LOOP-FINAL.md` of a refine or improve run): outcome, counters,
//! this run's cards, what was accepted, rolled back, parked or blocked, the handoffs a person
//! takes over, what rests, the record, and how to go on.

use std::fmt::Write as _;

use super::{CampaignPart, Mode, Report, baseline_md};
use crate::markdown::inline;
use crate::model::{Outcome, Preset};

/// The campaign report: outcome, counters, what was accepted and rolled back, what rests, what a
/// person must take over, and how to go on; then the baseline and the sweep.
pub(super) fn campaign_report(report: &Report) -> String {
    let Some(campaign) = &report.campaign else {
        return String::new();
    };
    let preset = match report.mode {
        Mode::Run(preset) => preset,
        Mode::Check | Mode::Merge => Preset::Refine,
    };
    let mut text = heading(report, campaign, preset);
    across_runs(&mut text, campaign);
    section(
        &mut text,
        "This run, cycle by cycle",
        campaign.cards.clone(),
    );
    backlog_sections(&mut text, campaign, preset);
    if let Some(run) = &report.run {
        let section = super::final_md::integrity_section(&run.integrity);
        text.push_str(section.trim_start_matches('\n'));
        text.push('\n');
    }
    record_section(&mut text, report);
    text.push_str("\n## How to go on\n\n");
    text.push_str(if report.outcome == Outcome::Cancelled {
        "- Run the same command again: the campaign resumes where it stopped.\n"
    } else if campaign.scheduled {
        "- The next scheduled run (`--continue=auto`) goes on with this campaign, or rests once it \
         is finished; give it a new intent to start the next segment.\n"
    } else {
        "- Run again with `--continue` (and a new intent) to start the next segment.\n"
    });
    if let Some(run) = &report.run {
        text.push_str(&baseline_md::report_section(&run.notes));
    }
    if let Some(sweep) = &report.sweep {
        text.push('\n');
        text.push_str(&super::sweep_section(sweep));
    }
    text
}

/// The title, the outcome, the goal and the counters.
fn heading(report: &Report, campaign: &CampaignPart, preset: Preset) -> String {
    let reason = report.stop_reason.map_or("", |r| r.as_str());
    let counters = &campaign.backlog.counters;
    let mut text = format!(
        "# refine-loop: {} campaign report\n\n**Outcome: {}** ({reason}).\n\n",
        preset.as_str(),
        report.outcome.as_str()
    );
    let _ = writeln!(text, "Goal: {}\n", inline(&campaign.intent));
    let _ = writeln!(
        text,
        "Counters: segment {}, round {}, lifetime rounds {}, plateau {}, failures {}, no-progress {}, same-error {}, residual streak {}.\n",
        counters.segment,
        counters.round,
        counters.lifetime_rounds,
        counters.plateau_count,
        counters.fail_count,
        counters.no_progress,
        counters.same_error,
        counters.residual_streak
    );
    text
}

/// What this run found of the campaign's earlier runs (identity, a restored state set aside,
/// where their work went), and every earlier run's work as it stands now; nothing for a
/// campaign without either.
fn across_runs(text: &mut String, campaign: &CampaignPart) {
    if !campaign.notes.is_empty() {
        section(
            text,
            "Opening this run",
            campaign.notes.iter().map(|note| inline(note)).collect(),
        );
    }
    let earlier = &campaign.backlog.earlier;
    if !earlier.is_empty() {
        section(
            text,
            "Earlier runs' work (landed, pending, stale)",
            earlier.iter().map(|work| inline(&work.line())).collect(),
        );
    }
}

/// `## title` and its lines as a list, or `None.`.
fn section(text: &mut String, title: &str, lines: Vec<String>) {
    let _ = writeln!(text, "## {title}\n");
    if lines.is_empty() {
        text.push_str("None.\n\n");
    } else {
        for line in lines {
            // A line may be a list item already (`- [ ] P1: ...`).
            let marker = if line.starts_with("- ") { "" } else { "- " };
            let _ = writeln!(text, "{marker}{line}");
        }
        text.push('\n');
    }
}

/// What the backlog holds: accepted, rolled back, parked and blocked candidates, handoffs,
/// resting families, and for improve the open and deferred items.
fn backlog_sections(text: &mut String, campaign: &CampaignPart, preset: Preset) {
    let backlog = &campaign.backlog;
    let by_status = |status: &str, from: usize| -> Vec<String> {
        backlog
            .candidates
            .iter()
            .skip(from)
            .filter(|c| c.status == status)
            .map(|c| {
                format!(
                    "round {}: {} ({}, ROI {:.2}): {}",
                    c.round,
                    inline(&c.title),
                    inline(&c.family),
                    c.roi,
                    inline(&c.note)
                )
            })
            .collect()
    };
    // Accepted by earlier runs: under "Earlier runs' work", as it stands now.
    section(
        text,
        "Accepted in this run",
        by_status("accepted", campaign.first_candidate),
    );
    let rollbacks = backlog.rollbacks.iter().map(|r| inline(r)).collect();
    section(text, "Rolled back", rollbacks);
    section(text, "Parked below theta", by_status("parked", 0));
    section(
        text,
        "Blocked by the user's own work",
        by_status("blocked", 0),
    );
    let handoffs = backlog
        .handoffs
        .iter()
        .map(|h| {
            format!(
                "{} ({}, {}): {}",
                inline(&h.title),
                inline(&h.family),
                inline(&h.severity),
                inline(h.evidence.lines().next().unwrap_or(""))
            )
        })
        .collect();
    section(text, "Handoffs (NEEDS-FIX, not executed)", handoffs);
    let resting = backlog
        .cooldowns
        .iter()
        .map(|c| {
            let family = inline(&c.family);
            format!(
                "{family} since round {}: {}",
                c.since_round,
                inline(&c.reason)
            )
        })
        .collect();
    section(text, "Resting families", resting);
    if preset == Preset::Improve {
        section(text, "Open backlog (P0/P1)", backlog.open_items.clone());
        section(text, "Deferred (P2)", backlog.deferred.clone());
    }
}

/// The commits and patches this run left.
fn record_section(text: &mut String, report: &Report) {
    let _ = writeln!(text, "## The record\n");
    let delivery = report.run.as_ref().map(|run| &run.delivery);
    match delivery.and_then(|d| d.reference.as_ref().map(|r| (d, r))) {
        Some((delivery, reference)) => {
            let _ = writeln!(
                text,
                "- {} accepted change(s) committed on `{reference}`; `patches/` applies them with `git am`.",
                delivery.commits
            );
        }
        None => text.push_str("- Nothing was accepted in this run.\n"),
    }
    if let Some(refused) = delivery.and_then(|d| d.refused.as_ref()) {
        let _ = writeln!(text, "- Patches refused: {refused}.");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture;

    #[test]
    fn the_refine_campaign_report() {
        insta::assert_snapshot!(campaign_report(&fixture::report(Mode::Run(Preset::Refine))));
    }

    #[test]
    fn the_improve_campaign_report() {
        insta::assert_snapshot!(campaign_report(&fixture::report(Mode::Run(
            Preset::Improve
        ))));
    }

    /// A second scheduled night: the first night's accepted candidate is not this run's, the
    /// backlog's items are one list item each, and the advice fits a job that goes on by itself.
    #[test]
    fn a_scheduled_night_lists_only_its_own_work_and_fits_its_job() {
        let mut report = fixture::report(Mode::Run(Preset::Improve));
        let campaign = report.campaign.as_mut().unwrap();
        campaign.scheduled = true;
        campaign.first_candidate = 1;
        let text = campaign_report(&report);
        let accepted = text
            .split("## Accepted in this run\n\n")
            .nth(1)
            .and_then(|rest| rest.split("\n\n").next())
            .unwrap();
        assert_eq!(accepted, "None.");
        assert!(text.contains("\n- [ ] P1: lint: 1 failure(s)"), "{text}");
        assert!(!text.contains("- - "), "{text}");
        assert!(text.contains("`--continue=auto`"), "{text}");
        assert!(!text.contains("Run again with `--continue`"), "{text}");
        for (first, accepted) in [(0, true), (1, false), (9, false)] {
            campaign_of(&mut report).first_candidate = first;
            let text = campaign_report(&report);
            assert_eq!(
                text.contains("rename the helpers"),
                accepted,
                "from {first}"
            );
        }
    }

    fn campaign_of(report: &mut Report) -> &mut CampaignPart {
        report.campaign.as_mut().unwrap()
    }
}
