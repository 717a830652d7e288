//! `runs[0].automationDetails.id` of `report.sarif`: which job and matrix leg made the log.
//! GitHub code scanning takes everything before the id's last `/` as the analysis's category and
//! keeps the uploads of different categories apart (one upload per category replaces the last),
//! so the id names the job and the leg and ends in `/` (no run id: the category is the same on
//! every run of that job and leg, and GitHub does not use the run id):
//!
//! `refine-loop/<job>/<leg part>/…/` — `refine-loop/ci:lint/os:ubuntu-latest/python:3.12/`
//!
//! The job is the workflow and job on GitHub Actions (`GITHUB_WORKFLOW:GITHUB_JOB`), the job's
//! name on GitLab (`CI_JOB_NAME`, which holds its `parallel:matrix` values), else
//! `REFINE_LOOP_JOB`, else the CI system's name, or `local` outside CI. The leg is the matrix
//! (`REFINE_LOOP_MATRIX`, the JSON the Action exports as `toJSON(matrix)`: one `key:value` part
//! per entry, keys sorted) and the shard (`--shard K/N` or `REFINE_LOOP_SHARD`: `shard:K-of-N`).
//! The shard appears once: a matrix entry `shard` that names the same shard (`K`, `K/N`,
//! `K-of-N`, as a matrix over the shards gives it) is left to the `shard:K-of-N` part.

use sha2::{Digest, Sha256};

use super::CiSystem;
use crate::config::Shard;

/// The tool's part of every id.
const PREFIX: &str = "refine-loop";
/// The longest part (a job name, a matrix value) kept as it is; a longer one is cut and given a
/// hash of the whole.
const MAX_PART_CHARS: usize = 64;

/// The id for this process's environment and `shard`.
pub fn automation_id(shard: Option<Shard>) -> String {
    automation_id_from(|name| std::env::var(name).ok(), shard)
}

/// The id for the environment `lookup` reads (a variable's name to its value; unset or empty is
/// `None`) and `shard`.
pub fn automation_id_from(lookup: impl Fn(&str) -> Option<String>, shard: Option<Shard>) -> String {
    let lookup = |name: &str| lookup(name).filter(|value| !value.trim().is_empty());
    let system = CiSystem::detect(lookup);
    let own_job = lookup("REFINE_LOOP_JOB");
    let job = match system {
        CiSystem::GitHub => {
            // Job ids are [A-Za-z0-9_-] already; a workflow's name is free text.
            let workflow = lookup("GITHUB_WORKFLOW").map(|name| readable(&name));
            let job = lookup("GITHUB_JOB").or(own_job).map(|name| readable(&name));
            match (workflow, job) {
                (Some(workflow), Some(job)) => format!("{workflow}:{job}"),
                (Some(one), None) | (None, Some(one)) => one,
                (None, None) => system.as_str().to_string(),
            }
        }
        // GitLab puts a parallel:matrix job's values in its name ("test: [ubuntu, 3.12]"):
        // those must stay apart.
        CiSystem::GitLab => lookup("CI_JOB_NAME")
            .or(own_job)
            .map_or_else(|| system.as_str().to_string(), |name| distinct(&name)),
        CiSystem::Jenkins => own_job.map_or_else(|| system.as_str().to_string(), |n| distinct(&n)),
        CiSystem::None => own_job.map_or_else(|| "local".to_string(), |name| distinct(&name)),
    };
    let mut parts = vec![PREFIX.to_string(), job];
    if let Some(matrix) = lookup("REFINE_LOOP_MATRIX") {
        parts.extend(matrix_parts(&matrix, shard));
    }
    if let Some(shard) = shard {
        parts.push(format!("shard:{}-of-{}", shard.index, shard.count));
    }
    let mut id = parts.join("/");
    id.push('/');
    id
}

