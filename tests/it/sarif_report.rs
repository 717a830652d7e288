//! `report.sarif` of a gate of real tools: each rule's descriptions and the page its tool
//! documents it on, and the run's `automationDetails.id`, one per job and matrix leg.

use serde_json::Value;

use crate::support::{Repo, tool};

/// A package with ESLint findings (rules with a page) and ruff findings (ruff's pages are by
/// rule name, not code: none).
fn package() -> Repo {
    let (eslint, ruff) = (tool("eslint"), tool("ruff"));
    let repo = Repo::new();
    repo.write(
        "eslint.config.cjs",
        "module.exports = [{ files: [\"**/*.js\"], rules: { eqeqeq: \"error\", \"no-var\": \"warn\" } }];\n",
    );
    repo.write(
        "web/app.js",
        "var total = 1;\nif (total == 2) {\n  console.log(total);\n}\n",
    );
    repo.write("app/calc.py", "import os\n\n\ndef f():\n    return 1\n");
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write(
        "refine-loop.toml",
        &format!(
            "[[gate.check]]\nname = \"eslint\"\ncategory = \"lint\"\nrun = \"{eslint} web\"\nparser = \"eslint\"\n\n\
             [[gate.check]]\nname = \"ruff\"\ncategory = \"lint\"\nrun = \"{ruff} check --no-cache --output-format=concise app\"\nparser = \"ruff\"\n"
        ),
    );
    repo.commit("a package");
    repo
}

/// `check` in a GitHub job's environment (its surfaces off), on matrix leg `matrix`; the log.
fn sarif_of_leg(repo: &Repo, matrix: &str) -> Value {
    let output = repo
        .command(&["check", "--ci", "none", "--shard", "1/1"])
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_WORKFLOW", "Quality gate")
        .env("GITHUB_JOB", "lint")
        .env("REFINE_LOOP_MATRIX", matrix)
        .env_remove("GITLAB_CI")
        .env_remove("JENKINS_URL")
        .env_remove("GITHUB_OUTPUT")
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let text = std::fs::read_to_string(repo.join(".refine-loop/report.sarif")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn a_real_gate_links_each_rule_to_its_page_and_names_its_job_and_leg() {
    let repo = package();
    let log = sarif_of_leg(&repo, "{\n  \"os\": \"ubuntu-latest\",\n  \"node\": 20\n}");
    let run = &log["runs"][0];
    let rules: Vec<&Value> = run["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .collect();
    let rule = |id: &str| {
        *rules
            .iter()
            .find(|rule| rule["id"] == id)
            .unwrap_or_else(|| panic!("no rule {id} in {rules:#?}"))
    };
    assert_eq!(
        rule("eqeqeq")["helpUri"],
        "https://eslint.org/docs/latest/rules/eqeqeq"
    );
    assert_eq!(
        rule("no-var")["helpUri"],
        "https://eslint.org/docs/latest/rules/no-var"
    );
    assert!(rule("F401").get("helpUri").is_none(), "{:#?}", rule("F401"));
    let eqeqeq = rule("eqeqeq");
    assert_eq!(
        eqeqeq["shortDescription"]["text"],
        "eqeqeq, reported by eslint"
    );
    let full = eqeqeq["fullDescription"]["text"].as_str().unwrap();
    assert!(
        full.starts_with(
            "Code eqeqeq reported by the check eslint (parser eslint: ESLint default (stylish) \
             output, -f unix and -f visualstudio), in the category lint. The first finding said: \
             Expected '===' and instead saw '=='"
        ),
        "{full}"
    );
    let markdown = eqeqeq["help"]["markdown"].as_str().unwrap();
    assert!(
        markdown
            .ends_with("[Documentation of eqeqeq](<https://eslint.org/docs/latest/rules/eqeqeq>)"),
        "{markdown}"
    );
    assert!(
        rule("F401")["help"]["text"]
            .as_str()
            .unwrap()
            .contains("How refine-loop treats it"),
    );
    assert_eq!(
        run["automationDetails"]["id"],
        "refine-loop/Quality-gate:lint/node:20/os:ubuntu-latest/shard:1-of-1/"
    );

    // Another leg of the same job: another category, the same rules.
    let other = sarif_of_leg(&repo, "{\"os\": \"windows-latest\", \"node\": 20}");
    assert_eq!(
        other["runs"][0]["automationDetails"]["id"],
        "refine-loop/Quality-gate:lint/node:20/os:windows-latest/shard:1-of-1/"
    );
    assert_eq!(other["runs"][0]["tool"], log["runs"][0]["tool"]);

    // A matrix over the shards (`--shard ${{ matrix.shard }}/N`): the shard appears once.
    let sharded = sarif_of_leg(&repo, "{\"shard\": 1}");
    assert_eq!(
        sharded["runs"][0]["automationDetails"]["id"],
        "refine-loop/Quality-gate:lint/shard:1-of-1/"
    );
}

#[test]
fn outside_ci_the_id_says_local() {
    let repo = Repo::new();
    repo.write(".gitignore", "/.refine-loop\n");
    repo.write(
        "refine-loop.toml",
        "[[gate.check]]\nname = \"lint\"\nrun = \"echo 'src/a.rs:1:1: error[E0425]: cannot find value'; exit 1\"\nparser = \"clippy\"\n",
    );
    repo.commit("a gate");
    let output = repo
        .command(&["check", "--ci", "none"])
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITLAB_CI")
        .env_remove("JENKINS_URL")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let log: Value = serde_json::from_str(
        &std::fs::read_to_string(repo.join(".refine-loop/report.sarif")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        log["runs"][0]["automationDetails"]["id"],
        "refine-loop/local/"
    );
    assert_eq!(
        log["runs"][0]["tool"]["driver"]["rules"][0]["helpUri"],
        "https://doc.rust-lang.org/error_codes/E0425.html"
    );
}
