//! The live X11 harness shared by the live tests: `dictum run --json --stdin-commands` on an
//! Xvfb display with the PulseAudio virtual microphone, its event stream, and helpers to hold
//! the hotkey while a clip plays and read back what an xterm got. Included with `#[path]` by
//! test files that also include `common` and `support/events.rs` at their root.
#![allow(dead_code)]

use crate::common::pulse::{play_file, Pulse, SoundServer};
use crate::common::x11::{tools_present, Xterm, Xvfb};
use crate::events::RunningDaemon;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One live X11 session, the prologue every live X11 test shares: this binary's live lock
/// ([`one_at_a_time`]), a private PulseAudio with its virtual microphone, an Xvfb display,
/// and a data folder holding the initial config ([`write_initial_config`]). The terminals
/// and the daemon are the test's own ([`Live::term`], [`Live::editor`], [`Live::daemon`]):
/// declared after the session, they stop before it. Its parts stop in reverse: the folder,
/// the display, the sound server, then the lock.
pub struct Live {
    pub dir: tempfile::TempDir,
    pub x: Xvfb,
    pub pulse: Pulse,
    _live: std::sync::MutexGuard<'static, ()>,
}

impl Live {
    /// None (skip) when the X11 tools are missing and E2E is not required; panics when
    /// required.
    pub fn start() -> Option<Live> {
        let live = Live::without_config()?;
        write_initial_config(live.path());
        Some(live)
    }

    /// [`start`](Self::start) on `server` (PipeWire's PulseAudio server, a microphone of
    /// another name).
    pub fn start_on(server: SoundServer) -> Option<Live> {
        let live = Live::without_config_on(server)?;
        write_initial_config(live.path());
        Some(live)
    }

    /// [`start`](Self::start) with an empty data folder: the test writes its own config.
    pub fn without_config() -> Option<Live> {
        Live::without_config_on(SoundServer::PulseAudio)
    }

    fn without_config_on(server: SoundServer) -> Option<Live> {
        if !tools_present() {
            return None;
        }
        let live = one_at_a_time();
        let pulse = Pulse::start_on(server);
        let x = Xvfb::start();
        let dir = tempfile::tempdir().expect("tempdir");
        Some(Live {
            dir,
            x,
            pulse,
            _live: live,
        })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A plain xterm (class `XTerm`: a terminal to the typing gate) titled `title`.
    pub fn term(&self, title: &str) -> Xterm {
        Xterm::start(&self.x, title)
    }

    /// An xterm of class `Editor` ([`EDITOR_PROFILE`]: not a terminal) titled `title`.
    pub fn editor(&self, title: &str) -> Xterm {
        Xterm::start_named(&self.x, title, "Editor", "editor", "80x24+0+0")
    }

    /// Appends `text` to the config before the daemon starts.
    pub fn append_config(&self, text: &str) {
        append_config(self.path(), text);
    }

    /// `dictum doctor --json`'s hotkey check on this display, in an X11 session.
    pub fn doctor_hotkey(&self) -> Value {
        doctor_hotkey(
            self.path(),
            &[("DISPLAY", &self.x.display)],
            &["WAYLAND_DISPLAY", "XDG_SESSION_TYPE"],
        )
    }

    /// `dictum run` in this session, ready ([`Daemon::start`]).
    pub fn daemon(&self) -> Daemon {
        Daemon::start(self.dir.path(), &self.x)
    }
}

pub const HOTKEY: &str = "ctrl+alt+space";

/// The daemon and its data folder; the events, notices and `quit` on drop are the
/// [`RunningDaemon`] it derefs to.
pub struct Daemon {
    run: RunningDaemon,
    pub dir: PathBuf,
    /// The `ready` event it started with.
    pub ready: Value,
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
        Daemon::start_with(dir, x, hotkey, &[])
    }

    /// [`start_expecting`](Self::start_expecting) with more environment (another session
    /// bus).
    pub fn start_with(dir: &Path, x: &Xvfb, hotkey: &str, env: &[(&str, &str)]) -> Daemon {
        let child = Command::new(crate::events::dictum_exe())
            .args(["run", "--json", "--stdin-commands"])
            .env("DISPLAY", &x.display)
            // An X11 session, whatever session the tests run in.
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("XDG_SESSION_TYPE")
            .env("DICTUM_DATA_DIR", dir)
            .env("DICTUM_CONFIG", dir.join("config.toml"))
            .env("DICTUM_LOG", crate::events::log_filter())
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start dictum run");
        let mut d = Daemon {
            run: RunningDaemon::new(child),
            dir: dir.to_path_buf(),
            ready: Value::Null,
        };
        let ready = d.next("ready", Duration::from_secs(90));
        eprintln!("ready: {ready}");
        assert_eq!(ready["hotkey"], hotkey);
        d.ready = ready;
        d
    }

    /// [`write_config`](Self::write_config), then waits for the daemon's notice that it
    /// applied it (notices seen before do not count).
    pub fn apply_config(&mut self, extra: &str) {
        self.notices.clear();
        self.write_config(extra);
        self.wait_notice("config applied");
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

/// Appends `text` to `dir`'s config.toml.
pub fn append_config(dir: &Path, text: &str) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.join("config.toml"))
        .expect("open config");
    f.write_all(text.as_bytes()).expect("write config");
}

