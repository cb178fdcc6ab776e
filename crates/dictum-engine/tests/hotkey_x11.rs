//! The X11 hotkey against a real X server (Xvfb): presses and releases sent with xdotool
//! (XTEST, as a keyboard would) must reach the callback once each, also with CapsLock on and
//! while the key auto-repeats; a key another client holds must fail with a clear message;
//! dropping the hotkeys must end their thread (a test that hangs here is the failure).
//!
//! Skipped only when Xvfb/xdotool are missing and `DICTUM_REQUIRE_E2E` is unset.

mod common;

use common::x11::{tools_present, Xvfb};
use dictum_engine::hotkey::{Hotkeys, KeyEvent};
use std::sync::mpsc;
use std::time::Duration;

fn hotkeys() -> (Hotkeys, mpsc::Receiver<(u32, bool)>) {
    let (tx, rx) = mpsc::channel();
    let hk = Hotkeys::new(move |id, pressed| {
        let _ = tx.send((id, pressed));
    })
    .expect("hotkeys on Xvfb");
    (hk, rx)
}

fn next(hk: &Hotkeys, rx: &mpsc::Receiver<(u32, bool)>) -> Option<KeyEvent> {
    let (id, pressed) = rx.recv_timeout(Duration::from_secs(5)).ok()?;
    hk.classify(id, pressed)
}

fn nothing_more(rx: &mpsc::Receiver<(u32, bool)>) {
    if let Ok(ev) = rx.recv_timeout(Duration::from_millis(300)) {
        panic!("unexpected hotkey event {ev:?}");
    }
}

#[test]
fn press_and_release_arrive_once_each_also_with_capslock_and_auto_repeat() {
    if !tools_present() {
        return;
    }
    let x = Xvfb::start();
    let (mut hk, rx) = hotkeys();
    hk.set_main("ctrl+alt+space").expect("grab");

    x.xdotool(&["keydown", "ctrl+alt+space"]);
    assert_eq!(next(&hk, &rx), Some(KeyEvent::Pressed));
    x.xdotool(&["keyup", "ctrl+alt+space"]);
    assert_eq!(next(&hk, &rx), Some(KeyEvent::Released));
    nothing_more(&rx);

    // Held past the X server's auto-repeat delay (660 ms): still one press, one release.
    x.xdotool(&["keydown", "ctrl+alt+space"]);
    std::thread::sleep(Duration::from_millis(1200));
    x.xdotool(&["keyup", "ctrl+alt+space"]);
    assert_eq!(next(&hk, &rx), Some(KeyEvent::Pressed));
    assert_eq!(next(&hk, &rx), Some(KeyEvent::Released));
    nothing_more(&rx);

    // CapsLock on: the lock modifier must not hide the hotkey.
    x.xdotool(&["key", "Caps_Lock"]);
    x.xdotool(&["keydown", "ctrl+alt+space"]);
    x.xdotool(&["keyup", "ctrl+alt+space"]);
    assert_eq!(next(&hk, &rx), Some(KeyEvent::Pressed));
    assert_eq!(next(&hk, &rx), Some(KeyEvent::Released));
    x.xdotool(&["key", "Caps_Lock"]);
    nothing_more(&rx);

    // Other modifiers: not the hotkey.
    x.xdotool(&["key", "ctrl+space"]);
    nothing_more(&rx);

    // Re-registered as another key: the old one is let go, the new one works.
    hk.set_main("f9").expect("grab f9");
    x.xdotool(&["key", "ctrl+alt+space"]);
    nothing_more(&rx);
    x.xdotool(&["key", "F9"]);
    assert_eq!(next(&hk, &rx), Some(KeyEvent::Pressed));
    assert_eq!(next(&hk, &rx), Some(KeyEvent::Released));

    // The cancel key only counts while armed.
    hk.set_cancel("escape").expect("cancel key");
    x.xdotool(&["key", "Escape"]);
    nothing_more(&rx);
    hk.arm_cancel(true);
    x.xdotool(&["key", "Escape"]);
    assert_eq!(next(&hk, &rx), Some(KeyEvent::Cancel));
    hk.arm_cancel(false);
    drop(hk);
}

