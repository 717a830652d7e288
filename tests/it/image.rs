//! What can be checked of the container image without a container engine (hadolint reads the
//! Dockerfile in ci_files.rs). The binary, built static as the image ships it, runs in an
//! otherwise empty root that holds only it, a shell, /dev/null and the image's /etc/gitconfig:
//! with no environment, as root and as any uid; and on a repository in there that uid 12345
//! owns, with a failing gate: as its owner with HOME=/tmp, and as root through the gitconfig's
//! `safe.directory`, which root is refused without; a uid that does not own it is told how to
//! run. The state dir and the snapshot folder are written, and the repository's files end as
//! they began, and still the owner's. Building the chroot needs root: run as another user, these
//! tests fail saying so.
//!
//! The image is Alpine with a musl binary; here the binary is glibc's static build (the only
//! target installed), the shell Debian's dash with the libraries it loads.
//!
//! The image has no tools for a gate, so users bring the binary into their own image (`COPY
//! --from`, or the release archive downloaded in a job). The static binary runs in roots laid out
//! as `debian:stable-slim`, `python:3`, `node` and Alpine (musl and busybox, no glibc) are, and
//! finds the gate's tool on PATH in each; the GitLab quickstart's `before_script` and `script`
//! run as written in the `python:3` root against a local copy of the release.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use crate::support::{Entry, git_in, stderr, stdout, tree_of};

/// The system git config the Dockerfile writes, and the `printf` that writes it there.
const GITCONFIG: &str = "[safe]\n\tdirectory = *\n";
const GITCONFIG_LINE: &str = r"RUN printf '[safe]\n\tdirectory = *\n' > /etc/gitconfig";
/// The image's default user, and another uid standing for whoever owns a mounted repository.
const IMAGE_USER: u32 = 10001;
const OWNER: u32 = 12345;
/// PATH and HOME as the image sets them (PATH from the Alpine base).
const PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const HOME: &str = "/tmp";

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn require_root() {
    crate::support::require_root(
        "tests/it/image.rs builds a chroot and runs the binary as other uids, which needs root: \
         run the tests as root (in a container or a VM), or leave these out with `--skip image::`",
    );
}

/// The binary built static, once for all the tests, in `<target dir>/static` (its own folder, so
/// the usual build is untouched), with the `static-test` profile (quick to build).
fn static_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        let target_dir = std::env::var_os("CARGO_TARGET_DIR")
            .map_or_else(|| manifest_dir().join("target"), PathBuf::from)
            .join("static");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let output = Command::new(cargo)
            .args([
                "build",
                "--locked",
                "--profile",
                "static-test",
                "--bin",
                "refine-loop",
            ])
            .args(["--target", "x86_64-unknown-linux-gnu", "--target-dir"])
            .arg(&target_dir)
            .env("RUSTFLAGS", "-C target-feature=+crt-static")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .current_dir(manifest_dir())
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "the static build: {}",
            stderr(&output)
        );
        target_dir.join("x86_64-unknown-linux-gnu/static-test/refine-loop")
    })
}

/// Whether an ELF executable names a program interpreter (a `PT_INTERP` header): the dynamic
/// loader a dynamically linked one needs. A static one, PIE or not, has none.
fn names_an_interpreter(path: &Path) -> bool {
    const PT_INTERP: u32 = 3;
    let elf = std::fs::read(path).unwrap();
    assert!(
        elf.starts_with(b"\x7fELF\x02\x01"),
        "{}: not a 64-bit little-endian ELF",
        path.display()
    );
    let word = |at: usize| usize::from(u16::from_le_bytes([elf[at], elf[at + 1]]));
    let offset = usize::try_from(u64::from_le_bytes(elf[0x20..0x28].try_into().unwrap())).unwrap();
    let (size, count) = (word(0x36), word(0x38));
    (0..count).any(|i| {
        let at = offset + i * size;
        u32::from_le_bytes(elf[at..at + 4].try_into().unwrap()) == PT_INTERP
    })
}

/// `path` inside `root`.
fn inside(root: &Path, path: &Path) -> PathBuf {
    root.join(path.strip_prefix("/").unwrap())
}

