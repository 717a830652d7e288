//! `[integrity]`: the catalogue of moves that make the gate see less (the built-in entries and
//! the project's own folders), the `[[integrity.allow]]` entries, and the gate's own files (the
//! scripts its checks name, the files their runners read, this config).

use std::path::{Path, PathBuf};

use super::error::ConfigError;
use super::settings::{CheckSettings, IntegritySettings};
use super::wire::IntegrityFile;
use crate::integrity::{Allow, AllowSpec, Catalogue, CheckCommand, GateFiles};

impl IntegritySettings {
    /// Resolves `file` for the gate of `checks` in `target`; folders are relative to the
    /// config's own folder, as are the parser folders (`parser_dirs`), which are the gate's
    /// files too.
    pub(super) fn resolve(
        config_file: &Path,
        target: &Path,
        file: IntegrityFile,
        checks: &[CheckSettings],
        parser_dirs: &[PathBuf],
    ) -> Result<Self, ConfigError> {
        let config_dir = config_file
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let dirs: Vec<PathBuf> = (file.dirs.iter().flatten())
            .map(|dir| config_dir.join(dir))
            .collect();
        let catalogue = Catalogue::load(&dirs)?;
        let mut allow = Vec::new();
        for (index, entry) in file.allow.iter().enumerate() {
            let spec = AllowSpec {
                class: entry.class.as_deref(),
                rule: entry.rule.as_deref(),
                pattern: entry.pattern.as_deref(),
                paths: entry.paths.as_deref(),
                reason: entry.reason.as_deref(),
            };
            allow.push(Allow::new(index + 1, &spec).map_err(|(key, reason)| {
                super::error::invalid(
                    config_file,
                    format!("integrity.allow[{index}].{key}"),
                    reason,
                )
            })?);
        }
        let commands: Vec<CheckCommand<'_>> = checks
            .iter()
            .map(|check| CheckCommand {
                run: &check.run,
                cwd: &check.cwd,
            })
            .collect();
        let folders: Vec<PathBuf> = dirs.iter().chain(parser_dirs).cloned().collect();
        let gate_files = GateFiles::resolve(&catalogue, target, config_file, &commands, &folders);
        Ok(Self {
            catalogue,
            allow,
            gate_files,
        })
    }
}
