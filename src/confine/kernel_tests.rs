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