/// An otherwise empty root: the static binary where the image has it, the host's /bin/sh with
/// the libraries `ldd` names, /dev/null (a gate's and a delegate's stdin), a world-writable /tmp,
/// and the image's /etc/gitconfig when `gitconfig`.
struct Root {
    dir: tempfile::TempDir,
}

impl Root {
    fn new(gitconfig: bool) -> Self {
        require_root();
        let binary = static_binary();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o755)).unwrap();
        for folder in ["bin", "dev", "etc", "tmp", "usr/local/bin", "work"] {
            std::fs::create_dir_all(root.join(folder)).unwrap();
        }
        std::fs::set_permissions(root.join("tmp"), std::fs::Permissions::from_mode(0o1777))
            .unwrap();
        let installed = root.join("usr/local/bin/refine-loop");
        if std::fs::hard_link(binary, &installed).is_err() {
            std::fs::copy(binary, &installed).unwrap();
        }
        copy_program(root, Path::new("/bin/sh"), "/bin/sh");
        make_dev_null(root);
        if gitconfig {
            std::fs::write(root.join("etc/gitconfig"), GITCONFIG).unwrap();
        }
        Self { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `args` run in the root, as `uid` (and the same gid) or root, with the environment `env`
    /// alone.
    fn run(&self, uid: Option<u32>, env: &[(&str, &str)], args: &[&str]) -> Output {
        let mut command = Command::new(chroot());
        command.env_clear().envs(env.iter().copied());
        if let Some(uid) = uid {
            command.arg(format!("--userspec={uid}:{uid}"));
        }
        command.arg(self.path()).args(args).output().unwrap()
    }

    /// `refine-loop ARGS` in /work/repo, as the image runs it: its PATH and HOME.
    fn refine_loop(&self, uid: Option<u32>, args: &str) -> Output {
        let script = format!("cd /work/repo && exec refine-loop {args}");
        self.run(
            uid,
            &[("PATH", PATH), ("HOME", HOME)],
            &["/bin/sh", "-c", &script],
        )
    }

    /// A repository at /work/repo, owned by [`OWNER`]: its gate fails with one finding, and with
    /// a second once notes.txt holds the delegate's line; the delegate writes that line, and
    /// notes in /tmp/snapshots which snapshot folders it found in the git folder.
    fn repository(&self) -> PathBuf {
        let repo = self.path().join("work/repo");
        std::fs::create_dir_all(repo.join("src")).unwrap();
        git_in(&repo, &["init", "-q", "-b", "main"]);
        let files = [
            (".gitignore", "/.refine-loop\n"),
            ("notes.txt", "notes\n"),
            ("src/lib.rs", "pub fn f() {}\n"),
            (
                "refine-loop.toml",
                "[[gate.check]]\nname = \"lint\"\ncategory = \"lint\"\nrun = \"sh gate.sh\"\n\
                 parser = \"clippy\"\n\n[[delegate]]\ncategories = [\"lint\"]\nrun = \"sh delegate.sh\"\n",
            ),
            (
                "gate.sh",
                "echo 'src/lib.rs:1:1: error: still broken'\n\
                 while read -r line; do\n\
                 \x20 case \"$line\" in *delegate*) echo 'notes.txt:2:1: error: made worse' ;; esac\n\
                 done < notes.txt\n\
                 exit 1\n",
            ),
            (
                "delegate.sh",
                "for kept in .git/refine-loop/snapshots/*; do\n\
                 \x20 test -d \"$kept\" && echo \"$kept\" >> /tmp/snapshots\n\
                 done\n\
                 echo 'the delegate was here' >> notes.txt\n\
                 echo '// and here' >> src/lib.rs\n",
            ),
        ];
        for (name, text) in files {
            std::fs::write(repo.join(name), text).unwrap();
        }
        git_in(&repo, &["add", "-A"]);
        git_in(&repo, &["commit", "-q", "-m", "a failing gate"]);
        let chown = Command::new("chown")
            .args(["-R", &format!("{OWNER}:{OWNER}")])
            .arg(&repo)
            .output()
            .unwrap();
        assert!(chown.status.success(), "{chown:?}");
        repo
    }
}

