//! Pull-request mode in the three CIs, replayed on a real pull request: a project whose `main`
//! has a finding, a `feature` branch that adds one, `main` gone on since, and a bare origin. The
//! Action (action.yml's steps with ci/examples/github-pull-request.yml's inputs, on a
//! `pull_request` event), the GitLab merge request job's `script:` and the Jenkins pull request's
//! `sh` steps, each on the checkout its CI makes, run refine-loop with `--new-since auto`, which
//! finds the base from that CI's own variables and records it in `run.json`. On a `push` the
//! Action passes no `--new-since` at all.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::replay::{self, CacheStandIn};
use crate::support::{Repo, binary, git_in, path_with_tools, python_path_with_tools, tool};

/// The pull request: its origin, and the commits the tests expect as bases.
struct PullRequest {
    dir: tempfile::TempDir,
    /// A bare repository with `main` and `feature`.
    origin: PathBuf,
    /// Where `feature` left `main`: `git merge-base main feature`.
    branch_point: String,
    /// `main` now, one commit past the branch point.
    main_tip: String,
    /// The pull request's head.
    feature: String,
}

impl PullRequest {
    fn new() -> Self {
        let project = Repo::new();
        let ruff = tool("ruff");
        project.write("pyproject.toml", "[tool.ruff.lint]\nselect = [\"F401\"]\n");
        project.write(".gitignore", "/.refine-loop\n.ruff_cache/\n");
        project.write(
            "refine-loop.toml",
            &format!(
                "[loop]\nmax_cycles = 1\n\n\
                 [[gate.check]]\nname = \"ruff\"\ncategory = \"lint\"\n\
                 run = \"{ruff} check --no-cache --output-format=concise .\"\nparser = \"ruff\"\n\n\
                 [[delegate]]\ncategories = [\"lint\"]\nrun = \"true\"\n"
            ),
        );
        project.write("app/old.py", "import os\n");
        project.commit("main: an unused import");
        project.git(&["checkout", "-q", "-b", "feature"]);
        project.write("app/new.py", "import sys\n");
        project.commit("feature: another");
        project.git(&["checkout", "-q", "main"]);
        project.write("app/later.py", "x = 1\n");
        project.commit("main goes on");
        let rev = |name: &str| git_in(project.path(), &["rev-parse", name]);
        let branch_point = git_in(project.path(), &["merge-base", "main", "feature"]);
        let (main_tip, feature) = (rev("main"), rev("feature"));
        assert_ne!(branch_point, main_tip);
        let dir = tempfile::tempdir().unwrap();
        let origin = dir.path().join("origin.git");
        let source = project.path().to_str().unwrap();
        git_in(dir.path(), &["clone", "-q", "--bare", source, "origin.git"]);
        Self {
            dir,
            origin,
            branch_point,
            main_tip,
            feature,
        }
    }

    /// A folder of this pull request's: `name` under its temporary folder, created.
    fn folder(&self, name: &str) -> PathBuf {
        let folder = self.dir.path().join(name);
        std::fs::create_dir_all(&folder).unwrap();
        folder
    }

    /// A checkout at `name/shop` whose origin is the pull request's, with only `refspec` fetched
    /// (every branch: `+refs/heads/*:refs/remotes/origin/*`), detached at `commit`.
    fn checkout(&self, name: &str, refspec: &str, commit: &str) -> PathBuf {
        let workspace = self.folder(&format!("{name}/shop"));
        git_in(&workspace, &["init", "-q"]);
        git_in(
            &workspace,
            &["remote", "add", "origin", self.origin.to_str().unwrap()],
        );
        git_in(&workspace, &["fetch", "-q", "origin", refspec]);
        git_in(&workspace, &["checkout", "-q", "--detach", commit]);
        workspace
    }

    /// A `refine-loop` in `name/bin` that writes its arguments to `name/argv`, one a line, and
    /// runs the binary under test with them.
    fn wrapper(&self, name: &str) -> Wrapper {
        let bin = self.folder(&format!("{name}/bin"));
        let argv = self.dir.path().join(name).join("argv");
        let program = bin.join("refine-loop");
        std::fs::write(
            &program,
            format!(
                "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\nexec '{}' \"$@\"\n",
                argv.display(),
                binary()
            ),
        )
        .unwrap();
        let executable = std::os::unix::fs::PermissionsExt::from_mode(0o755);
        std::fs::set_permissions(&program, executable).unwrap();
        Wrapper { bin, program, argv }
    }
}

