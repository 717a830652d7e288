use super::*;
use crate::sweep::{BaselineFailure, Thread};

fn finding(kind: &str, critical: bool) -> Finding {
    Finding {
        kind: kind.into(),
        title: format!("{kind} title"),
        evidence: format!("{kind} evidence"),
        paths: Vec::new(),
        confidence: 3,
        critical,
    }
}

#[test]
fn at_most_two_ordinary_candidates_and_every_critical_one() {
    type Case<'a> = (&'a [(&'a str, bool)], &'a [&'a str]);
    let cases: [Case; 4] = [
        (&[], &[]),
        (&[("baseline-failure", false)], &["sweep/baseline-failure"]),
        (
            &[
                ("baseline-failure", false),
                ("two-update-bots", false),
                ("reviewer-never-ran", false),
            ],
            &["sweep/baseline-failure", "sweep/two-update-bots"],
        ),
        (
            &[
                ("reviewer-never-ran", false),
                ("merged-unresolved", true),
                ("reviewer-never-ran", false),
                ("reviewer-never-ran", false),
                ("merged-unresolved", true),
            ],
            &[
                "sweep/reviewer-never-ran",
                "sweep/reviewer-never-ran",
                "sweep/merged-unresolved",
                "sweep/merged-unresolved",
            ],
        ),
    ];
    for (findings, expected) in cases {
        let sweep = Sweep {
            findings: findings.iter().map(|(k, c)| finding(k, *c)).collect(),
            ..Sweep::default()
        };
        let proposals = candidates(&sweep);
        let families: Vec<&str> = proposals.iter().map(|p| p.family.as_str()).collect();
        assert_eq!(families, expected);
        for proposal in proposals {
            assert_eq!(proposal.source, "sweep");
            assert_eq!(proposal.behaviour_changing, proposal.critical);
            assert!(!proposal.evidence.is_empty());
        }
    }
}

fn pr(number: u64, author: &str, files: &[&str]) -> PullRequest {
    PullRequest {
        number,
        author: Some(author.into()),
        dependency_files: files.iter().map(|f| f.to_string()).collect(),
        ..PullRequest::default()
    }
}

fn kinds(sweep: &Sweep, target: &Path) -> Vec<String> {
    in_tree(sweep, target).into_iter().map(|f| f.kind).collect()
}

#[test]
fn findings_from_the_tree_and_what_was_read() {
    let tree = tempfile::tempdir().unwrap();
    let write = |path: &str| {
        let path = tree.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "x").unwrap();
    };
    write(".coderabbit.yaml");
    let mut sweep = Sweep::default();
    assert!(
        kinds(&sweep, tree.path()).is_empty(),
        "no PR read, no judgement"
    );

    sweep.open_prs = vec![pr(1, "ann", &[])];
    assert_eq!(kinds(&sweep, tree.path()), ["reviewer-never-ran"]);
    sweep.open_prs[0].reviewers = vec!["coderabbitai".into()];
    assert!(kinds(&sweep, tree.path()).is_empty(), "it reviewed #1");

    // Two bots on one manifest, seen in their pull requests.
    sweep.open_prs.push(pr(2, "dependabot", &["package.json"]));
    sweep.merged_prs = vec![pr(3, "renovate", &["package.json", "yarn.lock"])];
    let found = in_tree(&sweep, tree.path());
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].kind, "two-update-bots");
    assert_eq!(
        found[0].evidence,
        "#2 by dependabot and #3 by renovate both change package.json"
    );

    sweep.baseline_failures = vec![BaselineFailure {
        check: "lint".into(),
        conclusion: "FAILURE".into(),
        prs: vec![1, 2],
    }];
    sweep.merged_prs[0].critical = true;
    sweep.merged_prs[0].threads = vec![Thread {
        author: Some("bob".into()),
        path: Some("src/a.rs".into()),
        body: "this panics".into(),
        outdated: false,
        critical: Some("correctness: \"panic\"".into()),
    }];
    assert_eq!(
        kinds(&sweep, tree.path()),
        ["baseline-failure", "two-update-bots", "merged-unresolved"]
    );
}
