use super::*;

/// The lines a framer passes on for `log` fed line by line, and its report.
fn framed(log: &[u8]) -> (Vec<String>, FrameReport) {
    let mut framer = Framer::new(64 * 1024);
    let mut lines = Vec::new();
    for raw in log.split(|b| *b == b'\n') {
        framer.line(raw, None, 0, &mut |line| lines.push(line.to_string()));
    }
    framer.finish(&mut |line| lines.push(line.to_string()));
    (lines, framer.report().clone())
}

#[test]
fn one_line_shows_its_framing() {
    use Framing::*;
    let table: [(&[u8], Option<Framing>); 24] = [
        (
            b"2026-11-30T10:00:00.0041100Z /src/a.js",
            Some(GitHubActions),
        ),
        (b"2026-11-30T10:00:00.0041100Z ", Some(GitHubActions)),
        (b"2026-11-30T10:00:00.0041100Z", Some(GitHubActions)),
        (
            b"\xEF\xBB\xBF2026-11-30T10:00:00.0041100Z x",
            Some(GitHubActions),
        ),
        // Not GitHub's 7 decimals, or not UTC, or no space: a tool's own timestamp.
        (b"2026-11-30T10:00:00.004Z app started", None),
        (b"2026-11-30T10:00:00Z app started", None),
        (b"2026-11-30T10:00:00.0041100+01:00 x", None),
        (b"2026-11-30T10:00:00.0041100Zx", None),
        (
            b"lint\tRun npx eslint .\t2026-11-30T10:00:00.0041100Z x",
            Some(GhRunView),
        ),
        (
            "Lint (été) 1\tRun a b\t2026-11-30T10:00:00.0041100Z".as_bytes(),
            Some(GhRunView),
        ),
        (b"a\tb\tc 2026-11-30T10:00:00.0041100Z x", None),
        (b"2026-11-30T10:00:00.004112Z 00O x", Some(GitLab)),
        (b"2026-11-30T10:00:00.004112Z 01E+x", Some(GitLab)),
        (b"2026-11-30T10:00:00.004112Z 00O", Some(GitLab)),
        (b"2026-11-30T10:00:00.0041120Z 0aO x", Some(GitLab)),
        (b"2026-11-30T10:00:00.004112Z 00X x", None),
        (
            b"\x1b[0Ksection_start:1790419369:prepare_executor\r\x1b[0KPreparing",
            Some(GitLab),
        ),
        (b"section_end:1790419374:step_script\r\x1b[0K", Some(GitLab)),
        (b"section_start:notanumber:x", None),
        (
            b"[2026-11-30T10:00:00.004Z] [Pipeline] sh",
            Some(JenkinsIso),
        ),
        (b"[2026-11-30T10:00:00.004Z]", Some(JenkinsIso)),
        (b"10:00:00 Started by user anonymous", Some(JenkinsClock)),
        (b"00:00:01.234 + make", Some(JenkinsClock)),
        (b"10:00:00.12345 x", None),
    ];
    for (line, want) in table {
        assert_eq!(classify(line), want, "{}", String::from_utf8_lossy(line));
    }
}

#[test]
fn the_first_lines_name_the_framing() {
    let clock = |n: usize, plain: usize| {
        let mut lines = vec![&b"10:00:00 x"[..]; n];
        lines.extend(vec![&b"plain"[..]; plain]);
        recognise(lines.into_iter())
    };
    // The ambiguous clock needs most of the lines, and two at least.
    assert_eq!(clock(1, 0), None);
    assert_eq!(clock(2, 0), Some(Framing::JenkinsClock));
    assert_eq!(clock(2, 2), Some(Framing::JenkinsClock));
    assert_eq!(clock(2, 3), None);
    // One line of a specific shape is enough; blank lines do not count.
    let lines: [&[u8]; 4] = [b"", b"plain", b"2026-11-30T10:00:00.0041100Z x", b"more"];
    assert_eq!(recognise(lines.into_iter()), Some(Framing::GitHubActions));
    assert_eq!(recognise([&b""[..]; 3].into_iter()), None);
}

#[test]
fn github_actions_lines_lose_their_timestamps_and_markers() {
    let log = b"2026-11-30T10:00:00.0041100Z ##[group]Run npx eslint .\n\
        2026-11-30T10:00:00.0041200Z \x1b[36;1mnpx eslint .\x1b[0m\n\
        2026-11-30T10:00:00.0041300Z ##[endgroup]\n\
        2026-11-30T10:00:00.0041400Z /src/a.js\n\
        2026-11-30T10:00:00.0041500Z    1:36  error  Bad  rule\n\
        plain line without a prefix\n\
        2026-11-30T10:00:00.0041600Z \n\
        2026-11-30T10:00:00.0041700Z ##[error]Process completed with exit code 1.\n\
        2026-11-30T10:00:00.0041800Z ##[debug]Finishing\n\
        2026-11-30T10:00:00.0041900Z ##[other]kept as it is";
    let (lines, report) = framed(log);
    assert_eq!(
        lines,
        [
            "npx eslint .",
            "/src/a.js",
            "   1:36  error  Bad  rule",
            "plain line without a prefix",
            "",
            "Process completed with exit code 1.",
            "##[other]kept as it is",
        ]
    );
    assert_eq!(report.framing, Some(Framing::GitHubActions));
    assert_eq!(
        (report.prefixed, report.dropped, report.unwrapped),
        (9, 3, 1)
    );
}

