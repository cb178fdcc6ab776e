//! The tray app's recording indicator (issue 29), end to end as a user would: the real
//! `dictum-tray` on a real X display (Xvfb) managed by a real window manager (mutter in X11
//! mode: without one, nothing ever moves the focus and the test could not fail), a private
//! D-Bus session (the tray and single-instance plugins need one), a real sound server (a
//! private PulseAudio whose virtual microphone `paplay` feeds) and a real xterm that has the
//! focus.
//!
//! 1. `dictum-tray --show indicator` (a second launch, handed to the running app): the
//!    indicator is mapped, is an X11 notification window that does not take input
//!    (`WM_HINTS` input false), the focus stays on the xterm, and text typed with xdotool
//!    reaches the xterm.
//! 2. Two dictations with the hotkey held: the indicator is shown again at each press (the
//!    first show was where Tauri's `focused(false)` alone held; after it the window accepted
//!    the focus again), the focus stays on the xterm all the while, and the text the app
//!    types at the release reaches the xterm.
//! 3. During the second, a ~20 s clip of four sentences (`support/long_clip.rs`), once the
//!    indicator says it shows words (its `ui: indicator: partial N shown: K committed words`
//!    log line: counts, never the words), a screenshot of the indicator window is saved as a
//!    test artifact (`indicator-mid-utterance.png` in `$DICTUM_TEST_ARTIFACTS`, default
//!    `<target dir>/test-artifacts/tray-indicator`, printed) and must not be blank.
//!
//! The tray binary is the one `cargo test --workspace` / `cargo build --workspace` built
//! beside this test (`<target>/<profile>/dictum-tray`). Skipped when it or the tools are
//! missing and `DICTUM_REQUIRE_E2E` is unset (`scripts/test` sets it, installs the tools and
//! builds the workspace first).

#[path = "../../dictum-engine/tests/common/mod.rs"]
mod common;

#[path = "support/long_clip.rs"]
mod long_clip;
#[path = "support/tray_app.rs"]
mod tray_app;

use common::x11::{Xterm, Xvfb};
use dictum_engine::eval::WerCount;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tray_app::{
    assert_words_screenshot, session_bus, tray_binary, x11_indicator_takes_no_focus, Proc, Tray,
};

const HOTKEY: &str = "ctrl+alt+space";
const TARGET: &str = "Dictum target";
const INDICATOR: &str = "Dictum recording";
const TOOLS: &[&str] = &[
    "Xvfb",
    "xterm",
    "xdotool",
    "xprop",
    "xwininfo",
    "mutter",
    "dbus-daemon",
    "import",
    "convert",
    "sox",
    "paplay",
    "pulseaudio",
];