#[test]
fn a_key_another_client_holds_is_refused_with_a_clear_message() {
    if !tools_present() {
        return;
    }
    let _x = Xvfb::start();
    let (mut first, _rx1) = hotkeys();
    first.set_main("super+shift+d").expect("first grab");
    let (mut second, _rx2) = hotkeys();
    let err = second.set_main("super+shift+d").expect_err("taken");
    assert!(err.contains("already taken"), "{err}");
    // The refused one holds nothing: once the first lets go, it can have the key.
    drop(first);
    second.set_main("super+shift+d").expect("free again");
}

#[test]
fn a_thumb_mouse_button_presses_and_releases_like_the_key() {
    if !tools_present() {
        return;
    }
    let x = Xvfb::start();
    let (mut hk, rx) = hotkeys();
    hk.set_main("mouse:9").expect("grab the thumb button");

    x.xdotool(&["mousedown", "9"]);
    assert_eq!(next(&hk, &rx), Some(KeyEvent::Pressed));
    // Held a while, with another button clicked meanwhile: still one press, one release.
    std::thread::sleep(Duration::from_millis(300));
    x.xdotool(&["click", "1"]);
    x.xdotool(&["mouseup", "9"]);
    assert_eq!(next(&hk, &rx), Some(KeyEvent::Released));
    nothing_more(&rx);

    // CapsLock on: the lock modifier must not hide the button.
    x.xdotool(&["key", "Caps_Lock"]);
    x.xdotool(&["click", "9"]);
    assert_eq!(next(&hk, &rx), Some(KeyEvent::Pressed));
    assert_eq!(next(&hk, &rx), Some(KeyEvent::Released));
    x.xdotool(&["key", "Caps_Lock"]);

    // Other buttons are not the hotkey.
    x.xdotool(&["click", "8"]);
    x.xdotool(&["click", "1"]);
    nothing_more(&rx);

    // The cancel key works while the button is held.
    hk.set_cancel("escape").expect("cancel key");
    x.xdotool(&["mousedown", "9"]);
    assert_eq!(next(&hk, &rx), Some(KeyEvent::Pressed));
    hk.arm_cancel(true);
    x.xdotool(&["key", "Escape"]);
    assert_eq!(next(&hk, &rx), Some(KeyEvent::Cancel));
    // Escape's own release comes too, and means nothing.
    assert_eq!(next(&hk, &rx), None);
    hk.arm_cancel(false);
    x.xdotool(&["mouseup", "9"]);
    assert_eq!(next(&hk, &rx), Some(KeyEvent::Released));

    // Paused, and replaced by a key: the button is let go.
    hk.set_paused(true).expect("pause");
    x.xdotool(&["click", "9"]);
    nothing_more(&rx);
    hk.set_paused(false).expect("resume");
    x.xdotool(&["click", "9"]);
    assert_eq!(next(&hk, &rx), Some(KeyEvent::Pressed));
    assert_eq!(next(&hk, &rx), Some(KeyEvent::Released));
    hk.set_main("f9").expect("grab f9");
    x.xdotool(&["click", "9"]);
    nothing_more(&rx);
    x.xdotool(&["key", "F9"]);
    assert_eq!(next(&hk, &rx), Some(KeyEvent::Pressed));
    assert_eq!(next(&hk, &rx), Some(KeyEvent::Released));
    drop(hk);
}

#[test]
fn a_mouse_button_another_client_holds_is_refused_and_clicks_are_never_grabbed() {
    if !tools_present() {
        return;
    }
    let _x = Xvfb::start();
    let (mut first, _rx1) = hotkeys();
    first.set_main("mouse:8").expect("first grab");
    let (mut second, _rx2) = hotkeys();
    let err = second.set_main("mouse:8").expect_err("taken");
    assert!(err.contains("already taken"), "{err}");
    drop(first);
    second.set_main("mouse:8").expect("free again");
    // Left click and the wheel never become the hotkey.
    for b in ["mouse:1", "mouse:3", "mouse:4"] {
        let err = second.set_main(b).expect_err(b);
        assert!(err.contains("away from every application"), "{b}: {err}");
    }
}
