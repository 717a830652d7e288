//! What a cycle works: the failing categories in priority order, and each one's findings as a
//! delegate is given them, within the run's scope.

use super::Kept;
use super::policy::{Staff, Work};
use crate::gate::INFRA_CATEGORY;
use crate::model::{Diagnostic, GateSummary};
use crate::scope::Scope;

/// The failing categories, in priority order, then the rest by name; `infra` is not for
/// delegates.
pub fn failing_categories(summary: &GateSummary, priority: &[String]) -> Vec<String> {
    let mut failing: Vec<&String> = summary
        .categories
        .iter()
        .filter(|(name, c)| !c.passed && name.as_str() != INFRA_CATEGORY)
        .map(|(name, _)| name)
        .collect();
    failing.sort_by_key(|name| {
        (
            priority
                .iter()
                .position(|p| p == *name)
                .unwrap_or(usize::MAX),
            (*name).clone(),
        )
    });
    failing.into_iter().cloned().collect()
}

/// The category's findings as a delegate is given them: the diagnostics in scope, and the
/// summary's lines (those of the diagnostics in scope, when the scope is not everything). `None`
/// when every finding of the category that names a file is outside the scope: it is reported,
/// not worked.
fn findings_of(
    summary: &GateSummary,
    diagnostics: &[Diagnostic],
    category: &str,
    reach: &Reach<'_>,
) -> Option<(Vec<Diagnostic>, Vec<String>)> {
    let all: Vec<&Diagnostic> = diagnostics
        .iter()
        .filter(|d| d.category.as_deref() == Some(category))
        .collect();
    let in_scope: Vec<Diagnostic> = all
        .iter()
        .filter(|d| in_scope(reach.scope, d) && !reach.protects(d))
        .map(|d| (*d).clone())
        .collect();
    let narrowed = in_scope.len() < all.len();
    if in_scope.is_empty() && !all.is_empty() && narrowed {
        return None;
    }
    let details = if !narrowed || in_scope.is_empty() {
        summary
            .categories
            .get(category)
            .map(|c| c.details.clone())
            .unwrap_or_default()
    } else {
        in_scope.iter().map(Diagnostic::detail).collect()
    };
    Some((in_scope, details))
}

/// What a fix delegate may reach: the scope, less the user's own uncommitted files (protected:
/// any change to them is undone, so a finding in one is not given to a fixer, and a category
/// whose findings are all in them is not worked again and again).
#[derive(Debug, Clone, Copy)]
pub struct Reach<'a> {
    pub scope: &'a Scope,
    /// Files relative to the target.
    pub protected: &'a std::collections::HashSet<String>,
}

impl Reach<'_> {
    /// The finding is in one of the user's protected files.
    pub fn protects(&self, diagnostic: &Diagnostic) -> bool {
        diagnostic
            .file
            .as_deref()
            .is_some_and(|file| self.protected.contains(file.trim_start_matches("./")))
    }
}

/// A finding is in scope when the scope is everything, or it names no file, or a file inside
/// the target the scope holds.
pub fn in_scope(scope: &Scope, diagnostic: &Diagnostic) -> bool {
    scope.is_everything()
        || (!diagnostic.outside_target
            && diagnostic
                .file
                .as_deref()
                .is_none_or(|file| scope.holds(file)))
}

/// A fix delegate's work for each failing category of `kept`, in `priority` order, with the
/// category's findings in scope; a category whose findings are all outside the scope is left
/// out.
pub(super) fn category_work(kept: &Kept, priority: &[String], reach: &Reach<'_>) -> Vec<Work> {
    failing_categories(&kept.summary, priority)
        .into_iter()
        .filter_map(|category| {
            let (diagnostics, details) =
                findings_of(&kept.summary, &kept.diagnostics, &category, reach)?;
            Some(Work {
                file_name: category.clone(),
                category,
                staff: Staff::ForCategory,
                diagnostics,
                details,
                files: Vec::new(),
                template: None,
            })
        })
        .collect()
}

/// `item` with its category's findings as `kept` has them now; `None` when they are all outside
/// the scope by now.
pub(super) fn refreshed(kept: &Kept, item: &Work, reach: &Reach<'_>) -> Option<Work> {
    let (diagnostics, details) =
        findings_of(&kept.summary, &kept.diagnostics, &item.category, reach)?;
    Some(Work {
        diagnostics,
        details,
        ..item.clone()
    })
}
