//! What a delegate did that it must not, as the watch and the scan found it, and how a report
//! says it.

use std::path::PathBuf;

use super::RepoPath;
use crate::files::SpecialKind;

/// Something a delegate did that it must not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Incident {
    /// It changed a path that held the user's own work before the run; that change is undone.
    TouchedProtected { path: RepoPath },
    /// It carried the user's own work to another path (a move or a copy); undone.
    CopiedProtected { from: RepoPath, to: RepoPath },
    /// It wrote, made or deleted a file in `.git` (shown relative to the tree when inside it);
    /// put back.
    GitDirWritten { path: PathBuf, created: bool },
    /// It made a symlink that points out of the tree or into `.git`.
    SymlinkOut { path: RepoPath, target: String },
    /// A file outside the tree, reached through a symlink in it, changed while it ran.
    WroteOutside { link: RepoPath, target: PathBuf },
    /// It changed or deleted one of the loop's own files in the state dir.
    StateDirWritten { path: PathBuf },
    /// It added a file to the state dir that is not one of its own.
    StateDirAdded { path: PathBuf },
    /// It wrote a secret (a secret variable's value or a credential shape) into a file: the
    /// change is rolled back, never recorded.
    SecretWritten { path: RepoPath, what: Vec<String> },
    /// It changed a path whose name holds a secret (`path` is shown redacted): the whole change
    /// is rolled back, never recorded.
    SecretInPath { path: String, what: Vec<String> },
    /// It made a FIFO, a socket or a device in the tree: never opened, removed.
    SpecialFile { path: RepoPath, kind: SpecialKind },
    /// It changed a path outside the run's scope; that change is undone.
    OutOfScope { path: RepoPath },
    /// A fixer whose tool cannot be given paths (`cargo clippy --fix`) changed a path outside
    /// the scope, as its tool does: that change is left out, and not held against it.
    LeftOutOfScope { path: RepoPath },
    /// It removed or changed the loop's kept copies (under `.git/refine-loop`).
    StoreDamaged { path: PathBuf },
    /// While the gate ran on its change, the user's own work changed (code it planted that the
    /// gate runs, or a process it left): put back as it was at the baseline.
    GateChangedProtected { path: RepoPath },
    /// While the gate ran on its change, a file that steers git (a hook, the config, the index,
    /// `info/`) was written, made or deleted: put back.
    GateWroteGitDir { path: PathBuf, created: bool },
    /// While the gate ran on its change, a check tried to write in the seal (a git dir, the
    /// state dir, the loop's store), which only code the change planted would: the kernel
    /// refused (`what`, as the check's output named it).
    GateRefused { check: String, what: String },
    /// While the gate ran on its change, a file of the tree it judges was written (put back by
    /// the end or not): the gate may have judged code the tree does not hold.
    GateWroteTree { path: RepoPath },
    /// It left a process running outside its group when it ended (`setsid`, a double fork):
    /// killed before anything it did was looked at.
    LeftProcess { pid: i32, command: String },
    /// It left more processes than are named one by one: killed too.
    LeftMoreProcesses { count: usize },
    /// It left a file in the tree that is a hard link to a file elsewhere (`links` names in
    /// all): what it wrote through it reached that file too.
    HardLinked { path: RepoPath, links: u64 },
    /// It left a file larger than any change the loop reads and keeps ([`super::MAX_CHANGED_FILE`];
    /// a sparse file of terabytes costs nothing to make and hours to read): removed unread.
    TooLarge { path: RepoPath, size: u64 },
    /// It deleted or changed a file git ignores that was there before the run (`.env`); put
    /// back.
    IgnoredRestored { path: RepoPath },
    /// It made files or folders git ignores (a `node_modules` of its own, a doctored
    /// `__pycache__`): cleared before the gate ran.
    MadeIgnored { paths: Vec<RepoPath> },
    /// While the gate ran on its change, a folder of installed tools git ignores was made (a
    /// `node_modules` whose `.bin` a later check would run first) that no earlier run made:
    /// removed.
    GateMadeTools { paths: Vec<RepoPath> },
    /// It changed the mode of a folder of the tree (git keeps none): put back.
    FolderMode { path: RepoPath, was: u32, now: u32 },
    /// It gave a folder of the tree or a file that was there before to another owner (git
    /// keeps none): put back. Owners are `(uid, gid)`.
    Owner {
        path: RepoPath,
        was: (u32, u32),
        now: (u32, u32),
    },
}

impl Incident {
    /// Acting against the repository or the loop: its whole change is undone and the delegate
    /// is not run again.
    pub fn is_hostile(&self) -> bool {
        !matches!(
            self,
            Self::TouchedProtected { .. }
                | Self::CopiedProtected { .. }
                | Self::StateDirAdded { .. }
                | Self::SecretWritten { .. }
                | Self::SecretInPath { .. }
                | Self::OutOfScope { .. }
                | Self::LeftOutOfScope { .. }
                | Self::LeftProcess { .. }
                | Self::LeftMoreProcesses { .. }
                | Self::IgnoredRestored { .. }
                | Self::FolderMode { .. }
                | Self::Owner { .. }
                | Self::MadeIgnored { .. }
        )
    }

    /// A secret brought into the tree: the whole change is rolled back and never recorded (in
    /// the private ref or a patch), though the delegate may run again.
    pub fn is_veto(&self) -> bool {
        matches!(self, Self::SecretWritten { .. } | Self::SecretInPath { .. })
    }

