//! Earlier work judged against HEAD, one case per row: pending, landed (exactly, with later
//! edits, squashed), in the work tree, stale, and a record whose patch is gone.

use super::*;

const BEFORE: &str = "a\nb\nc\nd\ne\nf\ng\nh\n";
const AFTER: &str = "a\nB\nc\nd\ne\nf\ng\nh\n";

struct Fixture {
    dir: tempfile::TempDir,
    repo: git2::Repository,
    state: tempfile::TempDir,
    work: EarlierWork,
}

fn commit_file(repo: &git2::Repository, path: &str, text: &str) -> git2::Oid {
    std::fs::write(repo.workdir().unwrap().join(path), text).unwrap();
    let mut index = repo.index().unwrap();
    index.add_path(Path::new(path)).unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let signature = git2::Signature::now("t", "t@example.com").unwrap();
    let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
    repo.commit(Some("HEAD"), &signature, &signature, "c", &tree, &parents)
        .unwrap()
}

fn patch(repo: &git2::Repository, from: &git2::Tree<'_>, to: &git2::Tree<'_>) -> Vec<u8> {
    let diff = repo.diff_tree_to_tree(Some(from), Some(to), None).unwrap();
    let mut out = Vec::new();
    diff.print(git2::DiffFormat::Patch, |_, _, line| {
        if line.content().starts_with(b"index ") {
            return true;
        }
        if matches!(line.origin(), '+' | '-' | ' ') {
            out.push(line.origin() as u8);
        }
        out.extend_from_slice(line.content());
        true
    })
    .unwrap();
    out
}

/// A repository at BEFORE, and the record of a run that changed it to AFTER (its commit is not
/// in the branch: HEAD stays at BEFORE, as in a fresh clone).
fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init(dir.path()).unwrap();
    let base = commit_file(&repo, "f.txt", BEFORE);
    let base_tree = repo.find_commit(base).unwrap().tree().unwrap();
    let tip = commit_file(&repo, "f.txt", AFTER);
    let tip_tree = repo.find_commit(tip).unwrap().tree().unwrap();
    let state = tempfile::tempdir().unwrap();
    let work = EarlierWork {
        number: 1,
        segment: 1,
        run_id: "r1".into(),
        base_commit: base.to_string(),
        commits: 1,
        families: vec!["lint".into()],
        files: vec![WorkFile {
            path: "f.txt".into(),
            before: Some(digest(BEFORE.as_bytes())),
            after: Some(digest(AFTER.as_bytes())),
        }],
        status: Status::Recorded,
        note: String::new(),
    };
    std::fs::create_dir(state.path().join(HISTORY_DIR)).unwrap();
    std::fs::write(
        work.patch_path(state.path()),
        patch(&repo, &base_tree, &tip_tree),
    )
    .unwrap();
    // Back to the base, as a fresh clone of the branch sees it.
    repo.reset(
        repo.find_commit(base).unwrap().as_object(),
        git2::ResetType::Hard,
        None,
    )
    .unwrap();
    drop((base_tree, tip_tree));
    Fixture {
        dir,
        repo,
        state,
        work,
    }
}

#[test]
fn earlier_work_is_judged_by_content() {
    type Setup = fn(&Fixture);
    let table: [(&str, Setup, Status); 8] = [
        ("untouched HEAD", |_| {}, Status::Pending),
        (
            "HEAD moved on above it",
            |f| {
                commit_file(&f.repo, "f.txt", &format!("0\n{BEFORE}"));
            },
            Status::Pending,
        ),
        (
            "landed, then a line added above it",
            |f| {
                commit_file(&f.repo, "f.txt", &format!("0\n{AFTER}"));
            },
            Status::Landed,
        ),
        (
            "squashed into HEAD as it was",
            |f| {
                commit_file(&f.repo, "f.txt", AFTER);
            },
            Status::Landed,
        ),
        (
            "landed, then edited elsewhere in the file",
            |f| {
                commit_file(&f.repo, "f.txt", "a\nB\nc\nd\ne\nf\ng\nH\n");
            },
            Status::Landed,
        ),
        (
            "in the work tree, not committed",
            |f| std::fs::write(f.dir.path().join("f.txt"), AFTER).unwrap(),
            Status::InWorkTree,
        ),
        (
            "the same line changed otherwise",
            |f| {
                commit_file(&f.repo, "f.txt", "a\nX\nc\nd\ne\nf\ng\nh\n");
            },
            Status::Stale,
        ),
        (
            "its patch is gone",
            |f| std::fs::remove_file(f.work.patch_path(f.state.path())).unwrap(),
            Status::Stale,
        ),
    ];
    for (case, setup, expected) in table {
        let fixture = fixture();
        setup(&fixture);
        let (status, note) = judge(&fixture.work, &fixture.repo, fixture.state.path());
        assert_eq!(status, expected, "{case}: {note}");
    }
}

#[test]
fn settled_records_are_not_judged_again() {
    let fixture = fixture();
    let mut earlier = vec![fixture.work.clone(), fixture.work.clone()];
    earlier[1].status = Status::Landed;
    earlier[1].note = "kept".into();
    let judged = judge_all(&mut earlier, &fixture.repo, fixture.state.path());
    assert_eq!(judged, [0]);
    assert_eq!(earlier[0].status, Status::Pending);
    assert_eq!(earlier[1].note, "kept");
}

#[test]
fn a_restored_record_is_data_and_never_leads_outside() {
    let fixture = fixture();
    let mut outside = fixture.work.clone();
    outside.files[0].path = "../../etc/passwd".into();
    let (status, note) = judge(&outside, &fixture.repo, fixture.state.path());
    assert_eq!(status, Status::Stale, "{note}");
    assert!(note.contains("outside the repository"), "{note}");
    // history/ replaced by a link to a folder that holds the same patch.
    let elsewhere = tempfile::tempdir().unwrap();
    let history = fixture.state.path().join(HISTORY_DIR);
    std::fs::rename(&history, elsewhere.path().join("h")).unwrap();
    std::os::unix::fs::symlink(elsewhere.path().join("h"), &history).unwrap();
    let (status, note) = judge(&fixture.work, &fixture.repo, fixture.state.path());
    assert_eq!(status, Status::Stale, "{note}");
    assert!(note.contains("history/ is not a folder"), "{note}");
}
