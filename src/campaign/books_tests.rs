//! The state dir in temporary folders: new, resumed, refused, terminal and continued campaigns.

use std::collections::BTreeMap;
use std::os::unix::fs::{PermissionsExt, symlink};

use super::*;

/// What the tests open and look at.
impl Campaign {
    /// [`Campaign::open_resolving`] with this invocation's segment `config` (`continue_` is
    /// `--continue`).
    pub fn open(
        state_dir: &Path,
        provenance: Provenance,
        config: SegmentConfig,
        continue_: bool,
        baseline: &BaselineFacts,
        release: &dyn Fn(&Cooldown) -> bool,
    ) -> Result<(Campaign, Opened), CampaignError> {
        let options = OpenOptions {
            continue_: if continue_ {
                Continue::Yes
            } else {
                Continue::No
            },
            baseline,
            release,
            repo: None,
            limits: Limits::default(),
        };
        Self::open_resolving(state_dir, provenance, &options, |_| config)
    }

    /// The canonical state dir.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The provenance stored when the campaign started.
    pub fn provenance(&self) -> &Provenance {
        &self.provenance
    }

    pub fn goal_path(&self) -> PathBuf {
        self.dir.join(GOAL_FILE)
    }

    pub fn backlog_path(&self) -> PathBuf {
        self.dir.join(BACKLOG_FILE)
    }
}

fn provenance(root: &Path) -> Provenance {
    Provenance {
        identity: None,
        format: FORMAT,
        preset: "refine".to_owned(),
        target: root.join("repository"),
        state_dir: PathBuf::new(),
        repository_root: root.join("repository"),
        git_common_dir: root.join("repository/.git"),
    }
}

fn config(theta: &str) -> SegmentConfig {
    SegmentConfig {
        theta: theta.to_owned(),
        focus: vec!["architecture".to_owned(), "refactoring".to_owned()],
        intent: "tidy the parser\nkeep --flags literal".to_owned(),
    }
}

fn baseline() -> BaselineFacts {
    BaselineFacts {
        date: "2026-05-01T10:00:00+02:00".to_owned(),
        baseline_revision: "main @ 0123abc".to_owned(),
        protected_paths: vec!["notes.txt".to_owned()],
        baseline_checks: vec!["cargo test: pass".to_owned()],
    }
}

fn keep_all(_: &Cooldown) -> bool {
    false
}

/// A temporary folder and the state dir inside it.
fn setup() -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let state_dir = root.path().join("state");
    (root, state_dir)
}

fn open(root: &Path, state_dir: &Path, config: SegmentConfig, continue_: bool) -> Campaign {
    let (campaign, _) = open_result(root, state_dir, config, continue_).unwrap();
    campaign
}

fn open_result(
    root: &Path,
    state_dir: &Path,
    config: SegmentConfig,
    continue_: bool,
) -> Result<(Campaign, Opened), CampaignError> {
    Campaign::open(
        state_dir,
        provenance(root),
        config,
        continue_,
        &baseline(),
        &keep_all,
    )
}

