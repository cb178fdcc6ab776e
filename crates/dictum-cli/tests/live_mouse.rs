//! A mouse button as the push-to-talk key, end to end as a user would: `dictum run` with
//! `[dictation] hotkey = "mouse:9"` (the thumb button) on a real X display (Xvfb) with a real
//! sound server (a private PulseAudio whose virtual microphone is fed by `paplay`); the button
//! is held with `xdotool mousedown 9` / `mouseup 9` (XTEST, as a mouse would) while a clip
//! plays, and the words must be typed into a real xterm, read back from a file. The cancel key
//! while the button is held types nothing; in toggle mode one click starts and the next stops.
//! `dictum doctor` says the button can be grabbed; on Wayland it says why not and how the
//! compositor binds it.
//!
//! Skipped only when the tools are missing and `DICTUM_REQUIRE_E2E` is unset (`scripts/test`
//! sets it and installs them).

#[path = "../../dictum-engine/tests/common/mod.rs"]
mod common;

#[path = "support/events.rs"]
mod events;

#[path = "support/x11_daemon.rs"]
mod x11_daemon;

use common::pulse::{play_and_wait, reference};
use dictum_engine::eval::WerCount;
use std::path::Path;
use std::process::Command;
use std::time::Duration;
use x11_daemon::{
    append_config, dictate_with, doctor_hotkey, typed_line, typed_ok, write_initial_config, Daemon,
    Live, Press,
};

const BUTTON: &str = "mouse:9";

/// The initial config with the thumb button as the hotkey.
fn button_config(dir: &Path) {
    write_initial_config(dir);
    append_config(dir, &format!("\n[dictation]\nhotkey = \"{BUTTON}\"\n"));
}

#[test]
fn the_thumb_button_dictates_into_a_real_window() {
    let Some(live) = Live::start() else {
        return;
    };
    let (x, dir) = (&live.x, live.path());
    let term = live.term("Dictum target");
    button_config(dir);

    let check = live.doctor_hotkey();
    assert_eq!(check["status"], "ok", "{check}");
    assert!(check["detail"].to_string().contains(BUTTON), "{check}");

    let mut d = Daemon::start_expecting(dir, x, BUTTON);
    let mut seen = 0usize;
    let (down, up) = (["mousedown", "9"], ["mouseup", "9"]);
    let press = Press {
        down: &down,
        up: &up,
    };

    // 1. Push-to-talk: held while the clip plays, the words are typed at the release.
    for (name, bound) in [("jfk.wav", 0.15), ("goforward.wav", 0.25)] {
        let ev = dictate_with(x, &mut d, press, &common::clip(name), 500);
        let line = typed_ok(&ev, &term, x, &mut seen);
        let w = WerCount::of(&reference(name), &line);
        assert!(w.rate() <= bound, "{name}: {line:?} ({w:?})");
    }

    // 2. The cancel key while the button is held: nothing typed.
    x.xdotool(&down);
    std::thread::sleep(Duration::from_millis(100));
    play_and_wait("cards-001.wav");
    x.xdotool(&["key", "Escape"]);
    d.wait_notice("cancelled");
    x.xdotool(&up);
    d.no_dictation(Duration::from_millis(1500));
    assert_eq!(typed_line(&term, x, &mut seen), "");

    // 3. Toggle mode, applied without a restart: one click starts, the next stops.
    d.write_config(&format!(
        "method = \"type\"\n\n[dictation]\nhotkey = \"{BUTTON}\"\nmode = \"toggle\"\n"
    ));
    d.wait_notice("config applied");
    x.xdotool(&["click", "9"]);
    std::thread::sleep(Duration::from_millis(100));
    play_and_wait("goforward.wav");
    std::thread::sleep(Duration::from_millis(300));
    x.xdotool(&["click", "9"]);
    let ev = d.next("dictation", Duration::from_secs(30));
    let line = typed_line(&term, x, &mut seen);
    eprintln!("toggle: {ev} -> {line:?}");
    assert_eq!(ev["outcome"], "ok", "{ev}");
    assert_eq!(line.trim_end(), ev["text"].as_str().unwrap_or_default());
    let w = WerCount::of(&reference("goforward.wav"), &line);
    assert!(w.rate() <= 0.25, "toggle: {line:?} ({w:?})");

    // 4. Back to a key: the button is let go and does nothing.
    d.write_config("method = \"type\"\n\n[dictation]\nhotkey = \"f9\"\n");
    d.wait_notice("config applied");
    x.xdotool(&["click", "9"]);
    d.no_dictation(Duration::from_millis(1000));
}

#[test]
fn on_wayland_doctor_says_the_compositor_must_bind_the_button() {
    let dir = tempfile::tempdir().expect("tempdir");
    button_config(dir.path());
    // A Wayland session with neither a portal nor XWayland: the compositor's shortcut path.
    let check = doctor_hotkey(
        dir.path(),
        &[
            ("WAYLAND_DISPLAY", "wayland-dictum-none"),
            ("XDG_SESSION_TYPE", "wayland"),
            (
                "DBUS_SESSION_BUS_ADDRESS",
                "unix:path=/nonexistent/dictum-bus",
            ),
        ],
        &["DISPLAY"],
    );
    assert_eq!(check["status"], "warn", "{check}");
    let text = check.to_string();
    assert!(text.contains("cannot be grabbed"), "{check}");
    assert!(text.contains("dictum ctl press"), "{check}");
    assert!(text.contains("dictum ctl release"), "{check}");

    // Clicking buttons are refused before anything is grabbed, with the reason.
    let dir = tempfile::tempdir().expect("tempdir");
    write_initial_config(dir.path());
    append_config(dir.path(), "\n[dictation]\nhotkey = \"mouse:1\"\n");
    let out = Command::new(env!("CARGO_BIN_EXE_dictum"))
        .args(["doctor", "--json"])
        .env("DICTUM_DATA_DIR", dir.path())
        .env("DICTUM_CONFIG", dir.path().join("config.toml"))
        .output()
        .expect("doctor");
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(all.contains("clicking"), "{all}");
}
