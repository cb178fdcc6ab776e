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

#[path = "support/events.rs"]
mod events;
#[path = "support/session_daemon.rs"]
mod session_daemon;
use common::pulse::Pulse;
use dictum_engine::portal::RemoteKeyboard;
use kde::{tools, Kde, ALT_L, CONTROL_L, SPACE};
use session_daemon::Daemon;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

const HOTKEY: &str = "ctrl+alt+space";

/// The daemon's config (written whole and renamed: it never reads half a file).
fn write_config(dir: &Path, extra: &str) {
    let text = format!(
        "[stt]\nmodel = \"{}\"\nthreads = 2\n\n[dictation]\nhotkey = \"{HOTKEY}\"\n\n[inject]\nnotify_on_failure = false\n{extra}",
        common::tiny_model().display()
    );
    let tmp = dir.join("config.toml.tmp");
    std::fs::write(&tmp, text).expect("write config");
    std::fs::rename(&tmp, dir.join("config.toml")).expect("rename config");
}

/// Watches the text box's file from now: the instant its text first differs from `before`.
fn watch_growth(kde: &Kde, before: String) -> (Arc<AtomicBool>, mpsc::Receiver<Instant>) {
    let path = kde.typed.clone();
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let stopped = stop.clone();
    std::thread::spawn(move || {
        while !stopped.load(Ordering::Relaxed) {
            let now = std::fs::read_to_string(&path).unwrap_or_default();
            if now != before {
                let _ = tx.send(Instant::now());
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    });
    (stop, rx)
}

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
    d.next("state", Duration::from_secs(3), |e| {
        e["state"] == "recording"
    });
    std::thread::sleep(Duration::from_millis(100));
    common::pulse::play_and_wait(clip);
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(
        kde.typed(),
        before,
        "the shortcut's keys typed nothing while held"
    );
    let (stop, first) = watch_growth(kde, before.clone());
    for k in [SPACE, ALT_L, CONTROL_L] {
        kb.key(k, false).expect("release");
    }
    let released = Instant::now();
    let ev = d.next("dictation", Duration::from_secs(60), |_| true);
    eprintln!("dictation: {ev}");
    let text = ev["text"].as_str().unwrap_or_default().to_string();
    assert_eq!(ev["outcome"], "ok", "{ev}");
    assert!(!text.is_empty(), "no text: {ev}");
    assert!(
        text.to_lowercase().contains(word),
        "not the clip's words ({word:?}): {text:?}"
    );
    let expected = format!("{before}{text} ");
    let (got, _) = kde.wait_typed(&expected);
    // Anything more (a late duplicate, a stray space from the chord) shows up by now.
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    let got_all = kde.typed();
    assert_eq!(got, expected, "what the text box received; {ev}");
    assert_eq!(got_all, expected, "nothing more arrived; {ev}");
    // Typing falls back to a paste for text the keyboard layout lacks.
    let method = if paste || !text.is_ascii() {
        "portal_paste"
    } else {
        "portal"
    };
    assert_eq!(ev["inject_method"], method, "{ev}");
    assert!(ev["inject_error"].is_null(), "{ev}");

    let first_ms = first
        .recv_timeout(Duration::from_secs(1))
        .map(|at| at.saturating_duration_since(released).as_secs_f64() * 1e3)
        .expect("the watcher saw the text arrive");
    let f = |k: &str| ev[k].as_f64().map_or("-".into(), |v| format!("{v:.0}"));
    eprintln!(
        "KDE 5.27 portals, {clip} ({}): {} chars, inject_method {}; release→first char (outside, file) {first_ms:.0} ms; release_to_text_ms {}; release_to_typed_ms {}; tail_stt_ms {}",
        if paste { "paste" } else { "type" },
        text.chars().count() + 1,
        ev["inject_method"],
        f("release_to_text_ms"),
        f("release_to_typed_ms"),
        f("tail_stt_ms"),
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
    write_config(dir.path(), "");

    let (mut d, ready) = Daemon::start(kde.session_env(), dir.path(), "DICTUM_LIVE_KDE_ARGS");
    assert_eq!(ready["hotkey_path"], "portal", "{ready}");
    let route = ready["inject_route"].as_str().unwrap_or_default();
    assert!(
        route.starts_with("portal"),
        "inject_route {route:?}: {ready}"
    );

    // The user's keyboard: KWin's input, through a RemoteDesktop session of the test's own.
    let mut kb = RemoteKeyboard::connect_on(&kde.bus(), &dir.path().join("test-keyboard.token"))
        .expect("the test's RemoteDesktop keyboard");
    assert_eq!(kde.typed(), "", "the text box starts empty");
    dictate(&kde, &mut kb, &mut d, "jfk.wav", "country", false);

    // Paste mode, applied without a restart: the clipboard and Ctrl+V through the portal.
    write_config(dir.path(), "method = \"paste\"\n");
    d.wait_notice("config applied");
    dictate(&kde, &mut kb, &mut d, "goforward.wav", "forward", true);
    drop(kb);
    drop(d);
}