/// The host's program `from` at `to` in `root`, with the libraries `ldd` names for it (none for a
/// static one) at their own paths.
fn copy_program(root: &Path, from: &Path, to: &str) {
    let copy = inside(root, Path::new(to));
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    std::fs::copy(from, &copy).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
    if !names_an_interpreter(from) {
        return;
    }
    let ldd = Command::new("ldd").arg(from).output().unwrap();
    assert!(ldd.status.success(), "{ldd:?}");
    for library in stdout(&ldd)
        .split_whitespace()
        .filter(|word| word.starts_with('/'))
    {
        let copy = inside(root, Path::new(library));
        std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
        std::fs::copy(library, copy).unwrap();
    }
}

/// /dev/null in `root`: a gate's and a delegate's stdin.
fn make_dev_null(root: &Path) {
    std::fs::create_dir_all(root.join("dev")).unwrap();
    nix::sys::stat::mknod(
        &root.join("dev/null"),
        nix::sys::stat::SFlag::S_IFCHR,
        nix::sys::stat::Mode::from_bits_truncate(0o666),
        nix::sys::stat::makedev(1, 3),
    )
    .unwrap();
    std::fs::set_permissions(
        root.join("dev/null"),
        std::fs::Permissions::from_mode(0o666),
    )
    .unwrap();
}

fn chroot() -> &'static str {
    ["/usr/sbin/chroot", "/usr/bin/chroot", "/sbin/chroot"]
        .into_iter()
        .find(|path| Path::new(path).exists())
        .expect("chroot (coreutils) is installed")
}

fn owner_of(path: &Path) -> u32 {
    std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(path).unwrap())
}

fn owner_of_link(path: &Path) -> u32 {
    std::os::unix::fs::MetadataExt::uid(&std::fs::symlink_metadata(path).unwrap())
}

/// The repository's files (the state dir left out), for comparing before and after a run.
fn files(repo: &Path) -> BTreeMap<PathBuf, Entry> {
    tree_of(repo, &[".refine-loop", ".git"])
}

#[test]
fn the_chroot_is_set_up_as_the_dockerfile_sets_up_the_image() {
    let dockerfile = std::fs::read_to_string(manifest_dir().join("Dockerfile")).unwrap();
    assert_eq!(
        dockerfile.matches(GITCONFIG_LINE).count(),
        1,
        "the Dockerfile writes /etc/gitconfig otherwise than this test's chroot"
    );
    let printed = GITCONFIG_LINE
        .split('\'')
        .nth(1)
        .unwrap()
        .replace(r"\n", "\n")
        .replace(r"\t", "\t");
    assert_eq!(printed, GITCONFIG);
    assert!(dockerfile.contains(&format!("\nUSER {IMAGE_USER}:{IMAGE_USER}\n")));
    assert!(dockerfile.contains(&format!("\nENV HOME={HOME}\n")));
    assert!(
        dockerfile.contains(
            "\nCOPY --from=binary --chmod=0755 /refine-loop /usr/local/bin/refine-loop\n"
        )
    );
    // No ENTRYPOINT (GitLab and Jenkins run the job's own commands) and no package installed.
    assert!(
        dockerfile
            .lines()
            .all(|line| !line.starts_with("ENTRYPOINT") && !line.contains("apk add")),
        "{dockerfile}"
    );
}

#[test]
#[ignore = "it builds every dependency again, static: a CI job of its own, scripts/test-image"]
fn the_static_binary_runs_in_an_empty_root_with_no_environment_as_any_uid() {
    let root = Root::new(false);
    assert!(
        !names_an_interpreter(static_binary()),
        "{}: dynamically linked",
        static_binary().display()
    );
    assert!(
        names_an_interpreter(Path::new("/bin/sh")),
        "the check itself reads ELF headers"
    );
    for uid in [None, Some(IMAGE_USER), Some(OWNER)] {
        let version = root.run(uid, &[], &["/usr/local/bin/refine-loop", "--version"]);
        assert!(version.status.success(), "{uid:?}: {version:?}");
        assert!(stdout(&version).starts_with("refine-loop "), "{version:?}");
        let parsers = root.run(
            uid,
            &[],
            &["/usr/local/bin/refine-loop", "parsers", "--json"],
        );
        assert!(parsers.status.success(), "{uid:?}: {parsers:?}");
        let catalogue: serde_json::Value = serde_json::from_slice(&parsers.stdout).unwrap();
        assert!(
            catalogue["parsers"].as_array().unwrap().len() > 10,
            "{catalogue}"
        );
    }
}

