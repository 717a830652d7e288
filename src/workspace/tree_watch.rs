//! The kernel's account of what changed in the work tree (inotify), so that a cycle looks at the
//! paths that changed instead of scanning the whole tree.
//!
//! Every folder of the tree is watched (but `.git`, the state dir, repositories inside the tree
//! and the folders git ignored at the start). Each event names a path; the path goes into a log
//! with a sequence number, and a look asks for the paths logged after its mark. A folder created
//! or moved in is watched at once and everything in it is logged (what was made before its watch
//! was added is found by reading it).
//!
//! The account is exact or it says it is not: a queue overflow, the watch limit, an ignore or
//! attributes file that changed (what git lists changes with it), or a folder it could not
//! follow make every look from before that point a [`Since::Lost`], and the caller scans the
//! whole tree instead.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};

/// A point in the log: what was logged after it is what changed since.
pub type Mark = u64;

/// At most this many distinct changed paths are logged; past it the account is given up (a
/// scan is cheaper than the log).
const MAX_LOGGED: usize = 200_000;

/// What changed since a mark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Since {
    /// Every path (relative, `/`-separated) an event named; folders stand for all beneath them.
    Exact(BTreeSet<Vec<u8>>),
    /// The account is not complete: why. The caller scans the whole tree.
    Lost(String),
}

/// Decides which folders are not watched (relative path, `/`-separated; never empty).
pub type Skip<'a> = &'a dyn Fn(&[u8]) -> bool;

/// The watch on the work tree.
pub struct TreeWatch {
    inotify: Inotify,
    root: PathBuf,
    /// Every watched folder by its watch, and the other way round.
    folders: HashMap<WatchDescriptor, Vec<u8>>,
    watched: BTreeMap<Vec<u8>, WatchDescriptor>,
    /// The last mark each changed path was logged at.
    log: HashMap<Vec<u8>, Mark>,
    mark: Mark,
    /// The last mark at which events were lost, and why; the watch limit makes it permanent.
    lost: Option<(Mark, String)>,
    limit_reached: Option<String>,
    /// A folder beyond the git library's reach was met since the last look asked.
    beyond_reach: bool,
    /// Events were lost: folders may lack their watch.
    resync: bool,
    /// The folders left unwatched as last seen (some may be gone).
    skipped: BTreeSet<Vec<u8>>,
}

impl std::fmt::Debug for TreeWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TreeWatch")
            .field("root", &self.root)
            .field("folders", &self.folders.len())
            .field("logged", &self.log.len())
            .field("mark", &self.mark)
            .field("lost", &self.lost)
            .finish_non_exhaustive()
    }
}

/// The events that say a folder's entries changed; the watched folder itself moving or going
/// away is reported too.
fn mask() -> AddWatchFlags {
    AddWatchFlags::IN_MODIFY
        | AddWatchFlags::IN_ATTRIB
        | AddWatchFlags::IN_CLOSE_WRITE
        | AddWatchFlags::IN_CREATE
        | AddWatchFlags::IN_DELETE
        | AddWatchFlags::IN_MOVED_FROM
        | AddWatchFlags::IN_MOVED_TO
        | AddWatchFlags::IN_DELETE_SELF
        | AddWatchFlags::IN_MOVE_SELF
        | AddWatchFlags::IN_DONT_FOLLOW
        | AddWatchFlags::IN_ONLYDIR
}

/// Files whose change changes what git lists or how it reads a file: the account is given up.
const RULE_FILES: [&[u8]; 2] = [b".gitignore", b".gitattributes"];

