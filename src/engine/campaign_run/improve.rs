//! The `improve` preset: the gate's findings become an open backlog — P0 (syntax, types, tests,
//! build errors), P1 (lint and other errors) and P2 deferred (warnings, never executed, never
//! blocking). Each cycle works the open items with the fix delegates and verifies with the gate;
//! the campaign completes only after two cycles in a row with nothing material open and a green
//! gate, the second a confirmation run. No progress three times, or the same error three times,
//! stops it.

use crate::campaign::books::Campaign;
use crate::engine::policy::{CycleNumber, CycleRecord, Plan, Policy, Settled, Verification};
use crate::engine::work::category_work;
use crate::engine::{Attempt, Engine, RunError};
use crate::model::{Diagnostic, GateSummary, StopReason};
use crate::stop::{self, Facts, IMPROVE_NO_PROGRESS, IMPROVE_RESIDUAL, IMPROVE_SAME_ERROR};
/// Categories whose failures are P0.
const P0_CATEGORIES: [&str; 5] = ["syntax", "types", "tests", "build", "factory"];

/// Records a cycle's landed change (or its rollback) in the backlog, for the report.
fn note_cycle(
    campaign: &mut Campaign,
    number: u32,
    attempts: &[Attempt],
    before: &GateSummary,
    after: &GateSummary,
) {
    let categories: Vec<&str> = attempts
        .iter()
        .filter(|a| !a.changes.is_empty())
        .map(|a| a.category.as_str())
        .collect();
    if categories.is_empty() {
        return;
    }
    if attempts.iter().any(|a| a.kept) {
        campaign
            .backlog
            .candidates
            .push(crate::campaign::books::Candidate {
                id: format!("cycle-{number}"),
                family: categories.join(", "),
                title: format!(
                    "cycle {number}: failed {}→{}",
                    before.failed_count, after.failed_count
                ),
                paths: Vec::new(),
                impact: 0,
                confidence: 0,
                effort: 0,
                roi: 0.0,
                status: "accepted".into(),
                round: number,
                note: "the gate was no worse".into(),
            });
    } else {
        let why: Vec<String> = attempts
            .iter()
            .flat_map(|a| a.rejected_because.iter().cloned())
            .collect();
        campaign.backlog.rollbacks.push(format!(
            "cycle {number}: {}: {}",
            categories.join(", "),
            why.join("; ")
        ));
    }
}

/// The backlog of a gate result: open P0/P1 lines and deferred P2 lines.
pub fn backlog_of(summary: &GateSummary) -> (Vec<String>, Vec<String>) {
    let mut open = Vec::new();
    let mut deferred = Vec::new();
    for (name, category) in &summary.categories {
        let first = category
            .details
            .first()
            .map_or(String::new(), |d| format!(" — first: {d}"));
        if category.failures > 0 && name != crate::gate::INFRA_CATEGORY {
            let priority = if P0_CATEGORIES.contains(&name.as_str()) {
                "P0"
            } else {
                "P1"
            };
            open.push(format!(
                "- [ ] {priority}: {name}: {} failure(s){first}",
                category.failures
            ));
        } else if category.warnings > 0 {
            deferred.push(format!(
                "- [ ] P2: {name}: {} warning(s)",
                category.warnings
            ));
        }
    }
    open.sort();
    (open, deferred)
}

/// The improve preset's policy over its campaign.
#[derive(Debug)]
pub struct Improve<'c> {
    campaign: &'c mut Campaign,
    limit: u32,
    /// The cycle's stop-condition state, for its ledger and card.
    stop_state: String,
}

impl<'c> Improve<'c> {
    /// The policy over `campaign`, at most `limit` cycles.
    pub fn new(campaign: &'c mut Campaign, limit: u32) -> Self {
        Self {
            campaign,
            limit,
            stop_state: String::new(),
        }
    }
}

