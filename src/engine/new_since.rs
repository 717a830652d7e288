//! Pull-request mode (`--new-since`) in the engine: the base resolved before anything runs
//! (its change becomes the delegates' scope), and at the baseline the findings split into new
//! and pre-existing, by the change's lines or by the gate run once on the base.

use super::RunError;
use super::isolate::Isolation;
use crate::cancel::Cancel;
use crate::config::Settings;
use crate::gate::{self, CheckResult, Flaky};
use crate::model::GateSummary;
use crate::new_since::{AskedBase, Mode, Preexisting, Since, SinceError, finding_key};

/// Resolves `--new-since` into `settings.run.since`, and narrows the scope to the files the
/// change touched (beside what `--scope` names). `auto` outside a pull request leaves a full
/// run: the reason is returned.
pub fn resolve_new_since(
    settings: &mut Settings,
    lookup: &dyn Fn(&str) -> Option<String>,
    cancel: &Cancel,
) -> Result<Option<String>, RunError> {
    let Some(given) = settings.run.new_since.clone() else {
        return Ok(None);
    };
    let auto = given.trim() == "auto";
    let skip = |settings: &mut Settings, reason: String| {
        tracing::warn!("{reason}");
        settings.run.new_since_skipped = Some(reason.clone());
        Ok(Some(reason))
    };
    let asked = if auto {
        match crate::ci::pr_base::detect(lookup) {
            Some(asked) => asked,
            None => return skip(settings, skipped_reason()),
        }
    } else {
        AskedBase::given(given.trim())
    };
    let resolved = Since::resolve(
        &settings.target,
        &given,
        settings.run.new_since_mode,
        &asked,
    );
    let mut since = match resolved {
        // `auto` is the CI system's base where it can be had: a checkout without it (a shallow
        // one) is a full run, said, not a failed job. A REF the user names must resolve.
        Err(error @ SinceError::Unresolved { .. }) if auto => {
            return skip(
                settings,
                format!("{error}: a full run, every finding counted"),
            );
        }
        resolved => resolved?,
    };
    if since.mode == Mode::Gate {
        let (keys, summary) = gate_on_base(settings, &since, cancel)?;
        since.at_base = Some(keys);
        since.base_summary = Some(summary);
    }
    settings.run.scope = settings
        .run
        .scope
        .with_changed_files(&settings.target, &since.changed_files())
        .map_err(|reason| {
            RunError::from(SinceError::Unresolved {
                given: given.clone(),
                reason: format!("a changed file makes no scope: {reason}"),
                hint: "name the files with --scope instead".to_string(),
            })
        })?;
    tracing::info!(
        base = %since.base,
        source = since.source.as_str(),
        mode = since.mode.as_str(),
        files = since.files.len(),
        "pull-request mode: only findings new since the base are worked"
    );
    settings.run.since = Some(since);
    Ok(None)
}

/// `--new-since auto` in a campaign, which works the whole tree: a full run.
pub fn campaign_reason() -> String {
    "--new-since auto: a campaign (--preset refine or improve) works the whole tree: a full run, \
     every finding counted"
        .to_string()
}

/// Pull-request mode as `run.json` and the reports keep it, with the counts of `summary`.
pub fn note_of(since: &Since, summary: &GateSummary) -> crate::model::NewSinceNote {
    crate::model::NewSinceNote {
        reference: since.given.clone(),
        base: since.base.clone(),
        source: since.source.as_str().to_string(),
        mode: since.mode.as_str().to_string(),
        changed_files: since.changed_files(),
        new_count: summary.failed_count,
        preexisting_count: summary.preexisting_count.unwrap_or(0),
    }
}

/// Why `--new-since auto` made a full run.
pub fn skipped_reason() -> String {
    "--new-since auto: no pull request, merge request or change request in the environment \
     (GITHUB_BASE_REF, CI_MERGE_REQUEST_DIFF_BASE_SHA, CHANGE_TARGET): a full run, every finding counted"
        .to_string()
}

/// The baseline's pre-existing findings: those off the change's lines ([`Mode::Lines`]), or
/// those the gate also reports on the base ([`Mode::Gate`]). `flaky` excuses its own first.
pub fn preexisting_at_baseline(
    since: &Since,
    checks: &[CheckResult],
    flaky: &Flaky,
) -> Result<Preexisting, RunError> {
    match since.mode {
        Mode::Lines => Ok(Preexisting::of(checks.iter().flat_map(|result| {
            let name = &result.check.name;
            (result.findings.diagnostics().iter())
                .filter(move |finding| {
                    !flaky.excuses(name, finding) && !since.on_changed_lines(finding)
                })
                .map(move |finding| finding_key(name, finding))
        }))),
        Mode::Gate => Ok(since.at_base.clone().unwrap_or_default()),
    }
}

/// Runs the gate once on the base, in a temporary worktree (removed however the run ends),
/// its output in a temporary folder; returns the keys of its findings (a file the change renamed
/// under its name now) and its summary.
fn gate_on_base(
    settings: &mut Settings,
    since: &Since,
    cancel: &Cancel,
) -> Result<(Preexisting, GateSummary), RunError> {
    let base = git2::Oid::from_str(&since.base).map_err(crate::workspace::WorkspaceError::from)?;
    let (_worktree, target) = Isolation::at(settings, Some(base), "refine-loop-base")?;
    let output = tempfile::Builder::new()
        .prefix("refine-loop-base-gate-")
        .tempdir()
        .map_err(|source| crate::state::StateError {
            path: std::env::temp_dir(),
            source,
        })?;
    tracing::info!(base = %since.base, "pull-request mode: the gate on the base");
    // The settings point into the worktree for this one run, and back after it.
    let home = std::mem::replace(&mut settings.target, target.clone());
    let folders: Vec<_> = (settings.gate.checks.iter_mut())
        .map(|check| std::mem::replace(&mut check.cwd, target.join(&check.cwd_relative)))
        .collect();
    let run = gate::run_gate(
        settings,
        &Flaky::default(),
        (0, output.path()),
        cancel,
        None,
        None,
    );
    settings.target = home;
    for (check, folder) in settings.gate.checks.iter_mut().zip(folders) {
        check.cwd = folder;
    }
    let run = run?;
    let worktree_root = target.to_string_lossy().into_owned();
    let home_root = settings.target.to_string_lossy().into_owned();
    let (worktree_root, home_root) = (worktree_root.as_str(), home_root.as_str());
    let keys = Preexisting::of(run.checks.iter().flat_map(|result| {
        let name = &result.check.name;
        result.findings.diagnostics().iter().map(move |finding| {
            let mut finding = finding.clone();
            // A message that names the checkout names the worktree: said of the target.
            finding.message = finding.message.replace(worktree_root, home_root);
            if let Some(file) = &finding.file
                && let Some(renamed) = since.renames.get(file.trim_start_matches("./"))
            {
                finding.file = Some(renamed.clone());
            }
            finding_key(name, &finding)
        })
    }));
    Ok((keys, run.summary))
}
