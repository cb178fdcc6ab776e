//! The live X11 harness shared by the live tests: `dictum run --json --stdin-commands` on an
//! Xvfb display with the PulseAudio virtual microphone, its event stream, and helpers to hold
//! the hotkey while a clip plays and read back what an xterm got. Included with `#[path]` by
//! test files that also include `common` and `support/events.rs` at their root.
#![allow(dead_code)]

use crate::common::x11::{Xterm, Xvfb};
use crate::events::RunningDaemon;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub const HOTKEY: &str = "ctrl+alt+space";

/// The daemon and its data folder; the events, notices and `quit` on drop are the
/// [`RunningDaemon`] it derefs to.
pub struct Daemon {
    run: RunningDaemon,
    pub dir: PathBuf,
}

impl std::ops::Deref for Daemon {
    type Target = RunningDaemon;
    fn deref(&self) -> &RunningDaemon {
        &self.run
    }
}

impl std::ops::DerefMut for Daemon {
    fn deref_mut(&mut self) -> &mut RunningDaemon {
        &mut self.run
    }
}

impl Daemon {
    pub fn start(dir: &Path, x: &Xvfb) -> Daemon {
        Daemon::start_expecting(dir, x, HOTKEY)
    }

    /// [`start`](Self::start) with a config whose `[dictation] hotkey` is `hotkey`.
    pub fn start_expecting(dir: &Path, x: &Xvfb, hotkey: &str) -> Daemon {
        // DICTUM_BIN: another build of dictum (e.g. one copied out of a shared target folder,
        // or `scripts/bench-live --versus-bin`'s) instead of this test's.
        let exe = std::env::var_os("DICTUM_BIN")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_dictum")));
        let child = Command::new(exe)
            .args(["run", "--json", "--stdin-commands"])
            .env("DISPLAY", &x.display)
            // An X11 session, whatever session the tests run in.
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("XDG_SESSION_TYPE")
            .env("DICTUM_DATA_DIR", dir)
            .env("DICTUM_CONFIG", dir.join("config.toml"))
            .env("DICTUM_LOG", crate::events::log_filter())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start dictum run");
        let mut d = Daemon {
            run: RunningDaemon::new(child),
            dir: dir.to_path_buf(),
        };
        let ready = d.next("ready", Duration::from_secs(90));
        eprintln!("ready: {ready}");
        assert_eq!(ready["hotkey"], hotkey);
        d
    }

    pub fn write_config(&self, extra: &str) {
        self.write_config_with(&crate::common::tiny_model(), extra)
    }

    /// `extra` goes at the end; lines of its own `[stt]` table, if it has one, join the
    /// `[stt]` table written here (TOML has one table per name).
    pub fn write_config_with(&self, model: &Path, extra: &str) {
        let (mut stt, mut rest, mut in_stt) = (String::new(), String::new(), false);
        for line in extra.lines() {
            if line.trim_start().starts_with('[') {
                in_stt = line.trim() == "[stt]";
                if in_stt {
                    continue;
                }
            }
            let to = if in_stt { &mut stt } else { &mut rest };
            to.push_str(line);
            to.push('\n');
        }
        let text = format!(
            "[stt]\nmodel = \"{}\"\nthreads = 2\n{stt}\n[inject]\nnotify_on_failure = false\n{rest}{}",
            model.display(),
            editor_profile()
        );
        let path = self.dir.join("config.toml");
        // Written whole and renamed: the daemon never reads half a file.
        let tmp = self.dir.join("config.toml.tmp");
        std::fs::write(&tmp, text).expect("write config");
        std::fs::rename(&tmp, &path).expect("rename config");
    }
}

/// One live session at a time in this test binary: each test starts its own PulseAudio (whose
/// address goes into the process environment) and X server, and cargo runs tests in parallel.
pub fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LIVE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// The tests' "editor" windows are xterms of class `Editor` standing in for an editor: the
/// process is a terminal emulator, so the gate counts them as terminals (`inject/gate.rs`)
/// unless the user says otherwise with a class-matched profile, as a user would for an
/// app they trust.
pub const EDITOR_PROFILE: &str =
    "\n[[profile]]\nname = \"editor\"\nmatch_class = \"^editor$\"\nterminal = false\n";

/// [`EDITOR_PROFILE`], less its `terminal` key for a `DICTUM_BIN` built before the typing
/// gate (`DICTUM_BIN_PRE_GATE=1`, e.g. `scripts/bench-live --versus-bin` against main before
/// issue 38): such a build rejects the unknown key, and treats no editor as a terminal.
fn editor_profile() -> &'static str {
    let pre_gate = std::env::var_os("DICTUM_BIN").is_some()
        && std::env::var_os("DICTUM_BIN_PRE_GATE").is_some_and(|v| v == "1");
    if pre_gate {
        "\n[[profile]]\nname = \"editor\"\nmatch_class = \"^editor$\"\n"
    } else {
        EDITOR_PROFILE
    }
}

