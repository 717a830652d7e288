//! The Action's install step (`ci/action/install.sh`): which release it installs for each kind of
//! ref, its sha256 check, and a release that does not exist.

use std::process::Command;

#[test]
fn the_install_script_checks_the_release_sha256_before_it_installs() {
    let release = tempfile::tempdir().unwrap();
    let staging = tempfile::tempdir().unwrap();
    let fake = staging.path().join("refine-loop");
    std::fs::write(&fake, "#!/bin/sh\necho refine-loop 9.9.9\n").unwrap();
    let archive = "refine-loop-x86_64-unknown-linux-musl.tar.gz";
    let run = |program: &str, args: &[&str], dir: &std::path::Path| {
        let status = Command::new(program)
            .args(args)
            .current_dir(dir)
            .status()
            .unwrap();
        assert!(status.success(), "{program} {args:?}");
    };
    run("chmod", &["+x", "refine-loop"], staging.path());
    run(
        "tar",
        &[
            "-czf",
            release.path().join(archive).to_str().unwrap(),
            "refine-loop",
        ],
        staging.path(),
    );
    let install = |sha_line: &str| {
        std::fs::write(release.path().join(format!("{archive}.sha256")), sha_line).unwrap();
        let runner = tempfile::tempdir().unwrap();
        let path_file = runner.path().join("path");
        let output = Command::new("bash")
            .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ci/action/install.sh"))
            .env("REFINE_LOOP_ACTION_PATH", env!("CARGO_MANIFEST_DIR"))
            .env("REFINE_LOOP_ACTION_VERSION", "v9.9.9")
            // Used as a published action (not from this repository, which builds from source).
            .env("GITHUB_ACTION_REPOSITORY", "org/refine-loop-action")
            .env_remove("GITHUB_WORKSPACE")
            .env(
                "REFINE_LOOP_RELEASE_BASE",
                format!("file://{}", release.path().display()),
            )
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_ARCH", "X64")
            .env("RUNNER_TEMP", runner.path())
            .env("GITHUB_PATH", &path_file)
            .output()
            .unwrap();
        (output, runner, path_file)
    };
    let digest = Command::new("sha256sum")
        .arg(archive)
        .current_dir(release.path())
        .output()
        .unwrap();
    let (output, runner, path_file) = install(&String::from_utf8_lossy(&digest.stdout));
    assert!(output.status.success(), "{output:?}");
    assert!(String::from_utf8_lossy(&output.stdout).contains("refine-loop 9.9.9"));
    let installed = runner.path().join("refine-loop-bin");
    assert_eq!(
        std::fs::read_to_string(path_file).unwrap().trim(),
        installed.display().to_string()
    );
    // A checksum that does not match: nothing is installed.
    let (output, runner, _) = install(&format!("{}  {archive}\n", "0".repeat(64)));
    assert!(!output.status.success(), "{output:?}");
    assert!(!runner.path().join("refine-loop-bin/refine-loop").exists());
}

/// `ci/action/install.sh` as the action runs it, as a published action used at `action_ref`,
/// with `version` as the input and releases at `base`.
fn install_script(
    version: &str,
    action_ref: &str,
    base: &str,
) -> (std::process::Output, tempfile::TempDir) {
    let runner = tempfile::tempdir().unwrap();
    let output = Command::new("bash")
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ci/action/install.sh"))
        .env("REFINE_LOOP_ACTION_PATH", env!("CARGO_MANIFEST_DIR"))
        .env("REFINE_LOOP_ACTION_VERSION", version)
        .env("REFINE_LOOP_ACTION_REF", action_ref)
        // Inside a composite action the runner leaves this empty (actions/runner#2473).
        .env("GITHUB_ACTION_REPOSITORY", "")
        // Not `uses: ./`: the action is not inside the workspace.
        .env_remove("GITHUB_WORKSPACE")
        .env("REFINE_LOOP_RELEASE_BASE", base)
        .env("RUNNER_OS", "Linux")
        .env("RUNNER_ARCH", "X64")
        .env("RUNNER_TEMP", runner.path())
        .env("GITHUB_PATH", runner.path().join("path"))
        .output()
        .unwrap();
    (output, runner)
}

#[test]
fn a_release_that_does_not_exist_is_one_line_naming_version_source() {
    let server = crate::http_server::Server::start(|_, _| {
        crate::http_server::Response::json(404, r#"{"message":"Not Found"}"#)
    });
    // A pinned version tag installs its release, even with GITHUB_ACTION_REPOSITORY empty: it
    // never quietly builds from source.
    let (output, runner) = install_script("", "v9.9.9", &server.base);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].contains("no release v9.9.9")
            && lines[0].contains("version: to an existing release, or to source"),
        "{stderr}"
    );
    assert!(
        !runner.path().join("refine-loop-target").exists(),
        "nothing was built"
    );
    assert!(!runner.path().join("refine-loop-bin/refine-loop").exists());
    assert_eq!(
        server.requests().len(),
        1,
        "one request: the archive, refused"
    );
}

