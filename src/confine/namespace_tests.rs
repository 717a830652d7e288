use std::process::Command;

use super::super::kernel::{Prepared, kernel_abi};
use super::super::walls::Grant;
use super::*;

/// The machines these tests run on can make a delegate's mount namespace: without one they would
/// pass while nothing is sealed this way.
fn namespaces() {
    let abi = kernel_abi().expect("these tests need a kernel with Landlock");
    assert_eq!(
        super::super::probe(abi),
        Some(Namespace::Thread),
        "these tests need a mount namespace for the delegate's thread: run them as root, with \
         CAP_SYS_ADMIN"
    );
}

/// A work tree with a file at its top, a `.git` with a config, and a state dir holding the
/// delegate's verdict file; beside it, `cache` (a folder the delegate may write) and `outside`
/// with a file (one it may not).
fn tree() -> (tempfile::TempDir, PathBuf) {
    let folder = tempfile::tempdir().unwrap();
    let root = folder.path().canonicalize().unwrap().join("tree");
    std::fs::create_dir_all(folder.path().join("cache")).unwrap();
    std::fs::create_dir_all(folder.path().join("outside")).unwrap();
    std::fs::write(folder.path().join("outside/file"), "outside\n").unwrap();
    std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(root.join(".refine-loop/reports")).unwrap();
    std::fs::create_dir_all(root.join("pkg/.state")).unwrap();
    std::fs::write(root.join("setup.py"), "version = 'a'\n").unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(root.join(".refine-loop/reports/verdict"), "").unwrap();
    (folder, root)
}

/// Runs `script` in `root` as a delegate confined to the whole tree and `../cache`, `.git` and
/// the state dir bound read-only, its verdict file read-write, every other mount read-only; its
/// stdout, stderr.
/// A step that succeeds when the process has capability number `bit` in effect.
fn capable(bit: u32) -> String {
    format!(
        "e=$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status); [ $(( 0x$e >> {bit} & 1 )) = 1 ]"
    )
}

fn confined(root: &Path, script: &str) -> (String, String) {
    confined_with_state(root, &root.join(".refine-loop"), script)
}