/// A stand-in `refine-loop` that records how it was called.
struct Wrapper {
    /// Its folder, for PATH.
    bin: PathBuf,
    program: PathBuf,
    argv: PathBuf,
}

impl Wrapper {
    /// The arguments of its last call.
    fn arguments(&self) -> Vec<String> {
        std::fs::read_to_string(&self.argv)
            .expect("refine-loop was run")
            .lines()
            .map(str::to_string)
            .collect()
    }
}

/// The `new_since` record of the run in `workspace` (null when it has none).
fn new_since(workspace: &Path) -> serde_json::Value {
    let run = workspace.join(".refine-loop/run.json");
    let text = std::fs::read_to_string(&run).unwrap_or_else(|e| panic!("{}: {e}", run.display()));
    let run: serde_json::Value = serde_json::from_str(&text).unwrap();
    run["new_since"].clone()
}

/// That the run found `base` through `source`, and that only the pull request's file changed.
fn assert_new_since(workspace: &Path, base: &str, source: &str, output: &Output) {
    let record = new_since(workspace);
    assert_eq!(record["base"], base, "{record}\n{output:?}");
    assert_eq!(record["source"], source, "{record}");
    assert!(
        matches!(record["mode"].as_str(), Some("lines" | "gate")),
        "{record}"
    );
    // The files the pull request changed: app/new.py, not main's own later commit.
    match &record["changed_files"] {
        serde_json::Value::Array(files) => assert_eq!(files, &["app/new.py"], "{record}"),
        count => assert_eq!(count, 1, "{record}"),
    }
}

/// A shell as a CI runner starts one in `workspace`: PATH with `wrapper` first (the install is
/// left out) and the tools, none of this machine's own CI variables, and `env`.
fn ci_shell(workspace: &Path, wrapper: &Wrapper, env: &[(&str, &str)]) -> Command {
    let mut command = Command::new("sh");
    command.current_dir(workspace);
    for (key, _) in std::env::vars_os() {
        let name = key.to_string_lossy();
        let from_ci = [
            "GITHUB_",
            "GITLAB_",
            "CI_",
            "CHANGE_",
            "JENKINS_",
            "REFINE_LOOP_",
        ]
        .iter()
        .any(|prefix| name.starts_with(prefix));
        if from_ci || ["CI", "BRANCH_NAME", "BUILD_NUMBER", "JOB_NAME"].contains(&&*name) {
            command.env_remove(&key);
        }
    }
    let mut path = std::ffi::OsString::from(&wrapper.bin);
    path.push(":");
    path.push(path_with_tools());
    command
        .env("PATH", path)
        .env("PYTHONPATH", python_path_with_tools())
        .envs(env.iter().copied());
    command
}

/// The `with:` of ci/examples/github-pull-request.yml's refine-loop step, and that its checkout
/// fetches every branch's whole history.
fn github_example_inputs() -> Vec<(String, String)> {
    let workflow = crate::ci_files::read_yaml("ci/examples/github-pull-request.yml");
    let events = workflow["on"].as_object().unwrap();
    assert_eq!(events.keys().collect::<Vec<_>>(), ["pull_request"]);
    let steps = workflow["jobs"]["refine"]["steps"].as_array().unwrap();
    let uses = |step: &serde_json::Value, action: &str| {
        step["uses"].as_str().is_some_and(|u| u.contains(action))
    };
    let checkout = steps.iter().find(|s| uses(s, "actions/checkout@")).unwrap();
    assert_eq!(checkout["with"]["fetch-depth"], 0, "{checkout}");
    let refine = steps
        .iter()
        .find(|s| uses(s, "/refine-loop-action@"))
        .unwrap();
    assert!(
        refine["with"]["new-since"].is_null(),
        "the default: {refine}"
    );
    refine["with"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, value)| (name.clone(), value.as_str().unwrap().to_string()))
        .collect()
}

