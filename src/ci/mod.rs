//! CI-native surfaces: which CI system the loop runs under, and what it writes for that system.
//!
//! Everything this module returns or writes is redacted with the [`Redactor`] it is given; in a
//! real run that is [`process_redactor`], the one `crate::secrets::redacted` uses.

mod automation;
mod detect;
pub mod github;
pub mod pr_base;

use std::path::PathBuf;

pub use automation::automation_id;
pub use detect::{CiChoice, CiSystem};

use crate::secrets::Redactor;

/// What can fail while detecting the CI system or writing its files.
#[derive(Debug, thiserror::Error)]
pub enum CiError {
    #[error("unknown CI system `{value}`: expected github, gitlab, jenkins, none or auto")]
    UnknownSystem { value: String },
    #[error(
        "invalid output name `{name}`: it must start with a letter or `_` and hold only letters, \
         digits, `-` and `_`"
    )]
    InvalidOutputName { name: String },
    #[error(
        "no delimiter for the multi-line output `{name}`: every one drawn was in its value or \
         held a secret"
    )]
    NoDelimiter { name: String },
    #[error("cannot append to {}: {source}", path.display())]
    Append {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("secrets cannot be redacted, so nothing is written for the CI system")]
    RedactorUnavailable,
}

/// The redactor for this process's environment, or an error when it could not be built: no
/// CI surface is written unredacted.
pub fn process_redactor() -> Result<&'static Redactor, CiError> {
    crate::secrets::process_redactor().ok_or(CiError::RedactorUnavailable)
}
