//! Kernel confinement of command delegates (Landlock): a delegate, and every process it starts,
//! may write only in the work tree, its own temp folder, the temp folder and the caches the
//! config lists; never `.git`, the state dir, the loop's store, the gate's tools inside those
//! folders ([`find_tools`]), or anything else; and it cannot
//! signal a process outside its own (Landlock ABI 6). Where a mount namespace can be made (the
//! loop runs as root, or user namespaces are allowed), the sealed folders are read-only binds in
//! it and the whole tree is writable, its top included; elsewhere the tree's top entries are
//! granted one by one. The gate's runs after the baseline, which may run what a delegate
//! planted, have the same walls; an http delegate is no process (the loop applies its diff).

mod decide;
mod kernel;
pub mod launcher;
pub mod namespace;
mod refusals;
mod tools;
mod walls;

use std::path::{Path, PathBuf};

pub use decide::{ConfineMode, Decision, decide};
pub use kernel::{Prepared, SIGNAL_SCOPE, kernel_abi};
pub use refusals::Refusals;
pub use tools::{Places, find as find_tools, is_installed};
pub use walls::{Walls, plan};

/// Device files every delegate may write in place.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/random",
    "/dev/urandom",
    "/dev/ptmx",
];

/// Device folders every delegate may write beneath (shared memory, terminals).
const DEVICE_FOLDERS: &[&str] = &["/dev/shm", "/dev/pts"];

/// The run's walls, before one delegate's own files and temp folder are added.
#[derive(Debug, Clone)]
pub struct Confiner {
    /// Every right the loop asks for is in the kernel.
    full: bool,
    abi: u32,
    /// Each delegate gets a mount namespace that binds the sealed folders read-only, made so.
    bound: Option<namespace::Namespace>,
    /// In it, the walls' private folders are the delegate's own (see [`probe_private`]).
    private: bool,
    /// It confines the gate's runs (see [`Self::for_gate`]).
    gate: bool,
    walls: Walls,
    /// The search paths its commands get (see [`Self::settle_search_paths`]).
    search_paths: Vec<(String, String)>,
}

impl Confiner {
    /// Confines as `decision` says (`None` when it does not confine), within `walls` (the work
    /// tree, the caches and temp folder; what is sealed and fenced), sealing in a mount
    /// namespace made as `bound` says, if it does (see [`probe`]).
    pub fn new(
        decision: &Decision,
        mut walls: Walls,
        (bound, private): (Option<namespace::Namespace>, bool),
    ) -> Option<Self> {
        let Decision::Confine { missing, abi } = decision else {
            return None;
        };
        walls
            .writable
            .extend(DEVICE_FOLDERS.iter().map(PathBuf::from));
        walls.files.extend(DEVICES.iter().map(PathBuf::from));
        Some(Self {
            full: missing.is_empty(),
            abi: *abi,
            bound,
            private: private && bound.is_some(),
            gate: false,
            walls,
            search_paths: Vec::new(),
        })
    }

    /// Settles the search paths every command it confines gets from now on, as they resolve now
    /// (see [`tools::settle_search_paths`]): done once, when the baseline has run.
    pub fn settle_search_paths(&mut self) {
        let lookup = |name: &str| std::env::var(name).ok();
        self.search_paths =
            tools::settle_search_paths(&self.walls.tree, &self.walls.writable, &lookup);
    }

    /// What a command it confines is given in its environment, where `given` (the command's own
    /// variables) does not set it: the settled search paths.
    pub fn environment(&self, given: &[(String, String)]) -> Vec<(String, String)> {
        (self.search_paths.iter())
            .filter(|(name, _)| !given.iter().any(|(set, _)| set == name))
            .cloned()
            .collect()
    }