pub fn write_initial_config(dir: &Path) {
    let text = format!(
        "[stt]\nmodel = \"{}\"\nthreads = 2\n\n[inject]\nnotify_on_failure = false\n{}",
        crate::common::tiny_model().display(),
        editor_profile()
    );
    std::fs::write(dir.join("config.toml"), text).expect("write config");
}

/// How a dictation is started and stopped: xdotool arguments, e.g. `["mousedown", "9"]` and
/// `["mouseup", "9"]`, or `["key", HOTKEY]` twice for toggle mode.
#[derive(Clone, Copy)]
pub struct Press<'a> {
    pub down: &'a [&'a str],
    pub up: &'a [&'a str],
}

impl Press<'_> {
    /// `down`, then `clip` playing into the microphone from 100 ms later; the player.
    fn start(&self, x: &Xvfb, clip: &Path) -> std::process::Child {
        x.xdotool(self.down);
        std::thread::sleep(Duration::from_millis(100));
        play_file(clip)
    }
}

/// Holds `keys` down while `clip` plays (from 100 ms after the press), releases `tail_ms`
/// after the clip ends; returns the dictation event.
pub fn dictate(x: &Xvfb, d: &mut Daemon, keys: &str, clip: &Path, tail_ms: u64) -> Value {
    let (down, up) = (["keydown", keys], ["keyup", keys]);
    dictate_with(
        x,
        d,
        Press {
            down: &down,
            up: &up,
        },
        clip,
        tail_ms,
    )
}

/// [`dictate`] with any [`Press`].
pub fn dictate_with(x: &Xvfb, d: &mut Daemon, press: Press, clip: &Path, tail_ms: u64) -> Value {
    let status = press.start(x, clip).wait().expect("paplay");
    assert!(status.success(), "paplay: {status}");
    std::thread::sleep(Duration::from_millis(tail_ms));
    x.xdotool(press.up);
    d.next("dictation", Duration::from_secs(60))
}

/// Releases `keys` (the instant just before, returned) and waits for the dictation: ok, its
/// text holding `word`, and typed whole into `term` (the line, a space and a Return) by the
/// time the event comes.
pub fn release_typed(
    x: &Xvfb,
    d: &mut Daemon,
    term: &Xterm,
    keys: &str,
    word: &str,
) -> (Instant, Value) {
    let released = Instant::now();
    x.xdotool(&["keyup", keys]);
    let ev = d.next("dictation", Duration::from_secs(60));
    assert_eq!(ev["outcome"], "ok", "{ev}");
    let typed = ev["text"].as_str().unwrap_or_default();
    assert!(typed.to_lowercase().contains(word), "{ev}");
    assert_eq!(term.line(x), format!("{typed} \n"), "{ev}");
    (released, ev)
}

/// Every row of `dir`'s history (up to 100), newest first.
pub fn history_rows(dir: &Path) -> Vec<dictum_engine::store::Entry> {
    let history =
        dictum_engine::store::History::open(&dir.join("history.sqlite3")).expect("history");
    history
        .list(&dictum_engine::store::Query {
            limit: 100,
            search: None,
        })
        .expect("rows")
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
    let (down, up) = (["keydown", keys], ["keyup", keys]);
    dictate_collecting_with(
        x,
        d,
        Press {
            down: &down,
            up: &up,
        },
        clip,
        tail_ms,
    )
}

/// [`dictate_collecting`] with any [`Press`].
pub fn dictate_collecting_with(
    x: &Xvfb,
    d: &mut Daemon,
    press: Press,
    clip: &Path,
    tail_ms: u64,
) -> Held {
    let pressed = Instant::now();
    let mut player = press.start(x, clip);
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
    x.xdotool(press.up);
    let after = d.until("dictation", Duration::from_secs(60));
    Held { while_held, after }
}

/// What the xterm got for the dictation `ev` ([`typed_line`]), checking that `ev` is ok, was
/// typed with XTest, and that the line is its text.
pub fn typed_ok(ev: &Value, term: &Xterm, x: &Xvfb, seen: &mut usize) -> String {
    assert_eq!(ev["outcome"], "ok", "{ev}");
    assert_eq!(ev["inject_method"], "x11_type", "{ev}");
    let line = typed_line(term, x, seen);
    assert_eq!(
        line.trim_end(),
        ev["text"].as_str().unwrap_or_default(),
        "{ev}"
    );
    line
}

/// What the xterm got since the last call (one line: the dictations and a Return).
pub fn typed_line(term: &Xterm, x: &Xvfb, seen: &mut usize) -> String {
    let all = term.line(x);
    let new = all[*seen..].to_string();
    *seen = all.len();
    new.trim_end_matches('\n').to_string()
}

/// Resident memory of `pid` in MB (VmRSS).
pub fn rss_mb(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// `dictum doctor --json`'s hotkey check, with `env` set and `unset` removed.
pub fn doctor_hotkey(dir: &Path, env: &[(&str, &str)], unset: &[&str]) -> Value {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dictum"));
    cmd.args(["doctor", "--json"])
        .env("DICTUM_DATA_DIR", dir)
        .env("DICTUM_CONFIG", dir.join("config.toml"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    for k in unset {
        cmd.env_remove(k);
    }
    let out = cmd.output().expect("doctor");
    let report: Value = serde_json::from_slice(&out.stdout).expect("doctor json");
    report["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["name"] == "hotkey"))
        .cloned()
        .expect("hotkey check")
}