    /// One line for reports.
    pub fn describe(&self) -> String {
        // Every name is a code span: a file a delegate named can neither break the line nor
        // forge a section of the report it is listed in.
        let span = |name: &dyn std::fmt::Display| crate::markdown::code_span(&name.to_string());
        match self {
            Self::OutOfScope { path } => format!(
                "changed {}, outside the scope: a scope violation, undone",
                span(path)
            ),
            Self::LeftOutOfScope { path } => format!(
                "changed {}, outside the scope: its tool cannot be given paths, so that change \
                 was left out",
                span(path)
            ),
            Self::TouchedProtected { path } => format!(
                "changed {}, which held the user's own work before the run: put back as it was",
                span(path)
            ),
            Self::CopiedProtected { from, to } => format!(
                "carried the user's own work in {} to {}: removed there",
                span(from),
                span(to)
            ),
            Self::GitDirWritten { path, created } => format!(
                "{} ({}): {}",
                // Shown relative to the tree when it is in it; else a git folder elsewhere or a
                // file git reads its config or ignore rules from (`~/.cache/git-ignore`).
                if path.is_absolute() {
                    "wrote into a git folder or a file git reads its config or rules from"
                } else {
                    "wrote into the git folder"
                },
                span(&path.display()),
                if *created { "removed" } else { "put back" }
            ),
            Self::SymlinkOut { path, target } => format!(
                "made {} a symlink out of the repository (to {})",
                span(path),
                span(target)
            ),
            Self::WroteOutside { link, target } => format!(
                "wrote outside the repository through the symlink {} (to {}); that file is not the loop's to put back",
                span(link),
                span(&target.display())
            ),
            Self::StateDirWritten { path } => format!(
                "changed the loop's own file {} in the state dir",
                span(&path.display())
            ),
            Self::StateDirAdded { path } => {
                format!("added {} to the state dir", span(&path.display()))
            }
            Self::StoreDamaged { path } => format!(
                "removed or changed the loop's kept copies ({}): the user's work comes back from the second copy",
                span(&path.display())
            ),
            Self::GateChangedProtected { path } => format!(
                "while the gate ran on its change, {} (the user's own work) changed: put back as it was",
                span(path)
            ),
            Self::GateWroteGitDir { path, created } => format!(
                "while the gate ran on its change, {} in the git folder was written: {}",
                span(&path.display()),
                if *created { "removed" } else { "put back" }
            ),
            Self::GateRefused { check, what } => format!(
                "while the gate ran on its change, check {} tried to write where no check may, and the kernel refused: {what}",
                span(check)
            ),
            Self::GateWroteTree { path } => format!(
                "while the gate ran on its change, {} was written (what it held at the end \
                 aside): the gate judges the code as it is, which no check may change",
                span(path)
            ),
            Self::LeftProcess { pid, command } => format!(
                "left a process running after it ended (pid {pid}, {}): killed before its change was judged",
                span(command)
            ),
            Self::LeftMoreProcesses { count } => format!(
                "left {count} more process(es) running after it ended: killed before its change was judged"
            ),
            Self::SecretInPath { path, what } => format!(
                "named a path with a secret in it ({}, {}): the whole change is rolled back \
                 and kept out of the record and the patches",
                span(path),
                what.join(", ")
            ),
            Self::SpecialFile { path, kind } => format!(
                "made {} {}, which the loop never opens: removed",
                span(path),
                kind.describe()
            ),
            Self::TooLarge { path, size } => format!(
                "left {} of {size} bytes, more than any change the loop reads: removed unread",
                span(path)
            ),
            Self::HardLinked { path, links } => format!(
                "made {} a hard link to a file elsewhere ({links} names): rolled back; what it wrote through the link outside the tree is not the loop's to put back",
                span(path)
            ),
            Self::FolderMode { path, was, now } if path.as_bytes().is_empty() => format!(
                "changed the mode of the tree's top folder ({now:04o}; it was {was:04o}): put back"
            ),
            Self::FolderMode { path, was, now } => format!(
                "changed the mode of the folder {} ({now:04o}; it was {was:04o}): put back",
                span(path)
            ),
            Self::Owner { path, was, now } if path.as_bytes().is_empty() => format!(
                "changed the owner of the tree's top folder ({}:{}; it was {}:{}): put back",
                now.0, now.1, was.0, was.1
            ),
            Self::Owner { path, was, now } => format!(
                "changed the owner of {} ({}:{}; it was {}:{}): put back",
                span(path),
                now.0,
                now.1,
                was.0,
                was.1
            ),
            Self::MadeIgnored { paths } => format!(
                "made what git ignores, which no patch carries and the gate would read ({}): cleared before the gate ran (removed, or set aside if it was not made in its turn)",
                named_list(paths)
            ),
            Self::GateMadeTools { paths } => format!(
                "while the gate ran on its change, it made {}, a folder of installed tools that \
                 no earlier gate run made and a later check would run from: removed",
                named_list(paths)
            ),
            Self::IgnoredRestored { path } => format!(
                "deleted or changed {}, a file git ignores that was there before the run: put back as it was",
                span(path)
            ),
            Self::SecretWritten { path, what } => format!(
                "wrote a secret into {} ({}): rolled back",
                span(path),
                what.join(", ")
            ),
        }
    }
}

/// Up to ten paths in code spans, and how many more.
fn named_list(paths: &[RepoPath]) -> String {
    const NAMED: usize = 10;
    let mut named: Vec<String> = paths
        .iter()
        .take(NAMED)
        .map(|path| crate::markdown::code_span(&path.to_string()))
        .collect();
    if paths.len() > NAMED {
        named.push(format!("and {} more", paths.len() - NAMED));
    }
    named.join(", ")
}
