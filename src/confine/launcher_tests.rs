use super::*;

#[test]
fn the_arguments_read_back_as_they_were_written() {
    let launch = Launch {
        abi: 6,
        full: true,
        tree: "/w/tree with space".into(),
        sealed: vec!["/w/tree with space/.git".into(), "/w/state".into()],
        own: vec!["/w/state/verdict".into()],
        open: vec!["/tmp".into(), "/home/u/.cache".into()],
        fenced: vec!["/tmp/user tree".into()],
        private: vec!["/home/u/.cargo".into(), "/home/u/.cache".into()],
        scratch: Some("/tmp/refine-loop-delegate-x/.private".into()),
        grants: vec![
            Grant::Beneath("/w/tree with space".into()),
            Grant::File("/dev/null".into()),
        ],
    };
    let written = arguments(&launch);
    assert_eq!(written[..2], [OsString::from(SELF), SUBCOMMAND.into()]);
    let mut rest = written[2..]
        .iter()
        .cloned()
        .chain(["sh".into(), "-c".into(), "true".into()]);
    assert_eq!(parse(&mut rest).unwrap(), launch);
    assert_eq!(rest.collect::<Vec<_>>(), ["sh", "-c", "true"]);
}

#[test]
fn arguments_it_does_not_know_are_refused() {
    // (arguments, what the error says)
    let table: [(&[&str], &str); 4] = [
        (&["--abi", "6"], "without `--`"),
        (&["--abi", "six", "--"], "no ABI"),
        (&["--tree"], "needs a value"),
        (&["--writable", "/", "--"], "no launcher argument"),
    ];
    for (given, says) in table {
        let mut given = given.iter().map(OsString::from);
        let error = parse(&mut given).unwrap_err().to_string();
        assert!(error.contains(says), "{error}");
    }
}
