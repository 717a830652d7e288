//! What a state dir holds, read and checked before a campaign opens: the three files present
//! together, the backlog readable, and the provenance this repository's.

use std::path::Path;

use super::{
    BACKLOG_FILE, Backlog, CampaignError, Provenance, STATE_FILES, SegmentConfig, files, render,
};
use crate::campaign::identity::Confirmed;

/// The stored provenance, backlog and segment configuration; `None` when the dir holds no
/// campaign. A partial set of files or an unreadable backlog is an error.
pub(super) fn read(
    dir: &Path,
) -> Result<Option<(Provenance, Backlog, SegmentConfig)>, CampaignError> {
    let mut present = Vec::new();
    let mut missing = Vec::new();
    for name in STATE_FILES {
        if files::exists(&dir.join(name))? {
            present.push(name);
        } else {
            missing.push(name);
        }
    }
    if present.is_empty() {
        return Ok(None);
    }
    if !missing.is_empty() {
        return Err(CampaignError::PartialSet {
            dir: dir.to_path_buf(),
            present: present.join(", "),
            missing: missing.join(", "),
        });
    }
    let path = dir.join(BACKLOG_FILE);
    let (provenance, backlog) = render::parse_backlog(&files::read(&path)?, &path)?;
    let config = backlog
        .config
        .clone()
        .ok_or_else(|| CampaignError::Corrupt {
            path,
            reason: "no segment configuration".to_owned(),
        })?;
    Ok(Some((provenance, backlog, config)))
}

/// Refuses a stored provenance of another repository, target or preset. With an identity on
/// both sides and the repository at hand, the identity decides (a fresh clone at another path
/// is the same campaign); else the stored paths must be this run's. The state dir may differ
/// (a campaign's dir may be restored to another place).
pub(super) fn check_provenance(
    stored: &Provenance,
    current: &Provenance,
    repo: Option<&git2::Repository>,
    path: &Path,
    dir: &Path,
) -> Result<Option<Confirmed>, CampaignError> {
    let mismatch = |field, stored: String, current: String| CampaignError::ProvenanceMismatch {
        path: path.to_path_buf(),
        dir: dir.to_path_buf(),
        field,
        stored,
        current,
    };
    if stored.preset != current.preset {
        return Err(mismatch(
            "preset",
            stored.preset.clone(),
            current.preset.clone(),
        ));
    }
    if let (Some(was), Some(now), Some(repo)) = (&stored.identity, &current.identity, repo) {
        return was
            .check(now, repo)
            .map(Some)
            .map_err(|m| mismatch(m.field, m.stored, m.current));
    }
    let fields = [
        (
            "repository root",
            &stored.repository_root,
            &current.repository_root,
        ),
        (
            "git common dir",
            &stored.git_common_dir,
            &current.git_common_dir,
        ),
        ("target", &stored.target, &current.target),
    ];
    for (field, stored, current) in fields {
        if stored != current {
            return Err(mismatch(
                field,
                stored.display().to_string(),
                current.display().to_string(),
            ));
        }
    }
    Ok(None)
}