    /// Adds `folders` (what git ignores in the tree, as the gate's last run left it) to those
    /// each delegate writes in a layer of its own (see [`Walls::ignored`]).
    pub fn also_private(&mut self, folders: &[PathBuf]) {
        let ignored = &mut self.walls.ignored;
        ignored.extend(folders.iter().cloned());
        ignored.sort();
        ignored.dedup();
        // A tool's cache in them, known by its tag, is one of the results each gate run's
        // checks write in a layer of their own, like one known by its name.
        let tagged = folders.iter().flat_map(|folder| tagged_caches(folder));
        let results = &mut self.walls.results;
        results.extend(tagged);
        results.sort();
        results.dedup();
    }

    /// Each delegate gets a mount namespace, where the whole tree is writable, its top included.
    pub fn whole_tree(&self) -> bool {
        self.bound.is_some()
    }

    /// The walls of the gate's runs after the baseline, which may run what a delegate planted:
    /// the same, the git dirs sealed whole (git reads a read-only repository as it does any:
    /// `status`, `diff`, `log` and `describe` leave its index alone when they cannot write
    /// it), but the ignored folders other than [`Walls::results`] are written for real.
    pub fn for_gate(&self) -> Self {
        let mut confiner = self.clone();
        confiner.walls.ignored.clear();
        confiner.gate = true;
        confiner
    }

    /// Whether `path` (absolute, resolved) is in the seal: a git dir, the state dir, the store.
    pub fn seals(&self, path: &Path) -> bool {
        (self.walls.sealed.iter())
            .filter_map(|seal| seal.canonicalize().ok())
            .any(|seal| path.starts_with(seal))
    }

    /// Why the walls forbid a delegate to write `path` (absolute, resolved; its own temp folder
    /// aside), with how to allow it where the config can; `None` when they allow it.
    pub fn forbids(&self, path: &Path) -> Option<String> {
        let resolve = |paths: &[PathBuf]| -> Vec<PathBuf> {
            paths.iter().filter_map(|p| p.canonicalize().ok()).collect()
        };
        if let Some(seal) = resolve(&self.walls.sealed)
            .into_iter()
            .find(|seal| path.starts_with(seal))
        {
            return Some(format!(
                "in `{}` (the git dir, the state dir or the loop's store), which no delegate may \
                 write",
                seal.display()
            ));
        }
        let granted = resolve(&self.walls.writable)
            .iter()
            .any(|folder| path.starts_with(folder))
            || resolve(&self.walls.files).iter().any(|file| file == path);
        if !granted {
            return Some(
                "outside the folders a delegate may write: add its folder to `[loop] writable` \
                 to allow it"
                    .to_string(),
            );
        }
        if let Some(tool) = resolve(&self.walls.tools)
            .into_iter()
            .find(|tool| path.starts_with(tool))
            .filter(|tool| {
                !resolve(&self.walls.writable)
                    .iter()
                    .any(|open| open.starts_with(tool) && path.starts_with(open))
            })
        {
            return Some(format!(
                "among the gate's tools (`{}`), which no delegate may change: install what the \
                 project needs before the run, or list the folder in `[loop] writable` to let \
                 delegates change it",
                tool.display()
            ));
        }
        let top = self.walls.tree.canonicalize().ok();
        if self.bound.is_none() && top.is_some() && path.parent() == top.as_deref() {
            return Some(
                "at the top of the work tree, where a delegate may not create, remove or rename \
                 without a mount namespace of its own (the loop has one when it runs as root)"
                    .to_string(),
            );
        }
        None
    }