#[test]
#[ignore = "it builds every dependency again, static: a CI job of its own, scripts/test-image"]
fn the_owner_and_root_work_on_a_mounted_repository_and_leave_its_files_as_they_were() {
    let root = Root::new(true);
    let repo = root.repository();
    let before = files(&repo);
    // As the uid that owns it (docker run --user, Jenkins), then as root (safe.directory).
    for (uid, owner) in [(Some(OWNER), OWNER), (None, 0)] {
        std::fs::remove_dir_all(repo.join(".refine-loop")).ok();
        std::fs::remove_file(root.path().join("tmp/snapshots")).ok();
        let check = root.refine_loop(uid, "check");
        assert_eq!(check.status.code(), Some(1), "{uid:?}: {check:?}");
        assert!(
            stdout(&check).contains("gate FAILED: 1 failures"),
            "{check:?}"
        );
        let summary = repo.join(".refine-loop/cycle-0/gate-summary.json");
        assert_eq!(owner_of(&summary), owner);

        let run = root.refine_loop(uid, "run --max-cycles 1");
        assert_eq!(run.status.code(), Some(3), "{uid:?}: {run:?}");
        assert!(
            stderr(&run).contains("accepted 0 · rolled back 1 · stopping: max-cycles"),
            "{uid:?}: {run:?}"
        );
        // The delegate saw this run's snapshot folder in the git folder; the run removed it.
        let seen = std::fs::read_to_string(root.path().join("tmp/snapshots")).unwrap();
        assert!(seen.starts_with(".git/refine-loop/snapshots/"), "{seen}");
        assert_eq!(seen.lines().count(), 1, "{seen}");
        assert!(!repo.join(".git/refine-loop").exists());
        let report =
            std::fs::read_to_string(repo.join(".refine-loop/cycle-1/delegate-reports/fix-lint.md"))
                .unwrap();
        assert!(
            report.contains("- result: rolled back: failures rose from 1 to 2"),
            "{report}"
        );
        assert_eq!(owner_of(&repo.join(".refine-loop/trend.json")), owner);
        assert_eq!(
            files(&repo),
            before,
            "{uid:?}: the repository's files changed"
        );
        // Root put the delegate's files back as the owner's, and left nothing of its own
        // (but the state dir) in the owner's tree or git folder.
        let not_the_owners: Vec<PathBuf> = tree_of(&repo, &[".refine-loop"])
            .into_keys()
            .filter(|path| owner_of_link(&repo.join(path)) != OWNER)
            .collect();
        assert!(not_the_owners.is_empty(), "{uid:?}: {not_the_owners:?}");
    }
}

#[test]
#[ignore = "it builds every dependency again, static: a CI job of its own, scripts/test-image"]
fn without_safe_directory_root_is_refused_and_a_uid_that_does_not_own_it_is_told_why() {
    let bare = Root::new(false);
    let repo = bare.repository();
    let before = files(&repo);
    // The owner needs no gitconfig.
    let owner = bare.refine_loop(Some(OWNER), "run --max-cycles 1");
    assert_eq!(owner.status.code(), Some(3), "{owner:?}");
    // Root is refused by libgit2's owner check, and told both ways out.
    let refused = bare.refine_loop(None, "run --max-cycles 1");
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let message = stderr(&refused);
    assert!(
        message.contains("/work/repo: the repository belongs to another user")
            && message.contains("is not owned by current user")
            && message.contains("--user \"$(id -u):$(id -g)\"")
            && message.contains("safe.directory"),
        "{message}"
    );
    assert_eq!(files(&repo), before);

    // With the gitconfig, a uid that is neither the owner nor root opens the repository but
    // cannot write its git folder: told so, before anything runs.
    let image = Root::new(true);
    let repo = image.repository();
    let before = files(&repo);
    let stranger = image.refine_loop(
        Some(IMAGE_USER),
        "run --max-cycles 1 --state-dir /tmp/state",
    );
    assert_eq!(stranger.status.code(), Some(2), "{stranger:?}");
    let message = stderr(&stranger);
    assert!(
        message.contains("/work/repo/.git/refine-loop/snapshots/")
            && message.contains("cannot keep the copies rollbacks need in the git folder")
            && message.contains("Permission denied")
            && message.contains("--user \"$(id -u):$(id -g)\""),
        "{message}"
    );
    assert_eq!(files(&repo), before);
    // `docker run` as the image's user on a host checkout, with the state dir in it: the state
    // dir cannot be created, and the message says who was refused and how to run.
    for args in ["check", "run --max-cycles 1"] {
        let stranger = image.refine_loop(Some(IMAGE_USER), args);
        assert_eq!(stranger.status.code(), Some(2), "{args}: {stranger:?}");
        let message = stderr(&stranger);
        assert!(
            message.contains("cannot create the state dir /work/repo/.refine-loop")
                && message.contains(&format!(
                    "uid {IMAGE_USER} cannot write there (the folder belongs to uid {OWNER})"
                ))
                && message.contains("docker run --user \"$(id -u):$(id -g)\""),
            "{args}: {message}"
        );
        assert_eq!(files(&repo), before);
    }
}