/// Every file in `dir` with its bytes, sorted by name.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let bytes = std::fs::read(&path).unwrap_or_default();
            (name, bytes)
        })
        .collect();
    files.sort();
    files
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn sample_backlog() -> Backlog {
    Backlog {
        counters: Counters {
            segment: 1,
            round: 2,
            plateau_count: 1,
            fail_count: 1,
            lifetime_rounds: 2,
            no_progress: 1,
            same_error: 1,
            residual_streak: 1,
            last_error_signature: Some("E0308|clippy::needless".to_owned()),
            outcome: None,
            stop_reason: None,
            segment_spent: crate::model::Spend::default(),
            lifetime_spent: crate::model::Spend::default(),
            round_in_progress: true,
        },
        config: Some(config("2.0")),
        candidates: vec![Candidate {
            id: "c1".to_owned(),
            family: "clippy::needless_clone".to_owned(),
            title: "drop a clone\n```json".to_owned(),
            paths: vec!["src/lib.rs".to_owned()],
            impact: 3,
            confidence: 4,
            effort: 3,
            roi: 4.0 / 3.0,
            status: "open".to_owned(),
            round: 2,
            note: "evidence: \"cargo clippy\"".to_owned(),
        }],
        handoffs: vec![Handoff {
            family: "api".to_owned(),
            title: "changes output".to_owned(),
            severity: "high".to_owned(),
            evidence: "diff".to_owned(),
            critical: true,
            round: 1,
        }],
        cooldowns: vec![Cooldown {
            family: "flaky".to_owned(),
            since_round: 2,
            reason: "failed three rounds".to_owned(),
        }],
        family_failures: BTreeMap::from([("flaky".to_owned(), 3)]),
        rollbacks: vec!["round 1: c0 rolled back".to_owned()],
        releases: Vec::new(),
        open_items: vec!["- [ ] P0: fix the build".to_owned(), "```json".to_owned()],
        deferred: vec!["P2: a warning".to_owned()],
        owned: BTreeMap::from([("src/lib.rs".to_owned(), "file:abc:644".to_owned())]),
        record_base: Some("a".repeat(40)),
        record_tip: None,
        swept_segment: Some(1),
        earlier: vec![crate::campaign::history::EarlierWork {
            number: 1,
            segment: 1,
            run_id: "20261201-000000-1".to_owned(),
            base_commit: "b".repeat(40),
            commits: 2,
            families: vec!["lint".to_owned()],
            files: vec![crate::campaign::history::WorkFile {
                path: "src/lib.rs".to_owned(),
                before: Some("c".repeat(64)),
                after: None,
            }],
            status: crate::campaign::history::Status::Pending,
            note: "not in HEAD, and it still applies".to_owned(),
        }],
        held: vec!["lint".to_owned()],
    }
}

#[test]
fn a_new_campaign_creates_three_owner_only_files_with_the_fields() {
    let (root, state_dir) = setup();
    let (campaign, opened) = open_result(root.path(), &state_dir, config("1.5"), false).unwrap();
    assert_eq!(opened, Opened::New);
    let dir = state_dir.canonicalize().unwrap();
    assert_eq!(campaign.dir(), dir);
    assert_eq!(mode(&dir), 0o700);
    for name in [GOAL_FILE, BACKLOG_FILE, WORKLOG_FILE, LOCK_FILE] {
        assert_eq!(mode(&dir.join(name)), 0o600, "{name}");
    }
    let goal = read(&campaign.goal_path());
    let repository = root.path().join("repository");
    for expected in [
        format!("Target: `{}`", repository.display()),
        format!("State dir: `{}`", dir.display()),
        format!("Repository root: `{}`", repository.display()),
        format!("Git common dir: `{}`", repository.join(".git").display()),
        "Preset: refine".to_owned(),
        "2026-05-01T10:00:00+02:00".to_owned(),
        "Baseline revision: main @ 0123abc".to_owned(),
        "`notes.txt`".to_owned(),
        "`cargo test: pass`".to_owned(),
        "Theta: 1.5".to_owned(),
        "Focus: architecture,refactoring".to_owned(),
        "> tidy the parser\n> keep --flags literal\n".to_owned(),
    ] {
        assert!(goal.contains(&expected), "{expected:?} not in\n{goal}");
    }
    for file in [GOAL_FILE, BACKLOG_FILE, WORKLOG_FILE] {
        let text = read(&dir.join(file));
        assert!(
            !text.contains("{{"),
            "a placeholder is left in {file}:\n{text}"
        );
    }
    let worklog = read(&campaign.worklog_path());
    assert!(worklog.contains("· new campaign"), "{worklog}");
    assert!(
        worklog.contains("Protected paths: `notes.txt`"),
        "{worklog}"
    );
    assert_eq!(campaign.backlog.counters.segment, 1);
    assert_eq!(campaign.provenance().state_dir, dir);
}

