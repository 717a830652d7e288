//! The final and campaign reports' section on the baseline: load, scope, installs, confirming
//! runs and what was found flaky; then what the loop stopped or put back after a gate run.

use std::fmt::Write as _;

use crate::model::{BaselineNotes, ConfinementNote, ConfinementState};

/// How the kernel held the command delegates, in a line.
fn confinement(note: &ConfinementNote) -> String {
    let abi = note
        .abi
        .map_or(String::new(), |abi| format!("Landlock ABI {abi}"));
    let tree = if note.whole_tree {
        "the work tree (its top included)"
    } else {
        "the work tree (no entry at its top created, removed or renamed: no mount namespace \
         could be made here)"
    };
    let tools = if note.tools.is_empty() {
        String::new()
    } else {
        format!(
            ", nor the gate's tools ({})",
            note.tools
                .iter()
                .map(|tool| crate::markdown::code_span(tool))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let caches = if note.private.is_empty() {
        "the caches"
    } else {
        "the caches (each its own copy, gone when it ended)"
    };
    let gate = if note.whole_tree {
        "the gate's runs after the baseline had the same walls"
    } else {
        "the gate was not confined"
    };
    let held = format!(
        "command delegates could write only in {tree}, their temp folder and {caches}; never \
         `.git`, the state dir or the loop's store{tools}; {gate} (an http delegate is no \
         process: the loop writes its diff)"
    );
    match note.state {
        ConfinementState::Enforced => format!("enforced ({abi}): {held}"),
        ConfinementState::Partial => format!(
            "partial ({abi}; the kernel cannot hold delegates to {}): {held}",
            note.missing.join(", ")
        ),
        ConfinementState::Unavailable => {
            "unavailable (this kernel has no Landlock): only the watch held the delegates".into()
        }
        ConfinementState::Off => {
            "off (`confine = \"off\"`): only the watch held the delegates".into()
        }
    }
}

/// At most [`EARLIER_SHOWN`] of `paths`, as code, and how many more.
fn earlier_work(paths: &[String]) -> String {
    let mut shown: Vec<String> = (paths.iter().take(EARLIER_SHOWN))
        .map(|path| crate::markdown::code_span(path))
        .collect();
    if paths.len() > EARLIER_SHOWN {
        shown.push(format!("and {} more", paths.len() - EARLIER_SHOWN));
    }
    shown.join(", ")
}

/// The files of an earlier run named in the report.
const EARLIER_SHOWN: usize = 5;

/// The final report's section on the baseline.
pub fn report_section(notes: &BaselineNotes) -> String {
    let mut text = String::from("\n## The baseline\n\n");
    let load = notes
        .load_average
        .map_or("unknown".to_string(), |[one, five, fifteen]| {
            format!("{one:.2} / {five:.2} / {fifteen:.2} (1 / 5 / 15 min)")
        });
    let _ = writeln!(text, "- load average: {load} on {} CPUs", notes.cpus);
    let _ = writeln!(
        text,
        "- scope: {}",
        if notes.scope.is_empty() {
            "the whole target".to_string()
        } else {
            notes.scope.join(", ")
        }
    );
    for installed in &notes.installed {
        let _ = writeln!(
            text,
            "- installed `{}` for check `{}`: `{}` ({})",
            installed.tool,
            installed.check,
            installed.command,
            installed
                .exit_code
                .map_or("did not exit".to_string(), |code| format!(
                    "exit code {code}"
                ))
        );
    }
    if let Some(note) = &notes.confinement {
        let _ = writeln!(text, "- confinement: {}", confinement(note));
        if !note.earlier_work.is_empty() {
            let _ = writeln!(
                text,
                "- the baseline's gate run was confined too: the work tree held {} file(s) an \
                 earlier run's delegates wrote and nobody committed ({})",
                note.earlier_work.len(),
                earlier_work(&note.earlier_work)
            );
        }
    }
    let _ = writeln!(
        text,
        "- failing checks run again: {} time(s) each",
        notes.confirm_runs
    );
    for check in &notes.flaky_checks {
        let _ = writeln!(
            text,
            "- flaky: check `{check}` failed and then passed at the baseline; the failures it showed there are pre-existing and never counted against a delegate (a new one is)"
        );
    }
    for flaky in &notes.flaky_tests {
        let _ = writeln!(
            text,
            "- flaky: `{}` ({}) failed in its suite and passed alone; not counted",
            flaky.test, flaky.check
        );
    }
    if !notes.after_gate.is_empty() {
        text.push_str(
            "\n## After the gate runs\n\nStopped or put back before anything was judged:\n\n",
        );
        for note in &notes.after_gate {
            let _ = writeln!(text, "- {note}");
        }
    }
    text
}