/// The layouts of the images a user's gate runs in, built as those images lay their files out,
/// each with only its own libraries: the host's (Debian's) programs with the libraries `ldd`
/// names, and for Alpine Debian's busybox-static and musl packages, which scripts/test-image
/// unpacks into .tools/alpine/ (no glibc at all there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Base {
    /// `debian:stable-slim`: glibc, dash, the gate's tool in /usr/bin (grep), no downloader.
    DebianSlim,
    /// `python:3`: the gate's tool pip put in /usr/local/bin (ruff), curl, tar, sha256sum.
    Python,
    /// `node`: node in /usr/local/bin, the gate's tool.
    Node,
    /// `alpine`: musl's loader and busybox (sh, grep, wget, tar, sha256sum), no glibc.
    Alpine,
}

/// Alpine's parts, unpacked from Debian's packages by scripts/test-image.
fn alpine_parts() -> PathBuf {
    let parts = manifest_dir().join(".tools/alpine");
    assert!(
        parts.join("bin/busybox").is_file(),
        "{} is missing: run scripts/test-image, which unpacks busybox-static and musl there",
        parts.display()
    );
    parts
}

impl Base {
    const ALL: [Base; 4] = [Base::DebianSlim, Base::Python, Base::Node, Base::Alpine];

    /// The gate's tool as the image has it (where it lives), and its check: the command, and
    /// the parser that reads it. Each finds one error.
    fn tool(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Base::DebianSlim | Base::Alpine => (
                if self == Base::Alpine {
                    "/bin/grep"
                } else {
                    "/usr/bin/grep"
                },
                "grep -n -H error: notes.txt",
                "generic",
            ),
            Base::Python => (
                "/usr/local/bin/ruff",
                "ruff check --no-cache --output-format concise app.py",
                "ruff",
            ),
            Base::Node => (
                "/usr/local/bin/node",
                "node -e \"console.log('notes.txt:1:1: error: found by node'); process.exit(1)\"",
                "generic",
            ),
        }
    }

    /// A root laid out like the image, without refine-loop, as root-owned as a job's image.
    fn root(self) -> tempfile::TempDir {
        require_root();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o755)).unwrap();
        for folder in ["bin", "etc", "tmp", "usr/bin", "usr/local/bin", "work"] {
            std::fs::create_dir_all(root.join(folder)).unwrap();
        }
        std::fs::set_permissions(root.join("tmp"), std::fs::Permissions::from_mode(0o1777))
            .unwrap();
        make_dev_null(root);
        let tool = self.tool().0;
        match self {
            Base::Alpine => {
                let parts = alpine_parts();
                copy_program(root, &parts.join("bin/busybox"), "/bin/busybox");
                for applet in [
                    "sh",
                    "grep",
                    "wget",
                    "tar",
                    "gzip",
                    "sha256sum",
                    "cat",
                    "echo",
                ] {
                    std::os::unix::fs::symlink("busybox", root.join("bin").join(applet)).unwrap();
                }
                std::fs::create_dir_all(root.join("lib")).unwrap();
                std::fs::copy(
                    parts.join("lib/x86_64-linux-musl/libc.so"),
                    root.join("lib/ld-musl-x86_64.so.1"),
                )
                .unwrap();
                // The marker Alpine's tools look for (the busybox and musl are Debian's builds).
                std::fs::write(root.join("etc/alpine-release"), "3.24.2\n").unwrap();
            }
            _ => {
                copy_program(root, Path::new("/bin/sh"), "/bin/sh");
                let from = match self {
                    Base::Python => manifest_dir().join(".tools/python/bin/ruff"),
                    Base::Node => which("node"),
                    _ => which("grep"),
                };
                copy_program(root, &from, tool);
                // The host's: its programs and libraries are what the root holds.
                std::fs::copy("/etc/debian_version", root.join("etc/debian_version")).unwrap();
            }
        }
        if self == Base::Python {
            // What the GitLab quickstart's before_script needs (python:3 has them).
            for program in ["curl", "sha256sum", "tar", "gzip"] {
                copy_program(root, &which(program), &format!("/usr/bin/{program}"));
            }
        }
        dir
    }
}

