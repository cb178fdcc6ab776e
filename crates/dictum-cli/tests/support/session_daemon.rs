//! The real `dictum run --json --stdin-commands` inside a headless portal desktop started by
//! a test harness (GNOME, KDE: `dictum-engine/tests/common/portal_desktop.rs`): the session's
//! environment over a cleared one, its config, and the check that a dictation's text arrived
//! in the desktop's text box. Shared by `live_gnome.rs` and `live_kde.rs`, which include
//! `common`, `portal_desktop` and `support/events.rs` at their root.

use crate::events::RunningDaemon;
use crate::portal_desktop::Desktop;
use serde_json::Value;
use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

pub type Daemon = RunningDaemon;

/// Starts the daemon with `session_env` over a cleared environment (plus PATH, HOME, USER,
/// LANG and the private PulseAudio's address), extra arguments from the variable
/// `extra_args_var`, and waits for its `ready` event.
pub fn start(
    session_env: Vec<(&'static str, OsString)>,
    dir: &Path,
    extra_args_var: &str,
) -> (Daemon, Value) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dictum"));
    cmd.env_clear();
    for (k, v) in std::env::vars_os() {
        let name = k.to_string_lossy();
        if ["PATH", "HOME", "USER", "LANG"].contains(&name.as_ref()) || name.starts_with("PULSE_") {
            cmd.env(&k, v);
        }
    }
    let extra = std::env::var(extra_args_var).unwrap_or_default();
    let child = cmd
        .envs(session_env)
        .env("DICTUM_DATA_DIR", dir.join("data"))
        .env("DICTUM_CONFIG", dir.join("config.toml"))
        .env("DICTUM_LOG", crate::events::log_filter())
        .args(["run", "--json", "--stdin-commands"])
        .args(extra.split_whitespace())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start dictum run");
    let mut d = RunningDaemon::new(child);
    let ready = d.next("ready", Duration::from_secs(90));
    eprintln!("ready: {ready}");
    (d, ready)
}

/// Writes the config with `hotkey`, starts the daemon in the desktop's session (see
/// [`start`]) and checks its ready event: the hotkey comes by `hotkey_path` and it types
/// through the portal.
pub fn start_on_portal(
    session_env: Vec<(&'static str, OsString)>,
    dir: &Path,
    hotkey: &str,
    extra_args_var: &str,
    hotkey_path: &str,
) -> Daemon {
    write_config(dir, hotkey, "");
    let (d, ready) = start(session_env, dir, extra_args_var);
    assert_eq!(ready["hotkey_path"], hotkey_path, "{ready}");
    let route = ready["inject_route"].as_str().unwrap_or_default();
    assert!(
        route.starts_with("portal"),
        "inject_route {route:?}: {ready}"
    );
    d
}

/// Once the hotkey (or `ctl`) is down: waits for the recording, plays `clip` into the
/// microphone from 100 ms on, and waits 400 ms after its end.
pub fn speak(d: &mut Daemon, clip: &str) {
    d.next_where("state", Duration::from_secs(3), |e| {
        e["state"] == "recording"
    });
    std::thread::sleep(Duration::from_millis(100));
    crate::common::pulse::play_and_wait(clip);
    std::thread::sleep(Duration::from_millis(400));
}

/// The daemon's config with `hotkey` (written whole and renamed: it never reads half a file).
pub fn write_config(dir: &Path, hotkey: &str, extra: &str) {
    let text = format!(
        "[stt]\nmodel = \"{}\"\nthreads = 2\n\n[dictation]\nhotkey = \"{hotkey}\"\n\n[inject]\nnotify_on_failure = false\n{extra}",
        crate::common::tiny_model().display()
    );
    let tmp = dir.join("config.toml.tmp");
    std::fs::write(&tmp, text).expect("write config");
    std::fs::rename(&tmp, dir.join("config.toml")).expect("rename config");
}

/// Watches the text box's file from its creation: the instant its text first differs from
/// `before`.
pub struct Growth {
    stop: Arc<AtomicBool>,
    first: mpsc::Receiver<Instant>,
}

impl Growth {
    pub fn watch(desktop: &Desktop, before: String) -> Growth {
        let path = desktop.typed.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, first) = mpsc::channel();
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
        Growth { stop, first }
    }

    /// Milliseconds from `released` to the first change the watcher saw.
    pub fn first_ms(&self, released: Instant) -> f64 {
        self.first
            .recv_timeout(Duration::from_secs(1))
            .map(|at| at.saturating_duration_since(released).as_secs_f64() * 1e3)
            .expect("the watcher saw the text arrive")
    }
}

/// The next dictation (within `within`): its text has `word`, and exactly that text plus a
/// space arrived after `before` in the text box, and nothing more 300 ms later (a late
/// duplicate, a stray space from the chord); typed through the portal, or pasted where
/// `paste` or the text has characters the keyboard layout lacks. Returns the event and text.
pub fn check_typed(
    desktop: &Desktop,
    d: &mut Daemon,
    within: Duration,
    growth: &Growth,
    before: &str,
    word: &str,
    paste: bool,
) -> (Value, String) {
    let ev = d.next("dictation", within);
    eprintln!("dictation: {ev}");
    let text = ev["text"].as_str().unwrap_or_default().to_string();
    assert_eq!(ev["outcome"], "ok", "{ev}");
    assert!(!text.is_empty(), "no text: {ev}");
    assert!(
        text.to_lowercase().contains(word),
        "not the clip's words ({word:?}): {text:?}"
    );
    let expected = format!("{before}{text} ");
    let (got, _) = desktop.wait_typed(&expected);
    std::thread::sleep(Duration::from_millis(300));
    growth.stop.store(true, Ordering::Relaxed);
    assert_eq!(
        got,
        expected,
        "what the text box received; {ev}\n{}",
        desktop.logs()
    );
    assert_eq!(desktop.typed(), expected, "nothing more arrived; {ev}");
    let method = if paste || !text.is_ascii() {
        "portal_paste"
    } else {
        "portal"
    };
    assert_eq!(ev["inject_method"], method, "{ev}");
    if method == "portal_paste" {
        // Nothing on Wayland tells who fetched a paste: the row says so, and nothing else.
        assert_eq!(
            ev["inject_error"],
            dictum_engine::inject::PASTE_UNCONFIRMED,
            "{ev}"
        );
    } else {
        assert!(ev["inject_error"].is_null(), "{ev}");
    }
    (ev, text)
}

/// An event's figure `key` in whole milliseconds, `-` when it has none.
pub fn ms(ev: &Value, key: &str) -> String {
    ev[key].as_f64().map_or("-".into(), |v| format!("{v:.0}"))
}
