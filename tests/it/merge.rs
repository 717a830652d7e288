//! `refine-loop merge`: three shards (one scope each) merged give the totals of one run over all
//! three scopes.

use crate::support::Repo;

fn check(scope: &str) -> String {
    format!(
        "[[gate.check]]\nname = \"lint-{scope}\"\ncategory = \"lint\"\nrun = \"cat {scope}/lint.txt; test ! -s {scope}/lint.txt\"\nparser = \"clippy\"\n\n\
         [[gate.check]]\nname = \"types-{scope}\"\ncategory = \"types\"\nrun = \"cat {scope}/types.txt; test ! -s {scope}/types.txt\"\nparser = \"clippy\"\n"
    )
}

fn summary(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn merged_shards_give_the_totals_of_one_run_over_all_scopes() {
    let repo = Repo::new();
    for (scope, lint, types) in [("a", 3, 1), ("b", 0, 2), ("c", 5, 0)] {
        let lines = |kind: &str, n: usize| -> String {
            (1..=n)
                .map(|i| format!("{scope}/x.rs:{i}:1: {kind}: {scope} {i}\n"))
                .collect()
        };
        repo.write(
            &format!("{scope}/lint.txt"),
            &(lines("error", lint) + &lines("warning", 1)),
        );
        repo.write(&format!("{scope}/types.txt"), &lines("error", types));
        repo.write(&format!("shard-{scope}.toml"), &check(scope));
    }
    repo.write(
        "all.toml",
        &(check("a") + "\n" + &check("b") + "\n" + &check("c")),
    );
    repo.write(".gitignore", "/.state-*\n");
    repo.commit("three scopes");
    for scope in ["a", "b", "c"] {
        let output = repo.run(&[
            "check",
            "--config",
            &format!("shard-{scope}.toml"),
            "--state-dir",
            &format!(".state-{scope}"),
        ]);
        assert_eq!(output.status.code(), Some(1), "{output:?}");
    }
    let output = repo.run(&["check", "--config", "all.toml", "--state-dir", ".state-all"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let output = repo.run(&[
        "merge",
        ".state-a",
        ".state-b",
        ".state-c",
        "--out",
        ".state-merged",
    ]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");

    let all = summary(&repo.join(".state-all/cycle-0/gate-summary.json"));
    let merged = summary(&repo.join(".state-merged/gate-summary.json"));
    for key in ["failed_count", "warning_count", "overall_result"] {
        assert_eq!(merged[key], all[key], "{key}");
    }
    for (name, category) in all["categories"].as_object().unwrap() {
        for key in ["passed", "failures", "warnings"] {
            assert_eq!(
                merged["categories"][name][key], category[key],
                "{name}.{key}"
            );
        }
    }
    // 11 errors, and the b lint check failing on its warning alone (one failure).
    assert_eq!(merged["failed_count"], 12);
    let trend = summary(&repo.join(".state-merged/trend.json"));
    assert_eq!(trend["cycles"][0]["failed_count"], 12);
    assert!(
        std::fs::read_to_string(repo.join(".state-merged/REFINE-LOOP-FINAL.md"))
            .unwrap()
            .contains("3 shards, 12 failures and 3 warnings in all.")
    );

    let output = repo.run(&["merge", "nowhere", "--out", ".state-x"]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
}

/// A clone of `repo` (each matrix job has its own checkout).
fn clone_of(repo: &Repo) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("git")
        .args(["clone", "-q"])
        .arg(repo.path())
        .arg(dir.path().join("repo"))
        .status()
        .unwrap();
    assert!(status.success());
    dir
}

/// A repository whose one check reports every line of `a/lint.txt` (3) and `b/lint.txt` (2)
/// as an error; the delegate removes the first line of both files.
fn two_scopes() -> Repo {
    let repo = Repo::new();
    repo.write(
        "a/lint.txt",
        "a/x.rs:1:1: error: a 1\na/x.rs:2:1: error: a 2\na/x.rs:3:1: error: a 3\n",
    );
    repo.write(
        "b/lint.txt",
        "b/x.rs:1:1: error: b 1\nb/x.rs:2:1: error: b 2\n",
    );
    repo.write(".gitignore", "/.state*\n");
    repo.write(
        "refine-loop.toml",
        "[[gate.check]]\nname = \"lint\"\ncategory = \"lint\"\n\
         run = \"cat a/lint.txt b/lint.txt; ! grep -q error a/lint.txt b/lint.txt\"\nparser = \"clippy\"\n\n\
         [[delegate]]\ncategories = [\"lint\"]\nrun = \"sed -i 1d a/lint.txt b/lint.txt\"\n",
    );
    repo.commit("two scopes");
    repo
}

/// `refine-loop ARGS` in `dir`.
fn run_in(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    let output = std::process::Command::new(crate::support::binary())
        .args(args)
        .current_dir(dir)
        .env_remove("REFINE_LOOP_CI")
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    assert!(
        matches!(output.status.code(), Some(0 | 1 | 3)),
        "{args:?}: {output:?}"
    );
    output
}

#[test]
fn shards_that_each_ran_the_whole_gate_merge_to_one_run_over_the_whole_repository() {
    let repo = two_scopes();
    let whole = clone_of(&repo);
    run_in(&whole.path().join("repo"), &["run", "--max-cycles", "2"]);
    let mut shards = Vec::new();
    for scope in ["a", "b"] {
        let job = clone_of(&repo);
        run_in(
            &job.path().join("repo"),
            &["run", "--max-cycles", "2", "--scope", scope],
        );
        shards.push(job);
    }
    let out = tempfile::tempdir().unwrap();
    let merged = out.path().join("merged");
    let mut args = vec!["merge".to_string()];
    args.extend(
        shards
            .iter()
            .map(|job| job.path().join("repo/.refine-loop").display().to_string()),
    );
    args.extend(["--out".to_string(), merged.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = run_in(out.path(), &args);
    assert_eq!(output.status.code(), Some(1), "{output:?}");

    let trend = |dir: &std::path::Path| -> Vec<u64> {
        let trend = summary(&dir.join("trend.json"));
        trend["cycles"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["failed_count"].as_u64().unwrap())
            .collect()
    };
    let one_run = trend(&whole.path().join("repo/.refine-loop"));
    assert_eq!(one_run, [5, 3, 1]);
    assert_eq!(trend(&merged), one_run, "not 10 → 7 (added up)");
    let merged_summary = summary(&merged.join("gate-summary.json"));
    assert_eq!(merged_summary["failed_count"], 1);
    assert_eq!(
        merged_summary["categories"]["lint"]["details"],
        serde_json::json!(["a/x.rs:3:1: a 3"])
    );
    let report = std::fs::read_to_string(merged.join("REFINE-LOOP-FINAL.md")).unwrap();
    assert!(report.contains("2 shards, 1 failures"), "{report}");
}

#[test]
fn merging_merged_folders_equals_merging_their_shards() {
    let repo = Repo::new();
    for (scope, errors) in [("a", 1), ("b", 2), ("c", 0), ("d", 3)] {
        let lines: String = (1..=errors)
            .map(|i| format!("{scope}/x.rs:{i}:1: error: {scope} {i}\n"))
            .collect();
        repo.write(&format!("{scope}/lint.txt"), &lines);
        repo.write(&format!("shard-{scope}.toml"), &check(scope));
        repo.write(&format!("{scope}/types.txt"), "");
    }
    repo.write(".gitignore", "/.state-*\n");
    repo.commit("four scopes");
    for scope in ["a", "b", "c", "d"] {
        repo.run(&[
            "check",
            "--config",
            &format!("shard-{scope}.toml"),
            "--state-dir",
            &format!(".state-{scope}"),
        ]);
    }
    let merge = |dirs: &[&str], out: &str| {
        let mut args = vec!["merge"];
        args.extend_from_slice(dirs);
        args.extend(["--out", out]);
        let output = repo.run(&args);
        assert_eq!(output.status.code(), Some(1), "{output:?}");
    };
    merge(&[".state-a", ".state-b"], ".state-ab");
    merge(&[".state-c", ".state-d"], ".state-cd");
    merge(&[".state-ab", ".state-cd"], ".state-abcd");
    merge(
        &[".state-a", ".state-b", ".state-c", ".state-d"],
        ".state-all",
    );
    for file in ["gate-summary.json", "trend.json", "category-history.json"] {
        assert_eq!(
            summary(&repo.join(&format!(".state-abcd/{file}"))),
            summary(&repo.join(&format!(".state-all/{file}"))),
            "{file}"
        );
    }
    assert_eq!(
        summary(&repo.join(".state-abcd/gate-summary.json"))["failed_count"],
        6
    );
    assert_eq!(
        std::fs::read_to_string(repo.join(".state-abcd/REFINE-LOOP-FINAL.md")).unwrap(),
        std::fs::read_to_string(repo.join(".state-all/REFINE-LOOP-FINAL.md")).unwrap()
    );
}

#[test]
fn a_shard_with_no_cycles_is_refused_with_a_clear_message() {
    let repo = Repo::new();
    repo.write("refine-loop.toml", &check("a"));
    repo.write("a/lint.txt", "");
    repo.write("a/types.txt", "");
    repo.commit("one scope");
    repo.run(&["check", "--state-dir", ".state-a"]);
    std::fs::write(
        repo.join(".state-a/trend.json"),
        r#"{"format_version": 1, "cycles": []}"#,
    )
    .unwrap();
    let output = repo.run(&["merge", ".state-a", "--out", ".state-x"]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("trend.json has no cycles") && !stderr.contains("panicked"),
        "{stderr}"
    );
}

#[test]
fn shards_of_the_gates_checks_merge_to_the_whole_gate() {
    let repo = Repo::new();
    for (scope, lint, types) in [("a", 2, 1), ("b", 0, 3)] {
        let lines = |n: usize| -> String {
            (1..=n)
                .map(|i| format!("{scope}/x.rs:{i}:1: error: {scope} {i}\n"))
                .collect()
        };
        repo.write(&format!("{scope}/lint.txt"), &lines(lint));
        repo.write(&format!("{scope}/types.txt"), &lines(types));
    }
    repo.write("refine-loop.toml", &(check("a") + "\n" + &check("b")));
    repo.write(".gitignore", "/.state-*\n");
    repo.commit("four checks");
    let whole = repo.run(&["check", "--state-dir", ".state-whole"]);
    assert_eq!(whole.status.code(), Some(1), "{whole:?}");
    let mut legs = Vec::new();
    for k in 1..=3 {
        let dir = format!(".state-leg{k}");
        let output = repo.run(&["check", "--shard", &format!("{k}/3"), "--state-dir", &dir]);
        assert!(matches!(output.status.code(), Some(0 | 1)), "{output:?}");
        let leg = summary(&repo.join(&format!("{dir}/cycle-0/gate-summary.json")));
        legs.push(leg["checks"].as_array().unwrap().len());
    }
    assert_eq!(legs, [2, 1, 1], "checks 1 and 4, 2, 3");
    let output = repo.run(&[
        "merge",
        ".state-leg1",
        ".state-leg2",
        ".state-leg3",
        "--out",
        ".state-merged",
    ]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let merged = summary(&repo.join(".state-merged/gate-summary.json"));
    let all = summary(&repo.join(".state-whole/cycle-0/gate-summary.json"));
    assert_eq!(merged["failed_count"], all["failed_count"]);
    assert_eq!(merged["failed_count"], 6, "{all}");
    let bad = repo.run(&["check", "--shard", "4/3"]);
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
}