/// The host's `program`, from PATH.
fn which(program: &str) -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|dir| dir.join(program))
        .find(|path| path.is_file())
        .unwrap_or_else(|| panic!("{program} is not installed"))
}

/// A root-owned repository at /work/repo in `root` whose gate is `base`'s tool's check, with a
/// delegate that changes nothing.
fn gate_repository(root: &Path, base: Base) -> PathBuf {
    let repo = root.join("work/repo");
    std::fs::create_dir_all(&repo).unwrap();
    git_in(&repo, &["init", "-q", "-b", "main"]);
    let (_, run, parser) = base.tool();
    let config = format!(
        "[[gate.check]]\nname = \"lint\"\ncategory = \"lint\"\nrun = {}\nparser = \"{parser}\"\n\n\
         [[delegate]]\ncategories = [\"lint\"]\nrun = \"true\"\n",
        toml_string(run)
    );
    for (name, text) in [
        (".gitignore", "/.refine-loop\n"),
        ("notes.txt", " error: a TODO is left\n"),
        ("app.py", "import os\n"),
        ("refine-loop.toml", config.as_str()),
    ] {
        std::fs::write(repo.join(name), text).unwrap();
    }
    git_in(&repo, &["add", "-A"]);
    git_in(
        &repo,
        &["commit", "-q", "-m", "a gate that finds one error"],
    );
    repo
}