/// The matrix's entries as `key:value` parts, keys sorted; none for `null` or `{}`. A value
/// that is not a string, number or boolean is written as compact JSON. What is not a JSON object
/// is one part of its own. An entry `shard` that names `shard` is left out: the shard has a
/// part of its own.
fn matrix_parts(matrix: &str, shard: Option<Shard>) -> Vec<String> {
    match serde_json::from_str::<serde_json::Value>(matrix) {
        Ok(serde_json::Value::Null) => Vec::new(),
        Ok(serde_json::Value::Object(entries)) => {
            let mut entries: Vec<_> = entries.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            entries
                .into_iter()
                .map(|(key, value)| {
                    let value = match value {
                        serde_json::Value::String(text) => text,
                        other => other.to_string(),
                    };
                    (key, value)
                })
                .filter(|(key, value)| !names_the_shard(key, value, shard))
                .map(|(key, value)| format!("{}:{}", distinct(&key), distinct(&value)))
                .collect()
        }
        _ => vec![distinct(matrix.trim())],
    }
}

/// The matrix entry `key: value` is the shard's own (`shard: K`, `K/N` or `K-of-N`), so its part
/// would say again what `shard:K-of-N` says.
fn names_the_shard(key: &str, value: &str, shard: Option<Shard>) -> bool {
    let Some(Shard { index, count }) = shard else {
        return false;
    };
    key.trim().eq_ignore_ascii_case("shard")
        && [
            index.to_string(),
            format!("{index}/{count}"),
            format!("{index}-of-{count}"),
        ]
        .iter()
        .any(|same| same == value.trim())
}

/// `text` in the characters safe in a category (ASCII letters, digits, `.`, `_`, `-`): any run
/// of others is one `-`, none at either end; cut to [`MAX_PART_CHARS`] (with a hash of the
/// whole); a hash alone when nothing is left, `_` for nothing at all.
fn readable(text: &str) -> String {
    part(text, false)
}

/// Like [`readable`], with a hash of `text` added whenever a character had to be replaced, so
/// that two values that differ only there (`a b`, `a/b`) never make the same part.
fn distinct(text: &str) -> String {
    part(text, true)
}

/// [`readable`], or [`distinct`] when `hash_changes`.
fn part(text: &str, hash_changes: bool) -> String {
    let (safe, changed) = sanitize(text);
    if text.is_empty() {
        "_".to_string()
    } else if (hash_changes && changed) || safe.is_empty() || safe.chars().count() > MAX_PART_CHARS
    {
        with_hash(&safe, text)
    } else {
        safe
    }
}

/// `text` with every run of characters outside `[A-Za-z0-9._-]` made one `-`, trimmed of `-`;
/// and whether that changed it.
fn sanitize(text: &str) -> (String, bool) {
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    for character in text.chars() {
        if character.is_ascii_alphanumeric() || "._-".contains(character) {
            out.push(character);
        } else {
            changed = true;
            if !out.ends_with('-') {
                out.push('-');
            }
        }
    }
    let trimmed = out.trim_matches('-');
    let changed = changed || trimmed.len() != out.len();
    (trimmed.to_string(), changed)
}

