//! The campaign request: consecutive leading configuration tokens, then the intent as free text.
//!
//! Only the tokens at the very start are configuration: `--continue` (or `--continue=auto`),
//! `--target=PATH`, `--state-dir=PATH`, `theta=N` and `focus=LENS,...`, in any order, each at
//! most once. The first
//! token that is none of these starts the intent, and it and every token after it are intent text,
//! even when they look like configuration (`tidy --continue theta=3` is an intent). An unknown
//! `--flag`, a bare `--target` without `=`, or `Theta=3` is therefore "another token" too.
//!
//! Tokens are compared exactly: names are case-sensitive, nothing is trimmed. A configuration
//! token that is not valid UTF-8 is an error (paths included); intent tokens are converted lossily,
//! each invalid sequence becoming U+FFFD, and joined with single spaces as given (an empty token
//! stays an empty word).
//!
//! Absent values stay `None` here; defaults (the current repository, `theta=2.0`, all four lenses)
//! or the values inherited on `--continue` are applied by the caller, once.

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;

const CONTINUE: &str = "--continue";
const TARGET_PREFIX: &str = "--target=";
const STATE_DIR_PREFIX: &str = "--state-dir=";
const THETA_PREFIX: &str = "theta=";
const FOCUS_PREFIX: &str = "focus=";

/// What one invocation asked for. `None` means "not given": the caller applies the defaults, or
/// on `--continue` the values of the prior segment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Request {
    /// `--continue`: resume the prior segment.
    pub resume: bool,
    /// `--continue=auto`: continue a campaign when there is one, start one when there is none,
    /// rest when it is finished (a scheduled job); `resume` is set too.
    pub auto: bool,
    /// `--target=PATH`.
    pub target: Option<PathBuf>,
    /// `--state-dir=PATH`.
    pub state_dir: Option<PathBuf>,
    /// `theta=N`.
    pub theta: Option<Theta>,
    /// `focus=LENS,...`: the lenses in the order given, no duplicates, never empty.
    pub focus: Option<Vec<Lens>>,
    /// Everything from the first non-configuration token on, joined by single spaces; may be empty.
    pub intent: String,
}

/// The ROI threshold a candidate must reach: a plain decimal, `0 < theta <= 25`.
///
/// `Display` writes the shortest text that parses back to the same value (`2`, `2.5`, `0.0001`),
/// not the text as given: `theta=2.50` displays as `2.5`.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Theta(f64);

impl Theta {
    /// The default threshold, 2.0.
    pub const DEFAULT: Self = Self(2.0);
    /// The longest text accepted; longer inputs are rejected before they are read.
    pub const MAX_LENGTH: usize = 32;

    /// Parses ASCII digits, optionally followed by one `.` and at least one digit (`2`, `2.0`,
    /// `0.5`, `007`), with `0 < value <= 25` decided on the text itself, so that
    /// `25.0000000000000001` is rejected although it rounds to 25 as an `f64`. Rejects `.5` and
    /// `2.`, signs, exponents, `NaN`, infinities, hex, spaces and the empty text.
    ///
    /// The error is the reason only; the caller adds the token.
    pub fn parse(text: &str) -> Result<Self, String> {
        if text.len() > Self::MAX_LENGTH {
            return Err(format!(
                "theta must be at most {} characters long",
                Self::MAX_LENGTH
            ));
        }
        let invalid = || {
            "theta must be a plain decimal greater than 0 and at most 25 (no sign, no exponent)"
                .to_string()
        };
        let has_point = text.contains('.');
        let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
        let all_digits = |part: &str| part.bytes().all(|byte| byte.is_ascii_digit());
        if whole.is_empty()
            || (has_point && fraction.is_empty())
            || !all_digits(whole)
            || !all_digits(fraction)
        {
            return Err(invalid());
        }
        let whole = whole.trim_start_matches('0');
        let fraction_is_zero = fraction.bytes().all(|byte| byte == b'0');
        let is_zero = whole.is_empty() && fraction_is_zero;
        // Leading zeros are gone, so a longer whole part is a larger number.
        let above_max = match whole.len() {
            0 | 1 => false,
            // Same length, so the text orders like the number.
            2 => whole > "25" || (whole == "25" && !fraction_is_zero),
            _ => true,
        };
        if is_zero || above_max {
            return Err(invalid());
        }
        // The grammar above is a subset of what `f64` parses; the check only guards that claim.
        text.parse::<f64>().map(Self).map_err(|_| invalid())
    }

    /// The threshold as a number.
    #[cfg(test)]
    pub fn value(self) -> f64 {
        self.0
    }
}

impl Default for Theta {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl fmt::Display for Theta {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `f64`'s `Display` is the shortest round-tripping form and never uses an exponent.
        write!(formatter, "{}", self.0)
    }
}

/// A point of view the refinement prompts take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lens {
    Architecture,
    Usability,
    Production,
    Refactoring,
}

impl Lens {
    /// Every lens, in the documented order; the default focus.
    pub const ALL: [Self; 4] = [
        Self::Architecture,
        Self::Usability,
        Self::Production,
        Self::Refactoring,
    ];

    /// The name written in requests and files.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Architecture => "architecture",
            Self::Usability => "usability",
            Self::Production => "production",
            Self::Refactoring => "refactoring",
        }
    }

    /// The lens named exactly `name` (lowercase; `Architecture` is not a lens name).
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|lens| lens.as_str() == name)
    }
}

impl fmt::Display for Lens {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// The allowed lens names, for messages.
const LENS_NAMES: &str = "architecture, usability, production, refactoring";

/// Why a request was refused. Every message starts with the token at fault, as given (lossily,
/// when it is not UTF-8); the caller exits with code 2.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RequestError {
    #[error("{token}: a configuration token must be valid UTF-8")]
    NotUtf8 { token: String },

