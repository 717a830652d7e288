//! The `refine` preset: behaviour-preserving refinements, one candidate at a time. Each round
//! discovers candidates (from the gate's findings and from discover delegates), hands
//! behaviour-changing ones off as NEEDS-FIX, ranks the rest by ROI, and carries out the best
//! qualified ones serially through the `execute` delegate until one is accepted: the gate must be
//! no worse and an independent `reviewer` must approve. The campaign's counters decide the
//! outcome, in the seed's order.

mod counters;
mod discover;
mod review;

use counters::{active_handoffs, facts_of, note_candidate, record_handoff, settle_round};

use crate::campaign::books::Campaign;
use crate::campaign::candidates::{self, Proposal};
use crate::delegate::Role;
use crate::engine::policy::{
    CycleNumber, CycleRecord, Judgement, Plan, Policy, Settled, Staff, Verification, Work,
};
use crate::engine::verify::Verified;
use crate::engine::{Attempt, Engine, RunError};
use crate::model::StopReason;
use crate::stop::{REFINE_FAILURES, REFINE_MAX_ROUNDS, REFINE_PLATEAU};

/// Rounds in a row a family may fail before it rests.
const FAMILY_FAILURES_FOR_COOLDOWN: u32 = 3;

/// What one round did.
#[derive(Debug, Default)]
struct Round {
    accepted: Option<String>,
    /// A qualified candidate was tried and failed but may be tried again.
    retained: bool,
    operational_error: bool,
    critical: bool,
}

/// The refine preset's policy over its campaign: the round's candidates, in rank order.
#[derive(Debug)]
pub struct Refine<'c> {
    campaign: &'c mut Campaign,
    /// The sweep's proposals, standing for the whole segment.
    swept: Vec<Proposal>,
    theta: f64,
    round: Round,
    /// Every proposal of the round, and the executable ones in the order they are tried.
    proposals: Vec<Proposal>,
    executable: Vec<Proposal>,
}

impl<'c> Refine<'c> {
    pub fn new(campaign: &'c mut Campaign, swept: Vec<Proposal>) -> Self {
        let theta = campaign.segment_config.theta.parse().unwrap_or(2.0);
        Self {
            campaign,
            swept,
            theta,
            round: Round::default(),
            proposals: Vec::new(),
            executable: Vec::new(),
        }
    }

    fn number(&self) -> u32 {
        self.campaign.backlog.counters.round + 1
    }

    /// Discovers the round's proposals and sorts them: handoffs, blocked, parked, executable.
    fn classify(&mut self, engine: &mut Engine<'_>, cycle: CycleNumber) -> Result<(), RunError> {
        let number = self.number();
        let focus = self.campaign.segment_config.focus.clone();
        let discover::Discovered {
            mut proposals,
            rejected,
            failed: discover_failed,
        } = discover::discover(engine, cycle, &focus)?;
        for reason in &rejected {
            self.campaign
                .append_worklog(&format!("- round {number}: rejected a proposal: {reason}"))?;
        }
        let campaign = &mut *self.campaign;
        // The sweep's findings stand for the whole segment, each until it is accepted.
        proposals.extend(
            self.swept
                .iter()
                .filter(|p| {
                    !campaign.backlog.candidates.iter().any(|c| {
                        c.family == p.family && c.title == p.title && c.status == "accepted"
                    })
                })
                .cloned(),
        );
        // Resting families, and those whose earlier work waits to land (`pending = "skip"`).
        proposals.retain(|p| !campaign.backlog.rests(&p.family));
        // A candidate that would change paths outside the scope is not for this run.
        let scope = &engine.settings().run.scope;
        proposals.retain(|p| {
            let inside = p.paths.iter().all(|path| scope.holds(path));
            if !inside {
                note_candidate(
                    campaign,
                    p,
                    number,
                    "parked",
                    "touches paths outside the scope",
                );
            }
            inside
        });
        self.round = Round {
            operational_error: discover_failed,
            ..Round::default()
        };
        for proposal in proposals.iter().filter(|p| p.behaviour_changing) {
            self.round.critical |= proposal.critical;
            record_handoff(campaign, proposal, cycle.index);
        }
        let protected = engine.protected_paths();
        let (executable, blocked): (Vec<&Proposal>, Vec<&Proposal>) =
            candidates::rank(&proposals, self.theta)
                .into_iter()
                .partition(|p| !p.paths.iter().any(|path| protected.contains(path)));
        for proposal in &blocked {
            // Still actionable once the user's work there is committed: not a plateau.
            self.round.retained = true;
            note_candidate(
                campaign,
                proposal,
                number,
                "blocked",
                "touches a path that held the user's own work before the run",
            );
        }
        for proposal in proposals
            .iter()
            .filter(|p| !p.behaviour_changing && p.roi() < self.theta)
        {
            note_candidate(campaign, proposal, number, "parked", "ROI below theta");
        }
        self.executable = executable.into_iter().cloned().collect();
        self.proposals = proposals;
        Ok(())
    }
}

