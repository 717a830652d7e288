use std::process::Command;

use super::*;

/// Landlock must be there on the machines these tests run on: a kernel without it would pass
/// them all without confining anything.
fn abi() -> u32 {
    kernel_abi().expect(
        "these tests need a kernel with Landlock (Linux 5.13+, landlock among the LSMs); \
         /sys/kernel/security/lsm lists them where securityfs is mounted",
    )
}

#[test]
fn the_kernel_has_landlock() {
    assert!(abi() >= 1);
}

#[test]
fn a_confined_command_writes_only_where_it_is_granted() {
    let full = abi() >= 5;
    let allowed = tempfile::tempdir().unwrap();
    let denied = tempfile::tempdir().unwrap();
    std::fs::write(denied.path().join("kept.txt"), "kept\n").unwrap();
    let prepared = Prepared::new(
        &[
            Grant::Beneath(allowed.path().canonicalize().unwrap()),
            Grant::File("/dev/null".into()),
        ],
        full,
        abi(),
        None,
    )
    .unwrap();
    let script = "echo in > \"$ALLOWED/new.txt\" && echo ok; \
                  echo out > \"$DENIED/new.txt\" || echo refused-create; \
                  echo out >> \"$DENIED/kept.txt\" || echo refused-append; \
                  echo null > /dev/null && echo null-ok";
    let mut command = Command::new("sh");
    command
        .args(["-c", script])
        .env("ALLOWED", allowed.path())
        .env("DENIED", denied.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let output = prepared
        .spawn(&mut command)
        .unwrap()
        .wait_with_output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        stdout, "ok\nrefused-create\nrefused-append\nnull-ok\n",
        "stderr: {stderr}"
    );
    assert!(stderr.contains("Permission denied"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(denied.path().join("kept.txt")).unwrap(),
        "kept\n"
    );
    assert!(!denied.path().join("new.txt").exists());
    // The loop's own thread is as free as before.
    std::fs::write(denied.path().join("loop.txt"), "the loop writes\n").unwrap();
}

#[test]
fn a_capability_is_left_only_where_a_program_could_use_it() {
    // ([permitted, bounding, inheritable, ambient], usable after exec)
    let table = [
        // a user's thread: in the bounding set, which it cannot change, and nothing else
        ([false, true, false, false], false),
        ([false, true, true, false], false),
        // root's thread: dropped from both sets, or not
        ([true, false, false, false], false),
        ([true, true, false, false], true),
        ([true, false, true, false], true),
        // ambient is passed on whatever the rest
        ([false, false, false, true], true),
        ([false, false, false, false], false),
    ];
    for (sets, usable) in table {
        assert_eq!(usable_after_exec(sets), usable, "{sets:?}");
    }
}

#[test]
fn a_command_that_does_not_start_with_the_launcher_is_not_started() {
    let arguments: Vec<OsString> = vec!["/proc/self/exe".into(), "__confine".into()];
    let mut bare = Command::new("sh");
    bare.args(["-c", "true"]);
    let error = Prepared::launched(arguments.clone())
        .spawn(&mut bare)
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("does not start with the launcher")
    );
    let mut short = Command::new("/proc/self/exe");
    assert!(Prepared::launched(arguments).spawn(&mut short).is_err());
}