/// The `github` context of a run of job `refine`, with `event` and the test's wrapper.
fn github_context<'a>(
    event: &'a [(&'a str, &'a str)],
    wrapper: &'a Wrapper,
) -> Vec<(&'a str, &'a str)> {
    let mut context = vec![
        ("repository", "octo/shop"),
        ("run_id", "41"),
        ("run_attempt", "1"),
        ("job", "refine"),
        ("refine_loop_bin", wrapper.program.to_str().unwrap()),
    ];
    context.extend_from_slice(event);
    context
}

#[test]
fn on_a_pull_request_the_action_finds_the_base_from_github_base_ref() {
    let pull_request = PullRequest::new();
    // actions/checkout with fetch-depth 0 on a pull_request event: every branch, and the merge
    // of the pull request into its base (refs/pull/N/merge) checked out, detached.
    let workspace = pull_request.checkout(
        "github",
        "+refs/heads/*:refs/remotes/origin/*",
        &pull_request.main_tip,
    );
    git_in(
        &workspace,
        &["merge", "-q", "--no-ff", "--no-edit", &pull_request.feature],
    );
    let wrapper = pull_request.wrapper("github");
    let inputs = github_example_inputs();
    let inputs: Vec<(&str, &str)> = inputs
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_str()))
        .collect();
    let event = [
        ("event_name", "pull_request"),
        ("ref_name", "7/merge"),
        ("base_ref", "main"),
        ("head_ref", "feature"),
    ];
    let runner = pull_request.folder("github/runner");
    let cache = CacheStandIn::new(&pull_request.dir.path().join("github/cache"));
    let replay = replay::replay(
        &workspace,
        &runner,
        &inputs,
        &github_context(&event, &wrapper),
        &cache,
    );
    let run = replay.run.as_ref().expect("the run step ran");
    let arguments = wrapper.arguments();
    assert!(
        arguments.contains(&"--new-since=auto".to_string()),
        "{arguments:?}"
    );
    // config-from: base fetched the base without making the checkout shallow.
    let config_from = arguments.iter().position(|a| a == "--config-from-ref");
    assert_eq!(
        config_from.map(|at| arguments[at + 1].as_str()),
        Some("refs/remotes/origin/main"),
        "{arguments:?}"
    );
    let shallow = git_in(&workspace, &["rev-parse", "--is-shallow-repository"]);
    assert_eq!(shallow, "false");
    assert!(
        !String::from_utf8_lossy(&run.stdout).contains("checkout is shallow"),
        "{run:?}"
    );
    // exit-zero: "true": the findings left are no failure.
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    // The checkout is the merge into main's tip: HEAD and origin/main part there.
    assert_new_since(&workspace, &pull_request.main_tip, "github", run);
}

#[test]
fn on_a_push_the_actions_default_passes_no_new_since() {
    let pull_request = PullRequest::new();
    let workspace = pull_request.checkout(
        "push",
        "+refs/heads/*:refs/remotes/origin/*",
        &pull_request.main_tip,
    );
    let wrapper = pull_request.wrapper("push");
    let event = [
        ("event_name", "push"),
        ("ref_name", "main"),
        ("base_ref", ""),
        ("head_ref", ""),
    ];
    let runner = pull_request.folder("push/runner");
    let cache = CacheStandIn::new(&pull_request.dir.path().join("push/cache"));
    let replay = replay::replay(
        &workspace,
        &runner,
        &[("exit-zero", "true")],
        &github_context(&event, &wrapper),
        &cache,
    );
    let run = replay.run.as_ref().expect("the run step ran");
    let arguments = wrapper.arguments();
    assert!(
        !arguments.iter().any(|a| a.starts_with("--new-since")),
        "{arguments:?}"
    );
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert!(new_since(&workspace).is_null(), "a full run");
}

