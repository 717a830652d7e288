//! Which CI system the loop runs under: read from the environment, or chosen with `--ci`.

use std::fmt;
use std::str::FromStr;

use super::CiError;

/// A CI system whose surfaces the loop knows how to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CiSystem {
    GitHub,
    GitLab,
    Jenkins,
    /// Not in CI, or in one the loop has no surfaces for.
    None,
}

impl CiSystem {
    /// The system the environment names, looked up through `lookup` (a variable's name to its
    /// value), so that tests never touch the process environment. `GITHUB_ACTIONS=true` is GitHub,
    /// `GITLAB_CI=true` is GitLab, a non-empty `JENKINS_URL` is Jenkins; when several are set (a
    /// runner of one system started inside another), the first in that order wins.
    pub fn detect(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let is_true = |name: &str| {
            lookup(name).is_some_and(|value| value.trim().eq_ignore_ascii_case("true"))
        };
        if is_true("GITHUB_ACTIONS") {
            Self::GitHub
        } else if is_true("GITLAB_CI") {
            Self::GitLab
        } else if lookup("JENKINS_URL").is_some_and(|value| !value.trim().is_empty()) {
            Self::Jenkins
        } else {
            Self::None
        }
    }

    /// The name `--ci` takes for this system.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::GitHub => "github",
            Self::GitLab => "gitlab",
            Self::Jenkins => "jenkins",
            Self::None => "none",
        }
    }
}

impl fmt::Display for CiSystem {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// The value of `--ci`: detect from the environment, or use the system named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CiChoice {
    #[default]
    Auto,
    System(CiSystem),
}

impl CiChoice {
    /// The system to write surfaces for: the one chosen, or the one the environment names.
    pub fn resolve(self, lookup: impl Fn(&str) -> Option<String>) -> CiSystem {
        match self {
            Self::Auto => CiSystem::detect(lookup),
            Self::System(system) => system,
        }
    }
}

impl FromStr for CiChoice {
    type Err = CiError;

    /// Parses `github`, `gitlab`, `jenkins`, `none` or `auto`, in any case, surrounding blanks
    /// ignored.
    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Self::Auto),
            "github" => Ok(Self::System(CiSystem::GitHub)),
            "gitlab" => Ok(Self::System(CiSystem::GitLab)),
            "jenkins" => Ok(Self::System(CiSystem::Jenkins)),
            "none" => Ok(Self::System(CiSystem::None)),
            _ => Err(CiError::UnknownSystem {
                value: value.to_string(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup<'a>(environment: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            environment
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        }
    }

    #[test]
    fn detection_from_the_environment() {
        let table: [(&[(&str, &str)], CiSystem); 12] = [
            (&[], CiSystem::None),
            (&[("GITHUB_ACTIONS", "true")], CiSystem::GitHub),
            (&[("GITHUB_ACTIONS", "TRUE")], CiSystem::GitHub),
            (&[("GITHUB_ACTIONS", "false")], CiSystem::None),
            (&[("GITHUB_ACTIONS", "")], CiSystem::None),
            (&[("GITLAB_CI", "true")], CiSystem::GitLab),
            (&[("GITLAB_CI", "1")], CiSystem::None),
            (
                &[("JENKINS_URL", "https://ci.example.com/")],
                CiSystem::Jenkins,
            ),
            (&[("JENKINS_URL", "")], CiSystem::None),
            (&[("JENKINS_URL", "  ")], CiSystem::None),
            (
                &[("JENKINS_URL", "https://ci/"), ("GITLAB_CI", "true")],
                CiSystem::GitLab,
            ),
            (
                &[("GITLAB_CI", "true"), ("GITHUB_ACTIONS", "true")],
                CiSystem::GitHub,
            ),
        ];
        for (environment, expected) in table {
            assert_eq!(
                CiSystem::detect(lookup(environment)),
                expected,
                "{environment:?}"
            );
        }
    }

    #[test]
    fn choice_parses_and_overrides_detection() {
        let github = [("GITHUB_ACTIONS", "true")];
        let table = [
            ("auto", CiSystem::GitHub),
            (" Auto ", CiSystem::GitHub),
            ("github", CiSystem::GitHub),
            ("gitlab", CiSystem::GitLab),
            ("JENKINS", CiSystem::Jenkins),
            ("none", CiSystem::None),
        ];
        for (value, expected) in table {
            let choice: CiChoice = value.parse().unwrap();
            assert_eq!(choice.resolve(lookup(&github)), expected, "{value}");
        }
        for value in ["", "travis", "git hub"] {
            let error = value.parse::<CiChoice>().unwrap_err();
            assert!(
                matches!(&error, CiError::UnknownSystem { value: v } if v == value),
                "{value}"
            );
        }
        assert_eq!(
            "jenkinss".parse::<CiChoice>().unwrap_err().to_string(),
            "unknown CI system `jenkinss`: expected github, gitlab, jenkins, none or auto"
        );
    }

    #[test]
    fn names_round_trip() {
        for system in [
            CiSystem::GitHub,
            CiSystem::GitLab,
            CiSystem::Jenkins,
            CiSystem::None,
        ] {
            assert_eq!(
                system.to_string().parse::<CiChoice>().unwrap(),
                CiChoice::System(system)
            );
        }
    }
}
