//! The action replayed through each of its endings (success, needs-fix, error, a config error,
//! a campaign found finished, a release that does not exist yet), with the pinned actions'
//! behaviour (tests/it/action/replay.rs): every ending writes all the outputs the docs name, the
//! upload makes an artifact whenever there is a record, and the examples' second jobs, which run
//! when `artifact-id` is set and download that id, find it. Two runs in one job upload two
//! artifacts, not a 409.

use std::collections::BTreeMap;
use std::path::Path;

use super::expression::Contexts;

use super::replay::{self, ArtifactStore, CacheStandIn, Download, Replay};
use crate::support::{Repo, build_repo};

/// The outputs the action's docs name, each written on every ending.
const OUTPUTS: [&str; 12] = [
    "outcome",
    "stop-reason",
    "failed-before",
    "failed-after",
    "cycles",
    "patch-path",
    "report-path",
    "sarif-path",
    "state-dir",
    "artifact-name",
    "tokens",
    "cost",
];

/// One replay of the action on `workspace`, as job `job` of workflow run `run_id`.
fn replay_in(
    workspace: &Path,
    runner: &Path,
    inputs: &[(&str, &str)],
    release_base: &str,
    run_id: &str,
    cache: &CacheStandIn,
    artifacts: &ArtifactStore,
) -> Replay {
    std::fs::create_dir_all(runner).unwrap();
    replay::replay_with(
        workspace,
        runner,
        inputs,
        &github(run_id, "1", release_base),
        cache,
        artifacts,
    )
}

/// The `github` context of job `refine` in attempt `attempt` of workflow run `run_id`.
fn github<'a>(run_id: &'a str, attempt: &'a str, release_base: &'a str) -> [(&'a str, &'a str); 7] {
    [
        ("repository", "octo/shop"),
        ("ref_name", "main"),
        ("head_ref", ""),
        ("run_id", run_id),
        ("run_attempt", attempt),
        ("job", "refine"),
        ("release_base", release_base),
    ]
}

/// The run step's outputs: every one the docs name is there, whatever the ending.
fn run_outputs(replay: &Replay) -> &BTreeMap<String, String> {
    let outputs = &replay.contexts.steps["run"];
    for name in OUTPUTS {
        assert!(outputs.contains_key(name), "no output {name}: {outputs:?}");
    }
    assert!(!outputs["state-dir"].is_empty(), "{outputs:?}");
    outputs
}

/// The upload's artifact id, as the action's `artifact-id` output would read (empty: none), and
/// that the examples' second job (run when it is set) downloads it by id, straight into its path.
fn artifact_id(replay: &Replay, artifacts: &ArtifactStore) -> String {
    let upload = replay.upload.as_ref().expect("the upload step ran");
    let id = upload
        .as_ref()
        .expect("no upload error")
        .map(|id| id.to_string());
    let output = replay
        .contexts
        .steps
        .get("upload")
        .and_then(|o| o.get("artifact-id"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(id.clone().unwrap_or_default(), output);
    if let Some(id) = &id {
        let record = tempfile::tempdir().unwrap();
        assert_eq!(artifacts.download(Download::Ids(id), record.path()), Ok(1));
        assert!(
            record.path().join("REFINE-GOAL.md").exists()
                || record.path().join("REFINE-LOOP-FINAL.md").exists(),
            "the record is at the top of the download's path"
        );
    }
    output
}

/// The action's outputs, as its `outputs:` map them from the replayed steps.
fn action_outputs(replay: &Replay) -> BTreeMap<String, String> {
    let action = crate::ci_files::read_yaml("action.yml");
    action["outputs"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, output)| {
            let value = output["value"].as_str().unwrap();
            (name.clone(), replay.contexts.substitute(value))
        })
        .collect()
}

/// The GitHub examples whose second job reads the action's record: (file, the first job, the
/// action's step id in it, the second job).
const SECOND_JOBS: [(&str, &str, &str, &str); 2] = [
    ("github-nightly.yml", "improve", "improve", "pull-request"),
    ("github-workflow.yml", "refine", "refine", "code-scanning"),
];

/// A second job's download, when the job runs: what download-artifact answered, and the folder.
type SecondJob = Option<(Result<usize, String>, tempfile::TempDir)>;

/// Whether the example's first job failed when refine-loop exited `code`: its action step's
/// own `exit-zero` input decides, as run.sh passes it (`true`: findings and budgets are 0).
fn first_job_failed(workflow: &serde_json::Value, first: &str, code: i32) -> bool {
    let exit_zero = workflow["jobs"][first]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|step| step["with"]["exit-zero"].as_str())
        .unwrap_or("false");
    match exit_zero {
        "true" | "findings" => !matches!(code, 0 | 1 | 3),
        "all" => code == 2,
        _ => code != 0,
    }
}