#[test]
fn the_action_passes_new_since_as_given_and_false_or_off_turns_it_off() {
    let pull_request = PullRequest::new();
    let workspace = pull_request.checkout(
        "given",
        "+refs/heads/*:refs/remotes/origin/*",
        &pull_request.feature,
    );
    let wrapper = pull_request.wrapper("given");
    let event = [
        ("event_name", "pull_request"),
        ("ref_name", "7/merge"),
        ("base_ref", "main"),
        ("head_ref", "feature"),
    ];
    // (new-since, preset) → the flag passed
    for (index, (given, preset, passed)) in [
        ("", "refactoring", Some("--new-since=auto")),
        // A campaign works the whole tree: no default.
        ("", "improve", None),
        ("false", "refactoring", None),
        ("off", "refactoring", None),
        (
            "origin/main",
            "refactoring",
            Some("--new-since=origin/main"),
        ),
        // A value that reads like a flag stays the value.
        ("--help", "refactoring", Some("--new-since=--help")),
    ]
    .into_iter()
    .enumerate()
    {
        let runner = pull_request.folder(&format!("given/runner-{index}"));
        let cache = CacheStandIn::new(&runner.join("cache"));
        let _ = std::fs::remove_file(&wrapper.argv);
        replay::replay(
            &workspace,
            &runner,
            &[
                ("new-since", given),
                ("preset", preset),
                ("exit-zero", "all"),
            ],
            &github_context(&event, &wrapper),
            &cache,
        );
        let arguments = wrapper.arguments();
        let found: Vec<&str> = arguments
            .iter()
            .map(String::as_str)
            .filter(|a| a.starts_with("--new-since"))
            .collect();
        assert_eq!(
            found,
            Vec::from_iter(passed),
            "{given} {preset}: {arguments:?}"
        );
    }
}

#[test]
fn a_shallow_checkout_on_a_pull_request_is_warned_of() {
    let pull_request = PullRequest::new();
    // actions/checkout's default: one commit.
    let workspace = pull_request.folder("shallow").join("shop");
    let origin = format!("file://{}", pull_request.origin.display());
    git_in(
        pull_request.dir.path(),
        &[
            "clone",
            "-q",
            "--depth=1",
            "--branch=feature",
            &origin,
            workspace.to_str().unwrap(),
        ],
    );
    let wrapper = pull_request.wrapper("shallow");
    let event = [
        ("event_name", "pull_request_target"),
        ("ref_name", "main"),
        ("base_ref", "main"),
        ("head_ref", "feature"),
    ];
    let runner = pull_request.folder("shallow/runner");
    let cache = CacheStandIn::new(&runner.join("cache"));
    let replay = replay::replay(
        &workspace,
        &runner,
        &[("exit-zero", "all")],
        &github_context(&event, &wrapper),
        &cache,
    );
    let run = replay.run.as_ref().expect("the run step ran");
    assert!(
        wrapper
            .arguments()
            .contains(&"--new-since=auto".to_string()),
        "{run:?}"
    );
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        stdout.contains("::warning::new-since needs the history back to the base, and this checkout is shallow: set fetch-depth: 0"),
        "{stdout}"
    );
}

