//! The `kind = "http"` delegate against a local chat-completions server on 127.0.0.1, with the
//! real ruff as the gate: a good diff is applied and verified; a diff it may not apply, an error,
//! a slow or oversized reply leave the tree as it was, and the attempt says why.

use std::path::Path;
use std::time::Duration;

use crate::http_server::{Response, Server};
use crate::support::{Entry, Repo, stderr, stdout, tool, tree_of};

/// The key's variable and value: not shaped like any known credential, so only the variable's
/// name says it is secret.
const KEY_VARIABLE: &str = "MODEL_API_KEY";
const KEY: &str = "k3y-Zq8Lw2Px9Rt5Vb7N";

const APP: &str = "import os\nx = 1\nprint(x)\n";
const FIX: &str =
    "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,3 +1,2 @@\n-import os\n x = 1\n print(x)\n";

/// A repository whose ruff gate fails on an unused import in `src/app.py`, with an http
/// delegate asking `server`; `extra` goes into the delegate's table.
fn repository(server: &Server, extra: &str) -> Repo {
    repository_with(server, extra, &tool("ruff"))
}

/// The same, with `ruff` as the gate's command (tests that stop before the gate runs need no
/// ruff).
fn repository_with(server: &Server, extra: &str, ruff: &str) -> Repo {
    let repo = Repo::new();
    repo.write("pyproject.toml", "[tool.ruff.lint]\nselect = [\"F401\"]\n");
    repo.write("src/app.py", APP);
    repo.write(".gitignore", "/.refine-loop\n.ruff_cache/\n");
    repo.write(
        "refine-loop.toml",
        &format!(
            "[[gate.check]]\nname = \"ruff\"\ncategory = \"lint\"\n\
             run = \"{ruff} check --no-cache --output-format=concise .\"\nparser = \"ruff\"\n\n\
             [[gate.check]]\nname = \"no-key\"\ncategory = \"env\"\n\
             run = 'test -z \"${{{KEY_VARIABLE}:-}}\"'\n\n\
             [[delegate]]\nkind = \"http\"\ncategories = [\"lint\"]\n\
             endpoint = \"{}/v1/chat/completions\"\nmodel = \"local-coder\"\n\
             api_key_env = \"{KEY_VARIABLE}\"\n{extra}",
            server.base
        ),
    );
    repo.commit("app");
    repo
}

/// A chat completion whose answer is `content`.
fn completion(content: &str) -> Response {
    let body = serde_json::json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "local-coder",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 321, "completion_tokens": 45, "total_tokens": 366},
    });
    Response::json(200, body.to_string())
}

/// `refine-loop ARGS` in `repo`, with the key set.
fn run_with(repo: &Repo, args: &[&str]) -> std::process::Output {
    repo.command(args).env(KEY_VARIABLE, KEY).output().unwrap()
}

fn run(repo: &Repo) -> std::process::Output {
    run_with(repo, &["run", "--max-cycles", "1"])
}

fn report(repo: &Repo) -> String {
    std::fs::read_to_string(repo.join(".refine-loop/cycle-1/delegate-reports/fix-lint.md")).unwrap()
}

/// Every file the run wrote, none holding the key.
fn assert_key_written_nowhere(repo: &Repo, output: &std::process::Output) {
    for (path, entry) in tree_of(&repo.join(".refine-loop"), &[]) {
        if let Entry::File { bytes, .. } = entry {
            assert!(
                !String::from_utf8_lossy(&bytes).contains(KEY),
                "the key is in {}",
                path.display()
            );
        }
    }
    // Not even a piece of it (a log can cut a header into lines).
    let (out, err) = (stdout(output), stderr(output));
    for piece in KEY.as_bytes().windows(8) {
        let piece = std::str::from_utf8(piece).unwrap();
        assert!(
            !out.contains(piece) && !err.contains(piece),
            "{piece} in the output"
        );
    }
}

fn user_files(repo: &Repo) -> std::collections::BTreeMap<std::path::PathBuf, Entry> {
    tree_of(repo.path(), &[".git", ".refine-loop", ".ruff_cache"])
}

