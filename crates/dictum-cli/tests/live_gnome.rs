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

#[path = "support/events.rs"]
mod events;
#[path = "support/session_daemon.rs"]
mod session_daemon;
use common::pulse::Pulse;
use gnome::{tools, Gnome};
use session_daemon::Daemon;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

const HOTKEY: &str = "ctrl+alt+d";

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
fn watch_growth(gnome: &Gnome, before: String) -> (Arc<AtomicBool>, mpsc::Receiver<Instant>) {
    let path = gnome.typed.clone();
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
    d.next("state", Duration::from_secs(3), |e| {
        e["state"] == "recording"
    });
    std::thread::sleep(Duration::from_millis(100));
    common::pulse::play_and_wait(clip);
    std::thread::sleep(Duration::from_millis(400));
    let (stop, first) = watch_growth(gnome, before.clone());
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
    let ev = d.next("dictation", Duration::from_secs(90), |_| true);
    eprintln!("dictation: {ev}");
    let text = ev["text"].as_str().unwrap_or_default().to_string();
    assert_eq!(ev["outcome"], "ok", "{ev}");
    assert!(
        text.to_lowercase().contains(word),
        "not the clip's words ({word:?}): {text:?}"
    );
    let expected = format!("{before}{text} ");
    let (got, _) = gnome.wait_typed(&expected);
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    assert_eq!(
        got,
        expected,
        "what the text box received; {ev}\n{}",
        gnome.logs()
    );
    assert_eq!(gnome.typed(), expected, "nothing more arrived; {ev}");
    let method = if text.is_ascii() {
        "portal"
    } else {
        "portal_paste"
    };
    assert_eq!(ev["inject_method"], method, "{ev}");
    assert!(ev["inject_error"].is_null(), "{ev}");
    if !consent {
        assert_eq!(gnome.dialogs_shown(), dialogs, "no second dialog");
    }
    let _ = answered;
    let first_ms = first
        .recv_timeout(Duration::from_secs(1))
        .map(|at| at.saturating_duration_since(released).as_secs_f64() * 1e3)
        .expect("the watcher saw the text arrive");
    let f = |k: &str| ev[k].as_f64().map_or("-".into(), |v| format!("{v:.0}"));
    eprintln!(
        "GNOME 43 portal, {clip}{}: {} chars, inject_method {}; release→first char (outside, file) {first_ms:.0} ms; release_to_text_ms {}; release_to_typed_ms {}",
        if consent { " (with the consent dialog)" } else { "" },
        text.chars().count() + 1,
        ev["inject_method"],
        f("release_to_text_ms"),
        f("release_to_typed_ms"),
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
    write_config(dir.path(), "");

    let (mut d, ready) = Daemon::start(gnome.session_env(), dir.path(), "DICTUM_LIVE_GNOME_ARGS");
    assert_eq!(ready["hotkey_path"], "compositor", "{ready}");
    let route = ready["inject_route"].as_str().unwrap_or_default();
    assert!(
        route.starts_with("portal"),
        "inject_route {route:?}: {ready}"
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