/// [`confined`] with the state dir at `state` (its verdict file at `reports/verdict`).
fn confined_with_state(root: &Path, state: &Path, script: &str) -> (String, String) {
    let abi = kernel_abi().expect("these tests need a kernel with Landlock");
    namespaces();
    let verdict = state.join("reports/verdict");
    let plan = MountPlan::new(
        root,
        &[
            root.join(".git"),
            state.to_path_buf(),
            root.join("pkg/.state"),
        ],
        std::slice::from_ref(&verdict),
    );
    let grants = [
        Grant::Beneath(root.to_path_buf()),
        Grant::Beneath(root.with_file_name("cache")),
        Grant::File(verdict),
        Grant::File("/dev/null".into()),
    ];
    let plan = plan.read_only_outside(&[root.to_path_buf(), root.with_file_name("cache")], &[]);
    let prepared = Prepared::new(&grants, abi >= 5, abi, Some(plan)).unwrap();
    let mut command = Command::new("sh");
    command
        .args(["-c", script])
        .current_dir(root)
        .env("LOOP", std::process::id().to_string())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let output = prepared
        .spawn(&mut command)
        .unwrap()
        .wait_with_output()
        .unwrap();
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_namespace_can_be_made_here() {
    namespaces();
}

#[test]
fn the_whole_tree_is_writable_and_the_seal_is_not() {
    let (_folder, root) = tree();
    // (what the delegate does, what it prints when the kernel lets it)
    let table = [
        ("sed -i 's/a/b/' setup.py", "sed-i"),
        ("echo new > conftest.py", "created"),
        ("echo tmp > .x.tmp && mv .x.tmp CHANGES.md", "renamed"),
        ("mkdir docs && rm -r docs", "folder"),
        ("echo fixed > .refine-loop/reports/verdict", "verdict"),
        ("echo x >> .git/config", "git-config"),
        ("echo x > .git/hooks/pre-commit", "git-hook"),
        ("chmod 000 .git/hooks", "git-chmod"),
        ("mv .git moved", "git-moved"),
        ("rm -rf .git", "git-removed"),
        ("echo x > .refine-loop/other", "state-dir"),
        ("mv .refine-loop elsewhere", "state-moved"),
        // Nor the tree that holds them: a new one could hold a `.git` of the delegate's own.
        ("cd .. && mv tree moved", "tree-moved"),
        // Nor a folder between the tree's top and a sealed one inside it.
        ("mv pkg pkg.old", "folder-of-a-seal-moved"),
        ("mount -o remount,rw .git", "remounted"),
        ("umount .git", "unmounted"),
        ("kill -0 \"$LOOP\"", "signalled-the-loop"),
        // Root's capabilities that would defeat a rollback or the walls are gone.
        ("chattr +i setup.py", "immutable"),
        ("chattr +a conftest.py", "append-only"),
        ("mknod disk b 8 0", "block-device"),
        // Nor may it change the host's network or another's shared memory.
        (&capable(12), "net-admin"),
        (&capable(13), "net-raw"),
        (&capable(15), "ipc-owner"),
    ];
    let script: String = table
        .iter()
        .map(|(step, name)| format!("( {step} ) 2>/dev/null && echo {name}\n"))
        .collect();
    let (stdout, stderr) = confined(&root, &script);
    let abi = kernel_abi().unwrap();
    let mut allowed = vec!["sed-i", "created", "renamed", "folder", "verdict"];
    if abi < 6 {
        // Signals are scoped from ABI 6 on.
        allowed.push("signalled-the-loop");
    }
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        allowed,
        "stderr: {stderr}"
    );
    let read = |path: &str| std::fs::read_to_string(root.join(path)).unwrap();
    assert_eq!(read("setup.py"), "version = 'b'\n");
    assert_eq!(read("conftest.py"), "new\n");
    assert_eq!(read("CHANGES.md"), "tmp\n");
    assert_eq!(read(".refine-loop/reports/verdict"), "fixed\n");
    assert_eq!(read(".git/config"), "[core]\n");
    assert!(!root.join(".git/hooks/pre-commit").exists());
    assert!(!root.join(".refine-loop/other").exists());
    assert!(!root.join("disk").exists());
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(root.join(".git/hooks"))
            .unwrap()
            .permissions(),
    );
    assert_ne!(mode & 0o777, 0, "the delegate changed .git's folder modes");
    // The loop's own namespace has no binds: it writes there as before.
    std::fs::write(root.join(".git/config"), "[core]\n\tbare = false\n").unwrap();
}

#[test]
fn outside_its_grants_a_delegate_changes_no_modes_times_or_owners() {
    use std::os::unix::fs::MetadataExt;
    let (_folder, root) = tree();
    let outside = root.with_file_name("outside");
    let facts = |path: &Path| {
        let metadata = std::fs::symlink_metadata(path).unwrap();
        (
            metadata.mode(),
            metadata.uid(),
            metadata.gid(),
            metadata.mtime(),
            metadata.mtime_nsec(),
        )
    };
    let before = (facts(&outside), facts(&outside.join("file")));
    // (what the delegate does, what it prints when the kernel lets it); Landlock governs
    // writes, not a file's metadata: the mounts outside the grants are read-only.
    let table = [
        ("chmod 600 ../outside/file", "chmod-outside"),
        ("chmod 777 ../outside", "chmod-outside-folder"),
        ("chown 1:1 ../outside/file", "chown-outside"),
        ("touch -d 2001-01-01 ../outside/file", "touch-outside"),
        ("chattr +d ../outside/file", "chattr-outside"),
        (
            "python3 -c \"import os; os.setxattr('../outside/file', 'user.x', b'1')\"",
            "xattr-outside",
        ),
        // The delegate's own places stay as a person's fixer finds them.
        ("chmod 600 setup.py && touch -d 2001-01-01 setup.py", "tree"),
        ("echo x > ../cache/new && chmod 600 ../cache/new", "cache"),
        ("echo x > /dev/null", "dev-null"),
    ];
    let script: String = table
        .iter()
        .map(|(step, name)| format!("( {step} ) 2>/dev/null && echo {name}\n"))
        .collect();
    let (stdout, stderr) = confined(&root, &script);
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        ["tree", "cache", "dev-null"],
        "stderr: {stderr}"
    );
    assert_eq!((facts(&outside), facts(&outside.join("file"))), before);
    let mode = std::fs::metadata(root.join("setup.py")).unwrap().mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn a_state_dir_outside_every_writable_folder_keeps_the_delegates_own_files_writable() {
    // `--state-dir` outside the tree, or a worktree run whose state dir stays in the user's tree:
    // the verdict file's bind is not one of the mounts made read-only.
    let (_folder, root) = tree();
    let state = root.with_file_name("state");
    std::fs::create_dir_all(state.join("reports")).unwrap();
    std::fs::write(state.join("reports/verdict"), "").unwrap();
    let (stdout, stderr) = confined_with_state(
        &root,
        &state,
        "echo fixed > ../state/reports/verdict && echo verdict; \
         echo x > ../state/other && echo state-dir",
    );
    assert_eq!(stdout, "verdict\n", "{stderr}");
    assert_eq!(
        std::fs::read_to_string(state.join("reports/verdict")).unwrap(),
        "fixed\n"
    );
}