/// `safe` cut to leave room, then `-` and the first 8 hex digits of the sha256 of `original`.
fn with_hash(safe: &str, original: &str) -> String {
    let hash = crate::encoding::hex_digest(Sha256::new_with_prefix(original.as_bytes()));
    let kept: String = safe.chars().take(MAX_PART_CHARS - 9).collect();
    let kept = kept.trim_end_matches('-');
    if kept.is_empty() {
        hash[..8].to_string()
    } else {
        format!("{kept}-{}", &hash[..8])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(environment: &[(&str, &str)], shard: Option<(u32, u32)>) -> String {
        let lookup = |name: &str| {
            environment
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_string())
        };
        automation_id_from(lookup, shard.map(|(index, count)| Shard { index, count }))
    }

    fn hash8(text: &str) -> String {
        crate::encoding::hex_digest(Sha256::new_with_prefix(text.as_bytes()))[..8].to_string()
    }

    #[test]
    fn the_id_names_the_job_and_the_leg() {
        let github = [
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_WORKFLOW", "CI"),
            ("GITHUB_JOB", "lint"),
        ];
        let with = |extra: &[(&'static str, &'static str)]| {
            let mut all: Vec<(&str, &str)> = github.to_vec();
            all.extend_from_slice(extra);
            all
        };
        // (environment, shard, id)
        type Case = (
            Vec<(&'static str, &'static str)>,
            Option<(u32, u32)>,
            String,
        );
        let table: Vec<Case> = vec![
            // No CI: local, whatever stray CI-ish variables say.
            (vec![], None, "refine-loop/local/".into()),
            (
                vec![("GITHUB_JOB", "lint")],
                None,
                "refine-loop/local/".into(),
            ),
            (
                vec![("GITHUB_ACTIONS", "false")],
                None,
                "refine-loop/local/".into(),
            ),
            (
                vec![],
                Some((2, 3)),
                "refine-loop/local/shard:2-of-3/".into(),
            ),
            (
                vec![("REFINE_LOOP_JOB", "nightly")],
                None,
                "refine-loop/nightly/".into(),
            ),
            // GitHub: workflow and job.
            (github.to_vec(), None, "refine-loop/CI:lint/".into()),
            (
                with(&[("REFINE_LOOP_MATRIX", "null")]),
                None,
                "refine-loop/CI:lint/".into(),
            ),
            (
                with(&[("REFINE_LOOP_MATRIX", "{}")]),
                None,
                "refine-loop/CI:lint/".into(),
            ),
            (
                with(&[("REFINE_LOOP_MATRIX", "")]),
                None,
                "refine-loop/CI:lint/".into(),
            ),
            // The matrix: keys sorted, whatever order toJSON gave them in; numbers and
            // booleans as written.
            (
                with(&[(
                    "REFINE_LOOP_MATRIX",
                    "{\n  \"python\": \"3.12\",\n  \"os\": \"ubuntu-latest\",\n  \"experimental\": false\n}",
                )]),
                None,
                "refine-loop/CI:lint/experimental:false/os:ubuntu-latest/python:3.12/".into(),
            ),
            (
                with(&[("REFINE_LOOP_MATRIX", "{\"node\": 20}")]),
                Some((1, 2)),
                "refine-loop/CI:lint/node:20/shard:1-of-2/".into(),
            ),
            (
                github.to_vec(),
                Some((2, 2)),
                "refine-loop/CI:lint/shard:2-of-2/".into(),
            ),
            // A matrix over the shards (`--shard ${{ matrix.shard }}/3`): the shard once.
            (
                with(&[("REFINE_LOOP_MATRIX", "{\"shard\": 1}")]),
                Some((1, 3)),
                "refine-loop/CI:lint/shard:1-of-3/".into(),
            ),
            (
                with(&[(
                    "REFINE_LOOP_MATRIX",
                    "{\"os\": \"linux\", \"shard\": \"2/3\"}",
                )]),
                Some((2, 3)),
                "refine-loop/CI:lint/os:linux/shard:2-of-3/".into(),
            ),
            (
                with(&[("REFINE_LOOP_MATRIX", "{\"Shard\": \"3-of-3\"}")]),
                Some((3, 3)),
                "refine-loop/CI:lint/shard:3-of-3/".into(),
            ),
            // Not the shard's own: kept, so that legs never share an id.
            (
                with(&[("REFINE_LOOP_MATRIX", "{\"shard\": 2}")]),
                Some((1, 3)),
                "refine-loop/CI:lint/shard:2/shard:1-of-3/".into(),
            ),
            (
                with(&[("REFINE_LOOP_MATRIX", "{\"shard\": 1}")]),
                None,
                "refine-loop/CI:lint/shard:1/".into(),
            ),
            // The Action's REFINE_LOOP_JOB stands in for a missing GITHUB_JOB.
            (
                vec![
                    ("GITHUB_ACTIONS", "true"),
                    ("GITHUB_WORKFLOW", "CI"),
                    ("REFINE_LOOP_JOB", "harden"),
                ],
                None,
                "refine-loop/CI:harden/".into(),
            ),
            (
                vec![("GITHUB_ACTIONS", "true")],
                None,
                "refine-loop/github/".into(),
            ),
            // A workflow's name is free text: made safe, kept readable.
            (
                vec![
                    ("GITHUB_ACTIONS", "true"),
                    ("GITHUB_WORKFLOW", "Build & test / nightly"),
                    ("GITHUB_JOB", "unit_tests"),
                ],
                None,
                "refine-loop/Build-test-nightly:unit_tests/".into(),
            ),
            // A value with characters outside the safe set keeps a hash of what it was.
            (
                with(&[("REFINE_LOOP_MATRIX", "{\"os\": \"Windows Server/2022\"}")]),
                None,
                format!(
                    "refine-loop/CI:lint/os:Windows-Server-2022-{}/",
                    hash8("Windows Server/2022")
                ),
            ),
            (
                with(&[("REFINE_LOOP_MATRIX", "{\"cfg\": {\"a\": 1}}")]),
                None,
                format!("refine-loop/CI:lint/cfg:a-1-{}/", hash8("{\"a\":1}")),
            ),
            (
                with(&[("REFINE_LOOP_MATRIX", "{\"x\": \"\"}")]),
                None,
                "refine-loop/CI:lint/x:_/".into(),
            ),
            (
                with(&[("REFINE_LOOP_MATRIX", "{\"x\": \"///\"}")]),
                None,
                format!("refine-loop/CI:lint/x:{}/", hash8("///")),
            ),
            // Not JSON: one part.
            (
                with(&[("REFINE_LOOP_MATRIX", "linux-arm")]),
                None,
                "refine-loop/CI:lint/linux-arm/".into(),
            ),
            // GitLab: the job's name, which carries its matrix values.
            (
                vec![("GITLAB_CI", "true"), ("CI_JOB_NAME", "lint")],
                None,
                "refine-loop/lint/".into(),
            ),
            (
                vec![
                    ("GITLAB_CI", "true"),
                    ("CI_JOB_NAME", "test: [ubuntu, 3.12]"),
                ],
                None,
                format!(
                    "refine-loop/test-ubuntu-3.12-{}/",
                    hash8("test: [ubuntu, 3.12]")
                ),
            ),
            (
                vec![("GITLAB_CI", "true"), ("CI_JOB_NAME", "test 1/3")],
                Some((1, 3)),
                format!("refine-loop/test-1-3-{}/shard:1-of-3/", hash8("test 1/3")),
            ),
            (
                vec![("GITLAB_CI", "true")],
                None,
                "refine-loop/gitlab/".into(),
            ),
            (
                vec![
                    ("JENKINS_URL", "https://ci.example"),
                    ("JOB_NAME", "repo/main"),
                ],
                None,
                "refine-loop/jenkins/".into(),
            ),
        ];
        for (environment, shard, expected) in table {
            assert_eq!(
                id(&environment, shard),
                expected,
                "{environment:?} {shard:?}"
            );
        }
    }

    #[test]
    fn legs_stay_apart_and_runs_agree() {
        let leg = |matrix: &'static str| {
            id(
                &[
                    ("GITHUB_ACTIONS", "true"),
                    ("GITHUB_WORKFLOW", "CI"),
                    ("GITHUB_JOB", "lint"),
                    ("REFINE_LOOP_MATRIX", matrix),
                ],
                None,
            )
        };
        let legs = [
            leg("{\"os\": \"a b\"}"),
            leg("{\"os\": \"a/b\"}"),
            leg("{\"os\": \"a-b\"}"),
            leg("{\"os\": \"a\", \"v\": \"b\"}"),
            leg("{\"os\": \"a:b\"}"),
        ];
        let distinct: std::collections::BTreeSet<&String> = legs.iter().collect();
        assert_eq!(distinct.len(), legs.len(), "{legs:#?}");
        assert_eq!(leg("{\"os\": \"a b\"}"), legs[0], "stable");
        // Every part is in the safe set and the id ends in `/`: the category is all before it.
        for id in &legs {
            assert!(id.ends_with('/'));
            assert!(
                id.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-:/".contains(c)),
                "{id}"
            );
        }
    }

    #[test]
    fn long_parts_are_cut_with_a_hash() {
        let long = "x".repeat(200);
        let part = readable(&long);
        assert_eq!(part.chars().count(), MAX_PART_CHARS);
        assert!(part.ends_with(&hash8(&long)), "{part}");
        assert_ne!(readable(&"x".repeat(201)), part);
        assert_eq!(
            readable(&"x".repeat(MAX_PART_CHARS)),
            "x".repeat(MAX_PART_CHARS)
        );
        assert_eq!(readable(""), "_");
        assert_eq!(readable("---"), hash8("---"));
        assert_eq!(readable("§"), hash8("§"));
        assert_ne!(distinct("-a"), distinct("a"));
    }
}