#[test]
fn a_reopened_campaign_resumes_with_its_counters() {
    let (root, state_dir) = setup();
    let mut campaign = open(root.path(), &state_dir, config("2.0"), false);
    campaign.backlog.counters.round = 2;
    campaign.backlog.counters.round_in_progress = true;
    campaign.backlog.candidates = sample_backlog().candidates;
    campaign.save().unwrap();
    let saved = campaign.backlog.clone();
    drop(campaign);

    let (campaign, opened) = open_result(root.path(), &state_dir, config("2.0"), false).unwrap();
    assert_eq!(opened, Opened::Resumed);
    assert_eq!(campaign.backlog, saved);
    assert!(read(&campaign.worklog_path()).contains("· resumed"));
}

#[test]
fn a_changed_configuration_without_continue_is_refused() {
    let (root, state_dir) = setup();
    drop(open(root.path(), &state_dir, config("2.0"), false));
    let before = snapshot(&state_dir);
    let error = open_result(root.path(), &state_dir, config("1.0"), false).unwrap_err();
    assert!(
        matches!(error, CampaignError::ConfigChanged { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("theta 2.0 -> 1.0"), "{error}");
    assert_eq!(error.exit_code(), crate::exit_code::USAGE);
    assert_eq!(snapshot(&state_dir), before);
}

#[test]
fn a_symlinked_state_dir_is_refused() {
    let (root, _) = setup();
    let real = root.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = root.path().join("link");
    symlink(&real, &link).unwrap();
    let error = open_result(root.path(), &link, config("2.0"), false).unwrap_err();
    assert!(
        matches!(error, CampaignError::SymlinkedStateDir { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("symbolic link"), "{error}");
    assert_eq!(error.exit_code(), crate::exit_code::USAGE);
    assert_eq!(std::fs::read_dir(&real).unwrap().count(), 0);
}

#[test]
fn a_state_file_replaced_by_a_symlink_is_refused_and_its_target_untouched() {
    for name in [GOAL_FILE, BACKLOG_FILE, WORKLOG_FILE, LOCK_FILE] {
        let (root, state_dir) = setup();
        drop(open(root.path(), &state_dir, config("2.0"), false));
        let outside = root.path().join("outside.md");
        std::fs::write(&outside, "not yours").unwrap();
        let path = state_dir.join(name);
        std::fs::remove_file(&path).unwrap();
        symlink(&outside, &path).unwrap();
        let error = open_result(root.path(), &state_dir, config("2.0"), false).unwrap_err();
        assert!(
            matches!(error, CampaignError::StateFileNotRegular { .. }),
            "{name}: {error}"
        );
        assert!(error.to_string().contains(name), "{error}");
        assert_eq!(error.exit_code(), crate::exit_code::USAGE);
        assert_eq!(read(&outside), "not yours", "{name}");
        assert!(std::fs::symlink_metadata(&path).unwrap().is_symlink());
    }
}

#[test]
fn writes_refuse_a_state_file_replaced_by_a_symlink_while_open() {
    let (root, state_dir) = setup();
    let mut campaign = open(root.path(), &state_dir, config("2.0"), false);
    let outside = root.path().join("outside.md");
    std::fs::write(&outside, "not yours").unwrap();
    for name in [WORKLOG_FILE, BACKLOG_FILE] {
        let path = state_dir.join(name);
        std::fs::remove_file(&path).unwrap();
        symlink(&outside, &path).unwrap();
    }
    let error = campaign.append_worklog("entry").unwrap_err();
    assert!(
        matches!(error, CampaignError::StateFileNotRegular { .. }),
        "{error}"
    );
    let error = campaign.save().unwrap_err();
    assert!(
        matches!(error, CampaignError::StateFileNotRegular { .. }),
        "{error}"
    );
    assert_eq!(read(&outside), "not yours");
}

#[test]
fn a_partial_set_is_refused_and_nothing_is_created() {
    let all = [GOAL_FILE, BACKLOG_FILE, WORKLOG_FILE];
    for kept in [
        vec![GOAL_FILE],
        vec![BACKLOG_FILE],
        vec![WORKLOG_FILE],
        vec![GOAL_FILE, WORKLOG_FILE],
        vec![BACKLOG_FILE, WORKLOG_FILE],
    ] {
        let (root, state_dir) = setup();
        drop(open(root.path(), &state_dir, config("2.0"), false));
        for name in all.iter().filter(|name| !kept.contains(name)) {
            std::fs::remove_file(state_dir.join(name)).unwrap();
        }
        let before = snapshot(&state_dir);
        let error = open_result(root.path(), &state_dir, config("2.0"), false).unwrap_err();
        let message = error.to_string();
        let CampaignError::PartialSet {
            present, missing, ..
        } = &error
        else {
            panic!("{kept:?}: {error}");
        };
        for name in all {
            let listed = if kept.contains(&name) {
                present
            } else {
                missing
            };
            assert!(listed.contains(name), "{kept:?}: {message}");
        }
        assert!(message.contains("restore the missing files"), "{message}");
        assert!(message.contains("move the state dir aside"), "{message}");
        assert_eq!(error.exit_code(), crate::exit_code::ERROR);
        assert_eq!(snapshot(&state_dir), before, "{kept:?}");
    }
}

#[test]
fn another_repositorys_state_is_refused_naming_both() {
    let (root, state_dir) = setup();
    drop(open(root.path(), &state_dir, config("2.0"), false));
    let before = snapshot(&state_dir);
    let other = root.path().join("other");
    let mut provenance = provenance(root.path());
    provenance.repository_root = other.clone();
    provenance.git_common_dir = other.join(".git");
    let error = Campaign::open(
        &state_dir,
        provenance,
        config("2.0"),
        false,
        &baseline(),
        &keep_all,
    )
    .unwrap_err();
    let message = error.to_string();
    assert!(
        matches!(
            error,
            CampaignError::ProvenanceMismatch {
                field: "repository root",
                ..
            }
        ),
        "{message}"
    );
    assert!(message.contains(&other.display().to_string()), "{message}");
    let stored = root.path().join("repository");
    assert!(message.contains(&stored.display().to_string()), "{message}");
    assert_eq!(error.exit_code(), crate::exit_code::ERROR);
    assert_eq!(snapshot(&state_dir), before);
}

#[test]
fn provenance_mismatches_are_refused() {
    type Change = fn(&mut Provenance);
    let table: [(&str, Change); 3] = [
        ("git common dir", |provenance| {
            provenance.git_common_dir = PathBuf::from("/elsewhere/.git");
        }),
        ("target", |provenance| {
            provenance.target = PathBuf::from("/elsewhere");
        }),
        ("preset", |provenance| {
            provenance.preset = "improve".to_owned()
        }),
    ];
    for (field, change) in table {
        let (root, state_dir) = setup();
        drop(open(root.path(), &state_dir, config("2.0"), false));
        let mut provenance = provenance(root.path());
        change(&mut provenance);
        let error = Campaign::open(
            &state_dir,
            provenance,
            config("2.0"),
            false,
            &baseline(),
            &keep_all,
        )
        .unwrap_err();
        match error {
            CampaignError::ProvenanceMismatch { field: found, .. } => assert_eq!(found, field),
            other => panic!("{field}: {other}"),
        }
    }
}

#[test]
fn a_corrupt_or_unknown_block_is_refused_naming_the_file() {
    let table = [
        ("no block", "# just text\n".to_owned(), "is corrupt"),
        ("not JSON", "```json\n{ nope\n```\n".to_owned(), "not JSON"),
        (
            "unknown format",
            "```json\n{\"format\": 99}\n```\n".to_owned(),
            "state format 99",
        ),
        (
            "unknown outcome",
            "OUTCOME".to_owned(),
            "unknown outcome `MAYBE`",
        ),
    ];
    for (case, text, expected) in table {
        let (root, state_dir) = setup();
        let campaign = open(root.path(), &state_dir, config("2.0"), false);
        let path = campaign.backlog_path();
        drop(campaign);
        let text = if text == "OUTCOME" {
            read(&path).replace("\"outcome\": null", "\"outcome\": \"MAYBE\"")
        } else {
            text
        };
        std::fs::write(&path, &text).unwrap();
        let error = open_result(root.path(), &state_dir, config("2.0"), false).unwrap_err();
        let message = error.to_string();
        assert!(message.contains(expected), "{case}: {message}");
        assert!(message.contains(BACKLOG_FILE), "{case}: {message}");
        assert_eq!(error.exit_code(), crate::exit_code::ERROR, "{case}");
        assert_eq!(read(&path), text, "{case}");
    }
}

#[test]
fn a_second_open_is_refused_while_the_first_holds_the_lock() {
    let (root, state_dir) = setup();
    let first = open(root.path(), &state_dir, config("2.0"), false);
    let error = open_result(root.path(), &state_dir, config("2.0"), false).unwrap_err();
    let message = error.to_string();
    assert!(matches!(error, CampaignError::LockHeld { .. }), "{message}");
    assert!(
        message.starts_with("another refine-loop run holds"),
        "{message}"
    );
    assert!(message.contains(LOCK_FILE), "{message}");
    assert_eq!(error.exit_code(), crate::exit_code::ERROR);
    drop(first);
    let (_, opened) = open_result(root.path(), &state_dir, config("2.0"), false).unwrap();
    assert_eq!(opened, Opened::Resumed);
}

#[test]
fn a_finished_campaign_without_continue_is_left_as_it_is() {
    let (root, state_dir) = setup();
    let mut campaign = open(root.path(), &state_dir, config("2.0"), false);
    campaign.backlog.counters.outcome = Some("SUCCESS".to_owned());
    campaign.save().unwrap();
    drop(campaign);
    let before = snapshot(&state_dir);
    for config in [config("2.0"), config("1.0")] {
        let (campaign, opened) = open_result(root.path(), &state_dir, config, false).unwrap();
        assert_eq!(opened, Opened::Terminal);
        assert_eq!(
            campaign.backlog.counters.outcome.as_deref(),
            Some("SUCCESS")
        );
        drop(campaign);
        assert_eq!(snapshot(&state_dir), before);
    }
}

#[test]
fn continue_after_a_finished_segment_starts_the_next_one() {
    let (root, state_dir) = setup();
    let mut campaign = open(root.path(), &state_dir, config("2.0"), false);
    campaign.backlog = sample_backlog();
    campaign.backlog.counters.outcome = Some("SUCCESS".to_owned());
    campaign.backlog.counters.stop_reason = Some("plateau".to_owned());
    campaign.backlog.counters.round_in_progress = false;
    campaign.save().unwrap();
    let before = campaign.backlog.clone();
    drop(campaign);
    let goal_before = read(&state_dir.join(GOAL_FILE));
    let worklog_before = read(&state_dir.join(WORKLOG_FILE));

    let mut next = config("2.0");
    next.intent = "now the error paths".to_owned();
    let (campaign, opened) = open_result(root.path(), &state_dir, next.clone(), true).unwrap();
    assert_eq!(opened, Opened::Continued { released: vec![] });
    let counters = &campaign.backlog.counters;
    assert_eq!(counters.segment, 2);
    assert_eq!(
        (counters.round, counters.plateau_count, counters.fail_count),
        (0, 0, 0)
    );
    assert_eq!(counters.outcome, None);
    assert_eq!(counters.stop_reason, None);
    assert_eq!(counters.lifetime_rounds, before.counters.lifetime_rounds);
    assert_eq!(campaign.backlog.candidates, before.candidates);
    assert_eq!(campaign.backlog.handoffs, before.handoffs);
    assert_eq!(campaign.backlog.cooldowns, before.cooldowns);
    assert_eq!(campaign.backlog.rollbacks, before.rollbacks);
    assert_eq!(campaign.backlog.family_failures, before.family_failures);
    assert_eq!(campaign.segment_config, next);

    let goal = read(&campaign.goal_path());
    assert!(
        goal.starts_with(&goal_before),
        "the goal was not appended to"
    );
    assert!(goal.contains("## Segment 2"), "{goal}");
    assert!(goal.contains("> now the error paths"), "{goal}");
    let worklog = read(&campaign.worklog_path());
    assert!(
        worklog.starts_with(&worklog_before),
        "the worklog was not appended to"
    );
    assert!(
        worklog.contains("continued after SUCCESS: segment 2"),
        "{worklog}"
    );
    drop(campaign);

    // What was saved is what a plain resume of segment 2 finds.
    let (campaign, opened) = open_result(root.path(), &state_dir, next, false).unwrap();
    assert_eq!(opened, Opened::Resumed);
    assert_eq!(campaign.backlog.counters.segment, 2);
}

#[test]
fn continue_after_a_cancelled_run_resumes_the_round() {
    let (root, state_dir) = setup();
    let mut campaign = open(root.path(), &state_dir, config("2.0"), false);
    campaign.backlog = sample_backlog();
    campaign.backlog.counters.outcome = Some(CANCELLED.to_owned());
    campaign.save().unwrap();
    drop(campaign);

    let (campaign, opened) = open_result(root.path(), &state_dir, config("2.0"), false).unwrap();
    assert_eq!(opened, Opened::Terminal);
    drop(campaign);

    let (campaign, opened) = open_result(root.path(), &state_dir, config("2.0"), true).unwrap();
    assert_eq!(opened, Opened::Resumed);
    let mut expected = sample_backlog().counters;
    expected.outcome = None;
    assert_eq!(campaign.backlog.counters, expected);
    assert_eq!(campaign.backlog.cooldowns, sample_backlog().cooldowns);
}

#[test]
fn a_theta_change_releases_the_cooldowns_the_callback_accepts() {
    let (root, state_dir) = setup();
    let mut campaign = open(root.path(), &state_dir, config("2.0"), false);
    campaign.backlog.cooldowns = vec![
        Cooldown {
            family: "qualifies".to_owned(),
            since_round: 3,
            reason: "failed three rounds".to_owned(),
        },
        Cooldown {
            family: "still-low".to_owned(),
            since_round: 4,
            reason: "failed three rounds".to_owned(),
        },
    ];
    campaign.backlog.counters.outcome = Some("SUCCESS".to_owned());
    campaign.save().unwrap();
    drop(campaign);

    let release = |cooldown: &Cooldown| cooldown.family == "qualifies";
    let (campaign, opened) = Campaign::open(
        &state_dir,
        provenance(root.path()),
        config("1.5"),
        true,
        &baseline(),
        &release,
    )
    .unwrap();
    assert_eq!(
        opened,
        Opened::Continued {
            released: vec!["qualifies".to_owned()]
        }
    );
    let families: Vec<&str> = campaign
        .backlog
        .cooldowns
        .iter()
        .map(|cooldown| cooldown.family.as_str())
        .collect();
    assert_eq!(families, ["still-low"]);
    assert_eq!(campaign.backlog.releases.len(), 1);
    let release_record = &campaign.backlog.releases[0];
    assert!(
        release_record.contains("segment 2: qualifies"),
        "{release_record}"
    );
    assert!(
        release_record.contains("theta 2.0 -> 1.5"),
        "{release_record}"
    );
    let worklog = read(&campaign.worklog_path());
    assert!(
        worklog.contains("Cooldown released: `qualifies`"),
        "{worklog}"
    );
    let goal = read(&campaign.goal_path());
    assert!(goal.contains("Cooldown released: `qualifies`"), "{goal}");
    assert!(goal.contains("Theta: 1.5"), "{goal}");
}

#[test]
fn the_same_theta_releases_nothing() {
    let (root, state_dir) = setup();
    let mut campaign = open(root.path(), &state_dir, config("2.0"), false);
    campaign.backlog.cooldowns = sample_backlog().cooldowns;
    campaign.backlog.counters.outcome = Some("BUDGET".to_owned());
    campaign.save().unwrap();
    drop(campaign);
    let (campaign, opened) = Campaign::open(
        &state_dir,
        provenance(root.path()),
        config("2"),
        true,
        &baseline(),
        &|_| true,
    )
    .unwrap();
    assert_eq!(opened, Opened::Continued { released: vec![] });
    assert_eq!(campaign.backlog.cooldowns, sample_backlog().cooldowns);
}

#[test]
fn save_round_trips_the_backlog_exactly() {
    let (root, state_dir) = setup();
    let mut campaign = open(root.path(), &state_dir, config("2.0"), false);
    campaign.backlog = sample_backlog();
    campaign.save().unwrap();
    assert_eq!(mode(&campaign.backlog_path()), 0o600);
    let text = read(&campaign.backlog_path());
    assert!(text.contains("## Candidates (1)"), "{text}");
    let (stored, backlog) = render::parse_backlog(&text, &campaign.backlog_path()).unwrap();
    assert_eq!(backlog, sample_backlog());
    assert_eq!(&stored, campaign.provenance());
    // No temporary file is left beside it.
    let names: Vec<String> = snapshot(&state_dir)
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    assert_eq!(names, [LOCK_FILE, BACKLOG_FILE, GOAL_FILE, WORKLOG_FILE]);
    drop(campaign);
    let (campaign, _) = open_result(root.path(), &state_dir, config("2.0"), false).unwrap();
    assert_eq!(campaign.backlog, sample_backlog());
}

#[test]
fn the_worklog_only_grows() {
    let (root, state_dir) = setup();
    let mut campaign = open(root.path(), &state_dir, config("2.0"), false);
    let mut previous = read(&campaign.worklog_path());
    for entry in ["round 1: accepted c1", "round 2: no candidate\n"] {
        campaign.append_worklog(entry).unwrap();
        let now = read(&campaign.worklog_path());
        assert!(now.starts_with(&previous), "{now}");
        assert_eq!(&now[previous.len()..], format!("\n{}\n", entry.trim_end()));
        previous = now;
    }
    campaign.save().unwrap();
    assert!(read(&campaign.worklog_path()).starts_with(&previous));
}

#[test]
fn a_missing_parent_is_created_and_a_dot_dot_dir_is_refused() {
    let (root, _) = setup();
    let deep = root.path().join("a/b/state");
    let (campaign, opened) = open_result(root.path(), &deep, config("2.0"), false).unwrap();
    assert_eq!(opened, Opened::New);
    assert_eq!(campaign.dir(), deep.canonicalize().unwrap());
    let error =
        open_result(root.path(), &root.path().join("a/.."), config("2.0"), false).unwrap_err();
    assert!(
        matches!(error, CampaignError::InvalidStateDir { .. }),
        "{error}"
    );
}

#[test]
fn a_state_file_that_is_a_folder_is_refused() {
    let (root, state_dir) = setup();
    drop(open(root.path(), &state_dir, config("2.0"), false));
    std::fs::remove_file(state_dir.join(GOAL_FILE)).unwrap();
    std::fs::create_dir(state_dir.join(GOAL_FILE)).unwrap();
    let error = open_result(root.path(), &state_dir, config("2.0"), false).unwrap_err();
    assert!(
        error.to_string().contains("is not a regular file"),
        "{error}"
    );
    assert_eq!(error.exit_code(), crate::exit_code::USAGE);
}

#[test]
fn continue_after_a_killed_run_resumes_the_round_in_progress() {
    let (root, state_dir) = setup();
    let mut campaign = open(root.path(), &state_dir, config("2.0"), false);
    campaign.backlog = sample_backlog();
    campaign.save().unwrap();
    // Killed: no outcome recorded, the round still marked in progress.
    drop(campaign);
    let (campaign, opened) = open_result(root.path(), &state_dir, config("2.0"), true).unwrap();
    assert_eq!(opened, Opened::Resumed);
    assert_eq!(campaign.backlog, sample_backlog());
    let worklog = read(&campaign.worklog_path());
    assert!(
        worklog.contains("Segment 1, round 2 (in progress: resumed)"),
        "{worklog}"
    );
}