/// Each example's second job after this ending of the action (refine-loop's exit `code`): None
/// when its `if:` does not hold (a failed first job skips it unless the `if:` says
/// `always()`), else its download of the record from `artifacts` (as download-artifact v7 does
/// it) into a fresh folder, and that folder; and whether the first job failed.
fn second_jobs(
    replay: &Replay,
    artifacts: &ArtifactStore,
    code: i32,
) -> Vec<(&'static str, bool, SecondJob)> {
    let action = action_outputs(replay);
    SECOND_JOBS
        .iter()
        .map(|(file, first, step, second)| {
            let workflow = crate::ci_files::read_yaml(&format!("ci/examples/{file}"));
            let mut first_job = Contexts::default();
            first_job.steps.insert((*step).to_string(), action.clone());
            let job_outputs: BTreeMap<String, String> = workflow["jobs"][*first]["outputs"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(name, value)| (name.clone(), first_job.substitute(value.as_str().unwrap())))
                .collect();
            let mut contexts = Contexts::default();
            contexts.needs.insert((*first).to_string(), job_outputs);
            let job = &workflow["jobs"][*second];
            let failed = first_job_failed(&workflow, first, code);
            if !contexts.runs(job["if"].as_str(), failed) {
                return (*file, failed, None);
            }
            let download = job["steps"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| {
                    s["uses"]
                        .as_str()
                        .is_some_and(|u| u.starts_with("actions/download-artifact@"))
                })
                .expect("a download step");
            let with = |key: &str| {
                download["with"][key]
                    .as_str()
                    .map(|v| contexts.substitute(v))
            };
            let into = tempfile::tempdir().unwrap();
            let (ids, name, pattern) = (with("artifact-ids"), with("name"), with("pattern"));
            let what = match (&ids, &name, &pattern) {
                (Some(ids), None, None) => Download::Ids(ids),
                (None, Some(name), None) => Download::Name(name),
                (None, None, Some(pattern)) => Download::Pattern(pattern),
                _ => panic!("{file}: ids, a name or a pattern"),
            };
            (
                *file,
                failed,
                Some((artifacts.download(what, into.path()), into)),
            )
        })
        .collect()
}

/// The examples' second jobs run exactly when there is what they read (the record; for code
/// scanning, its SARIF file too: not after an error or a campaign found finished) and their
/// first job did not fail (the nightly's pull request waits for a run that ended; code
/// scanning reads any record), and then find it at the top of their download's path.
fn assert_second_jobs(
    ending: &str,
    replay: &Replay,
    artifacts: &ArtifactStore,
    uploaded: bool,
    code: i32,
) {
    let sarif = !action_outputs(replay)["sarif-path"].is_empty();
    for (file, failed, job) in second_jobs(replay, artifacts, code) {
        let needed = if file == "github-workflow.yml" {
            "report.sarif"
        } else {
            "manifest.json"
        };
        let after_failure = file == "github-workflow.yml";
        let expected =
            uploaded && (sarif || needed == "manifest.json") && (!failed || after_failure);
        match job {
            None => assert!(!expected, "{ending}: {file}'s second job did not run"),
            Some((downloaded, into)) => {
                assert!(
                    expected,
                    "{ending}: {file}'s second job ran with nothing to read"
                );
                assert_eq!(downloaded, Ok(1), "{ending}: {file}");
                let top = into.path();
                let found = top.join(needed).exists()
                    || (needed == "manifest.json"
                        && (top.join("REFINE-GOAL.md").exists()
                            || top.join("REFINE-LOOP-FINAL.md").exists()));
                assert!(
                    found,
                    "{ending}: {file}: {needed} is not at the top of the path"
                );
            }
        }
    }
}

