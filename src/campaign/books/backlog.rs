//! The campaign's persisted types: where it belongs, its segment's configuration, its counters,
//! candidates, handoffs and cooldowns (the backlog file's machine-readable block), and what a
//! run found before it opened the campaign.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Where a campaign belongs; fixed when it starts and checked on every resume (by its
/// [`identity`](Self::identity) when it has one, else by its paths).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub format: u32,
    /// `refine` or `improve`.
    pub preset: String,
    /// Canonical.
    pub target: PathBuf,
    /// Canonical; where the campaign was created (a campaign's dir may be restored elsewhere).
    pub state_dir: PathBuf,
    /// Informational: where the campaign started (a fresh clone's paths differ).
    pub repository_root: PathBuf,
    pub git_common_dir: PathBuf,
    /// What the campaign belongs to, on any clone; absent in a state written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<crate::campaign::identity::Identity>,
}

/// The configuration of one segment: fixed within it, changed only by `--continue`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SegmentConfig {
    /// As given, e.g. `2.0`.
    pub theta: String,
    pub focus: Vec<String>,
    pub intent: String,
}

/// The authoritative counters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Counters {
    pub segment: u32,
    pub round: u32,
    pub plateau_count: u32,
    pub fail_count: u32,
    pub lifetime_rounds: u32,
    pub no_progress: u32,
    pub same_error: u32,
    pub residual_streak: u32,
    pub last_error_signature: Option<String>,
    /// One of [`TERMINAL_OUTCOMES`], or `None` while the segment runs.
    pub outcome: Option<String>,
    pub stop_reason: Option<String>,
    /// Set when a round starts, cleared when its counters are recorded: a killed run resumes
    /// that round.
    pub round_in_progress: bool,
    /// What the delegates spent in this segment, and over the campaign's life, as their
    /// readers reported it (booked when a run ends).
    pub segment_spent: crate::model::Spend,
    pub lifetime_spent: crate::model::Spend,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    pub id: String,
    pub family: String,
    pub title: String,
    pub paths: Vec<String>,
    pub impact: u8,
    pub confidence: u8,
    pub effort: u8,
    pub roi: f64,
    /// `open`, `accepted`, `rolled-back`, `parked` or `cooldown`.
    pub status: String,
    pub round: u32,
    pub note: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Handoff {
    pub family: String,
    pub title: String,
    pub severity: String,
    pub evidence: String,
    pub critical: bool,
    pub round: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cooldown {
    pub family: String,
    pub since_round: u32,
    pub reason: String,
}

/// The authoritative state of a campaign, kept in the backlog file's machine-readable block.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Backlog {
    pub counters: Counters,
    /// The current segment's configuration.
    pub config: Option<SegmentConfig>,
    pub candidates: Vec<Candidate>,
    pub handoffs: Vec<Handoff>,
    pub cooldowns: Vec<Cooldown>,
    pub family_failures: BTreeMap<String, u32>,
    pub rollbacks: Vec<String>,
    /// Each cooldown a continuation released: segment, family and reason.
    pub releases: Vec<String>,
    /// The improve preset's open work, as `- [ ] P0: ...` lines.
    pub open_items: Vec<String>,
    pub deferred: Vec<String>,
    /// Paths the campaign's accepted changes left, with the state they left (see
    /// `PathState::key`): on a later run they are the campaign's own, not the user's work.
    pub owned: BTreeMap<String, String>,
    /// The commit HEAD named when the campaign's record was last written, and the record's last
    /// commit: while HEAD stays, a later run's commits continue from that one.
    pub record_base: Option<String>,
    pub record_tip: Option<String>,
    /// The segment whose open surface was swept (`sweep = true`): once per segment.
    pub swept_segment: Option<u32>,
    /// Each earlier run's accepted work, and how it stands against HEAD.
    pub earlier: Vec<crate::campaign::history::EarlierWork>,
    /// Families left alone in this run: their earlier work is pending (`pending = "skip"`).
    pub held: Vec<String>,
}

impl Backlog {
    /// Whether `family` is not worked now: it cools down, or its earlier work waits to land.
    pub fn rests(&self, family: &str) -> bool {
        self.cooldowns
            .iter()
            .any(|cooldown| cooldown.family == family)
            || self.held.iter().any(|held| held == family)
    }
}

/// What this run observed before it opened the campaign.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BaselineFacts {
    /// ISO 8601 with the timezone.
    pub date: String,
    /// `main @ <sha>`, or `DETACHED <sha>`.
    pub baseline_revision: String,
    pub protected_paths: Vec<String>,
    pub baseline_checks: Vec<String>,
}

/// What [`Campaign::open_resolving`] found and did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opened {
    /// No state: all three files created.
    New,
    /// An unfinished segment (or one cancelled, resumed by `--continue`), counters as stored.
    Resumed,
    /// `--continue` started a new segment; the families whose cooldown it released.
    Continued { released: Vec<String> },
    /// The segment has an outcome and there was no `--continue`: nothing was changed.
    Terminal,
    /// A continuation found the campaign finished (why): nothing was changed.
    Finished(String),
    /// `--continue=auto` found a corrupt or partial state: it was set aside and a new segment
    /// started.
    Restarted(super::Restart),
}