impl Policy for Refine<'_> {
    fn stop(&mut self, engine: &Engine<'_>) -> Result<Option<StopReason>, RunError> {
        let facts = facts_of(self.campaign, engine.cancelled());
        let rules = crate::stop::refine(self.campaign.limits.max_lifetime_rounds);
        let reason = crate::stop::evaluate(&facts, &rules);
        match reason {
            None => {}
            // Not an end: the campaign resumes where it was.
            Some(StopReason::Cancelled) => self.campaign.save()?,
            Some(reason) => super::conclude(self.campaign, reason)?,
        }
        Ok(reason)
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

    fn plan(&mut self, engine: &mut Engine<'_>, cycle: CycleNumber) -> Result<Plan, RunError> {
        if !self.campaign.reapply.is_empty() {
            // A round of its own, judged by the gate; no candidate is at stake, no plateau.
            self.round = Round {
                retained: true,
                ..Round::default()
            };
            self.executable.clear();
            self.proposals.clear();
            return Ok(super::reapply_plan());
        }
        self.classify(engine, cycle)?;
        // Nothing is executed in a round a critical finding ends.
        let items = if self.round.critical {
            Vec::new()
        } else {
            self.executable.iter().map(work_of).collect()
        };
        Ok(Plan::Work {
            items,
            verification: Verification::EachAttempt {
                until_accepted: true,
            },
        })
    }

    fn unstaffed(&mut self, _index: usize, _cycle: CycleNumber) -> Result<bool, RunError> {
        self.round.operational_error = true;
        let number = self.number();
        self.campaign.append_worklog(&format!(
            "- round {number}: no execute delegate is configured; nothing was tried"
        ))?;
        Ok(false)
    }

    fn screen(&self, engine: &Engine<'_>, attempt: &Attempt) -> Option<String> {
        let run = &attempt.run;
        run.failed().then(|| {
            let timeout = engine.settings().delegates[attempt.delegate].timeout;
            let end = match (&run.spawn_error, &run.note) {
                (None, Some(note)) => format!("{}: {note}", run.describe_end(timeout)),
                _ => run.describe_end(timeout),
            };
            format!("the execute delegate failed ({end}); its change, if any, was undone")
        })
    }

    fn review(
        &mut self,
        engine: &mut Engine<'_>,
        index: usize,
        attempt: &Attempt,
        verified: &Verified,
        cycle: CycleNumber,
    ) -> Result<Vec<String>, RunError> {
        let Some(proposal) = self.executable.get(index) else {
            return Ok(Vec::new());
        };
        Ok(
            match review::review(engine, proposal, attempt, &verified.run.summary, cycle)? {
                review::Decision::Approve => Vec::new(),
                review::Decision::Reject(why) => vec![format!("reviewer: {why}")],
                review::Decision::Unavailable(why) => {
                    self.round.operational_error = true;
                    vec![why]
                }
            },
        )
    }

    fn judged(
        &mut self,
        index: usize,
        attempt: &Attempt,
        judgement: &Judgement,
    ) -> Result<(), RunError> {
        let number = self.number();
        let Some(proposal) = self.executable.get(index) else {
            return Ok(());
        };
        let note = match judgement {
            Judgement::Kept => {
                self.round.accepted = Some(proposal.family.clone());
                let campaign = &mut *self.campaign;
                note_candidate(
                    campaign,
                    proposal,
                    number,
                    "accepted",
                    "checks and reviewer passed",
                );
                return Ok(());
            }
            Judgement::Screened(reason) => {
                self.round.operational_error = true;
                reason.clone()
            }
            Judgement::Undone | Judgement::NoChange => match &attempt.run.note {
                Some(note) => format!("the execute delegate changed nothing: {note}"),
                None if attempt.changes.is_empty() => {
                    "the execute delegate changed nothing".to_string()
                }
                None => attempt.rejected_because.join("; "),
            },
            Judgement::RolledBack => {
                let note = attempt.rejected_because.join("; ");
                self.campaign
                    .backlog
                    .rollbacks
                    .push(format!("round {number}: {}: {note}", proposal.family));
                note
            }
        };
        self.round.retained = true;
        note_candidate(self.campaign, proposal, number, "rolled-back", &note);
        Ok(())
    }

    fn recorded(&mut self, record: &CycleRecord<'_>) -> Result<(), RunError> {
        super::note_scope_violations(self.campaign, record)
    }

    fn discard_cancelled(&mut self, record: &CycleRecord<'_>) -> Result<bool, RunError> {
        // The round is not counted: the next run does it again, from the files.
        self.campaign.append_worklog(&format!(
            "- round {}: cancelled; it starts again on the next run",
            record.number.shown
        ))?;
        self.campaign.save()?;
        Ok(true)
    }

    fn settle(
        &mut self,
        _engine: &Engine<'_>,
        record: &CycleRecord<'_>,
    ) -> Result<Settled, RunError> {
        super::settle_reapply(self.campaign, record.attempts);
        settle_round(
            self.campaign,
            &self.round,
            record.attempts,
            &self.proposals,
            record.number.shown,
        );
        // A critical finding ends the round's segment at once, not after another cycle: the
        // one rule that acts at once, on the facts the round just settled.
        let facts = facts_of(self.campaign, false);
        Ok(Settled {
            next: None,
            stop_now: crate::stop::evaluate(&facts, &[crate::stop::Rule::Critical]),
        })
    }

    fn ledger_notes(&self) -> Option<(Vec<String>, String)> {
        let counters = &self.campaign.backlog.counters;
        let stop_state = format!(
            "round {} of at most {REFINE_MAX_ROUNDS}; plateau {}/{REFINE_PLATEAU}; failures {}/{REFINE_FAILURES}; segment {}",
            counters.round, counters.plateau_count, counters.fail_count, counters.segment
        );
        let open = active_handoffs(self.campaign)
            .map(|h| format!("- [ ] NEEDS-FIX: {} ({})", h.title, h.family))
            .collect();
        Some((open, stop_state))
    }

    fn close_cycle(
        &mut self,
        _engine: &mut Engine<'_>,
        record: &CycleRecord<'_>,
        _next: Option<StopReason>,
    ) -> Result<String, RunError> {
        super::remember_owned(self.campaign, record.attempts);
        self.campaign.save()?;
        let counters = &self.campaign.backlog.counters;
        let line = format!(
            "refine-loop round {} · accepted {} · plateau {}/{REFINE_PLATEAU} · failures {}/{REFINE_FAILURES} · handoffs {}",
            counters.round,
            self.round.accepted.as_deref().unwrap_or("none"),
            counters.plateau_count,
            counters.fail_count,
            self.campaign.backlog.handoffs.len()
        );
        self.campaign.append_worklog(&format!("- {line}"))?;
        if self.round.critical {
            super::conclude(self.campaign, StopReason::Critical)?;
        }
        Ok(line)
    }
}

/// A candidate as the execute delegate's work.
fn work_of(proposal: &Proposal) -> Work {
    let mut details = vec![
        format!("title: {}", proposal.title),
        format!("family: {}", proposal.family),
        format!("paths: {}", proposal.paths.join(", ")),
    ];
    details.extend(proposal.evidence.lines().map(|l| format!("evidence: {l}")));
    Work {
        category: proposal.family.clone(),
        file_name: proposal.family.replace('/', "-"),
        staff: Staff::Role(Role::Execute),
        diagnostics: proposal.diagnostics.clone(),
        details,
        files: proposal.paths.clone(),
        template: Some(include_str!("../../../../templates/refine/execute.md")),
    }
}
