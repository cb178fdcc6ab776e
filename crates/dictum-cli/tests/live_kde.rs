//! End to end on KDE Plasma 5.27 through the XDG portals, as a user of it would run Dictum: the
//! real KDE stack headless (`dictum-engine/tests/common/kde.rs`: KWin `--virtual`, the real
//! `xdg-desktop-portal` + `-kde` on a private session bus, a native GTK Wayland text box
//! focused), a real sound server (a private PulseAudio whose virtual microphone is fed by
//! `paplay`), and `dictum run --json` in the session's environment only (WAYLAND_DISPLAY, no
//! DISPLAY, XDG_CURRENT_DESKTOP=KDE, the private bus).
//!
//! What this proves: the daemon takes its hotkey from the GlobalShortcuts portal and types
//! through the RemoteDesktop portal (its ready event says so); Ctrl+Alt+Space held on KWin's
//! input (a fake-input keyboard of the test's own RemoteDesktop session, as `portal_kde.rs`
//! does) starts recording, releasing it ends the dictation, and exactly the dictation's text
//! plus a trailing space lands in the window; the shortcut's own keys type nothing. Then the
//! same in paste mode (config changed without a restart): the clipboard and Ctrl+V through the
//! portal, `inject_method` `portal_paste`. Prints, for each, the
//! release → first character seen from outside (the text box's file) beside the daemon's
//! `release_to_text_ms` / `release_to_typed_ms`.
//!
//! `DICTUM_LIVE_KDE_ARGS="--no-hotkey"` adds arguments to `dictum run` (to see the test fail
//! when the daemon takes no hotkey). Skipped only when the tools are missing and
//! `DICTUM_REQUIRE_E2E` is unset.
#![cfg(target_os = "linux")]

#[path = "../../dictum-engine/tests/common/mod.rs"]
mod common;
#[path = "../../dictum-engine/tests/common/kde.rs"]
mod kde;
#[path = "../../dictum-engine/tests/common/portal_desktop.rs"]
mod portal_desktop;

#[path = "support/events.rs"]
mod events;
#[path = "support/session_daemon.rs"]
mod session_daemon;
use common::pulse::Pulse;
use dictum_engine::inject::backends::portal::RemoteKeyboard;
use kde::{tools, Kde, ALT_L, CONTROL_L, SPACE};
use session_daemon::{check_typed, ms, speak, write_config, Daemon, Growth};
use std::time::{Duration, Instant};

const HOTKEY: &str = "ctrl+alt+space";

/// One push-to-talk dictation of `clip` (whose transcript has `word`) with the chord held on
/// KWin's input; asserts exactly its text plus a space arrived in the text box, by `paste` or
/// typing, and prints the latencies.
fn dictate(
    kde: &Kde,
    kb: &mut RemoteKeyboard,
    d: &mut Daemon,
    clip: &str,
    word: &str,
    paste: bool,
) {
    let before = kde.typed();
    for k in [CONTROL_L, ALT_L, SPACE] {
        kb.key(k, true).expect("press");
    }
    speak(d, clip);
    assert_eq!(
        kde.typed(),
        before,
        "the shortcut's keys typed nothing while held"
    );
    let growth = Growth::watch(kde, before.clone());
    for k in [SPACE, ALT_L, CONTROL_L] {
        kb.key(k, false).expect("release");
    }
    let released = Instant::now();
    let (ev, text) = check_typed(
        kde,
        d,
        Duration::from_secs(60),
        &growth,
        &before,
        word,
        paste,
    );

    let first_ms = growth.first_ms(released);
    eprintln!(
        "KDE 5.27 portals, {clip} ({}): {} chars, inject_method {}; release→first char (outside, file) {first_ms:.0} ms; release_to_text_ms {}; release_to_typed_ms {}; tail_stt_ms {}",
        if paste { "paste" } else { "type" },
        text.chars().count() + 1,
        ev["inject_method"],
        ms(&ev, "release_to_text_ms"),
        ms(&ev, "release_to_typed_ms"),
        ms(&ev, "tail_stt_ms"),
    );
}

#[test]
fn push_to_talk_and_typing_through_the_kde_portals() {
    let Some(tools) = tools() else {
        return;
    };
    // PulseAudio first: it puts its address into this process's environment.
    let _pulse = Pulse::start();
    let kde = Kde::start(&tools);
    let dir = tempfile::tempdir().expect("tempdir");
    let mut d = session_daemon::start_on_portal(
        kde.session_env(),
        dir.path(),
        HOTKEY,
        "DICTUM_LIVE_KDE_ARGS",
        "portal",
    );

    // The user's keyboard: KWin's input, through a RemoteDesktop session of the test's own.
    let mut kb = RemoteKeyboard::connect_on(&kde.bus(), &dir.path().join("test-keyboard.token"))
        .expect("the test's RemoteDesktop keyboard");
    assert_eq!(kde.typed(), "", "the text box starts empty");
    dictate(&kde, &mut kb, &mut d, "jfk.wav", "country", false);

    // Paste mode, applied without a restart: the clipboard and Ctrl+V through the portal.
    write_config(dir.path(), HOTKEY, "method = \"paste\"\n");
    d.wait_notice("config applied");
    dictate(&kde, &mut kb, &mut d, "goforward.wav", "forward", true);
    drop(kb);
    drop(d);
}