impl Policy for Improve<'_> {
    fn begin(&mut self, engine: &mut Engine<'_>) -> Result<Option<String>, RunError> {
        let (open, deferred) = backlog_of(&engine.kept().summary);
        let text = format!(
            "▸ improve · kickoff · goal: {} · open P0/P1: {} · deferred P2: {} · at most {} cycles",
            self.campaign.segment_config.intent,
            open.len(),
            deferred.len(),
            self.limit
        );
        card(self.campaign, text).map(Some)
    }

    fn stop(&mut self, engine: &Engine<'_>) -> Result<Option<StopReason>, RunError> {
        let counters = &self.campaign.backlog.counters;
        let facts = Facts {
            cancelled: engine.cancelled(),
            cycles: counters.round,
            lifetime_rounds: counters.lifetime_rounds,
            no_progress: counters.no_progress,
            same_error: counters.same_error,
            residual: counters.residual_streak,
            only_held: self.campaign.reapply.is_empty()
                && only_held(&engine.kept().summary, &self.campaign.backlog.held),
            ..Facts::default()
        };
        let rules = stop::improve(self.limit, self.campaign.limits.max_lifetime_rounds);
        let Some(reason) = stop::evaluate(&facts, &rules) else {
            return Ok(None);
        };
        if reason == StopReason::Cancelled {
            // Not an end: the cycle starts again on the next run.
            cancelled(self.campaign)?;
            return Ok(Some(reason));
        }
        super::conclude(self.campaign, reason)?;
        Ok(Some(reason))
    }

    fn ended_by_engine(&mut self, reason: StopReason) -> Result<(), RunError> {
        super::conclude(self.campaign, reason)
    }

    fn book_spending(
        &mut self,
        segment: crate::model::Spend,
        lifetime: crate::model::Spend,
    ) -> Result<(), RunError> {
        super::book_spending(self.campaign, segment, lifetime)
    }

    fn open_cycle(&mut self, _engine: &Engine<'_>) -> Result<CycleNumber, RunError> {
        super::open_round(self.campaign)
    }

    fn plan(&mut self, engine: &mut Engine<'_>, _cycle: CycleNumber) -> Result<Plan, RunError> {
        if !self.campaign.reapply.is_empty() {
            return Ok(super::reapply_plan());
        }
        let kept = engine.kept();
        let (open, _) = backlog_of(&kept.summary);
        if open.is_empty() {
            // Residual: nothing material open; the gate runs again to confirm.
            return Ok(Plan::Confirm);
        }
        let priority = P0_CATEGORIES.map(String::from);
        let held = &self.campaign.backlog.held;
        let mut items = category_work(kept, &priority, &engine.reach());
        items.retain(|item| !held.contains(&item.category));
        Ok(Plan::Work {
            items,
            verification: Verification::Together,
        })
    }

    fn recorded(&mut self, record: &CycleRecord<'_>) -> Result<(), RunError> {
        super::note_scope_violations(self.campaign, record)
    }

    fn discard_cancelled(&mut self, _record: &CycleRecord<'_>) -> Result<bool, RunError> {
        cancelled(self.campaign)?;
        Ok(true)
    }

    fn settle(
        &mut self,
        engine: &Engine<'_>,
        record: &CycleRecord<'_>,
    ) -> Result<Settled, RunError> {
        let number = record.number.shown;
        super::settle_reapply(self.campaign, record.attempts);
        settle(
            self.campaign,
            record.before,
            record.after,
            &engine.kept().diagnostics,
        );
        note_cycle(
            self.campaign,
            number,
            record.attempts,
            record.before,
            record.after,
        );
        let (open, deferred) = backlog_of(record.after);
        self.campaign.backlog.open_items = open;
        self.campaign.backlog.deferred = deferred;
        let counters = &self.campaign.backlog.counters;
        self.stop_state = format!(
            "cycle {number} of at most {}; no-progress {}/{IMPROVE_NO_PROGRESS}; same-error {}/{IMPROVE_SAME_ERROR}; residual streak {}/{IMPROVE_RESIDUAL}",
            self.limit, counters.no_progress, counters.same_error, counters.residual_streak
        );
        Ok(Settled::default())
    }

    fn ledger_notes(&self) -> Option<(Vec<String>, String)> {
        Some((
            self.campaign.backlog.open_items.clone(),
            self.stop_state.clone(),
        ))
    }

    fn close_cycle(
        &mut self,
        _engine: &mut Engine<'_>,
        record: &CycleRecord<'_>,
        _next: Option<StopReason>,
    ) -> Result<String, RunError> {
        super::remember_owned(self.campaign, record.attempts);
        self.campaign.save()?;
        let open = &self.campaign.backlog.open_items;
        let (was_open, _) = backlog_of(record.before);
        let key = |line: &String| line.split(':').take(2).collect::<Vec<_>>().join(":");
        let closed = was_open
            .iter()
            .filter(|w| !open.iter().any(|o| key(o) == key(w)))
            .count();
        let discovered = open
            .iter()
            .filter(|o| !was_open.iter().any(|w| key(w) == key(o)))
            .count();
        let text = format!(
            "▸ improve · cycle {}/{} · failed {}→{} · landed {} · discovered {discovered} · closed {closed} · open P0/P1: {} · deferred P2: {} · {}",
            record.number.shown,
            self.limit,
            record.before.failed_count,
            record.after.failed_count,
            record.kept_count(),
            open.len(),
            self.campaign.backlog.deferred.len(),
            self.stop_state
        );
        card(self.campaign, text)
    }
}

/// The counters after a cycle.
fn settle(
    campaign: &mut Campaign,
    before: &GateSummary,
    after: &GateSummary,
    found: &[Diagnostic],
) {
    let counters = &mut campaign.backlog.counters;
    counters.round += 1;
    counters.lifetime_rounds += 1;
    counters.round_in_progress = false;
    counters.no_progress = if after.failed_count < before.failed_count || after.failed_count == 0 {
        0
    } else {
        counters.no_progress + 1
    };
    let signature = stop::error_signature(found, after);
    // Cycles in a row that ended with this same error (the first counts one).
    counters.same_error = match (&signature, &counters.last_error_signature) {
        (Some(now), Some(last)) if now == last => counters.same_error + 1,
        (Some(_), _) => 1,
        (None, _) => 0,
    };
    counters.last_error_signature = signature;
    let (open, _) = backlog_of(after);
    counters.residual_streak = if open.is_empty() && after.failed_count == 0 {
        counters.residual_streak + 1
    } else {
        0
    };
}

/// Whether every failing category is held (its earlier work pending), and one is.
fn only_held(summary: &GateSummary, held: &[String]) -> bool {
    let mut failing = summary
        .categories
        .iter()
        .filter(|(name, c)| c.failures > 0 && name.as_str() != crate::gate::INFRA_CATEGORY)
        .map(|(name, _)| name)
        .peekable();
    failing.peek().is_some() && failing.all(|name| held.contains(name))
}

fn cancelled(campaign: &mut Campaign) -> Result<(), RunError> {
    campaign.append_worklog("- cancelled; the cycle starts again on the next run")?;
    campaign.save()?;
    Ok(())
}

/// A card: written to the worklog, and returned for the console.
fn card(campaign: &mut Campaign, text: String) -> Result<String, RunError> {
    campaign.append_worklog(&format!("- {text}"))?;
    Ok(text)
}