    /// The ruleset for one delegate: the run's walls, its own `files` to write in place, and
    /// `temp`, its own temp folder (where the tmpfs for its private layers goes).
    pub fn prepare(&self, files: &[&Path], temp: &Path) -> std::io::Result<Prepared> {
        let mut walls = self.walls.clone();
        walls.files.extend(files.iter().map(|f| f.to_path_buf()));
        walls.writable.push(temp.to_path_buf());
        let grants = plan(&walls, self.bound.is_some());
        // In the mount namespace the tools are read-only binds like the fenced folders.
        walls.fenced.extend(walls.tools.iter().cloned());
        walls.private.append(&mut walls.results);
        if !self.gate {
            walls.private.append(&mut walls.ignored);
        }
        let scratch = if self.private && !walls.private.is_empty() {
            let scratch = temp.join(".private");
            std::fs::create_dir(&scratch)?;
            // A tool folder written in a layer of its own (`.tox`, `node_modules`) needs no
            // read-only bind.
            let private: Vec<PathBuf> = walls
                .private
                .iter()
                .filter_map(|path| path.canonicalize().ok())
                .collect();
            walls.fenced.retain(|fenced| {
                !fenced
                    .canonicalize()
                    .is_ok_and(|fenced| private.contains(&fenced))
            });
            Some(scratch)
        } else {
            None
        };
        let full = self.full;
        match self.bound {
            Some(namespace::Namespace::User) => {
                Ok(Prepared::launched(launcher::arguments(&launcher::Launch {
                    abi: self.abi,
                    full,
                    tree: walls.tree,
                    sealed: walls.sealed,
                    own: walls.files,
                    open: walls.writable,
                    fenced: walls.fenced,
                    private: walls.private,
                    scratch,
                    grants,
                })))
            }
            Some(namespace::Namespace::Thread) => {
                let mut mount = namespace::MountPlan::new(&walls.tree, &walls.sealed, &walls.files)
                    .read_only_outside(&walls.writable, &walls.fenced);
                if let Some(scratch) = &scratch {
                    mount = mount.private(&walls.private, scratch);
                }
                Prepared::new(&grants, full, self.abi, Some(mount))
            }
            None => Prepared::new(&grants, full, self.abi, None),
        }
    }

    /// The folders whose writes each delegate keeps to itself (those there now), resolved; none
    /// when they cannot be made so here.
    pub fn private_folders(&self) -> Vec<PathBuf> {
        if !self.private {
            return Vec::new();
        }
        let tree = self.walls.tree.canonicalize().ok();
        let mut folders: Vec<PathBuf> = self
            .walls
            .private
            .iter()
            .chain(&self.walls.results)
            .chain(&self.walls.ignored)
            .filter_map(|path| path.canonicalize().ok())
            .filter(|path| tree.as_ref().is_none_or(|tree| !tree.starts_with(path)))
            .collect();
        folders.sort();
        folders.dedup_by(|inner, outer| inner.starts_with(&*outer));
        folders
    }
}

/// How a delegate can get its own mount namespace here, if it can: each way is tried for real
/// on a temporary folder bound read-only over itself, and must leave it unwritable there and
/// writable here.
pub fn probe(abi: u32) -> Option<namespace::Namespace> {
    let folder = probe_folder()?;
    let sealed = folder.path().join("sealed");
    std::fs::create_dir(&sealed).ok()?;
    if namespace::probe_thread(folder.path(), &sealed) {
        return Some(namespace::Namespace::Thread);
    }
    launcher::probe(folder.path(), &sealed, abi).then_some(namespace::Namespace::User)
}

/// Whether a delegate's namespace, made as `namespace` says, can keep what it writes in a
/// cache to itself (an overlay on a tmpfs; see [`namespace::MountPlan::private`]): tried for
/// real on a temporary folder.
pub fn probe_private(namespace: namespace::Namespace, abi: u32) -> bool {
    let Some(folder) = probe_folder() else {
        return false;
    };
    let (cache, scratch) = (folder.path().join("cache"), folder.path().join("scratch"));
    let made = std::fs::create_dir(&cache)
        .and_then(|()| std::fs::create_dir(&scratch))
        .and_then(|()| std::fs::write(cache.join("x"), "as it was"));
    if made.is_err() {
        return false;
    }
    match namespace {
        namespace::Namespace::Thread => {
            namespace::probe_private_thread(folder.path(), &cache, &scratch)
        }
        namespace::Namespace::User => launcher::probe_private(folder.path(), &cache, &scratch, abi),
    }
}

/// A temporary folder to try a namespace on.
fn probe_folder() -> Option<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix("refine-loop-probe-")
        .tempdir()
        .ok()
}

