//! The `[loop]` settings that guard the user's things from delegates: the kernel's confinement
//! (`confine`, `writable`) and the ignored files kept and put back (`protect_ignored_*`).

use std::path::Path;

use super::error::ConfigError;
use super::error::invalid;
use super::settings::defaults;

/// `[loop] confine` (`auto` when left out) and `writable` (the defaults when left out; no blank
/// folder).
pub(super) fn resolve_confine(
    config_file: &Path,
    confine: Option<String>,
    writable: Option<Vec<String>>,
) -> Result<(crate::confine::ConfineMode, Option<Vec<String>>), ConfigError> {
    let confine = match confine {
        Some(text) => crate::confine::ConfineMode::parse(&text)
            .map_err(|reason| invalid(config_file, "loop.confine", reason))?,
        None => crate::confine::ConfineMode::Auto,
    };
    if let Some(bad) = writable
        .iter()
        .flatten()
        .find(|w| w.trim().is_empty() || w.contains('\0'))
    {
        return Err(invalid(
            config_file,
            "loop.writable",
            format!("\"{bad}\" is not a folder"),
        ));
    }
    Ok((confine, writable))
}

/// `protect_ignored_max` and `protect_ignored_skip`, defaults applied; a skipped name must be one
/// folder's name.
pub(super) fn resolve_protect_ignored(
    config_file: &Path,
    max: Option<super::units::ByteSize>,
    skip: Option<Vec<String>>,
) -> Result<(u64, Vec<String>), ConfigError> {
    let protect_ignored_skip = skip.unwrap_or_else(|| {
        defaults::PROTECT_IGNORED_SKIP
            .iter()
            .map(ToString::to_string)
            .collect()
    });
    if let Some(bad) = protect_ignored_skip
        .iter()
        .find(|name| name.is_empty() || name.contains('/') || *name == "." || *name == "..")
    {
        return Err(invalid(
            config_file,
            "loop.protect_ignored_skip",
            format!("\"{bad}\" is not a folder name"),
        ));
    }
    Ok((
        max.map_or(defaults::PROTECT_IGNORED_MAX, |size| size.0),
        protect_ignored_skip,
    ))
}
