use super::*;

#[test]
fn the_forms_of_one_remote_agree() {
    let table = [
        ("https://github.com/Org/Repo", "github.com/org/repo"),
        ("https://github.com/org/repo.git", "github.com/org/repo"),
        ("https://github.com/org/repo/", "github.com/org/repo"),
        ("git@github.com:org/repo.git", "github.com/org/repo"),
        ("ssh://git@github.com/org/repo.git", "github.com/org/repo"),
        ("ssh://git@github.com:22/org/repo", "github.com/org/repo"),
        (
            "https://x-access-token:ghs_secret@github.com/org/repo",
            "github.com/org/repo",
        ),
        (
            "https://gitlab-ci-token:glcbt-64_secret@gitlab.example.com/Group/Sub/Proj.git",
            "gitlab.example.com/Group/Sub/Proj",
        ),
        (
            "git@gitlab.example.com:Group/Sub/Proj",
            "gitlab.example.com/Group/Sub/Proj",
        ),
        (
            "https://GITLAB.example.com:8443/g/p.git",
            "gitlab.example.com/g/p",
        ),
        ("/srv/git/project.git", "/srv/git/project"),
        ("file:///srv/git/project.git/", "/srv/git/project"),
        ("C:/repos/project", "C:/repos/project"),
        ("../upstream", "../upstream"),
    ];
    for (url, expected) in table {
        assert_eq!(normalize_remote(url), expected, "{url}");
    }
}

#[test]
fn no_credential_survives_normalisation() {
    for url in [
        "https://user:pa55word@example.com/o/r.git",
        "https://oauth2:tok@example.com:443/o/r",
        "ssh://user:pa55word@example.com/o/r",
    ] {
        let normal = normalize_remote(url);
        assert!(
            !normal.contains("pa55word") && !normal.contains("tok"),
            "{normal}"
        );
        assert!(!normal.contains('@'), "{normal}");
    }
}

#[test]
fn the_target_is_relative_to_the_root() {
    let root = Path::new("/runner/work/repo");
    let table = [
        ("/runner/work/repo", "."),
        ("/runner/work/repo/crates/core", "crates/core"),
        ("/runner/work/repo/dir with space/é", "dir with space/é"),
    ];
    for (target, expected) in table {
        assert_eq!(relative_target(root, Path::new(target)), expected);
    }
}

fn commit(repo: &git2::Repository, message: &str) -> git2::Oid {
    let signature = git2::Signature::now("t", "t@example.com").unwrap();
    let tree = {
        let mut index = repo.index().unwrap();
        repo.find_tree(index.write_tree().unwrap()).unwrap()
    };
    let parents: Vec<git2::Commit<'_>> = repo
        .head()
        .ok()
        .and_then(|head| head.peel_to_commit().ok())
        .into_iter()
        .collect();
    let parents: Vec<&git2::Commit<'_>> = parents.iter().collect();
    repo.commit(
        Some("HEAD"),
        &signature,
        &signature,
        message,
        &tree,
        &parents,
    )
    .unwrap()
}

fn repository(remote: Option<&str>) -> (tempfile::TempDir, git2::Repository) {
    let dir = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init(dir.path()).unwrap();
    if let Some(url) = remote {
        repo.remote("origin", url).unwrap();
    }
    (dir, repo)
}

#[test]
fn the_root_commit_decides_and_the_remote_does_not_matter_then() {
    let (dir, repo) = repository(Some("https://github.com/org/repo"));
    let root = commit(&repo, "root");
    commit(&repo, "second");
    let stored = Identity::of(&repo, dir.path(), dir.path()).with_roots(&repo);
    assert_eq!(stored.root_commits, vec![root.to_string()]);
    let (other_dir, other) = repository(Some("git@github.com:org/repo.git"));
    commit(&other, "another root");
    let current = Identity::of(&other, other_dir.path(), other_dir.path());
    let mismatch = stored.check(&current, &other).unwrap_err();
    assert_eq!(mismatch.field, "root commit");
    // A renamed remote does not matter while the root commit is there.
    repo.remote_set_url("origin", "https://example.com/moved")
        .unwrap();
    let moved = Identity::of(&repo, dir.path(), dir.path());
    assert_eq!(stored.check(&moved, &repo), Ok(Confirmed::ByRootCommit));
}

#[test]
fn without_root_commits_the_remote_decides() {
    let (dir, repo) = repository(Some("https://github.com/org/repo"));
    commit(&repo, "root");
    let stored = Identity::of(&repo, dir.path(), dir.path());
    assert!(stored.root_commits.is_empty());
    let current = Identity::of(&repo, dir.path(), dir.path());
    assert_eq!(stored.check(&current, &repo), Ok(Confirmed::ByRemote));
    let other = Identity {
        remote: Some("github.com/org/fork".into()),
        ..current.clone()
    };
    assert_eq!(stored.check(&other, &repo).unwrap_err().field, "remote");
    let none = Identity {
        remote: None,
        ..current
    };
    assert_eq!(stored.check(&none, &repo), Ok(Confirmed::Unconfirmed));
}

#[test]
fn another_target_in_the_same_repository_is_another_campaign() {
    let (dir, repo) = repository(None);
    commit(&repo, "root");
    let stored = Identity::of(&repo, dir.path(), &dir.path().join("a"));
    let current = Identity::of(&repo, dir.path(), &dir.path().join("b"));
    let mismatch = stored.check(&current, &repo).unwrap_err();
    assert_eq!(
        (mismatch.stored.as_str(), mismatch.current.as_str()),
        ("a", "b")
    );
}

#[test]
fn a_root_commit_in_the_store_but_not_in_heads_history_is_another_repository() {
    let (dir, repo) = repository(None);
    commit(&repo, "root");
    let stored = Identity::of(&repo, dir.path(), dir.path()).with_roots(&repo);
    // The same objects, and HEAD on a history of its own (an orphan branch).
    repo.set_head("refs/heads/another").unwrap();
    commit(&repo, "another root");
    let current = Identity::of(&repo, dir.path(), dir.path());
    assert_eq!(
        stored.check(&current, &repo).unwrap_err().field,
        "root commit"
    );
}
