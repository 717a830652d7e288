//! The rehearsal decides all or nothing: every patch in order, or none.

use super::*;

fn patch(path: &str, before: Option<&str>, after: Option<&str>) -> Vec<u8> {
    let mut patch = git2::Patch::from_buffers(
        before.unwrap_or_default().as_bytes(),
        before.map(|_| Path::new(path)),
        after.unwrap_or_default().as_bytes(),
        after.map(|_| Path::new(path)),
        None,
    )
    .unwrap();
    patch.to_buf().unwrap().to_vec()
}

#[test]
fn patches_are_rehearsed_in_order_all_or_nothing() {
    let one = patch("f.txt", Some("a\nb\nc\n"), Some("a\nB\nc\n"));
    let two = patch("f.txt", Some("a\nB\nc\n"), Some("a\nB\nC\n"));
    let other = patch("f.txt", Some("a\nb\nc\n"), Some("x\nb\nc\n"));
    let files = |text: &'static str| move |_: &Path| Some(text.as_bytes().to_vec());
    type Case = (&'static str, Vec<Vec<u8>>, &'static str, bool);
    let table: Vec<Case> = vec![
        ("one", vec![one.clone()], "a\nb\nc\n", true),
        (
            "one, then the next that builds on it",
            vec![one.clone(), two.clone()],
            "a\nb\nc\n",
            true,
        ),
        ("the next alone", vec![two.clone()], "a\nb\nc\n", false),
        (
            "one, then one that needs what it changed",
            vec![one.clone(), other],
            "a\nb\nc\n",
            false,
        ),
        (
            "moved on above",
            vec![one.clone(), two],
            "top\na\nb\nc\n",
            true,
        ),
        ("already applied", vec![one], "a\nB\nc\n", false),
    ];
    for (case, texts, content, applies) in table {
        let rehearsed = rehearse(&texts, files(content));
        assert_eq!(rehearsed.is_ok(), applies, "{case}: {rehearsed:?}");
        if let Ok(originals) = rehearsed {
            assert_eq!(
                originals,
                [(PathBuf::from("f.txt"), Some(content.as_bytes().to_vec()))]
            );
        }
    }
}