#[test]
fn a_plan_leaves_out_what_does_not_exist_and_own_files_outside_the_seal() {
    let (_folder, root) = tree();
    let plan = MountPlan::new(
        &root,
        &[root.join(".git"), root.join("no-such-folder")],
        &[root.join("setup.py"), root.join(".git/config")],
    );
    let sealed: Vec<&PathBuf> = plan.sealed.iter().map(|(path, _)| path).collect();
    assert_eq!(sealed, [&root.join(".git")]);
    assert_eq!(plan.own, [root.join(".git/config")]);
}

#[test]
fn a_mount_below_a_sealed_folder_is_read_only_too() {
    let (_folder, root) = tree();
    std::fs::create_dir(root.join(".git/modules")).unwrap();
    // The mount is made in a namespace of this test's own thread, which the delegate's thread
    // copies; the machine's namespace never sees it.
    let written = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let none: Option<&str> = None;
                unshare(CloneFlags::CLONE_NEWNS).unwrap();
                mount(none, "/", none, MsFlags::MS_REC | MsFlags::MS_PRIVATE, none).unwrap();
                let modules = root.join(".git/modules");
                mount(
                    Some("tmpfs"),
                    &modules,
                    Some("tmpfs"),
                    MsFlags::empty(),
                    none,
                )
                .unwrap();
                std::fs::write(modules.join("config"), "[core]\n").unwrap();
                let (stdout, _) = confined(
                    &root,
                    "echo x >> .git/modules/config && echo wrote; \
                     echo x > .git/modules/new && echo made",
                );
                let config = std::fs::read_to_string(modules.join("config")).unwrap();
                (stdout, config)
            })
            .join()
            .unwrap()
    });
    assert_eq!(written, (String::new(), "[core]\n".to_string()));
}

#[test]
fn mount_points_are_read_as_the_kernel_escapes_them() {
    let mountinfo = "\
36 35 98:0 / /mnt/a\\040b rw,noatime master:1 - ext3 /dev/root rw
37 35 98:0 / /srv/tab\\011x/new\\012line/back\\134slash rw - tmpfs tmpfs rw
38 35 98:0 /sub /srv/café rw - ext4 /dev/sda rw
";
    let points = mount_points(mountinfo.as_bytes());
    assert_eq!(
        points,
        [
            PathBuf::from("/mnt/a b"),
            PathBuf::from("/srv/tab\tx/new\nline/back\\slash"),
            PathBuf::from("/srv/café"),
        ]
    );
}

#[test]
fn the_folders_made_private_are_those_an_overlay_can_take() {
    let (folder, root) = tree();
    let at = |name: &str| {
        let path = folder.path().canonicalize().unwrap().join(name);
        std::fs::create_dir_all(&path).unwrap();
        path
    };
    let state = root.join(".refine-loop");
    // (folder, made private)
    let table = [
        (at("cache"), true),
        (at("cache/inner"), false), // in `cache`'s layer already
        (at("a,b"), false),         // the overlay's options cannot carry it
        (at("c:d"), false),
        (folder.path().to_path_buf(), false), // it holds the tree
        (folder.path().join("missing"), false),
        (root.join("pkg"), true),
    ];
    let folders: Vec<PathBuf> = table.iter().map(|(path, _)| path.clone()).collect();
    let plan =
        MountPlan::new(&root, &[root.join(".git"), state], &[]).private(&folders, &at("scratch"));
    for (path, private) in &table {
        assert_eq!(plan.private.contains(path), *private, "{}", path.display());
    }
    namespaces();
    let abi = kernel_abi().unwrap();
    assert!(super::super::probe_private(Namespace::Thread, abi));
}