/// mutter as the X11 window manager of `x` (focus on new windows, as on a desktop).
fn window_manager(x: &Xvfb, bus: &str, log: &Path) -> Proc {
    let child = Command::new("mutter")
        .args(["--x11", "--replace", "--sm-disable"])
        .env("DISPLAY", &x.display)
        .env("DBUS_SESSION_BUS_ADDRESS", bus)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).expect("mutter log"))
        .spawn()
        .expect("start mutter");
    let wm = Proc(child);
    let start = Instant::now();
    loop {
        let managed = Command::new("xprop")
            .args(["-root", "_NET_SUPPORTING_WM_CHECK"])
            .env("DISPLAY", &x.display)
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("window id"));
        if managed {
            return wm;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "mutter did not start managing {}: {}",
            x.display,
            std::fs::read_to_string(log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The name of the window that has the keyboard focus.
fn focused(x: &Xvfb) -> String {
    let out = Command::new("xdotool")
        .args(["getwindowfocus", "getwindowname"])
        .env("DISPLAY", &x.display)
        .output()
        .expect("xdotool getwindowfocus");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The mapped window named `name`, if any.
fn visible_window(x: &Xvfb, name: &str) -> Option<String> {
    let out = Command::new("xdotool")
        .args(["search", "--onlyvisible", "--name", &format!("^{name}$")])
        .env("DISPLAY", &x.display)
        .output()
        .ok()?;
    let id = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()?
        .trim()
        .to_string();
    (!id.is_empty()).then_some(id)
}

/// The tray app on `x`, with a private data folder and config in `dir`.
fn start_tray<'a>(bin: &'a Path, x: &Xvfb, bus: &str, dir: &Path) -> Tray<'a> {
    let mut env: Vec<(String, String)> = vec![
        ("DISPLAY".into(), x.display.clone()),
        ("DBUS_SESSION_BUS_ADDRESS".into(), bus.to_string()),
        (
            "DICTUM_DATA_DIR".into(),
            dir.join("data").display().to_string(),
        ),
        (
            "DICTUM_CONFIG".into(),
            dir.join("config.toml").display().to_string(),
        ),
        (
            "XDG_CONFIG_HOME".into(),
            dir.join("xdg").display().to_string(),
        ),
    ];
    env.extend(
        tray_app::WEBKIT_ENV
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    let command = move |program: &Path| {
        let mut c = Command::new(program);
        c.envs(env.iter().map(|(k, v)| (k, v)))
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("XDG_SESSION_TYPE");
        c
    };
    Tray::start(command(bin), dir.join("app.log"), move |args| {
        let mut c = command(Path::new("timeout"));
        c.arg("30").arg(bin).args(args);
        c
    })
}

/// Lines the xterm got (its `cat` writes each on Return).
fn xterm_text(term: &Xterm) -> String {
    std::fs::read_to_string(&term.file).unwrap_or_default()
}

fn wait_xterm_grows(term: &Xterm, before: usize, secs: u64) -> String {
    let start = Instant::now();
    loop {
        let text = xterm_text(term);
        if text.len() > before && text.ends_with('\n') {
            return text[before..].trim_end().to_string();
        }
        assert!(
            start.elapsed() < Duration::from_secs(secs),
            "nothing reached the xterm in {secs} s (it has {text:?})"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Holds the hotkey while `clip` plays; meanwhile checks, every 100 ms, that the xterm keeps
/// the focus, and calls `during`. Releases 500 ms after the clip.
fn hold_over(x: &Xvfb, clip: &Path, during: impl FnMut()) -> Vec<String> {
    x.xdotool(&["keydown", HOTKEY]);
    std::thread::sleep(Duration::from_millis(100));
    let player = common::pulse::play_file(clip);
    let focus = tray_app::focus_while_playing(player, || focused(x), during);
    x.xdotool(&["keyup", HOTKEY]);
    focus
}

#[test]
fn the_indicator_never_takes_the_focus_and_shows_the_words_mid_utterance() {
    let missing: Vec<&str> = TOOLS
        .iter()
        .copied()
        .filter(|t| !common::x11::on_path(t))
        .collect();
    let bin = tray_binary();
    if !missing.is_empty() || bin.is_none() {
        assert!(
            std::env::var_os("DICTUM_REQUIRE_E2E").is_none(),
            "DICTUM_REQUIRE_E2E is set but {missing:?} are not installed (scripts/test installs them) or the tray app is not built beside this test (cargo build --workspace --release)"
        );
        eprintln!(
            "SKIPPED: missing {missing:?}, tray app built: {}",
            bin.is_some()
        );
        return;
    }
    let bin = bin.expect("checked above");
    let out = tray_app::artifacts("tray-indicator");
    eprintln!("tray app: {}\nartifacts: {}", bin.display(), out.display());
    let clips = tempfile::tempdir().expect("tempdir");
    let clip = long_clip::long_clip(clips.path());

    let _pulse = common::pulse::Pulse::start();
    let x = Xvfb::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut dbus = Command::new("dbus-daemon");
    dbus.args(tray_app::DBUS_ARGS);
    let (_bus, bus) = session_bus(dbus);
    let _wm = window_manager(&x, &bus, &dir.path().join("mutter.log"));
    let term = Xterm::start(&x, TARGET);
    let start = Instant::now();
    while focused(&x) != TARGET {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the new xterm did not get the focus (focus: {:?})",
            focused(&x)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let text = format!(
        "[stt]\nmodel = \"{}\"\nthreads = 2\n\n[inject]\nnotify_on_failure = false\n",
        common::tiny_model().display()
    );
    std::fs::write(dir.path().join("config.toml"), text).expect("write config");
    let tray = start_tray(&bin, &x, &bus, dir.path());
    let keep_log = || {
        let _ = std::fs::copy(&tray.log, out.join("app.log"));
    };
    assert_eq!(focused(&x), TARGET, "starting the tray app moved the focus");

    // 1. Shown by `--show indicator`: mapped, a notification that takes no input, and the
    //    focus and the typing stay with the xterm.
    tray.second(&["--show", "indicator"]);
    let how = tray.wait_for(|l| l.contains("dictum-tray: indicator:"), 30);
    eprintln!("{how}");
    assert!(
        how.contains("X11 window that never takes the focus"),
        "{how}"
    );
    let start = Instant::now();
    let id = loop {
        if let Some(id) = visible_window(&x, INDICATOR) {
            break id;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the indicator was not mapped: {}",
            tray.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_millis(1500)); // painted, and any focus change made
    x11_indicator_takes_no_focus(&["-id", &id], &[("DISPLAY", x.display.clone().into())]);
    assert_eq!(focused(&x), TARGET, "showing the indicator moved the focus");
    let before = xterm_text(&term).len();
    x.xdotool(&["type", "--delay", "20", "typed beside the indicator"]);
    x.xdotool(&["key", "Return"]);
    let got = wait_xterm_grows(&term, before, 10);
    assert_eq!(got, "typed beside the indicator");
    assert_eq!(focused(&x), TARGET);

    // 2. A first dictation: shown at the press (already up), hidden after the release.
    let short = common::clip("jfk.wav");
    let before = xterm_text(&term).len();
    let focus = hold_over(&x, &short, || ());
    assert!(
        focus.iter().all(|f| f == TARGET),
        "the focus moved during the first dictation: {focus:?}"
    );
    // The app types the words (no Return): wait for them, then end the line.
    tray.wait_count("dictation #", 1, 60);
    std::thread::sleep(Duration::from_millis(500));
    x.xdotool(&["key", "Return"]);
    let first = wait_xterm_grows(&term, before, 10);
    eprintln!("first dictation typed: {first:?}");
    let w = WerCount::of(&common::pulse::reference("jfk.wav"), &first);
    assert!(w.rate() <= 0.3, "{first:?} ({w:?})");
    let start = Instant::now();
    while visible_window(&x, INDICATOR).is_some() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the indicator stayed up after the dictation"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    // 3. The second dictation shows the indicator again (a new map); the words come up in it
    //    while the key is held: screenshot.
    let shot = out.join("indicator-mid-utterance.png");
    let _ = std::fs::remove_file(&shot);
    let before = xterm_text(&term).len();
    let shown_before = tray.partials_shown();
    let mut words_line = String::new();
    let focus = hold_over(&x, &clip, || {
        if !words_line.is_empty() {
            return;
        }
        let Some(line) = tray.partial_with_words(shown_before) else {
            return;
        };
        let Some(id) = visible_window(&x, INDICATOR) else {
            return;
        };
        std::thread::sleep(Duration::from_millis(300)); // painted
        let ok = Command::new("import")
            .args(["-window", &id])
            .arg(&shot)
            .env("DISPLAY", &x.display)
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            words_line = line;
        }
    });
    keep_log();
    assert!(
        focus.iter().all(|f| f == TARGET),
        "the focus moved while the indicator was shown again: {focus:?}"
    );
    assert_words_screenshot(&shot, &words_line, &tray.log());
    tray.wait_count("dictation #", 2, 60);
    std::thread::sleep(Duration::from_millis(500));
    x.xdotool(&["key", "Return"]);
    let second = wait_xterm_grows(&term, before, 10);
    eprintln!("second dictation typed: {second:?}");
    let w = WerCount::of(&long_clip::reference(), &second);
    assert!(w.rate() <= 0.3, "{second:?} ({w:?})");
    assert_eq!(focused(&x), TARGET);
    keep_log();
}