#[test]
fn a_major_tag_a_branch_or_a_commit_installs_the_release_the_action_declares() {
    let server = crate::http_server::Server::start(|_, _| {
        crate::http_server::Response::json(404, r#"{"message":"Not Found"}"#)
    });
    let declared = format!("no release v{}", env!("CARGO_PKG_VERSION"));
    for action_ref in ["v1", "main", "0a54f1ff9ec7d5d8fd2e03af38dff7546867c365", ""] {
        let (output, runner) = install_script("", action_ref, &server.base);
        assert_eq!(output.status.code(), Some(1), "{action_ref}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(&declared), "{action_ref}: {stderr}");
        assert!(
            !runner.path().join("refine-loop-target").exists(),
            "{action_ref}: never a quiet cargo build"
        );
    }
}

/// `install.sh resolve`, as the action's first step runs it: the outputs it writes, with
/// releases that exist (a local server that answers 200).
fn resolve(version: &str, action_ref: &str, workspace: Option<&str>) -> String {
    let server = crate::http_server::Server::start(|_, _| {
        crate::http_server::Response::json(200, "0  refine-loop-x86_64-unknown-linux-musl.tar.gz\n")
    });
    resolve_against(version, action_ref, workspace, &server.base).0
}

/// `install.sh resolve` with the releases at `base`: the outputs it writes and its stdout (where
/// the runner reads workflow commands).
fn resolve_against(
    version: &str,
    action_ref: &str,
    workspace: Option<&str>,
    base: &str,
) -> (String, String) {
    let runner = tempfile::tempdir().unwrap();
    let outputs = runner.path().join("output");
    let mut command = Command::new("bash");
    command
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ci/action/install.sh"))
        .arg("resolve")
        .env("REFINE_LOOP_ACTION_PATH", env!("CARGO_MANIFEST_DIR"))
        .env("REFINE_LOOP_ACTION_VERSION", version)
        .env("REFINE_LOOP_ACTION_REF", action_ref)
        .env("RUNNER_OS", "Linux")
        .env("RUNNER_ARCH", "X64")
        .env("RUNNER_TEMP", runner.path())
        .env("REFINE_LOOP_RELEASE_BASE", base)
        .env("GITHUB_OUTPUT", &outputs);
    match workspace {
        Some(workspace) => command.env("GITHUB_WORKSPACE", workspace),
        None => command.env_remove("GITHUB_WORKSPACE"),
    };
    let output = command.output().unwrap();
    assert!(output.status.success(), "{output:?}");
    assert!(
        !runner.path().join("refine-loop-bin").exists(),
        "resolve installs nothing"
    );
    (
        std::fs::read_to_string(outputs).unwrap(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

#[test]
fn before_its_release_exists_the_action_builds_its_own_source_and_says_so_once() {
    let missing = crate::http_server::Server::start(|_, _| {
        crate::http_server::Response::json(404, r#"{"message":"Not Found"}"#)
    });
    let declared = concat!("v", env!("CARGO_PKG_VERSION"));
    // (version input, action ref) → the version resolve chooses when the release answers 404.
    let cases = [
        // A tag of the action, a major tag, a branch, a commit: the release the action chose.
        ("", "v9.9.9", "source"),
        ("", "v1", "source"),
        ("", "main", "source"),
        ("", "0a54f1ff9ec7d5d8fd2e03af38dff7546867c365", "source"),
        ("latest", "v1", "source"),
        // The action's own version, named.
        (declared, "v1", "source"),
        // Another release, named: that one, and the install says it does not exist.
        ("v9.9.9", "v1", "v9.9.9"),
    ];
    for (version, action_ref, expected) in cases {
        let before = missing.requests().len();
        let (outputs, stdout) = resolve_against(version, action_ref, None, &missing.base);
        let case = format!("{version:?} {action_ref:?}");
        assert!(
            outputs.lines().any(|l| l == format!("version={expected}")),
            "{case}: {outputs}"
        );
        let notices: Vec<&str> = stdout.lines().filter(|l| l.starts_with("::")).collect();
        if expected == "source" {
            assert!(
                outputs.contains("cache-key=refine-loop-source-"),
                "{case}: {outputs}"
            );
            assert_eq!(notices.len(), 1, "{case}: {stdout}");
            assert!(
                notices[0].starts_with("::notice ")
                    && notices[0].contains("(404): building it from the action's own source"),
                "{case}: {stdout}"
            );
            assert_eq!(missing.requests().len(), before + 1, "{case}: one request");
        } else {
            assert!(notices.is_empty(), "{case}: {stdout}");
            assert!(!outputs.contains("cache-key="), "{case}: {outputs}");
        }
    }
    // A release that exists, or a server that fails otherwise (not a 404): no source build.
    for status in [200, 500] {
        let server = crate::http_server::Server::start(move |_, _| {
            crate::http_server::Response::json(status, "{}")
        });
        let (outputs, stdout) = resolve_against("", "v9.9.9", None, &server.base);
        assert!(
            outputs.lines().any(|l| l == "version=v9.9.9"),
            "{status}: {outputs}"
        );
        assert!(!stdout.contains("::notice"), "{status}: {stdout}");
    }
}

#[test]
fn resolve_names_the_version_and_a_cache_key_only_for_a_source_build() {
    let digest = Command::new("sha256sum")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.lock"))
        .output()
        .unwrap();
    let digest = String::from_utf8(digest.stdout).unwrap();
    let lock_digest = digest.split(' ').next().unwrap();
    let root = env!("CARGO_MANIFEST_DIR");
    let parent = std::path::Path::new(root)
        .parent()
        .unwrap()
        .to_str()
        .unwrap();
    // (version input, action ref, workspace) → version; a cache key only for source.
    let cases: [(&str, &str, Option<&str>, &str); 6] = [
        ("", "v1.2.3", None, "v1.2.3"),
        ("", "v1", None, concat!("v", env!("CARGO_PKG_VERSION"))),
        ("latest", "v1.2.3", None, "latest"),
        ("source", "v1.2.3", None, "source"),
        // `uses: ./`: the action is inside the workspace.
        ("", "", Some(root), "source"),
        ("", "", Some(parent), "source"),
    ];
    for (version, action_ref, workspace, expected) in cases {
        let outputs = resolve(version, action_ref, workspace);
        let case = format!("{version:?} {action_ref:?} {workspace:?}");
        assert!(
            outputs.lines().any(|l| l == format!("version={expected}")),
            "{case}: {outputs}"
        );
        let key = outputs.lines().find_map(|l| l.strip_prefix("cache-key="));
        if expected == "source" {
            let key = key.unwrap_or_else(|| panic!("{case}: no cache key: {outputs}"));
            assert!(
                key.starts_with("refine-loop-source-Linux-X64-") && key.ends_with(lock_digest),
                "{case}: {key}"
            );
            assert!(outputs.contains("target-dir="), "{case}: {outputs}");
        } else {
            assert_eq!(key, None, "{case}: {outputs}");
        }
    }
}

#[test]
fn with_no_ref_and_no_repository_from_the_runner_the_action_path_names_them() {
    // The runner's layout of a used action: .../_actions/<owner>/<repository>/<ref>.
    let runner = tempfile::tempdir().unwrap();
    let action = runner
        .path()
        .join("_actions/acme/refine-loop-action/v9.8.7");
    std::fs::create_dir_all(action.join("ci/action")).unwrap();
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/ci/action/install.sh"),
        action.join("ci/action/install.sh"),
    )
    .unwrap();
    let outputs = runner.path().join("output");
    let exists =
        crate::http_server::Server::start(|_, _| crate::http_server::Response::json(200, "{}"));
    let resolved = Command::new("bash")
        .arg(action.join("ci/action/install.sh"))
        .arg("resolve")
        .env("REFINE_LOOP_RELEASE_BASE", &exists.base)
        .env("REFINE_LOOP_ACTION_PATH", &action)
        .env("REFINE_LOOP_ACTION_VERSION", "")
        .env("REFINE_LOOP_ACTION_REF", "")
        .env("GITHUB_OUTPUT", &outputs)
        .env_remove("GITHUB_WORKSPACE")
        .output()
        .unwrap();
    assert!(resolved.status.success(), "{resolved:?}");
    let written = std::fs::read_to_string(&outputs).unwrap();
    assert!(written.lines().any(|l| l == "version=v9.8.7"), "{written}");

    // The install names the repository from the path too. curl goes through a proxy here (a
    // local server that refuses every tunnel), so nothing leaves the machine.
    let server = crate::http_server::Server::start(|_, _| {
        crate::http_server::Response::json(404, r#"{"message":"Not Found"}"#)
    });
    let installed = Command::new("bash")
        .arg(action.join("ci/action/install.sh"))
        .env("REFINE_LOOP_ACTION_PATH", &action)
        .env("REFINE_LOOP_ACTION_VERSION", "v9.8.7")
        .env("REFINE_LOOP_ACTION_REPOSITORY", "")
        .env("GITHUB_ACTION_REPOSITORY", "")
        .env_remove("GITHUB_WORKSPACE")
        .env_remove("REFINE_LOOP_RELEASE_BASE")
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .env("HTTPS_PROXY", &server.base)
        .env("https_proxy", &server.base)
        .env("RUNNER_OS", "Linux")
        .env("RUNNER_ARCH", "X64")
        .env("RUNNER_TEMP", runner.path())
        .output()
        .unwrap();
    assert_eq!(installed.status.code(), Some(1), "{installed:?}");
    let stderr = String::from_utf8_lossy(&installed.stderr);
    assert!(
        stderr.contains("at https://github.com/acme/refine-loop-action/releases/download/v9.8.7 "),
        "{stderr}"
    );
}
