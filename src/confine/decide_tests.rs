use super::*;

#[test]
fn setting_and_kernel_make_the_decision() {
    use ConfineMode::{Auto, Off, Required};
    let confine = |abi: u32, missing: &[&'static str]| {
        Ok(Decision::Confine {
            abi,
            missing: missing.to_vec(),
        })
    };
    let table: Vec<(ConfineMode, Option<u32>, Result<Decision, ()>)> = vec![
        (Off, None, Ok(Decision::Off)),
        (Off, Some(7), Ok(Decision::Off)),
        (Auto, None, Ok(Decision::Unavailable)),
        (Auto, Some(0), Ok(Decision::Unavailable)),
        (
            Auto,
            Some(1),
            confine(1, &["refer", "truncate", "ioctl_dev"]),
        ),
        (Auto, Some(2), confine(2, &["truncate", "ioctl_dev"])),
        (Auto, Some(4), confine(4, &["ioctl_dev"])),
        (Auto, Some(5), confine(5, &[])),
        (Auto, Some(7), confine(7, &[])),
        (Auto, Some(42), confine(42, &[])),
        (Required, None, Err(())),
        (Required, Some(0), Err(())),
        (Required, Some(4), Err(())),
        (Required, Some(5), confine(5, &[])),
        (Required, Some(7), confine(7, &[])),
    ];
    for (mode, abi, expected) in table {
        assert_eq!(
            decide(mode, abi).map_err(|_| ()),
            expected,
            "{mode:?} with ABI {abi:?}"
        );
    }
}

#[test]
fn a_refusal_says_what_is_missing() {
    let error = decide(ConfineMode::Required, Some(2)).unwrap_err();
    assert!(
        error.contains("ABI 2") && error.contains("truncate, ioctl_dev"),
        "{error}"
    );
    let error = decide(ConfineMode::Required, None).unwrap_err();
    assert!(error.contains("no Landlock"), "{error}");
}

#[test]
fn the_note_names_the_state() {
    let table = [
        (Decision::Off, ConfinementState::Off, None),
        (Decision::Unavailable, ConfinementState::Unavailable, None),
        (
            Decision::Confine {
                abi: 7,
                missing: vec![],
            },
            ConfinementState::Enforced,
            Some(7),
        ),
        (
            Decision::Confine {
                abi: 3,
                missing: vec!["ioctl_dev"],
            },
            ConfinementState::Partial,
            Some(3),
        ),
    ];
    for (decision, state, abi) in table {
        let note = decision.note();
        assert_eq!((note.state, note.abi), (state, abi), "{decision:?}");
    }
}

#[test]
fn modes_parse() {
    assert_eq!(ConfineMode::parse("auto"), Ok(ConfineMode::Auto));
    assert_eq!(ConfineMode::parse("off"), Ok(ConfineMode::Off));
    assert_eq!(ConfineMode::parse("required"), Ok(ConfineMode::Required));
    let error = ConfineMode::parse("on").unwrap_err();
    assert!(error.contains("auto, off or required"), "{error}");
}
