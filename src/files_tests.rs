use super::*;

use std::os::unix::net::UnixListener;

/// Makes one path of each kind in `dir`; returns (name, kind made, special kind).
fn every_kind(dir: &Path) -> Vec<(&'static str, Option<SpecialKind>)> {
    std::fs::write(dir.join("file"), b"bytes").unwrap();
    std::fs::create_dir(dir.join("folder")).unwrap();
    std::os::unix::fs::symlink("file", dir.join("link")).unwrap();
    nix::unistd::mkfifo(&dir.join("fifo"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let _socket = UnixListener::bind(dir.join("socket")).unwrap();
    vec![
        ("file", None),
        ("folder", None),
        ("link", None),
        ("fifo", Some(SpecialKind::Fifo)),
        ("socket", Some(SpecialKind::Socket)),
    ]
}

#[test]
fn only_a_regular_file_is_opened_and_nothing_blocks() {
    let dir = tempfile::tempdir().unwrap();
    for (name, special) in every_kind(dir.path()) {
        let path = dir.path().join(name);
        let kind = std::fs::symlink_metadata(&path).unwrap().file_type();
        assert_eq!(SpecialKind::of(&kind), special, "{name}");
        let opened = open_regular(&path);
        assert_eq!(opened.is_ok(), name == "file", "{name}: {opened:?}");
        if let Err(error) = opened {
            assert_eq!(error.kind(), io::ErrorKind::InvalidInput, "{name}");
            assert!(error.to_string().contains("not a regular file"), "{error}");
        }
    }
}

#[test]
fn a_device_is_never_opened() {
    let error = open_regular(Path::new("/dev/zero")).unwrap_err();
    assert!(error.to_string().contains("a character device"), "{error}");
}

#[test]
fn reads_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("file");
    std::fs::write(&path, b"12345").unwrap();
    // (limit, what comes back)
    let cases: [(u64, Option<&[u8]>); 3] = [(4, None), (5, Some(b"12345")), (6, Some(b"12345"))];
    for (limit, expected) in cases {
        let read = read_regular(&path, limit);
        match expected {
            Some(bytes) => assert_eq!(read.unwrap().as_deref(), Some(bytes), "{limit}"),
            None => assert!(read.is_err(), "{limit}"),
        }
    }
    assert_eq!(read_regular(&dir.path().join("missing"), 1).unwrap(), None);
}

#[test]
fn a_whole_write_replaces_a_link_instead_of_following_it_and_leaves_no_temporary() {
    use std::os::unix::fs::MetadataExt;
    for options in [WriteOptions::ARTIFACT, WriteOptions::PRIVATE] {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside.txt");
        std::fs::write(&outside, "theirs").unwrap();
        let path = dir.path().join("file.json");
        std::os::unix::fs::symlink(&outside, &path).unwrap();
        write_atomic(&path, b"ours", options).unwrap();
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "theirs");
        let meta = std::fs::symlink_metadata(&path).unwrap();
        assert!(meta.is_file(), "{options:?}");
        assert_eq!(meta.mode() & 0o777, options.mode, "{options:?}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "ours");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|entry| entry.file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }
}
