//! The record of a run that a person can apply or throw away: one commit per accepted iteration on
//! a private ref, exported as a `git am` series, a cumulative patch and a manifest; nothing pushed.

mod ledger;

pub use ledger::Ledger;

#[derive(Debug, thiserror::Error)]
pub enum DeliverError {
    #[error("commit message: the section {section:?} is missing")]
    LedgerSectionMissing { section: &'static str },
    #[error("commit message: the section {section:?} appears twice")]
    LedgerSectionRepeated { section: &'static str },
}