#[test]
fn every_ending_writes_every_output_and_uploads_whenever_there_is_a_record() {
    let no_release = "file:///nonexistent/refine-loop-release";
    let error_gate = "[[gate.check]]\nname = \"lint\"\ncategory = \"lint\"\n\
                      run = \"refine-loop-no-such-linter .\"\n\n\
                      [[delegate]]\ncategories = [\"lint\"]\nrun = \"true\"\n";
    let error_repo = Repo::new();
    error_repo.write("refine-loop.toml", error_gate);
    error_repo.write(".gitignore", "/.refine-loop\n");
    error_repo.commit("a gate whose tool is missing");
    let config_error = Repo::new();
    config_error.write("refine-loop.toml", "[[gate.check]]\nname = 1\n");
    config_error.commit("a config refine-loop cannot read");
    let cases: [(&str, Repo, i32, &str, bool); 4] = [
        (
            "success",
            build_repo("[[delegate]]\ncategories = [\"build\"]\nrun = \"echo ok > fixed.txt\"\n"),
            0,
            "SUCCESS",
            true,
        ),
        (
            "needs-fix",
            build_repo("[[delegate]]\ncategories = [\"build\"]\nrun = \"true\"\n"),
            1,
            "NEEDS-FIX",
            true,
        ),
        ("error", error_repo, 4, "ERROR", true),
        // Nothing ran, nothing to upload: the outputs are there, empty but the state dir, and
        // the examples' second job (artifact-id set) does not run.
        ("config error", config_error, 2, "", false),
    ];
    for (ending, repo, code, outcome, uploaded) in cases {
        let dir = tempfile::tempdir().unwrap();
        let cache = CacheStandIn::new(&dir.path().join("cache"));
        let artifacts = ArtifactStore::new(&dir.path().join("artifacts"));
        let replay = replay_in(
            repo.path(),
            &dir.path().join("runner"),
            &[("max-cycles", "2")],
            no_release,
            "1",
            &cache,
            &artifacts,
        );
        let run = replay.run.as_ref().expect("the run step ran");
        assert_eq!(run.status.code(), Some(code), "{ending}: {run:?}");
        let outputs = run_outputs(&replay);
        assert_eq!(outputs["outcome"], outcome, "{ending}: {outputs:?}");
        let id = artifact_id(&replay, &artifacts);
        assert_eq!(!id.is_empty(), uploaded, "{ending}: {:?}", replay.upload);
        assert_second_jobs(ending, &replay, &artifacts, uploaded, code);
    }
}

#[test]
fn a_campaign_found_finished_still_writes_every_output_and_uploads_its_state() {
    let origin =
        build_repo("[[delegate]]\ncategories = [\"build\"]\nrun = \"echo ok > fixed.txt\"\n");
    let dir = tempfile::tempdir().unwrap();
    let cache = CacheStandIn::new(&dir.path().join("cache"));
    let inputs = [
        ("preset", "improve"),
        ("intent", "fix the build"),
        ("campaign", "nightly"),
        ("continue", "auto"),
    ];
    // Night after night, each on a fresh clone, the first night's work merged after it, until a
    // night finds the campaign finished.
    let mut log = Vec::new();
    for night in 1..=4 {
        let clone = dir.path().join(format!("night-{night}/shop"));
        std::fs::create_dir_all(clone.parent().unwrap()).unwrap();
        crate::support::git_in(
            dir.path(),
            &[
                "clone",
                "-q",
                origin.path().to_str().unwrap(),
                clone.to_str().unwrap(),
            ],
        );
        let artifacts = ArtifactStore::new(&dir.path().join(format!("night-{night}/artifacts")));
        let replay = replay_in(
            &clone,
            &dir.path().join(format!("night-{night}/runner")),
            &inputs,
            "file:///nonexistent/refine-loop-release",
            &night.to_string(),
            &cache,
            &artifacts,
        );
        let run = replay.run.as_ref().expect("the run step ran");
        assert_eq!(run.status.code(), Some(0), "night {night}: {run:?}");
        let outputs = run_outputs(&replay).clone();
        let id = artifact_id(&replay, &artifacts);
        assert!(!id.is_empty(), "night {night}: {:?}", replay.upload);
        assert_second_jobs(&format!("night {night}"), &replay, &artifacts, true, 0);
        let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
        if stderr.contains("campaign finished") {
            assert_eq!(outputs["outcome"], "SUCCESS", "{outputs:?}");
            assert_eq!(outputs["cycles"], "0", "{outputs:?}");
            return;
        }
        log.push(stderr);
        if night == 1 {
            origin.write("fixed.txt", "ok\n");
            origin.commit("the campaign's pull request, merged");
        }
    }
    panic!("no night found the campaign finished: {log:#?}");
}