fn toml_string(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// `script` run by the root's /bin/sh in /work/repo, as root, with `env` alone.
fn sh_in(root: &Path, env: &[(&str, &str)], script: &str) -> Output {
    let script = format!("cd /work/repo && {script}");
    Command::new(chroot())
        .env_clear()
        .envs(env.iter().copied())
        .arg(root)
        .args(["/bin/sh", "-c", &script])
        .output()
        .unwrap()
}

#[test]
#[ignore = "it builds every dependency again, static: a CI job of its own, scripts/test-image"]
fn the_static_binary_finds_the_gates_tool_in_four_base_image_layouts() {
    for base in Base::ALL {
        let dir = base.root();
        let root = dir.path();
        // As COPY --from puts it there.
        copy_program(root, static_binary(), "/usr/local/bin/refine-loop");
        if base == Base::Alpine {
            for glibc in ["lib64", "lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu"] {
                assert!(!root.join(glibc).exists(), "{base:?}: {glibc}");
            }
        }
        let version = Command::new(chroot())
            .env_clear()
            .arg(root)
            .args(["/usr/local/bin/refine-loop", "--version"])
            .output()
            .unwrap();
        assert!(version.status.success(), "{base:?}: {version:?}");
        gate_repository(root, base);
        let env = [("PATH", PATH), ("HOME", HOME)];
        let check = sh_in(root, &env, "refine-loop check");
        assert_eq!(check.status.code(), Some(1), "{base:?}: {check:?}");
        assert!(
            stdout(&check).contains("gate FAILED: 1 failures"),
            "{base:?}: {check:?}"
        );
        // Without the tool, the same gate cannot run: an ERROR, never a pass.
        std::fs::remove_file(inside(root, Path::new(base.tool().0))).unwrap();
        let missing = sh_in(root, &env, "refine-loop check");
        assert_eq!(missing.status.code(), Some(4), "{base:?}: {missing:?}");
        assert!(
            stderr(&missing).contains("is not installed") || stdout(&missing).contains("infra"),
            "{base:?}: {missing:?}"
        );
    }
}

#[test]
#[ignore = "it builds every dependency again, static: a CI job of its own, scripts/test-image"]
fn the_gitlab_quickstart_downloads_the_binary_checks_it_and_finds_the_gates_tool() {
    let pipeline = crate::ci_files::read_yaml("ci/examples/gitlab-quickstart.yml");
    let job = &pipeline["harden"];
    let image = job["image"].as_str().unwrap();
    assert!(image.starts_with("python:3"), "{image}");
    let dir = Base::Python.root();
    let root = dir.path();
    gate_repository(root, Base::Python);
    // The release as GitHub serves it: the archive of the static binary.
    let staging = tempfile::tempdir().unwrap();
    std::fs::copy(static_binary(), staging.path().join("refine-loop")).unwrap();
    let archive = staging.path().join("refine-loop.tar.gz");
    let tar = Command::new("tar")
        .arg("-czf")
        .arg(&archive)
        .arg("-C")
        .arg(staging.path())
        .arg("refine-loop")
        .output()
        .unwrap();
    assert!(tar.status.success(), "{tar:?}");
    let bytes = std::fs::read(&archive).unwrap();
    let sha256 = {
        use sha2::Digest;
        sha2::Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let variables = job["variables"].as_object().unwrap();
    let version = variables["REFINE_LOOP_VERSION"]
        .as_str()
        .unwrap()
        .to_string();
    let asset = format!("/v{version}/refine-loop-x86_64-unknown-linux-musl.tar.gz");
    let server = crate::http_server::Server::start(move |request, _| {
        if request.path == asset {
            crate::http_server::Response::json(200, bytes.clone())
        } else {
            crate::http_server::Response::json(404, "Not Found")
        }
    });
    let lines = |key: &str| -> Vec<String> {
        job[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|line| line.as_str().unwrap().to_string())
            .collect()
    };
    // GitLab runs before_script and script in one shell, stopping at the first failure.
    let mut script = vec!["set -e".to_string()];
    script.extend(lines("before_script"));
    script.extend(lines("script"));
    let script = script.join("\n");
    let allowed: Vec<i32> = job["allow_failure"]["exit_codes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|code| i32::try_from(code.as_i64().unwrap()).unwrap())
        .collect();
    // The variables as written, but where the user replaces them: the sha256 (and, here, the
    // release server).
    let run_with = |sha: &str| {
        let mut env: Vec<(String, String)> = variables
            .iter()
            .map(|(key, value)| (key.clone(), value.as_str().unwrap().to_string()))
            .collect();
        env.retain(|(key, _)| key != "REFINE_LOOP_RELEASES" && key != "REFINE_LOOP_SHA256");
        env.push(("REFINE_LOOP_RELEASES".into(), server.base.clone()));
        env.push(("REFINE_LOOP_SHA256".into(), sha.into()));
        for (key, value) in [
            ("PATH", PATH),
            ("HOME", "/root"),
            ("GITLAB_CI", "true"),
            ("CI_JOB_NAME", "harden"),
            ("CI_PROJECT_DIR", "/work/repo"),
        ] {
            env.push((key.into(), value.into()));
        }
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        sh_in(root, &env, &script)
    };
    // As written, the placeholder sha256 never matches: nothing is installed, the job fails.
    let placeholder = variables["REFINE_LOOP_SHA256"].as_str().unwrap();
    let refused = run_with(placeholder);
    let code = refused.status.code().unwrap();
    assert!(code != 0 && !allowed.contains(&code), "{refused:?}");
    assert!(!root.join("usr/local/bin/refine-loop").exists());
    // With the release's sha256: installed, and the run finds ruff and its finding.
    let output = run_with(&sha256);
    let code = output.status.code().unwrap();
    assert!(allowed.contains(&code), "{code}: {output:?}");
    assert!(!stderr(&output).contains("not installed"), "{output:?}");
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("work/repo/.refine-loop/cycle-0/gate-summary.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(summary["categories"]["lint"]["failures"], 1, "{summary}");
    let details = summary["categories"]["lint"]["details"].to_string();
    assert!(details.contains("F401"), "{details}");
    assert!(root.join("work/repo/.refine-loop/junit.xml").is_file());
}
