use super::{rest_after, Sent};

fn sent(text: &str, ok: bool) -> Sent {
    Sent {
        text: text.into(),
        ok,
        method: "x11_type".into(),
        chars: text.chars().count(),
        handed_over_ms: 1.0,
    }
}

#[test]
fn words_typed_ahead_in_two_parts_add_up() {
    let mut ahead = sent("One. ", true);
    ahead.then(sent("Two three. ", true));
    assert_eq!(ahead.chars, 16);
    assert!(ahead.ok);
    assert_eq!(
        rest_after("One. Two three. Four.", &ahead.text).as_deref(),
        Some("Four.")
    );
    // A part that did not reach the window spoils the whole: the text is typed whole.
    ahead.then(sent("Four. ", false));
    assert!(!ahead.ok);
}

#[test]
fn the_rest_is_what_follows_the_words_typed_ahead() {
    let rows: &[(&str, &str, Option<&str>)] = &[
        ("One. Two.", "One. ", Some("Two.")),
        ("One. Two three.", "One.", Some("Two three.")),
        // All typed ahead, and the profile dropped the final period since.
        ("One", "One. ", Some("")),
        ("One.", "One. ", Some("")),
        // The text does not start with them: typed whole.
        ("Another text.", "One. ", None),
        ("On. Two.", "One. ", None),
    ];
    for (text, typed, rest) in rows {
        assert_eq!(
            rest_after(text, typed).as_deref(),
            *rest,
            "{text:?} after {typed:?}"
        );
    }
}