pub fn write_initial_config(dir: &Path) {
    let text = format!(
        "[stt]\nmodel = \"{}\"\nthreads = 2\n\n[inject]\nnotify_on_failure = false\n{}",
        crate::common::tiny_model().display(),
        editor_profile()
    );
    std::fs::write(dir.join("config.toml"), text).expect("write config");
}

/// Holds `keys` down while `clip` plays (from 100 ms after the press), releases `tail_ms`
/// after the clip ends; returns the dictation event.
pub fn dictate(x: &Xvfb, d: &mut Daemon, keys: &str, clip: &Path, tail_ms: u64) -> Value {
    dictate_with(x, d, &["keydown", keys], &["keyup", keys], clip, tail_ms)
}

/// [`dictate`] with any xdotool press and release, e.g. `["mousedown", "9"]`/`["mouseup", "9"]`.
pub fn dictate_with(
    x: &Xvfb,
    d: &mut Daemon,
    down: &[&str],
    up: &[&str],
    clip: &Path,
    tail_ms: u64,
) -> Value {
    x.xdotool(down);
    std::thread::sleep(Duration::from_millis(100));
    let status = Command::new("paplay")
        .arg("--device=dictum_sink")
        .arg(clip)
        .status()
        .expect("paplay");
    assert!(status.success());
    std::thread::sleep(Duration::from_millis(tail_ms));
    x.xdotool(up);
    d.next("dictation", Duration::from_secs(60))
}

/// The events of one dictation held with [`dictate_collecting`].
pub struct Held {
    /// Events that came while the key was held, each with when (since the press).
    pub while_held: Vec<(Duration, Value)>,
    /// Events after the release, the `dictation` event last.
    pub after: Vec<Value>,
}

impl Held {
    /// The dictation event.
    pub fn dictation(&self) -> &Value {
        self.after.last().expect("the dictation event")
    }

    /// Every `kind` event, held or not, in order.
    pub fn all(&self, kind: &str) -> Vec<&Value> {
        let held = self.while_held.iter().map(|(_, e)| e);
        held.chain(self.after.iter())
            .filter(|e| e["event"] == kind)
            .collect()
    }
}

/// [`dictate`], keeping every event: those that came while `keys` were held (timed from the
/// press, as the test read them) and those up to the dictation event.
pub fn dictate_collecting(x: &Xvfb, d: &mut Daemon, keys: &str, clip: &Path, tail_ms: u64) -> Held {
    dictate_collecting_with(x, d, &["keydown", keys], &["keyup", keys], clip, tail_ms)
}

/// [`dictate_collecting`] with any xdotool start and stop, e.g. `["key", HOTKEY]` twice for
/// toggle mode.
pub fn dictate_collecting_with(
    x: &Xvfb,
    d: &mut Daemon,
    down: &[&str],
    up: &[&str],
    clip: &Path,
    tail_ms: u64,
) -> Held {
    let pressed = Instant::now();
    x.xdotool(down);
    std::thread::sleep(Duration::from_millis(100));
    let mut player = Command::new("paplay")
        .arg("--device=dictum_sink")
        .arg(clip)
        .spawn()
        .expect("paplay");
    let mut while_held = Vec::new();
    let mut played: Option<Instant> = None;
    loop {
        if played.is_none() {
            if let Some(status) = player.try_wait().expect("paplay") {
                assert!(status.success(), "paplay: {status}");
                played = Some(Instant::now());
            }
        }
        if played.is_some_and(|at| at.elapsed() >= Duration::from_millis(tail_ms)) {
            break;
        }
        if let Ok(ev) = d.events.recv_timeout(Duration::from_millis(20)) {
            while_held.push((pressed.elapsed(), ev));
        }
    }
    // Already reaped by `try_wait` (the loop ends only after it): returns at once.
    let _ = player.wait();
    x.xdotool(up);
    let after = d.until("dictation", Duration::from_secs(60));
    Held { while_held, after }
}

/// What the xterm got since the last call (one line: the dictations and a Return).
pub fn typed_line(term: &Xterm, x: &Xvfb, seen: &mut usize) -> String {
    let all = term.line(x);
    let new = all[*seen..].to_string();
    *seen = all.len();
    new.trim_end_matches('\n').to_string()
}