#[test]
fn a_release_that_does_not_exist_yet_is_built_from_the_actions_source_with_its_cache() {
    let server = crate::http_server::Server::start(|_, _| {
        crate::http_server::Response::json(404, r#"{"message":"Not Found"}"#)
    });
    let repo =
        build_repo("[[delegate]]\ncategories = [\"build\"]\nrun = \"echo ok > fixed.txt\"\n");
    let dir = tempfile::tempdir().unwrap();
    let cache = CacheStandIn::new(&dir.path().join("cache"));
    let artifacts = ArtifactStore::new(&dir.path().join("artifacts"));
    let replay = replay_in(
        repo.path(),
        &dir.path().join("runner"),
        &[],
        &server.base,
        "1",
        &cache,
        &artifacts,
    );
    assert_eq!(replay.contexts.steps["resolve"]["version"], "source");
    assert!(
        replay.ran.contains(&"Cache the source build".to_string()),
        "{:?}",
        replay.ran
    );
    let run = replay.run.as_ref().expect("the run step ran");
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    run_outputs(&replay);
}

#[test]
fn the_action_run_twice_in_one_job_uploads_two_artifacts_not_a_conflict() {
    let repo = build_repo("[[delegate]]\ncategories = [\"build\"]\nrun = \"true\"\n");
    let dir = tempfile::tempdir().unwrap();
    let cache = CacheStandIn::new(&dir.path().join("cache"));
    let artifacts = ArtifactStore::new(&dir.path().join("artifacts"));
    // One job: one runner folder ($RUNNER_TEMP), one workflow run's artifacts.
    let runner = dir.path().join("runner");
    let mut names = Vec::new();
    for state_dir in [".refine-loop-a", ".refine-loop-b"] {
        let replay = replay_in(
            repo.path(),
            &runner,
            &[("state-dir", state_dir), ("max-cycles", "1")],
            "file:///nonexistent/refine-loop-release",
            "1",
            &cache,
            &artifacts,
        );
        assert!(
            matches!(replay.upload, Some(Ok(Some(_)))),
            "{:?}",
            replay.upload
        );
        names.push(run_outputs(&replay)["artifact-name"].clone());
    }
    assert_ne!(names[0], names[1]);
    // The step's count goes before the run attempt, which stays last.
    let base = names[0].strip_suffix("-1").expect("the attempt last");
    assert_eq!(names[1], format!("{base}-2-1"));
    assert_eq!(artifacts.artifacts().len(), 2);
    // The same name twice is what upload-artifact refuses.
    let again = artifacts.upload(&names[0], &repo.join(".refine-loop-a"));
    assert!(again.is_err_and(|e| e.contains("(409) Conflict")));
}

#[test]
fn the_matrix_merge_finds_the_legs_in_either_layout_download_artifact_gives() {
    let workflow = crate::ci_files::read_yaml("ci/examples/github-matrix.yml");
    let script = workflow["jobs"]["merge"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|step| step["run"].as_str())
        .expect("a run step")
        .to_string();
    let dir = tempfile::tempdir().unwrap();
    // A stand-in for refine-loop that prints what it was asked.
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(bin.join("refine-loop"), "#!/bin/sh\necho \"$*\"\n").unwrap();
    let executable = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(bin.join("refine-loop"), executable).unwrap();
    let merge = |layout: &[&str]| {
        let job = tempfile::tempdir().unwrap();
        for file in layout {
            let path = job.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "{}").unwrap();
        }
        let output = std::process::Command::new("bash")
            .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", &script])
            .current_dir(job.path())
            .env(
                "PATH",
                format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
            )
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8_lossy(&output.stdout).trim().to_string()
    };
    // Three legs: a folder each.
    assert_eq!(
        merge(&[
            "shards/shard-1/manifest.json",
            "shards/shard-2/manifest.json",
            "shards/shard-3/manifest.json"
        ]),
        "merge shards/shard-1 shards/shard-2 shards/shard-3 --out merged"
    );
    // One leg left a record: it is shards/ itself.
    assert_eq!(
        merge(&["shards/manifest.json", "shards/cycle-1/findings.json"]),
        "merge shards --out merged"
    );
}

/// After a re-run, the delivery takes only the latest attempt's record: the default artifact
/// name ends in the run attempt, and github-deliver.yml's download pattern names it; a failed
/// attempt's record (same commit, same job) would open a second pull request.
#[test]
fn a_delivery_after_a_re_run_downloads_only_that_attempts_record() {
    let repo =
        build_repo("[[delegate]]\ncategories = [\"build\"]\nrun = \"echo ok > fixed.txt\"\n");
    let dir = tempfile::tempdir().unwrap();
    let cache = CacheStandIn::new(&dir.path().join("cache"));
    // One workflow run's artifacts, two attempts of its job.
    let artifacts = ArtifactStore::new(&dir.path().join("artifacts"));
    for attempt in ["1", "2"] {
        let runner = dir.path().join(format!("runner-{attempt}"));
        std::fs::create_dir_all(&runner).unwrap();
        let replay = replay::replay_with(
            repo.path(),
            &runner,
            &[("max-cycles", "1")],
            &github("7", attempt, "file:///nonexistent/refine-loop-release"),
            &cache,
            &artifacts,
        );
        assert!(
            matches!(replay.upload, Some(Ok(Some(_)))),
            "{:?}",
            replay.upload
        );
    }
    assert_eq!(artifacts.artifacts().len(), 2);
    let deliver = crate::ci_files::read_yaml("ci/examples/github-deliver.yml");
    let pattern = deliver["jobs"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|job| job["steps"].as_array().cloned().unwrap_or_default())
        .find_map(|step| step["with"]["pattern"].as_str().map(str::to_string))
        .expect("the deliver workflow downloads by a pattern")
        .replace("${{ github.event.workflow_run.run_attempt }}", "2");
    let into = tempfile::tempdir().unwrap();
    assert_eq!(
        artifacts.download(Download::Pattern(&pattern), into.path()),
        Ok(1),
        "{pattern}"
    );
}
