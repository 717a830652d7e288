//! `--new-since auto`: the base a pull request (GitHub), merge request (GitLab) or change
//! (Jenkins) is compared with, read from the CI system's variables. Nothing is fetched: what
//! the variables name must already be in the clone.

use crate::new_since::{AskedBase, BaseSource, BaseSpec};

/// The refs a target branch is looked up as: its remote-tracking ref first.
pub fn branch_refs(branch: &str) -> Vec<String> {
    vec![format!("refs/remotes/origin/{branch}"), branch.to_string()]
}

/// The base the environment names, looked up through `lookup` (a variable's name to its value),
/// or `None` outside a pull request: GitHub's `pull_request` and `pull_request_target` events
/// (`GITHUB_BASE_REF`), GitLab's merge request pipelines (`CI_MERGE_REQUEST_DIFF_BASE_SHA`, else
/// `CI_MERGE_REQUEST_TARGET_BRANCH_NAME`), Jenkins' change requests (`CHANGE_TARGET`).
pub fn detect(lookup: &dyn Fn(&str) -> Option<String>) -> Option<AskedBase> {
    let value = |name: &str| {
        lookup(name)
            .map(|value| value.trim().to_string())
            .filter(|value| !value.is_empty())
    };
    let merge_base = |source, branch: String| AskedBase {
        source,
        spec: BaseSpec::MergeBaseWith(branch_refs(&branch)),
        branch: Some(branch),
    };
    let event = value("GITHUB_EVENT_NAME");
    if matches!(
        event.as_deref(),
        Some("pull_request" | "pull_request_target")
    ) && let Some(base) = value("GITHUB_BASE_REF")
    {
        return Some(merge_base(BaseSource::GitHub, base));
    }
    // A merged results pipeline runs on the merge of the merge request into the target's tip
    // (`CI_MERGE_REQUEST_TARGET_BRANCH_SHA`, a parent of HEAD): its change is what HEAD holds
    // beyond that tip, not beyond the older diff base, past which the target moved on.
    if let Some(sha) = value("CI_MERGE_REQUEST_TARGET_BRANCH_SHA") {
        return Some(AskedBase {
            source: BaseSource::GitLab,
            spec: BaseSpec::MergeBaseWith(vec![sha]),
            branch: value("CI_MERGE_REQUEST_TARGET_BRANCH_NAME"),
        });
    }
    if let Some(sha) = value("CI_MERGE_REQUEST_DIFF_BASE_SHA") {
        return Some(AskedBase {
            source: BaseSource::GitLab,
            spec: BaseSpec::Commit(sha),
            branch: value("CI_MERGE_REQUEST_TARGET_BRANCH_NAME"),
        });
    }
    if let Some(target) = value("CI_MERGE_REQUEST_TARGET_BRANCH_NAME") {
        return Some(merge_base(BaseSource::GitLab, target));
    }
    if let Some(target) = value("CHANGE_TARGET") {
        return Some(merge_base(BaseSource::Jenkins, target));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_ci_system_names_its_base() {
        let merge = |source, branch: &str| {
            Some(AskedBase {
                source,
                spec: BaseSpec::MergeBaseWith(branch_refs(branch)),
                branch: Some(branch.to_string()),
            })
        };
        // (variables, expected)
        type Variables<'a> = Vec<(&'a str, &'a str)>;
        let cases: Vec<(Variables<'_>, Option<AskedBase>)> = vec![
            (vec![], None),
            (
                vec![
                    ("CI_MERGE_REQUEST_DIFF_BASE_SHA", "1111111"),
                    ("CI_MERGE_REQUEST_TARGET_BRANCH_SHA", "2222222"),
                    ("CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "main"),
                ],
                Some(AskedBase {
                    source: BaseSource::GitLab,
                    spec: BaseSpec::MergeBaseWith(vec!["2222222".to_string()]),
                    branch: Some("main".to_string()),
                }),
            ),
            (
                vec![
                    ("GITHUB_EVENT_NAME", "pull_request"),
                    ("GITHUB_BASE_REF", "main"),
                ],
                merge(BaseSource::GitHub, "main"),
            ),
            (
                vec![
                    ("GITHUB_EVENT_NAME", "pull_request_target"),
                    ("GITHUB_BASE_REF", "release/1"),
                ],
                merge(BaseSource::GitHub, "release/1"),
            ),
            // A push has a base ref of nothing; a pull request without one is no pull request.
            (
                vec![("GITHUB_EVENT_NAME", "push"), ("GITHUB_BASE_REF", "main")],
                None,
            ),
            (
                vec![
                    ("GITHUB_EVENT_NAME", "pull_request"),
                    ("GITHUB_BASE_REF", " "),
                ],
                None,
            ),
            (
                vec![
                    ("CI_MERGE_REQUEST_DIFF_BASE_SHA", "abc123"),
                    ("CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "main"),
                ],
                Some(AskedBase {
                    source: BaseSource::GitLab,
                    spec: BaseSpec::Commit("abc123".into()),
                    branch: Some("main".into()),
                }),
            ),
            (
                vec![("CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "develop")],
                merge(BaseSource::GitLab, "develop"),
            ),
            (
                vec![("CHANGE_TARGET", "main"), ("JENKINS_URL", "http://ci")],
                merge(BaseSource::Jenkins, "main"),
            ),
        ];
        for (variables, expected) in cases {
            let lookup = |name: &str| {
                variables
                    .iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| value.to_string())
            };
            assert_eq!(detect(&lookup), expected, "{variables:?}");
        }
    }
}