#[test]
fn the_folders_above_a_read_only_folder_outside_the_tree_are_held() {
    let (_folder, root) = tree();
    let temp = tempfile::tempdir().unwrap();
    let temp = temp.path().canonicalize().unwrap();
    std::fs::create_dir_all(temp.join("tools/1.2/bin")).unwrap();
    std::fs::create_dir_all(root.join("node_modules/pkg/bin")).unwrap();
    let plan = MountPlan::new(&root, &[root.join(".git")], &[]).read_only_outside(
        std::slice::from_ref(&temp),
        &[
            temp.join("tools/1.2/bin"),
            root.join("node_modules/pkg/bin"),
        ],
    );
    // Outside the tree, up to the open folder; in it, pinned from the tree's top.
    assert_eq!(plan.held, [temp.join("tools"), temp.join("tools/1.2")]);
    assert!(plan.pinned.contains(&root.join("node_modules/pkg")));
}

/// A delegate started from a person's terminal must not type into the shell there (`TIOCSTI`,
/// where `dev.tty.legacy_tiocsti` still allows it) nor reach that terminal by its name in
/// `/dev/pts`; the terminals it makes itself (a test runner's pty) it drives as it likes.
#[test]
fn a_delegate_drives_its_own_terminals_and_not_the_persons() {
    let abi = kernel_abi().expect("these tests need a kernel with Landlock");
    namespaces();
    let (_folder, root) = tree();
    // The person's terminal, held open by a process outside the walls while the delegate runs.
    let mut person = Command::new("python3")
        .args([
            "-c",
            "import os, sys, time; m, s = os.openpty(); print(os.ttyname(s), flush=True); sys.stdin.read()",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut persons = String::new();
    io::BufRead::read_line(
        &mut io::BufReader::new(person.stdout.take().unwrap()),
        &mut persons,
    )
    .unwrap();
    let persons = persons.trim().to_string();
    assert!(persons.starts_with("/dev/pts/"), "{persons}");
    // (what the delegate does in python, what it prints when the kernel lets it)
    let table = [
        (
            "m, s = os.openpty(); fcntl.ioctl(s, termios.TIOCGWINSZ, bytes(8)); os.write(s, b'x')",
            "own-pty",
        ),
        (
            "fd = os.open(os.environ['PERSON'], os.O_RDWR); fcntl.ioctl(fd, termios.TIOCSTI, b'x')",
            "persons-pty",
        ),
        (
            "fd = os.open(os.environ['PERSON'], os.O_WRONLY); os.write(fd, b'rm -rf ~')",
            "persons-pty-written",
        ),
        (
            "pid, fd = pty.fork()\n\
             if pid == 0:\n    t = os.open('/dev/tty', os.O_RDWR); fcntl.ioctl(t, termios.TIOCSTI, b'x'); os._exit(0)\n\
             assert os.waitpid(pid, 0)[1] == 0",
            "controlling-tty-sti",
        ),
    ];
    let script: String = table
        .iter()
        .map(|(step, name)| {
            let code = format!("import fcntl, os, pty, termios\n{step}\nprint('{name}')\n");
            format!(
                "python3 -c \"$(printf '%s' '{}')\" 2>/dev/null\n",
                code.replace('\'', "'\\''")
            )
        })
        .collect();
    let grants = [
        Grant::Beneath(root.clone()),
        Grant::Beneath("/dev/pts".into()),
        Grant::File("/dev/ptmx".into()),
        Grant::File("/dev/tty".into()),
        Grant::File("/dev/null".into()),
    ];
    let plan = MountPlan::new(&root, &[root.join(".git")], &[])
        .read_only_outside(&[root.clone(), "/dev/pts".into()], &[]);
    let prepared = Prepared::new(&grants, abi >= 5, abi, Some(plan)).unwrap();
    let mut command = Command::new("sh");
    command
        .args(["-c", &script])
        .current_dir(&root)
        .env("PERSON", &persons)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let output = prepared
        .spawn(&mut command)
        .unwrap()
        .wait_with_output()
        .unwrap();
    drop(person.stdin.take());
    person.wait().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        ["own-pty"],
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
