use std::time::{Duration, SystemTime};

use super::StatKey;

#[test]
fn a_key_is_trusted_only_when_its_file_changed_before_the_moment_it_was_read() {
    let key = |seconds, nanos| StatKey {
        device: 1,
        inode: 2,
        size: 3,
        mode: 0o100644,
        modified: (seconds, nanos),
        changed: (seconds, nanos),
    };
    let moment = SystemTime::UNIX_EPOCH + Duration::new(100, 500);
    // (the file's change time, trusted)
    let table = [
        (key(99, 999_999_999), true),
        (key(100, 499), true),
        (key(100, 500), false),
        (key(100, 501), false),
        (key(101, 0), false),
    ];
    for (key, trusted) in table {
        assert_eq!(key.changed_before(moment), trusted, "{key:?}");
    }
}