#[test]
fn gh_run_view_lines_lose_job_step_and_timestamp() {
    let log = "Lint (été)\tRun npx eslint .\t2026-11-30T10:00:00.0041100Z ##[group]Run npx\n\
        Lint (été)\tRun npx eslint .\t2026-11-30T10:00:00.0041200Z ##[endgroup]\n\
        Lint (été)\tRun npx eslint .\t2026-11-30T10:00:00.0041300Z src/a b.js\tx\n\
        Lint (été)\tRun npx eslint .\t2026-11-30T10:00:00.0041400Z 10%\r100% done";
    let (lines, report) = framed(log.as_bytes());
    assert_eq!(lines, ["src/a b.js\tx", "100% done"]);
    assert_eq!(report.framing, Some(Framing::GhRunView));
}

#[test]
fn gitlab_sections_go_and_continuations_join() {
    let log = b"2026-09-26T10:42:49.140026Z 00O \x1b[0KRunning with gitlab-runner 19.5.0\x1b[0;m\n\
        2026-09-26T10:42:49.140140Z 00O section_start:1790419369:prepare_executor\r\x1b[0K\n\
        2026-09-26T10:42:49.140145Z 00O+\x1b[0K\x1b[36;1mPreparing the executor\x1b[0;m\n\
        2026-09-26T10:42:54.803738Z 00O section_end:1790419374:prepare_executor\r\x1b[0K\n\
        2026-09-26T10:42:54.803963Z 00O+section_start:1790419374:step_script[collapsed=true]\r\x1b[0K\n\
        2026-09-26T10:42:55.000001Z 01E partial \n\
        2026-09-26T10:42:55.100001Z 01E+line\n\
        2026-09-26T10:42:55.100002Z 01O 10%\r100% done\n\
        2026-09-26T10:42:55.200000Z 00O\n\
        2026-09-26T10:42:56.000000Z 00O section_end:1790419376:step_script\r\x1b[0K";
    let (lines, report) = framed(log);
    assert_eq!(
        lines,
        [
            "Running with gitlab-runner 19.5.0",
            "partial line",
            "100% done",
            ""
        ]
    );
    assert_eq!(report.framing, Some(Framing::GitLab));
    assert_eq!((report.dropped, report.joined), (3, 3));
}

#[test]
fn gitlab_without_timestamps_is_named_by_its_sections() {
    let log = b"Running with gitlab-runner 16.0\n\
        \x1b[0Ksection_start:1:get_sources\r\x1b[0K\x1b[0K\x1b[36;1mGetting source\x1b[0;m\n\
        src/a.py:1:1: F401 unused\n\
        section_end:2:get_sources\r\x1b[0K\n\
        section_start:3:x[collapsed=true]";
    let (lines, report) = framed(log);
    assert_eq!(
        lines,
        [
            "Running with gitlab-runner 16.0",
            "src/a.py:1:1: F401 unused"
        ]
    );
    assert_eq!((report.framing, report.dropped), (Some(Framing::GitLab), 3));
}

#[test]
fn jenkins_prefixes_and_pipeline_lines() {
    let log = b"[2026-11-30T10:00:00.004Z] [Pipeline] sh\n\
        [2026-11-30T10:00:00.005Z] + make\n\
        [2026-11-30T10:00:00.006Z] a.c:1:2: error: x\n\
        [Pipeline] }";
    let (lines, report) = framed(log);
    assert_eq!(lines, ["+ make", "a.c:1:2: error: x"]);
    assert_eq!(report.framing, Some(Framing::JenkinsIso));
    let (lines, _) = framed(b"10:00:00 + make\n10:00:01 a.c:1:2: error: x\n10:00:02");
    assert_eq!(lines, ["+ make", "a.c:1:2: error: x", ""]);
}

#[test]
fn an_unframed_log_keeps_its_clock_times_and_lines() {
    let log = b"plain one\nplain two\n10:00:00 a time in the output\n  indented\n";
    let (lines, report) = framed(log);
    assert_eq!(
        lines,
        [
            "plain one",
            "plain two",
            "10:00:00 a time in the output",
            "  indented",
            ""
        ]
    );
    assert_eq!(report, FrameReport::default());
    assert!(!report.touched());
}

#[test]
fn the_look_ahead_is_bounded_and_later_lines_stream() {
    let mut framer = Framer::new(64 * 1024);
    let mut seen = 0;
    for _ in 0..LOOKAHEAD_LINES - 1 {
        framer.line(b"x", None, 0, &mut |_| seen += 1);
    }
    assert_eq!(seen, 0, "held while looking");
    framer.line(b"x", None, 0, &mut |_| seen += 1);
    assert_eq!(seen, LOOKAHEAD_LINES, "decided and replayed");
    framer.line(b"x", None, 0, &mut |_| seen += 1);
    assert_eq!(seen, LOOKAHEAD_LINES + 1);
    // A few long lines end the look-ahead on bytes.
    let mut framer = Framer::new(64 * 1024);
    let long = vec![b'a'; LOOKAHEAD_BYTES];
    let mut seen = 0;
    framer.line(&long, None, 0, &mut |_| seen += 1);
    assert_eq!(seen, 1);
}

#[test]
fn cut_lines_keep_their_marker_and_gitlab_joins_stay_bounded() {
    let mut framer = Framer::new(8);
    let mut lines = Vec::new();
    let mut on_line = |line: &str| lines.push(line.to_string());
    framer.line(
        b"2026-11-30T10:00:00.004112Z 00O abcdef",
        None,
        0,
        &mut on_line,
    );
    framer.line(
        b"2026-11-30T10:00:00.004112Z 00O+ghijkl",
        None,
        2,
        &mut on_line,
    );
    framer.finish(&mut on_line);
    assert_eq!(
        lines,
        ["abcdefgh [refine-loop: line cut, 6 more bytes left out]"]
    );
}
