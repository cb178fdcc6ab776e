use super::*;

fn injector(config: InjectConfig, session: Session) -> Injector {
    Injector::unconnected(config, session, Abilities::default())
}

fn x11_session() -> Session {
    Session::from_env(|k| (k == "DISPLAY").then(|| ":0".to_string()))
}

#[test]
fn empty_or_blank_text_does_nothing() {
    let mut inj = injector(InjectConfig::default(), x11_session());
    for text in ["", "   ", "\n"] {
        let r = inj.inject(text);
        assert_eq!(r.method, None);
        assert_eq!(r.chars, 0);
        assert_eq!(r.error, None);
    }
    // Nothing was even connected.
    assert!(inj.x.x11.is_none() && inj.x.keys.is_none() && inj.x.board.is_none());
}

#[test]
fn control_characters_never_reach_the_keyboard() {
    let inj = injector(InjectConfig::default(), x11_session());
    assert_eq!(
        inj.final_text("echo one;\ntouch tmp\r pwned\u{1b}[A"),
        "echo one;touch tmp pwned[A "
    );
}

#[test]
fn trailing_space_is_added_once() {
    let inj = injector(InjectConfig::default(), x11_session());
    assert_eq!(inj.final_text("Hello."), "Hello. ");
    assert_eq!(inj.final_text("Hello. "), "Hello. ");
    let inj = injector(
        InjectConfig {
            trailing_space: false,
            ..InjectConfig::default()
        },
        x11_session(),
    );
    assert_eq!(inj.final_text("Hello."), "Hello.");
}

#[test]
fn a_wayland_session_without_any_path_reports_why() {
    let wayland = Session::from_env(|k| {
        (k == "WAYLAND_DISPLAY").then(|| "dictum-test-no-such-display".to_string())
    });
    let mut inj = injector(
        InjectConfig {
            notify_on_failure: false,
            ..InjectConfig::default()
        },
        wayland,
    );
    let r = inj.inject("hello");
    let err = r.error.expect("an error");
    assert!(err.starts_with("no way to type"), "{err}");
    assert!(err.contains("clipboard"), "{err}");
    assert_eq!(r.app_class, None);
    assert_eq!(r.method, None, "no clipboard either");
}

#[test]
fn record_fills_the_history_row() {
    use crate::store::{Entry, Source};
    let mut entry = Entry::new(Source::Mic);
    InjectReport::default().record(&mut entry);
    assert_eq!(entry.inject_ms, None, "empty text: the stage did not run");
    assert_eq!(entry.error, None);

    let failed = InjectReport {
        method: Some(Delivery::ClipboardOnly),
        app_class: Some("XTerm".into()),
        window_title: Some("vim notes.txt".into()),
        inject_ms: 12.5,
        error: Some("typing failed: no XTEST".into()),
        ..InjectReport::default()
    };
    failed.record(&mut entry);
    assert_eq!(entry.app_class.as_deref(), Some("XTerm"));
    assert_eq!(entry.window_title.as_deref(), Some("vim notes.txt"));
    assert_eq!(entry.inject_ms, Some(12.5));
    assert_eq!(entry.error_kind.as_deref(), Some("inject"));
    assert_eq!(entry.error.as_deref(), Some("typing failed: no XTEST"));
}

#[test]
fn chars_per_second() {
    let r = InjectReport {
        method: Some(Delivery::Typed(TypePath::X11)),
        chars: 100,
        inject_ms: 500.0,
        ..InjectReport::default()
    };
    assert_eq!(r.chars_per_s(), 200.0);
    assert_eq!(InjectReport::default().chars_per_s(), 0.0);
}
