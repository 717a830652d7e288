use super::*;

#[test]
fn stat_lines_are_read_past_any_name() {
    // (line, what it says)
    let table = [
        (
            "42 (sleep) S 7 42 42 0 -1",
            Some(Entry {
                parent: 7,
                group: 42,
                state: 'S',
            }),
        ),
        (
            "43 (a (b) c) R 42 9 9 0",
            Some(Entry {
                parent: 42,
                group: 9,
                state: 'R',
            }),
        ),
        (
            "44 (x) Z 1 44",
            Some(Entry {
                parent: 1,
                group: 44,
                state: 'Z',
            }),
        ),
        ("45 (no closing S 1 2", None),
        ("46 (short) S", None),
        ("", None),
    ];
    for (line, expected) in table {
        assert_eq!(parse_stat(line), expected, "{line:?}");
    }
}

#[test]
fn descendants_follow_every_chain_of_parents() {
    let entry = |parent| Entry {
        parent,
        group: 0,
        state: 'S',
    };
    // 10 is the loop; 11 and 12 its children, 13 a grandchild, 14 under 13; 20 and 21 are not
    // its own.
    let table: BTreeMap<i32, Entry> = [
        (10, entry(1)),
        (11, entry(10)),
        (12, entry(10)),
        (13, entry(11)),
        (14, entry(13)),
        (20, entry(1)),
        (21, entry(20)),
    ]
    .into_iter()
    .collect();
    // (ancestor, its descendants)
    let cases: [(i32, &[i32]); 4] = [(10, &[11, 12, 13, 14]), (13, &[14]), (14, &[]), (20, &[21])];
    for (ancestor, expected) in cases {
        let found: Vec<i32> = descendants(ancestor, &table).into_iter().collect();
        assert_eq!(found, expected, "descendants of {ancestor}");
    }
}

#[test]
fn without_containment_nothing_is_swept() {
    // The test process is not a subreaper and runs many commands at once: the sweep must not
    // touch them.
    assert!(!CONTAINING.load(Ordering::SeqCst));
    assert_eq!(stop_leftovers(None), Vec::new());
}

#[test]
fn the_first_ten_leftovers_are_named_and_the_rest_counted() {
    let leftovers = |count: i32| -> Vec<Leftover> {
        (1..=count)
            .map(|pid| Leftover {
                pid,
                command: format!("c{pid}"),
            })
            .collect()
    };
    // (how many were left, how the list ends)
    let table = [
        (0, ""),
        (1, "pid 1 (`c1`)"),
        (10, "pid 10 (`c10`)"),
        (11, "pid 10 (`c10`), and 1 more"),
        (322, "pid 10 (`c10`), and 312 more"),
    ];
    for (count, ending) in table {
        let named = name_leftovers(&leftovers(count));
        assert!(named.ends_with(ending), "{count}: {named}");
        assert!(!named.contains("pid 11 "), "{count}: {named}");
    }
}