#[test]
fn in_a_merge_request_pipeline_the_gitlab_job_takes_the_diff_base_sha() {
    let pipeline = crate::ci_files::read_yaml("ci/examples/gitlab-merge-request.yml");
    let job = &pipeline["refine-merge-request"];
    assert_eq!(
        job["rules"][0]["if"],
        "$CI_PIPELINE_SOURCE == \"merge_request_event\""
    );
    let pull_request = PullRequest::new();
    // GitLab's clone of a merge request pipeline: the source branch alone, its whole history
    // (GIT_DEPTH "0"), detached at its head; no ref of the target branch.
    assert_eq!(job["variables"]["GIT_DEPTH"], "0");
    let workspace = pull_request.checkout(
        "gitlab",
        "+refs/heads/feature:refs/remotes/origin/feature",
        &pull_request.feature,
    );
    let wrapper = pull_request.wrapper("gitlab");
    let lines: Vec<&str> = job["script"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| line.as_str().unwrap())
        .collect();
    assert_eq!(lines, ["refine-loop run --new-since auto"]);
    let project_dir = workspace.to_str().unwrap();
    let output = ci_shell(
        &workspace,
        &wrapper,
        &[
            ("CI", "true"),
            ("GITLAB_CI", "true"),
            ("CI_PROJECT_DIR", project_dir),
            ("CI_JOB_NAME", "refine-merge-request"),
            ("CI_PIPELINE_SOURCE", "merge_request_event"),
            ("CI_COMMIT_SHA", &pull_request.feature),
            ("CI_MERGE_REQUEST_IID", "7"),
            ("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", "feature"),
            ("CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "main"),
            ("CI_MERGE_REQUEST_DIFF_BASE_SHA", &pull_request.branch_point),
        ],
    )
    // GitLab runs the script's lines in one shell, stopping at the first failure.
    .args(["-e", "-c", &lines.join("\n")])
    .output()
    .unwrap();
    assert_eq!(wrapper.arguments(), ["run", "--new-since", "auto"]);
    let allowed = &job["allow_failure"]["exit_codes"];
    assert_eq!(allowed, &serde_json::json!([1, 3]));
    let code = output.status.code().unwrap();
    assert!([0, 1, 3].contains(&code), "{output:?}");
    assert_new_since(&workspace, &pull_request.branch_point, "gitlab", &output);
}

/// The `sh` steps of a Jenkinsfile, in order: (the script, whether its status is returned).
fn jenkins_sh_steps(text: &str) -> Vec<(String, bool)> {
    let step =
        regex::Regex::new(r"\bsh(?:\(script: | )'([^']*)'(, returnStatus: true\))?").unwrap();
    step.captures_iter(text)
        .map(|found| (found[1].to_string(), found.get(2).is_some()))
        .collect()
}

#[test]
fn on_a_pull_request_the_jenkins_pipeline_fetches_the_target_and_finds_the_merge_base() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("ci/examples/Jenkinsfile.pull-request"),
    )
    .unwrap();
    // Both stages run on pull requests only.
    assert_eq!(text.matches("changeRequest()").count(), 2, "{text}");
    let steps = jenkins_sh_steps(&text);
    assert_eq!(
        steps.iter().map(|(_, status)| *status).collect::<Vec<_>>(),
        [false, true],
        "{steps:?}"
    );
    let pull_request = PullRequest::new();
    // A multibranch pull request's checkout: its own head alone, detached.
    let workspace = pull_request.checkout(
        "jenkins",
        "+refs/heads/feature:refs/remotes/origin/PR-7",
        &pull_request.feature,
    );
    let has_target = |workspace: &Path| {
        Command::new("git")
            .args(["rev-parse", "--verify", "-q", "refs/remotes/origin/main"])
            .current_dir(workspace)
            .output()
            .unwrap()
            .status
            .success()
    };
    assert!(!has_target(&workspace));
    let wrapper = pull_request.wrapper("jenkins");
    let workspace_dir = workspace.to_str().unwrap();
    let env = [
        ("JENKINS_URL", "https://jenkins.example.invalid/"),
        ("WORKSPACE", workspace_dir),
        ("JOB_NAME", "shop/PR-7"),
        ("BUILD_NUMBER", "1"),
        ("BRANCH_NAME", "PR-7"),
        ("CHANGE_ID", "7"),
        ("CHANGE_BRANCH", "feature"),
        ("CHANGE_TARGET", "main"),
    ];
    let mut run = None;
    for (script, returns_status) in &steps {
        // Jenkins' sh step: `sh -xe` on the script.
        let output = ci_shell(&workspace, &wrapper, &env)
            .args(["-xe", "-c", script])
            .output()
            .unwrap();
        if *returns_status {
            run = Some(output);
        } else {
            assert!(output.status.success(), "{script}: {output:?}");
        }
    }
    assert!(has_target(&workspace), "the first stage fetched main");
    assert_eq!(wrapper.arguments(), ["run", "--new-since", "auto"]);
    let run = run.unwrap();
    // 0 passes, 1 and 3 make the build unstable; anything else fails it.
    let code = run.status.code().unwrap();
    assert!([0, 1, 3].contains(&code), "{run:?}");
    // The pull request's head and origin/main part where the branch left main.
    assert_new_since(&workspace, &pull_request.branch_point, "jenkins", &run);
}