#[test]
fn a_good_diff_is_applied_verified_by_the_gate_and_its_tokens_recorded() {
    let server = Server::start(|_, _| completion(&format!("Remove it:\n\n```diff\n{FIX}```\n")));
    let repo = repository(&server, "");
    // At the most verbose log level too, the key stays out of the log.
    let output = run_with(&repo, &["-vvv", "run", "--max-cycles", "1"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stderr(&output).contains("POST"), "ureq's request is logged");
    assert_eq!(
        std::fs::read_to_string(repo.join("src/app.py")).unwrap(),
        "x = 1\nprint(x)\n"
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
    assert_eq!(body["model"], "local-coder");
    let user = body["messages"][1]["content"].as_str().unwrap();
    assert!(
        user.contains("F401") && user.contains("### `src/app.py`"),
        "{user}"
    );
    assert!(user.contains(APP), "the file is sent whole: {user}");

    let report = report(&repo);
    assert!(
        report.contains("- tokens: 321 prompt + 45 completion = 366"),
        "{report}"
    );
    assert!(report.contains("applied to: src/app.py"), "{report}");
    let trend: serde_json::Value =
        serde_json::from_slice(&std::fs::read(repo.join(".refine-loop/trend.json")).unwrap())
            .unwrap();
    assert_eq!(trend["cycles"][1]["tokens"]["total_tokens"], 366);
    // The commit names the endpoint and its model, and what the turn cost.
    let patch =
        repo.join(".refine-loop/patches/0001-refine-loop-iteration-1-failed-1-0-lint-1-0.patch");
    let trailers = crate::provenance::parsed_trailers(repo.path(), &patch);
    let endpoint = format!("{}/v1/chat/completions", server.base);
    for (key, value) in [
        (
            "Refine-Loop-Delegate",
            format!("http {endpoint}; model local-coder"),
        ),
        (
            "Refine-Loop-Cost",
            "tokens 366 (prompt 321, completion 45), cost unknown".to_string(),
        ),
        (
            "Refine-Loop-Findings",
            "fixed 1, new 0, pre-existing 0".to_string(),
        ),
    ] {
        assert!(trailers.contains(&(key.to_string(), value)), "{trailers:?}");
    }
    assert_key_written_nowhere(&repo, &output);
}

/// Runs one cycle against an endpoint answering with `handler`, and checks that the user's files
/// are as they were and the delegate's report names `reason`.
fn assert_not_applied(
    handler: impl Fn(&crate::http_server::Request, usize) -> Response + Send + Sync + 'static,
    extra: &str,
    prepare: impl Fn(&Repo),
    reason: &str,
) -> (Repo, Server) {
    let server = Server::start(handler);
    let repo = repository(&server, extra);
    prepare(&repo);
    let before = user_files(&repo);
    let output = run(&repo);
    // The one cycle allowed ended with the gate still failing: the budget's exit code.
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert_eq!(user_files(&repo), before, "the tree is untouched");
    let report = report(&repo);
    assert!(report.contains("- result: no change"), "{report}");
    assert!(report.contains(reason), "expected {reason:?} in:\n{report}");
    assert_key_written_nowhere(&repo, &output);
    (repo, server)
}

#[test]
fn a_diff_touching_the_users_own_work_is_not_applied() {
    let diff = "--- a/notes.py\n+++ b/notes.py\n@@ -1 +1 @@\n-draft = 1\n+draft = 2\n";
    let (repo, _server) = assert_not_applied(
        move |_, _| completion(&format!("```diff\n{FIX}{diff}```")),
        "",
        |repo| repo.write("notes.py", "draft = 1\n"),
        "the user's own work",
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("notes.py")).unwrap(),
        "draft = 1\n"
    );
}

#[test]
fn a_diff_escaping_the_repository_is_not_applied() {
    let diff = "--- a/../escaped.py\n+++ b/../escaped.py\n@@ -0,0 +1 @@\n+pwned = 1\n";
    let (repo, _server) = assert_not_applied(
        move |_, _| completion(&format!("```diff\n{diff}```")),
        "",
        |_| {},
        "outside the repository",
    );
    assert!(!repo.path().parent().unwrap().join("escaped.py").exists());
}

#[test]
fn a_malformed_diff_is_not_applied() {
    assert_not_applied(
        |_, _| {
            completion(
                "```diff\n--- a/src/app.py\n+++ b/src/app.py\n@@ -1,3 +1,7 @@\n-import os\n```",
            )
        },
        "",
        |_| {},
        "does not parse",
    );
}

#[test]
fn a_rate_limit_is_waited_out_and_the_next_answer_applied() {
    let server = Server::start(|_, index| match index {
        0 => Response::json(429, r#"{"error":{"message":"slow down"}}"#)
            .with_header("Retry-After", "0"),
        1 => Response::json(503, r#"{"error":{"message":"overloaded"}}"#),
        _ => completion(&format!("```diff\n{FIX}```")),
    });
    let repo = repository(&server, "timeout = \"30s\"\n");
    let output = run(&repo);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(server.requests().len(), 3);
    assert!(report(&repo).contains("answer: 200 after 3 request(s)"));
}

#[test]
fn an_endpoint_slower_than_the_timeout_is_given_up() {
    let (_repo, server) = assert_not_applied(
        |_, _| completion(&format!("```diff\n{FIX}```")).after(Duration::from_secs(4)),
        "timeout = \"1s\"\n",
        |_| {},
        "gave no answer within",
    );
    // Given up, not asked again.
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn an_oversized_answer_is_refused() {
    let huge = format!("```diff\n{FIX}```{}", " ".repeat(2 << 20));
    assert_not_applied(
        move |_, _| completion(&huge),
        "max_tokens = 16\n",
        |_| {},
        "larger than",
    );
}

#[test]
fn an_error_status_is_reported_and_nothing_applied() {
    assert_not_applied(
        |_, _| Response::json(401, r#"{"error":{"message":"invalid api key"}}"#),
        "",
        |_| {},
        "the endpoint answered 401",
    );
}

#[test]
fn offline_refuses_an_http_delegate_before_anything_runs() {
    let server = Server::start(|_, _| completion("NO-CHANGE"));
    let repo = repository_with(&server, "", "ruff");
    let output = run_with(&repo, &["run", "--offline"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--offline"), "{}", stderr(&output));
    assert!(server.requests().is_empty());
    assert!(!Path::new(&repo.join(".refine-loop/cycle-0")).exists());
}

#[test]
fn the_key_variable_must_be_set_and_named_as_a_secret() {
    let server = Server::start(|_, _| completion("NO-CHANGE"));
    let repo = repository(&server, "");
    let unset = repo
        .command(&["run"])
        .env_remove(KEY_VARIABLE)
        .output()
        .unwrap();
    assert_eq!(unset.status.code(), Some(2));
    assert!(
        stderr(&unset).contains("MODEL_API_KEY, the variable holding the API key, is not set"),
        "{}",
        stderr(&unset)
    );
    let check = repo
        .command(&["check"])
        .env_remove(KEY_VARIABLE)
        .output()
        .unwrap();
    assert_eq!(
        check.status.code(),
        Some(1),
        "check needs no key: {}",
        stderr(&check)
    );

    let text = std::fs::read_to_string(repo.join("refine-loop.toml")).unwrap();
    repo.write(
        "refine-loop.toml",
        &text.replace(KEY_VARIABLE, "MODEL_SETTING"),
    );
    let output = repo
        .command(&["run"])
        .env("MODEL_SETTING", KEY)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("does not look like a secret's name"),
        "{}",
        stderr(&output)
    );
    assert!(server.requests().is_empty());
}

#[test]
fn the_request_goes_through_the_proxy_of_the_environment_unless_no_proxy_names_the_host() {
    // The endpoint's host does not resolve: only the proxy can reach it.
    let proxy = Server::start(|_, _| completion(&format!("```diff\n{FIX}```")));
    let repo = repository(&proxy, "");
    let text = std::fs::read_to_string(repo.join("refine-loop.toml")).unwrap();
    repo.write(
        "refine-loop.toml",
        &text.replace(&proxy.base, "http://model.invalid"),
    );
    let through_proxy = repo
        .command(&["run", "--max-cycles", "1"])
        .env(KEY_VARIABLE, KEY)
        .env("HTTP_PROXY", &proxy.base)
        .env("HTTPS_PROXY", &proxy.base)
        .env_remove("NO_PROXY")
        .output()
        .unwrap();
    assert_eq!(
        through_proxy.status.code(),
        Some(0),
        "{}",
        stderr(&through_proxy)
    );
    let requests = proxy.requests();
    assert_eq!(requests[0].method, "CONNECT");
    assert_eq!(requests[0].path, "model.invalid:80");
    assert_eq!(requests[1].path, "/v1/chat/completions");

    // NO_PROXY names the endpoint's host: it is asked directly, past a proxy that is not there.
    let direct = Server::start(|_, _| completion("NO-CHANGE: nothing to do"));
    let repo = repository(&direct, "");
    let output = repo
        .command(&["run", "--max-cycles", "1"])
        .env(KEY_VARIABLE, KEY)
        .env("HTTP_PROXY", "http://127.0.0.1:9")
        .env("HTTPS_PROXY", "http://127.0.0.1:9")
        .env("NO_PROXY", "127.0.0.1")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert_eq!(direct.requests().len(), 1);
    assert!(report(&repo).contains("the model declined: nothing to do"));
}

#[test]
fn an_improve_campaign_takes_the_endpoints_fix_and_reports_its_tokens() {
    let server = Server::start(|_, _| completion(&format!("```diff\n{FIX}```")));
    let repo = repository(&server, "");
    let output = run_with(
        &repo,
        &["run", "--preset", "improve", "remove the unused import"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        std::fs::read_to_string(repo.join("src/app.py")).unwrap(),
        "x = 1\nprint(x)\n"
    );
    assert_eq!(server.requests().len(), 1);
    let report = report(&repo);
    assert!(
        report.contains("- tokens: 321 prompt + 45 completion = 366"),
        "{report}"
    );
    assert_key_written_nowhere(&repo, &output);
}

#[test]
fn a_retry_after_beyond_the_timeout_ends_the_attempt_with_the_429() {
    let (_repo, server) = assert_not_applied(
        |_, _| {
            Response::json(429, r#"{"error":{"message":"quota"}}"#)
                .with_header("Retry-After", "18446744073709551615")
        },
        "timeout = \"5s\"\n",
        |_| {},
        "the endpoint answered 429",
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn a_refine_executor_asking_an_endpoint_is_sent_the_candidates_files_but_no_ignored_one() {
    let server = Server::start(|request, _| {
        let body = request.body_text();
        if body.contains("### `src/app.py`") && !body.contains("DATABASE_URL") {
            completion(&format!("```diff\n{FIX}```"))
        } else {
            completion("NO-CHANGE: the file was not sent")
        }
    });
    let repo = repository(&server, "role = \"execute\"\n");
    repo.write(".gitignore", "/.refine-loop\n.ruff_cache/\n.env\n");
    repo.write(".env", "DATABASE_URL=postgres://localhost/app\n");
    let discover = r#"printf '{"title":"drop the unused import","family":"tidy/imports","evidence":"os is never used","paths":["src/app.py",".env"],"impact":4,"confidence":4,"effort":1,"behaviour_changing":false}\n' > "$REFINE_LOOP_CANDIDATES_FILE""#;
    let mut config = std::fs::read_to_string(repo.join("refine-loop.toml")).unwrap();
    config.push_str(&format!(
        "\n[[delegate]]\nrole = \"discover\"\nlens = \"refactoring\"\nrun = '''{discover}'''\n\n\
         [[delegate]]\nrole = \"reviewer\"\nrun = 'echo approve > \"$REFINE_LOOP_VERDICT_FILE\"'\n"
    ));
    repo.write("refine-loop.toml", &config);
    repo.commit("a refine campaign with an http executor");
    let output = run_with(&repo, &["run", "--preset", "refine", "tidy"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        std::fs::read_to_string(repo.join("src/app.py")).unwrap(),
        "x = 1\nprint(x)\n",
        "the executor's diff was accepted"
    );
    let reports = tree_of(&repo.join(".refine-loop/cycle-1/delegate-reports"), &[]);
    let report = reports
        .iter()
        .find_map(|(path, entry)| match entry {
            Entry::File { bytes, .. } if path.to_string_lossy().ends_with("tidy-imports.md") => {
                Some(String::from_utf8_lossy(bytes).into_owned())
            }
            _ => None,
        })
        .unwrap_or_else(|| panic!("{reports:?}"));
    assert!(
        report.contains("not sent: .env (git's own or an ignored file"),
        "{report}"
    );
    assert_key_written_nowhere(&repo, &output);
}