    #[error("{token}: {name} is given twice (first as {earlier})")]
    Repeated {
        token: String,
        name: &'static str,
        earlier: String,
    },

    #[error("{token}: the path is empty")]
    EmptyPath { token: String },

    #[error("{token}: {reason}")]
    InvalidTheta { token: String, reason: String },

    #[error("{token}: focus needs at least one lens: {LENS_NAMES}")]
    EmptyFocus { token: String },

    #[error("{token}: an empty lens between commas; allowed: {LENS_NAMES}")]
    EmptyLens { token: String },

    #[error("{token}: unknown lens `{lens}`; allowed: {LENS_NAMES}")]
    UnknownLens { token: String, lens: String },

    #[error("{token}: lens `{lens}` is listed twice")]
    RepeatedLens { token: String, lens: Lens },

    #[error("{token}: --continue takes no value but `auto` (--continue=auto)")]
    InvalidContinue { token: String },
}

/// Which configuration a leading token sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Setting {
    Continue,
    Target,
    StateDir,
    Theta,
    Focus,
}

impl Setting {
    /// The setting `token` names and its value, or `None` when the token starts the intent.
    fn recognise(token: &str) -> Option<(Self, &str)> {
        if token == CONTINUE {
            return Some((Self::Continue, ""));
        }
        if let Some(value) = token
            .strip_prefix(CONTINUE)
            .and_then(|v| v.strip_prefix('='))
        {
            return Some((Self::Continue, value));
        }
        [
            (Self::Target, TARGET_PREFIX),
            (Self::StateDir, STATE_DIR_PREFIX),
            (Self::Theta, THETA_PREFIX),
            (Self::Focus, FOCUS_PREFIX),
        ]
        .into_iter()
        .find_map(|(setting, prefix)| token.strip_prefix(prefix).map(|value| (setting, value)))
    }

    /// The name used in messages.
    fn name(self) -> &'static str {
        match self {
            Self::Continue => "--continue",
            Self::Target => "--target",
            Self::StateDir => "--state-dir",
            Self::Theta => "theta",
            Self::Focus => "focus",
        }
    }
}

/// Splits `tokens` into configuration and intent (see the module documentation).
pub fn parse_request(tokens: &[OsString]) -> Result<Request, RequestError> {
    let mut request = Request::default();
    let mut seen: Vec<(Setting, String)> = Vec::new();
    for (index, token) in tokens.iter().enumerate() {
        // Every configuration token starts with ASCII, which lossy conversion keeps, so a token
        // that is not UTF-8 is recognised by its lossy form and only then refused.
        let text = token.to_string_lossy();
        let Some((setting, value)) = Setting::recognise(&text) else {
            request.intent = join_lossily(&tokens[index..]);
            return Ok(request);
        };
        if token.to_str().is_none() {
            return Err(RequestError::NotUtf8 {
                token: text.into_owned(),
            });
        }
        if let Some((_, earlier)) = seen.iter().find(|(done, _)| *done == setting) {
            return Err(RequestError::Repeated {
                token: text.into_owned(),
                name: setting.name(),
                earlier: earlier.clone(),
            });
        }
        apply(&mut request, setting, &text, value)?;
        seen.push((setting, text.into_owned()));
    }
    Ok(request)
}

/// Records one configuration token, `token` whole and `value` after its `=`.
fn apply(
    request: &mut Request,
    setting: Setting,
    token: &str,
    value: &str,
) -> Result<(), RequestError> {
    match setting {
        Setting::Continue => {
            match value {
                "" if token == CONTINUE => {}
                "auto" => request.auto = true,
                _ => {
                    return Err(RequestError::InvalidContinue {
                        token: token.to_string(),
                    });
                }
            }
            request.resume = true;
        }
        Setting::Target => request.target = Some(parse_path(token, value)?),
        Setting::StateDir => request.state_dir = Some(parse_path(token, value)?),
        Setting::Theta => {
            let theta = Theta::parse(value).map_err(|reason| RequestError::InvalidTheta {
                token: token.to_string(),
                reason,
            })?;
            request.theta = Some(theta);
        }
        Setting::Focus => request.focus = Some(parse_focus(token, value)?),
    }
    Ok(())
}

fn parse_path(token: &str, value: &str) -> Result<PathBuf, RequestError> {
    if value.is_empty() {
        return Err(RequestError::EmptyPath {
            token: token.to_string(),
        });
    }
    Ok(PathBuf::from(value))
}

/// The lenses of `focus=LENS,...`: exact lowercase names, in the order given, each once.
fn parse_focus(token: &str, value: &str) -> Result<Vec<Lens>, RequestError> {
    if value.is_empty() {
        return Err(RequestError::EmptyFocus {
            token: token.to_string(),
        });
    }
    let mut lenses = Vec::new();
    for name in value.split(',') {
        if name.is_empty() {
            return Err(RequestError::EmptyLens {
                token: token.to_string(),
            });
        }
        let Some(lens) = Lens::parse(name) else {
            return Err(RequestError::UnknownLens {
                token: token.to_string(),
                lens: name.to_string(),
            });
        };
        if lenses.contains(&lens) {
            return Err(RequestError::RepeatedLens {
                token: token.to_string(),
                lens,
            });
        }
        lenses.push(lens);
    }
    Ok(lenses)
}

/// The intent: `tokens` converted lossily and joined by single spaces.
fn join_lossily(tokens: &[OsString]) -> String {
    tokens
        .iter()
        .map(|token| token.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
