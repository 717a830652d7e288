//! The kernel's watch on the tree and its fallback: a run whose watch cannot start (the inotify
//! watch limit, lowered in a user namespace) scans the whole tree at every look, says so, and
//! ends exactly as a run with the watch on.

use std::process::{Command, Output};

use crate::support::{Repo, binary, stderr};

/// A repository of a few folders whose gate counts `FIXME` lines under `src/`; the delegate
/// removes the first one each cycle, and one cycle also makes a folder with a file in it.
fn fixme_repo() -> Repo {
    let repo = Repo::new();
    repo.write(".gitignore", "/.refine-loop\n/build/\n");
    for folder in 0..6 {
        for file in 0..4 {
            repo.write(&format!("src/m{folder}/f{file}.rs"), "pub fn f() {}\n");
        }
    }
    for at in 0..4 {
        repo.write(&format!("src/m0/f{at}.rs"), "pub fn f() {}\n// FIXME\n");
    }
    repo.write(
        "refine-loop.toml",
        "[[gate.check]]\nname = \"lint\"\ncategory = \"lint\"\n\
         run = \"mkdir -p build && date > build/stamp; grep -rHn FIXME src | awk -F: '{print $1\\\":\\\"$2\\\":1: error: fixme\\\"}'; ! grep -rq FIXME src\"\n\
         parser = \"gcc\"\n\n\
         [[delegate]]\ncategories = [\"lint\"]\n\
         run = \"f=$(grep -rl FIXME src | sort | head -1); sed -i '/FIXME/d' \\\"$f\\\"; mkdir -p src/new/deep && echo 'pub fn g() {}' > src/new/deep/g.rs\"\n",
    );
    repo.commit("fixmes");
    repo
}

/// `refine-loop run --max-cycles 3` in `repo`, in a user namespace whose watch limit is
/// `watches` when given.
fn run(repo: &Repo, watches: Option<u32>) -> Output {
    let args = ["run", "--max-cycles", "3"];
    let mut command = match watches {
        None => repo.command(&args),
        Some(limit) => {
            let script =
                format!("echo {limit} > /proc/sys/user/max_inotify_watches && exec \"$0\" \"$@\"");
            let wrapper = ["--user", "--map-root-user", "sh", "-c", &script, binary()];
            repo.command_through("unshare", &[&wrapper[..], &args[..]].concat())
        }
    };
    command.output().expect("run refine-loop")
}

/// What a run leaves that must not depend on how changes were found: the outcome, each cycle's
/// counts, the patch, and the tree.
fn result_of(repo: &Repo, output: &Output) -> (Option<i32>, Vec<(u64, bool)>, String, String) {
    let trend: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo.join(".refine-loop/trend.json")).unwrap(),
    )
    .unwrap();
    let cycles = trend["cycles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["failed_count"].as_u64().unwrap(),
                c["accepted"].as_bool().unwrap_or(false),
            )
        })
        .collect();
    let patch = std::fs::read_to_string(repo.join(".refine-loop/refine-loop.patch")).unwrap();
    let status = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=all"])
        .current_dir(repo.path())
        .output()
        .unwrap();
    (
        output.status.code(),
        cycles,
        patch,
        String::from_utf8(status.stdout).unwrap(),
    )
}

#[test]
fn with_the_watch_limit_reached_the_run_scans_says_so_and_ends_the_same() {
    let watched = fixme_repo();
    let output = run(&watched, None);
    let expected = result_of(&watched, &output);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let report =
        std::fs::read_to_string(watched.join(".refine-loop/REFINE-LOOP-FINAL.md")).unwrap();
    assert!(!report.contains("## Change detection"), "{report}");

    let limited = fixme_repo();
    let output = run(&limited, Some(2));
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let report =
        std::fs::read_to_string(limited.join(".refine-loop/REFINE-LOOP-FINAL.md")).unwrap();
    assert!(report.contains("## Change detection"), "{report}");
    assert!(report.contains("the inotify watch limit"), "{report}");

    let got = result_of(&limited, &output);
    assert_eq!(got.1, expected.1, "cycle counts");
    assert_eq!(got.2, expected.2, "patches");
    assert_eq!(got.3, expected.3, "trees");
    assert_eq!(expected.1.iter().filter(|(_, kept)| *kept).count(), 3);
}
