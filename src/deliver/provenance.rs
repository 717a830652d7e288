//! Where a commit came from, as `git interpret-trailers` trailers at the very end of its message:
//! which run, which gate, which delegate and model, at what cost, and what it fixed.
//!
//! The trailer block is the message's last paragraph and is built only from values the loop
//! sanitised here: one line each, no control characters, no `: ` a reader could take for a second
//! separator. Text a delegate wrote stays in the ledger above the block's blank line, so it can
//! never add or change a trailer.

/// The longest trailer value, in characters; longer values end in `…`.
const VALUE_LENGTH: usize = 160;

/// What every trailer says when nothing is known.
const UNKNOWN: &str = "unknown";

/// The trailer keys, in the order they are written.
pub const RUN: &str = "Refine-Loop-Run";
pub const GATE: &str = "Refine-Loop-Gate";
pub const DELEGATE: &str = "Refine-Loop-Delegate";
pub const COST: &str = "Refine-Loop-Cost";
pub const FINDINGS: &str = "Refine-Loop-Findings";

/// The provenance of one iteration's commit; empty values are written as `unknown`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Provenance {
    /// The CI run's URL, else the run's id.
    pub run: String,
    /// A fingerprint of the gate's configuration.
    pub gate: String,
    /// One value per delegate whose work the commit holds: its name and, where known, its model.
    pub delegates: Vec<String>,
    /// Tokens and cost, or `unknown`.
    pub cost: String,
    /// `fixed N, new N, pre-existing N`.
    pub findings: String,
}

impl Provenance {
    /// The trailer block: one `Key: value` line per trailer, each ending in a newline.
    pub fn trailers(&self) -> String {
        let delegates: Vec<&str> = if self.delegates.is_empty() {
            vec![""]
        } else {
            self.delegates.iter().map(String::as_str).collect()
        };
        let lines = [(RUN, self.run.as_str()), (GATE, self.gate.as_str())]
            .into_iter()
            .chain(delegates.into_iter().map(|delegate| (DELEGATE, delegate)))
            .chain([
                (COST, self.cost.as_str()),
                (FINDINGS, self.findings.as_str()),
            ]);
        lines
            .map(|(key, value)| format!("{key}: {}\n", sanitize(value)))
            .collect()
    }
}

/// `value` as one safe trailer value: control characters and Unicode line or paragraph
/// separators become spaces, a colon before white space loses it (so no reader sees a second
/// `Key: value` in it), runs of white space become one space, at most [`VALUE_LENGTH`]
/// characters; `unknown` when nothing is left.
pub fn sanitize(value: &str) -> String {
    let spaced: String = value
        .chars()
        .map(|c| {
            if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') {
                ' '
            } else {
                c
            }
        })
        .collect();
    let words: Vec<&str> = spaced.split_whitespace().collect();
    let mut text = String::new();
    for (index, word) in words.iter().enumerate() {
        // `a: b` becomes `a b`; a colon inside a word (`https://`, `std::io`) stays.
        let word = if index + 1 < words.len() {
            word.trim_end_matches(':')
        } else {
            word
        };
        if word.is_empty() {
            continue;
        }
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(word);
    }
    let text = text.trim_end_matches(':').trim();
    if text.is_empty() {
        return UNKNOWN.to_string();
    }
    if text.chars().count() > VALUE_LENGTH {
        let cut: String = text.chars().take(VALUE_LENGTH - 1).collect();
        return format!("{}\u{2026}", cut.trim_end());
    }
    text.to_string()
}

