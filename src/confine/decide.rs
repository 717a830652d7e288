//! What the `confine` setting and the kernel's Landlock ABI make of a run: off, unavailable (the
//! watch alone), enforced, partial (naming the rights the kernel lacks), or refused before any
//! delegate runs. A pure function, tested at every boundary.

use crate::model::{ConfinementNote, ConfinementState, SignalBoundary};

/// `[loop] confine`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ConfineMode {
    /// Confine where the kernel can; say so where it cannot.
    #[default]
    Auto,
    /// Never confine: the watch alone.
    Off,
    /// Confine fully, or end the run with ERROR before any delegate runs.
    Required,
}

impl ConfineMode {
    /// `auto`, `off` or `required`.
    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "auto" => Ok(Self::Auto),
            "off" => Ok(Self::Off),
            "required" => Ok(Self::Required),
            _ => Err(format!(
                "\"{text}\" is not a confinement; expected auto, off or required"
            )),
        }
    }
}

/// The write rights a delegate is held to, with the Landlock ABI that first has each: every
/// one the running kernel lacks makes the confinement partial.
pub const RIGHTS: &[(&str, u32)] = &[
    ("write_file", 1),
    ("remove_dir", 1),
    ("remove_file", 1),
    ("make_char", 1),
    ("make_dir", 1),
    ("make_reg", 1),
    ("make_sock", 1),
    ("make_fifo", 1),
    ("make_block", 1),
    ("make_sym", 1),
    ("refer", 2),
    ("truncate", 3),
    ("ioctl_dev", 5),
];

/// How the run's delegates are held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// `confine = "off"`.
    Off,
    /// The kernel has no Landlock: the watch alone.
    Unavailable,
    /// Confined with the kernel's ABI; `missing` names the rights it lacks (none: enforced).
    Confine {
        abi: u32,
        missing: Vec<&'static str>,
    },
}

impl Decision {
    /// What `run.json` and the reports say.
    pub fn note(&self) -> ConfinementNote {
        let (state, abi, missing) = match self {
            Self::Off => (ConfinementState::Off, None, Vec::new()),
            Self::Unavailable => (ConfinementState::Unavailable, None, Vec::new()),
            Self::Confine { abi, missing } => (
                if missing.is_empty() {
                    ConfinementState::Enforced
                } else {
                    ConfinementState::Partial
                },
                Some(*abi),
                missing.iter().map(|m| m.to_string()).collect(),
            ),
        };
        ConfinementNote {
            state,
            abi,
            missing,
            whole_tree: false,
            tools: Vec::new(),
            signals: SignalBoundary::None,
            private: Vec::new(),
            earlier_work: Vec::new(),
        }
    }
}

/// Decides from the setting and the kernel's Landlock ABI (`None`: no Landlock). An error says
/// why `required` cannot be met.
pub fn decide(mode: ConfineMode, abi: Option<u32>) -> Result<Decision, String> {
    if mode == ConfineMode::Off {
        return Ok(Decision::Off);
    }
    let Some(abi) = abi.filter(|abi| *abi >= 1) else {
        return match mode {
            ConfineMode::Required => Err(
                "confine = \"required\", but this kernel cannot confine delegates (no Landlock: \
                 Linux 5.13 or later with landlock among its LSMs is needed)"
                    .to_string(),
            ),
            _ => Ok(Decision::Unavailable),
        };
    };
    let missing: Vec<&'static str> = RIGHTS
        .iter()
        .filter(|(_, since)| *since > abi)
        .map(|(name, _)| *name)
        .collect();
    if mode == ConfineMode::Required && !missing.is_empty() {
        return Err(format!(
            "confine = \"required\", but this kernel's Landlock (ABI {abi}) cannot hold delegates \
             to {}",
            missing.join(", ")
        ));
    }
    Ok(Decision::Confine { abi, missing })
}

#[cfg(test)]
#[path = "decide_tests.rs"]
mod tests;