impl TreeWatch {
    /// Watches every folder under `root` that `skip` does not name. An error says why the kernel
    /// would not (no inotify, the watch limit); the caller scans instead.
    pub fn start(root: &Path, skip: Skip<'_>) -> Result<Self, String> {
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC)
            .map_err(|errno| format!("inotify is not available ({errno})"))?;
        let mut watch = Self {
            inotify,
            root: root.to_path_buf(),
            folders: HashMap::new(),
            watched: BTreeMap::new(),
            log: HashMap::new(),
            mark: 0,
            lost: None,
            limit_reached: None,
            beyond_reach: false,
            resync: false,
            skipped: BTreeSet::new(),
        };
        watch.add_tree(Vec::new(), skip, false);
        match watch.limit_reached.take() {
            Some(why) => Err(why),
            None => Ok(watch),
        }
    }

    /// Whether a folder beyond the git library's reach was met since the last call.
    pub fn take_beyond_reach(&mut self) -> bool {
        std::mem::take(&mut self.beyond_reach)
    }

    /// The folders watched.
    pub fn folders(&self) -> usize {
        self.folders.len()
    }

    /// The folders left unwatched (what git ignores, repositories inside the tree, `.git`),
    /// as last seen.
    pub fn skipped(&self) -> impl Iterator<Item = &[u8]> {
        self.skipped.iter().map(Vec::as_slice)
    }

    /// The mark for now: what changes after it is logged after it.
    pub fn mark(&mut self, skip: Skip<'_>) -> Mark {
        self.drain(skip);
        self.mark
    }

    /// Every path changed since `mark` (or why that cannot be told), and the mark for now.
    pub fn since(&mut self, mark: Mark, skip: Skip<'_>) -> (Since, Mark) {
        self.drain(skip);
        let since = if let Some(why) = &self.limit_reached {
            Since::Lost(why.clone())
        } else if let Some((_, why)) = self.lost.as_ref().filter(|(at, _)| *at > mark) {
            Since::Lost(why.clone())
        } else {
            Since::Exact(
                self.log
                    .iter()
                    .filter(|(_, at)| **at > mark)
                    .map(|(path, _)| path.clone())
                    .collect(),
            )
        };
        (since, self.mark)
    }

    /// Reads every event queued.
    fn drain(&mut self, skip: Skip<'_>) {
        loop {
            match self.inotify.read_events() {
                Ok(events) if events.is_empty() => break,
                Ok(events) => {
                    for event in events {
                        self.take(event.wd, event.mask, event.name.as_deref(), skip);
                    }
                }
                Err(Errno::EAGAIN) => break,
                Err(Errno::EINTR) => {}
                Err(errno) => {
                    self.lose(format!("reading the kernel's events failed ({errno})"));
                    break;
                }
            }
        }
        if self.log.len() > MAX_LOGGED {
            self.log.clear();
            self.lose(format!("more than {MAX_LOGGED} paths changed"));
        }
        // Folders made while events were lost have no watch yet: every folder is watched again
        // (a folder watched already keeps its watch).
        if std::mem::take(&mut self.resync) && self.limit_reached.is_none() {
            self.add_tree(Vec::new(), skip, false);
        }
    }

    fn take(
        &mut self,
        wd: WatchDescriptor,
        mask: AddWatchFlags,
        name: Option<&OsStr>,
        skip: Skip<'_>,
    ) {
        if mask.contains(AddWatchFlags::IN_Q_OVERFLOW) {
            self.lose(
                "the kernel's event queue overflowed (fs.inotify.max_queued_events)".to_string(),
            );
            return;
        }
        let Some(folder) = self.folders.get(&wd).cloned() else {
            return; // a watch already removed
        };
        if self.watched.get(&folder) != Some(&wd) {
            // Another folder took this one's place (a rename onto it, an exchange): its watch
            // names a path it no longer has. An event about its entries cannot be placed.
            self.folders.remove(&wd);
            if name.is_some() {
                self.lose(format!("{} was replaced while watched", code(&folder)));
            }
            return;
        }
        if mask.contains(AddWatchFlags::IN_IGNORED) {
            self.forget(&folder);
            return;
        }
        let Some(name) = name else {
            // The folder itself moved or went away: its entries with it.
            if mask.intersects(AddWatchFlags::IN_MOVE_SELF | AddWatchFlags::IN_DELETE_SELF) {
                if folder.is_empty() {
                    self.lose("the work tree itself was moved or deleted".to_string());
                } else {
                    self.log_path(folder.clone());
                    self.unwatch(&folder);
                }
            }
            return;
        };
        let path = join(&folder, name.as_bytes());
        self.check_rule_file(&path);
        self.log_path(path.clone());
        if !mask.contains(AddWatchFlags::IN_ISDIR) {
            return;
        }
        if mask.intersects(AddWatchFlags::IN_DELETE | AddWatchFlags::IN_MOVED_FROM) {
            self.unwatch(&path);
        }
        if mask.intersects(AddWatchFlags::IN_CREATE | AddWatchFlags::IN_MOVED_TO) {
            if self.watched.contains_key(&path) {
                // Moved onto a folder still watched (or exchanged with it): the watches
                // beneath are rebuilt.
                self.lose(format!("a folder was moved onto {}", code(&path)));
                self.unwatch(&path);
            } else if skip(&path) {
                self.skipped.insert(path.clone());
                // A new folder git ignores may be hidden by rules of its own.
                for rule in RULE_FILES {
                    if self.full(&join(&path, rule)).symlink_metadata().is_ok() {
                        self.check_rule_file(&join(&path, rule));
                    }
                }
            } else {
                // Its entries made before its watch was added have no event: all are logged.
                self.add_tree(path, skip, true);
            }
        }
    }

    /// An ignore or attributes file changed: what git lists changed with it, the account is
    /// given up.
    fn check_rule_file(&mut self, path: &[u8]) {
        let name = path.rsplit(|byte| *byte == b'/').next().unwrap_or(path);
        if RULE_FILES.contains(&name) {
            self.lose(format!(
                "{} changed: what git lists changed with it",
                code(path)
            ));
        }
    }

    fn log_path(&mut self, path: Vec<u8>) {
        self.mark += 1;
        self.log.insert(path, self.mark);
    }

    fn lose(&mut self, why: String) {
        self.mark += 1;
        tracing::info!(reason = %why, "the watch lost track; the next look scans the tree");
        self.lost = Some((self.mark, why));
        self.resync = true;
    }

    /// Watches `top` and every folder beneath it (but those `skip` names); with `log`, logs
    /// every entry found.
    fn add_tree(&mut self, top: Vec<u8>, skip: Skip<'_>, log: bool) {
        let mut stack = vec![top];
        while let Some(folder) = stack.pop() {
            // Beyond the git library's reach, the watch goes no deeper, rather than spend time
            // that grows with the square of the depth: the next look scans, and sets such a
            // folder aside (or, at the baseline, refuses it).
            if super::reach::is_beyond_reach(self.root.as_os_str().len(), &folder) {
                let why = format!(
                    "{} is nested deeper than git walks, or its path is too long",
                    code(&folder[..folder.len().min(200)])
                );
                self.beyond_reach = true;
                self.lose(why);
                continue;
            }
            let full = self.full(&folder);
            match self.inotify.add_watch(&full, mask()) {
                Ok(wd) => {
                    if let Some(old) = self.folders.insert(wd, folder.clone())
                        && old != folder
                    {
                        self.watched.remove(&old);
                    }
                    self.watched.insert(folder.clone(), wd);
                }
                Err(Errno::ENOSPC) => {
                    self.limit_reached = Some(
                        "the inotify watch limit (fs.inotify.max_user_watches) is reached"
                            .to_string(),
                    );
                    self.lose("the inotify watch limit is reached".to_string());
                    return;
                }
                // Gone already, or not a folder any more: its event says so.
                Err(Errno::ENOENT | Errno::ENOTDIR) => continue,
                Err(errno) => {
                    self.lose(format!("{} cannot be watched ({errno})", code(&folder)));
                    continue;
                }
            }
            let Ok(entries) = std::fs::read_dir(&full) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = join(&folder, entry.file_name().as_bytes());
                if log {
                    self.check_rule_file(&path);
                    self.log_path(path.clone());
                }
                if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                    if skip(&path) {
                        self.skipped.insert(path);
                    } else {
                        stack.push(path);
                    }
                }
            }
        }
    }

    /// Stops watching `folder` and everything beneath it.
    fn unwatch(&mut self, folder: &[u8]) {
        for path in self.beneath(folder) {
            if let Some(wd) = self.watched.remove(&path) {
                self.folders.remove(&wd);
                let _ = self.inotify.rm_watch(wd);
            }
        }
    }

    /// Forgets a watch the kernel removed.
    fn forget(&mut self, folder: &[u8]) {
        if let Some(wd) = self.watched.remove(folder) {
            self.folders.remove(&wd);
        }
    }

    /// The watched folders at or beneath `folder`.
    fn beneath(&self, folder: &[u8]) -> Vec<Vec<u8>> {
        self.watched
            .range(folder.to_vec()..)
            .map(|(path, _)| path)
            .take_while(|path| path.starts_with(folder))
            .filter(|path| {
                folder.is_empty() || path.len() == folder.len() || path[folder.len()] == b'/'
            })
            .cloned()
            .collect()
    }

    fn full(&self, relative: &[u8]) -> PathBuf {
        if relative.is_empty() {
            self.root.clone()
        } else {
            self.root.join(OsStr::from_bytes(relative))
        }
    }
}

fn join(folder: &[u8], name: &[u8]) -> Vec<u8> {
    if folder.is_empty() {
        name.to_vec()
    } else {
        [folder, b"/", name].concat()
    }
}

/// A name the watch met, as a code span for the reports (a delegate chose it).
fn code(name: &[u8]) -> String {
    crate::markdown::code_span(&String::from_utf8_lossy(name))
}

#[cfg(test)]
#[path = "tree_watch_tests.rs"]
mod tests;
