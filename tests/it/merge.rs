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
