//! End to end on GNOME 43 (Debian 12) as a user of it would run Dictum: the real GNOME stack
//! headless (`dictum-engine/tests/common/gnome.rs`: `mutter --headless --wayland`, the real
//! `xdg-desktop-portal` + `-gnome` on a private session bus, a native GTK Wayland text box
//! focused), a real sound server (a private PulseAudio whose virtual microphone is fed by
//! `paplay`), and `dictum run --json` in the session's environment only (WAYLAND_DISPLAY, no
//! DISPLAY, XDG_CURRENT_DESKTOP=GNOME, the private bus).
//!
//! What this proves: the daemon starts on GNOME 43 without `--no-hotkey`, says its hotkey is a
//! compositor shortcut in toggle mode (GNOME 43 has no GlobalShortcuts portal; `dictum shortcut
//! install` writes a custom shortcut running `dictum ctl toggle`) and that it types through the
//! RemoteDesktop portal; `dictum ctl toggle` (what that shortcut runs) starts and stops a
//! dictation; at the first dictation GNOME asks for remote control (answered with keys, as a
//! user would: `common/gnome.rs`), and exactly the dictation's text plus a space lands in the
//! window; a second dictation needs no new answer (the session is kept). Prints release →
//! first character seen from outside beside the daemon's own figures.
//!
//! Skipped only when the tools are missing and `DICTUM_REQUIRE_E2E` is unset.
#![cfg(target_os = "linux")]

#[path = "../../dictum-engine/tests/common/mod.rs"]
mod common;
#[path = "../../dictum-engine/tests/common/gnome.rs"]
mod gnome;
#[path = "../../dictum-engine/tests/common/portal_desktop.rs"]
mod portal_desktop;

#[path = "support/events.rs"]
mod events;
#[path = "support/session_daemon.rs"]
mod session_daemon;
use common::pulse::Pulse;
use gnome::{tools, Gnome};
use session_daemon::{check_typed, ms, speak, Daemon, Growth};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const HOTKEY: &str = "ctrl+alt+d";

/// `dictum ctl toggle`, as GNOME's custom shortcut runs it, in the session's environment.
fn ctl_toggle(gnome: &Gnome, dir: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_dictum"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(gnome.session_env())
        .env("DICTUM_DATA_DIR", dir.join("data"))
        .args(["ctl", "toggle"])
        .output()
        .expect("run dictum ctl toggle");
    assert!(
        out.status.success(),
        "dictum ctl toggle: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One toggle dictation of `clip` (whose transcript has `word`); `consent`: GNOME will ask
/// (the first dictation). Asserts exactly its text plus a space arrived in the text box.
fn dictate(gnome: &Gnome, dir: &Path, d: &mut Daemon, clip: &str, word: &str, consent: bool) {
    let before = gnome.typed();
    ctl_toggle(gnome, dir);
    speak(d, clip);
    let growth = Growth::watch(gnome, before.clone());
    let dialogs = gnome.dialogs_shown();
    ctl_toggle(gnome, dir);
    let released = Instant::now();
    let answered = consent.then(|| {
        let dialog_after = gnome.answer_consent(dialogs);
        eprintln!(
            "GNOME asked for remote control {:.0} ms after the release",
            dialog_after.as_secs_f64() * 1e3
        );
    });
    let (ev, text) = check_typed(
        gnome,
        d,
        Duration::from_secs(90),
        &growth,
        &before,
        word,
        false,
    );
    if !consent {
        assert_eq!(gnome.dialogs_shown(), dialogs, "no second dialog");
    }
    let _ = answered;
    let first_ms = growth.first_ms(released);
    eprintln!(
        "GNOME 43 portal, {clip}{}: {} chars, inject_method {}; release→first char (outside, file) {first_ms:.0} ms; release_to_text_ms {}; release_to_typed_ms {}",
        if consent { " (with the consent dialog)" } else { "" },
        text.chars().count() + 1,
        ev["inject_method"],
        ms(&ev, "release_to_text_ms"),
        ms(&ev, "release_to_typed_ms"),
    );
}

#[test]
fn toggle_dictation_and_typing_through_the_gnome_portal() {
    let Some(tools) = tools() else {
        return;
    };
    // PulseAudio first: it puts its address into this process's environment.
    let _pulse = Pulse::start();
    let gnome = Gnome::start(&tools);
    let dir = tempfile::tempdir().expect("tempdir");
    let mut d = session_daemon::start_on_portal(
        gnome.session_env(),
        dir.path(),
        HOTKEY,
        "DICTUM_LIVE_GNOME_ARGS",
        "compositor",
    );
    assert_eq!(gnome.typed(), "", "the text box starts empty");
    dictate(&gnome, dir.path(), &mut d, "jfk.wav", "country", true);
    dictate(
        &gnome,
        dir.path(),
        &mut d,
        "goforward.wav",
        "forward",
        false,
    );
    drop(d);
}