/// `[loop] writable` when left out: the temp folders and the usual caches of cargo, rustup, npm
/// and the XDG cache.
/// What a cache folder's `CACHEDIR.TAG` begins with (the Cache Directory Tagging
/// Specification): cargo writes it in every target folder, and ruff, mypy and pytest in theirs.
const CACHE_TAG: &[u8] = b"Signature: 8a477f597d28d172789f06886806bc55";

/// How far below a folder git ignores a cache's tag is looked for (`build/cargo/CACHEDIR.TAG`
/// for `build/`), and how many entries are read at most doing so.
const TAG_DEPTH: usize = 2;
const TAG_ENTRIES: usize = 256;

/// The folders at or below `folder`, to [`TAG_DEPTH`], that a tool tagged as its cache (a
/// link is not followed); a tagged folder is not looked into.
fn tagged_caches(folder: &Path) -> Vec<PathBuf> {
    let tagged = |dir: &Path| {
        let mut head = [0u8; CACHE_TAG.len()];
        crate::files::open_regular(&dir.join("CACHEDIR.TAG"))
            .and_then(|mut file| std::io::Read::read_exact(&mut file, &mut head))
            .is_ok_and(|()| head == CACHE_TAG)
    };
    let mut found = Vec::new();
    let mut entries = TAG_ENTRIES;
    let mut folders = vec![(folder.to_path_buf(), 0)];
    while let Some((dir, depth)) = folders.pop() {
        if tagged(&dir) {
            found.push(dir);
            continue;
        }
        let Ok(listing) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in listing.flatten().take_while(|_| depth < TAG_DEPTH) {
            if entries == 0 {
                return found;
            }
            entries -= 1;
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                folders.push((entry.path(), depth + 1));
            }
        }
    }
    found
}

pub const DEFAULT_WRITABLE: &[&str] = &[
    "$TMPDIR",
    "/tmp",
    "/var/tmp",
    "$CARGO_HOME",
    "~/.cargo",
    "$RUSTUP_HOME",
    "~/.rustup",
    "$XDG_CACHE_HOME",
    "~/.cache",
    "$npm_config_cache",
    "~/.npm",
];

/// The entries of [`DEFAULT_WRITABLE`] that are caches (all but the temp folders): where the
/// writable folders are left to their default, each delegate keeps what it writes there to
/// itself where it can (see [`Walls::private`]). A cache holds tools, their configs and
/// environments (cargo's `bin` and `config.toml`, Poetry's virtualenvs, files uv links into a
/// virtualenv) that the gate runs.
pub const DEFAULT_PRIVATE: &[&str] = DEFAULT_WRITABLE.split_at(3).1;

/// The homes of build tools outside the tree that they write on every build (Gradle's locks,
/// Maven's and Go's module records, `~/.local`'s environments): where the writable folders are
/// left to their default and an overlay can be made, each delegate and each gate run after the
/// baseline writes them in a layer of its own; they are not writable otherwise.
pub const BUILD_HOMES: &[&str] = &[
    "$GRADLE_USER_HOME",
    "~/.gradle",
    "~/.m2",
    "$GOPATH",
    "~/go",
    "~/.local",
];

/// A `writable` entry as a folder: `~/` is the home folder, a leading `$NAME` the variable's
/// value (the entry is left out when it is unset or empty), a relative one is under `root`.
pub fn expand(
    entry: &str,
    root: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Option<PathBuf> {
    let nonempty = |name: &str| lookup(name).filter(|value| !value.is_empty());
    let path = if let Some(rest) = entry.strip_prefix("~/") {
        PathBuf::from(nonempty("HOME")?).join(rest)
    } else if entry == "~" {
        PathBuf::from(nonempty("HOME")?)
    } else if let Some(variable) = entry.strip_prefix('$') {
        let (name, rest) = variable
            .split_once('/')
            .map_or((variable, ""), |(name, rest)| (name, rest));
        PathBuf::from(nonempty(name)?).join(rest)
    } else {
        root.join(entry)
    };
    Some(path)
}

#[cfg(test)]
#[path = "confine_tests.rs"]
mod tests;