/// The CI run's URL where the environment gives one (GitHub Actions, GitLab CI, Jenkins), else
/// `run_id`.
pub fn run_locator(lookup: impl Fn(&str) -> Option<String>, run_id: &str) -> String {
    let get = |name: &str| lookup(name).filter(|value| !value.trim().is_empty());
    let github = || {
        let server = get("GITHUB_SERVER_URL")?;
        let repository = get("GITHUB_REPOSITORY")?;
        let run = get("GITHUB_RUN_ID")?;
        Some(format!(
            "{}/{repository}/actions/runs/{run}",
            server.trim_end_matches('/')
        ))
    };
    github()
        .or_else(|| get("CI_JOB_URL"))
        .or_else(|| get("CI_PIPELINE_URL"))
        .or_else(|| get("BUILD_URL"))
        .unwrap_or_else(|| run_id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_one_safe_line() {
        let cases = [
            ("claude -p", "claude -p"),
            ("  two\n  lines\r\nthree ", "two lines three"),
            (
                "name\nRefine-Loop-Cost: 0 USD",
                "name Refine-Loop-Cost 0 USD",
            ),
            ("model: gpt-4o", "model gpt-4o"),
            ("a : b :: c", "a b c"),
            ("trailing:", "trailing"),
            ("https://ci.example/runs/7", "https://ci.example/runs/7"),
            ("std::io and a:b", "std::io and a:b"),
            (
                "tab\there\u{2028}sep\u{85}next\u{0}nul",
                "tab here sep next nul",
            ),
            ("", "unknown"),
            (" \n\t", "unknown"),
            (":", "unknown"),
        ];
        for (value, expected) in cases {
            assert_eq!(sanitize(value), expected, "{value:?}");
        }
        let long = "x".repeat(VALUE_LENGTH + 10);
        let cut = sanitize(&long);
        assert_eq!(cut.chars().count(), VALUE_LENGTH);
        assert!(cut.ends_with('\u{2026}'));
    }

    #[test]
    fn a_forged_value_stays_inside_its_own_trailer() {
        let provenance = Provenance {
            run: "run-1".into(),
            gate: "sha256:abc".into(),
            delegates: vec![
                "evil\n\nRefine-Loop-Run: https://forged.example".into(),
                "second".into(),
            ],
            cost: String::new(),
            findings: "fixed 1, new 0, pre-existing 2".into(),
        };
        assert_eq!(
            provenance.trailers(),
            "Refine-Loop-Run: run-1\n\
             Refine-Loop-Gate: sha256:abc\n\
             Refine-Loop-Delegate: evil Refine-Loop-Run https://forged.example\n\
             Refine-Loop-Delegate: second\n\
             Refine-Loop-Cost: unknown\n\
             Refine-Loop-Findings: fixed 1, new 0, pre-existing 2\n"
        );
        assert_eq!(
            Provenance::default().trailers().lines().count(),
            5,
            "every trailer is there, unknown"
        );
    }

    /// A lookup over `pairs`, as the environment would answer.
    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name: &str| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_string())
        }
    }

    #[test]
    fn the_run_is_the_ci_url_where_there_is_one() {
        let github = [
            ("GITHUB_SERVER_URL", "https://github.com/"),
            ("GITHUB_REPOSITORY", "acme/shop"),
            ("GITHUB_RUN_ID", "42"),
        ];
        assert_eq!(
            run_locator(env(&github), "id"),
            "https://github.com/acme/shop/actions/runs/42"
        );
        let gitlab = [
            ("CI_PIPELINE_URL", "https://gitlab.example/p/-/pipelines/9"),
            ("CI_JOB_URL", "https://gitlab.example/p/-/jobs/7"),
        ];
        assert_eq!(
            run_locator(env(&gitlab), "id"),
            "https://gitlab.example/p/-/jobs/7"
        );
        let pipeline = [("CI_PIPELINE_URL", "https://gitlab.example/p/-/pipelines/9")];
        assert_eq!(
            run_locator(env(&pipeline), "id"),
            "https://gitlab.example/p/-/pipelines/9"
        );
        let jenkins = [("BUILD_URL", "https://jenkins.example/job/x/3/")];
        assert_eq!(
            run_locator(env(&jenkins), "id"),
            "https://jenkins.example/job/x/3/"
        );
        let partial = [("GITHUB_RUN_ID", "42"), ("CI_JOB_URL", " ")];
        assert_eq!(run_locator(env(&partial), "20261207-1"), "20261207-1");
    }
}
