//! The tray app's recording indicator on Wayland (issue 29), end to end as a user of sway
//! would see it: the real `dictum-tray` as a native Wayland client (`GDK_BACKEND=wayland`) of a
//! real headless sway (`tests/common/sway.rs`: run as an unprivileged user when the
//! test runs as root), a private D-Bus session bus, a private PulseAudio whose virtual
//! microphone `paplay` feeds, and a focused foot terminal whose input goes to a file.
//!
//! 1. `dictum-tray --show indicator` (a second launch, handed to the running app): the app log
//!    says the indicator is a layer-shell overlay with keyboard interactivity none
//!    (`no_focus::LAYER_SHELL`); sway's tree has no window for it (a layer surface is not a
//!    container that can be focused, a toplevel would be) and the focus stays on foot; the
//!    screen's bottom centre, where the overlay is anchored, changes (grim); text typed with
//!    wtype reaches foot.
//! 2. A dictation driven as sway's binding drives it (`dictum ctl press` / `release`), the
//!    indicator already up: the focus stays on foot all along, the words the app types reach
//!    foot, and the indicator goes away after it (the bottom centre is as before again).
//! 3. A second dictation shows the indicator again (a new map of the layer surface); once it
//!    says it shows words (`ui: indicator: partial N shown: K committed words`), the region is
//!    saved as `indicator-wayland.png` in `$DICTUM_TEST_ARTIFACTS` (default
//!    `<target dir>/test-artifacts/tray-indicator-wayland`, printed) and must not be blank;
//!    the focus stays on foot and the words reach it.
//!
//! The tray binary is the one `cargo build --workspace` built beside this test (scripts/test
//! builds the binaries first). Skipped when it or the tools are missing and
//! `DICTUM_REQUIRE_E2E` is unset (`scripts/test` sets it; `ensure_wayland_deps` installs grim).

#[path = "../../dictum-engine/tests/common/mod.rs"]
mod common;
#[path = "support/events.rs"]
mod events;
#[path = "../../dictum-engine/tests/common/gnome.rs"]
mod gnome;
#[path = "../../dictum-engine/tests/common/portal_desktop.rs"]
mod portal_desktop;
#[path = "support/sway_daemon.rs"]
mod sway_daemon;
#[path = "support/tray_app.rs"]
mod tray_app;

use common::sway::{Session, Terminal};
use dictum_engine::eval::WerCount;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tray_app::{
    assert_words_screenshot, session_bus, tray_binary, x11_indicator_takes_no_focus, Tray,
};

const TARGET: &str = "Dictum target";
/// `dictum-tray: indicator: ` + `no_focus::LAYER_SHELL` (src-tauri/src/no_focus.rs).
const LAYER_SHELL: &str = "Wayland layer-shell overlay, keyboard interactivity none";
/// Where the indicator is on the session's 1280x800 output: its window is 420x110
/// (`windows.rs`), anchored to the bottom edge only (so centred) 64 px above it (`no_focus.rs`).
const REGION: (u32, u32, u32, u32) = (430, 626, 420, 110);
/// `dictum-tray: indicator: ` + `no_focus::WAYLAND_TOPLEVEL`.
const WAYLAND_TOPLEVEL: &str =
    "Wayland toplevel that does not accept the focus (no layer-shell here: the compositor decides)";
/// `dictum-tray: indicator: ` + `no_focus::X11`.
const X11: &str = "X11 window that never takes the focus (notification, input hint off)";
/// The start of `xwayland::USING` and of `xwayland::NO_XWAYLAND` (src-tauri/src/xwayland.rs).
const USING_XWAYLAND: &str =
    "dictum-tray: GNOME on Wayland: the tray app's windows run under XWayland (GDK_BACKEND=x11)";
const NO_XWAYLAND: &str = "dictum-tray: GNOME on Wayland without XWayland (DISPLAY is not set)";
const TOOLS: &[&str] = &["grim", "dbus-daemon", "pulseaudio", "paplay", "convert"];
/// One test at a time: each starts its own PulseAudio, whose address goes into this process's
/// environment.
static SERIAL: Mutex<()> = Mutex::new(());

/// An RGB region of the screen, as grim saw it.
struct Shot {
    px: Vec<u8>,
}

/// The indicator's region of the output now (grim, as the session's user, PPM).
fn grab(s: &Session) -> Shot {
    let (x, y, w, h) = REGION;
    let file = s.dir.path().join("region.ppm");
    let out = s
        .command("grim")
        .args(["-t", "ppm", "-g", &format!("{x},{y} {w}x{h}")])
        .arg(&file)
        .output();
    assert!(
        out.status.success(),
        "grim: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&file).expect("grim's file");
    // P6\n<w> <h>\n255\n<rgb...>: three header fields after the magic.
    let mut fields = 0;
    let mut i = 2;
    while fields < 3 {
        while bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        while !bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        fields += 1;
    }
    let px = bytes[i + 1..].to_vec();
    assert_eq!(px.len(), (w * h * 3) as usize, "grim gave another size");
    Shot { px }
}

/// Share of the pixels that differ between two shots of the region (0..1).
fn changed(a: &Shot, b: &Shot) -> f64 {
    let n =
        a.px.chunks(3)
            .zip(b.px.chunks(3))
            .filter(|(p, q)| p.iter().zip(q.iter()).any(|(u, v)| u.abs_diff(*v) > 16))
            .count();
    n as f64 / (a.px.len() / 3) as f64
}

/// Waits up to `secs` until the region differs from `base` by more than `min` (or, with
/// `min` = 0, until it is back to `base`); returns the last share changed.
fn wait_region(s: &Session, base: &Shot, min: f64, secs: u64, what: &str, log: &str) -> f64 {
    let start = Instant::now();
    loop {
        let c = changed(base, &grab(s));
        if (min > 0.0 && c > min) || (min == 0.0 && c < 0.005) {
            return c;
        }
        assert!(
            start.elapsed() < Duration::from_secs(secs),
            "{what}: {:.1} % of the bottom centre changed after {secs} s; app log:\n{log}",
            c * 100.0
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Every window in sway's tree, as "app_id-or-class: title".
fn windows(s: &Session) -> Vec<String> {
    let tree: Value = serde_json::from_str(&s.swaymsg(&["-t", "get_tree"])).expect("tree");
    fn walk(n: &Value, out: &mut Vec<String>) {
        if n["pid"].is_number() {
            let id = n["app_id"]
                .as_str()
                .or_else(|| n["window_properties"]["class"].as_str())
                .unwrap_or_default();
            out.push(format!("{id}: {}", n["name"].as_str().unwrap_or_default()));
        }
        for key in ["nodes", "floating_nodes"] {
            for c in n[key].as_array().into_iter().flatten() {
                walk(c, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(&tree, &mut out);
    out
}

fn focused(s: &Session) -> String {
    s.focused()
        .map(|(id, title)| format!("{id}: {title}"))
        .unwrap_or_default()
}

/// Checks that foot has the focus and that the indicator is no window of sway's.
fn assert_foot_focused(s: &Session, when: &str) {
    let all = windows(s);
    assert!(
        !all.iter()
            .any(|w| w.contains("Dictum recording") || w.contains("dictum")),
        "{when}: the indicator is a window sway can focus: {all:?}"
    );
    let f = focused(s);
    assert_eq!(
        f,
        format!("foot: {TARGET}"),
        "{when}: the focus moved (windows: {all:?})"
    );
}

/// `dictum ctl press`, the clip, `dictum ctl release` (what sway's binding runs), checking
/// the focus every 100 ms and calling `during` meanwhile.
fn dictate(s: &Session, exe: &Path, clip: &str, during: impl FnMut()) -> Vec<String> {
    let ctl = |word: &str| sway_daemon::ctl(s, exe, word);
    ctl("press");
    std::thread::sleep(Duration::from_millis(100));
    let player = common::pulse::play(clip);
    let focus = tray_app::focus_while_playing(player, || focused(s), during);
    ctl("release");
    focus
}

/// What foot received after `from` bytes, once it stopped growing (the app types the words
/// with a trailing space, no Return).
fn typed_since(term: &Terminal, from: u64) -> String {
    let start = Instant::now();
    let mut last = (term.len(), Instant::now());
    loop {
        let len = term.len();
        if len != last.0 {
            last = (len, Instant::now());
        }
        if len > from && last.1.elapsed() > Duration::from_millis(700) {
            return term.wait_for(from, len, Duration::ZERO);
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "nothing reached foot in 20 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_indicator_is_a_layer_surface_that_never_takes_the_keyboard_on_sway() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    if !common::sway::tools_present()
        || !common::tools_ready(
            TOOLS,
            " (scripts/test installs them: ensure_wayland_deps, ensure_e2e_deps)",
        )
    {
        return;
    }
    let Some(bin) = tray_binary() else {
        assert!(
            std::env::var_os("DICTUM_REQUIRE_E2E").is_none(),
            "DICTUM_REQUIRE_E2E is set but the tray app is not built beside this test (cargo build --workspace --release --bins)"
        );
        eprintln!("SKIPPED: dictum-tray is not built beside this test");
        return;
    };
    let began = Instant::now();
    let out = tray_app::artifacts("tray-indicator-wayland");
    eprintln!("tray app: {}\nartifacts: {}", bin.display(), out.display());

    let pulse = common::pulse::Pulse::start();
    pulse.share();
    let s = Session::start("");
    let term = Terminal::foot(&s, TARGET);
    let tray_bin = s.reachable(&bin);
    let exe = s.reachable(Path::new(env!("CARGO_BIN_EXE_dictum")));
    let model = s.reachable(&common::tiny_model());
    let config = s.home.join(".config/dictum/config.toml");
    std::fs::create_dir_all(config.parent().expect("parent")).expect("mkdir config");
    std::fs::write(
        &config,
        format!(
            "[stt]\nmodel = \"{}\"\nthreads = 2\n\n[inject]\nnotify_on_failure = false\n",
            model.display()
        ),
    )
    .expect("write config");
    s.give(config.parent().expect("parent"));
    let (_bus, bus) = session_bus(s.command("dbus-daemon").args(tray_app::DBUS_ARGS).build());
    let pulse_server = std::env::var("PULSE_SERVER").expect("PULSE_SERVER");
    let command = |program: &Path| {
        let mut c = s
            .command(program)
            .env("DBUS_SESSION_BUS_ADDRESS", bus.as_str())
            .env("PULSE_SERVER", pulse_server.as_str())
            .env("GDK_BACKEND", "wayland");
        for &(k, v) in tray_app::WEBKIT_ENV {
            c = c.env(k, v);
        }
        c
    };
    let tray = Tray::start(
        command(&tray_bin).build(),
        s.dir.path().join("app.log"),
        |args| {
            command(Path::new("timeout"))
                .arg("30")
                .arg(&tray_bin)
                .args(args)
                .build()
        },
    );
    let keep_log = || {
        let _ = std::fs::copy(&tray.log, out.join("app.log"));
    };
    eprintln!("ready after {:.1} s", began.elapsed().as_secs_f64());
    assert_foot_focused(&s, "after the tray app started");
    let before = grab(&s);

    // 1. Shown by `--show indicator`: a layer-shell overlay, on screen, no window of sway's,
    //    and the focus and the typing stay with foot.
    let how = show_indicator(&tray);
    assert!(how.ends_with(LAYER_SHELL), "{how}");
    let c = wait_region(
        &s,
        &before,
        0.2,
        15,
        "the indicator never showed",
        &tray.log(),
    );
    eprintln!(
        "shown after {:.1} s: {:.0} % of the bottom centre changed",
        began.elapsed().as_secs_f64(),
        c * 100.0
    );
    std::thread::sleep(Duration::from_millis(500)); // any focus change made
    assert_foot_focused(&s, "with the indicator shown");
    let from = term.len();
    let status = s
        .command("wtype")
        .arg("typed beside the indicator")
        .run_status();
    assert!(status.success(), "wtype: {status}");
    let got = term.wait_for(from, from + 26, Duration::from_secs(10));
    assert_eq!(got, "typed beside the indicator");
    assert_foot_focused(&s, "after typing");

    // 2. A dictation while it is up: focus kept, the words reach foot, hidden after.
    let from = term.len();
    let focus = dictate(&s, &exe, "goforward.wav", || ());
    assert!(
        focus.iter().all(|f| f == &format!("foot: {TARGET}")),
        "the focus moved during the first dictation: {focus:?}"
    );
    tray.wait_count("dictation #", 1, 60);
    let first = typed_since(&term, from);
    eprintln!("first dictation typed: {first:?}");
    let w = WerCount::of(&common::pulse::reference("goforward.wav"), &first);
    assert!(w.rate() <= 0.3, "{first:?} ({w:?})");
    wait_region(&s, &before, 0.0, 10, "the indicator stayed up", &tray.log());

    // 3. The next dictation maps it again; screenshot once it shows words.
    let shot = out.join("indicator-wayland.png");
    let _ = std::fs::remove_file(&shot);
    let from = term.len();
    let shown_before = tray.partials_shown();
    let mut words_line = String::new();
    let focus = dictate(&s, &exe, "jfk.wav", || {
        if !words_line.is_empty() {
            return;
        }
        let Some(line) = tray.partial_with_words(shown_before) else {
            return;
        };
        std::thread::sleep(Duration::from_millis(300)); // painted
        let (x, y, w, h) = REGION;
        let png = s.dir.path().join("indicator-wayland.png");
        let ok = s
            .command("grim")
            .args(["-g", &format!("{x},{y} {w}x{h}")])
            .arg(&png)
            .run_status()
            .success();
        if ok && std::fs::copy(&png, &shot).is_ok() {
            words_line = line;
        }
    });
    keep_log();
    assert!(
        focus.iter().all(|f| f == &format!("foot: {TARGET}")),
        "the focus moved while the indicator was shown again: {focus:?}"
    );
    assert_words_screenshot(&shot, &words_line, &tray.log());
    tray.wait_count("dictation #", 2, 60);
    let second = typed_since(&term, from);
    eprintln!("second dictation typed: {second:?}");
    let w = WerCount::of(&common::pulse::reference("jfk.wav"), &second);
    assert!(w.rate() <= 0.3, "{second:?} ({w:?})");
    assert_foot_focused(&s, "at the end");
    keep_log();
    eprintln!("done in {:.1} s", began.elapsed().as_secs_f64());
}

/// The GNOME cases' parts, or None (skip) when one is missing.
fn gnome_parts() -> Option<(portal_desktop::Tools, PathBuf)> {
    let t = gnome::tools()?;
    if !common::tools_ready(
        &["dbus-daemon", "pulseaudio", "xdpyinfo", "xwininfo", "xprop"],
        " (scripts/test installs them: ensure_gnome_deps)",
    ) {
        return None;
    }
    let Some(bin) = tray_binary() else {
        assert!(
            std::env::var_os("DICTUM_REQUIRE_E2E").is_none(),
            "DICTUM_REQUIRE_E2E is set but the tray app is not built beside this test (cargo build --workspace --release --bins)"
        );
        eprintln!("SKIPPED: dictum-tray is not built beside this test");
        return None;
    };
    Some((t, bin))
}

/// The real tray app in the GNOME session `g` (its environment: the session's, `extra`, no
/// `GDK_BACKEND`: the app decides), with the tiny model; waits until its dictation is ready.
fn gnome_tray<'a>(
    g: &gnome::Gnome,
    bin: &'a Path,
    dir: &Path,
    extra: Vec<(&'static str, std::ffi::OsString)>,
) -> Tray<'a> {
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[stt]\nmodel = \"{}\"\nthreads = 2\n\n[inject]\nnotify_on_failure = false\n",
            common::tiny_model().display()
        ),
    )
    .expect("write config");
    let mut env: Vec<(String, std::ffi::OsString)> = g
        .session_env()
        .into_iter()
        .chain(extra)
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    for (k, v) in [
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("HOME", dir.display().to_string()),
        ("DICTUM_CONFIG", config.display().to_string()),
        ("DICTUM_DATA_DIR", dir.join("data").display().to_string()),
        (
            "PULSE_SERVER",
            std::env::var("PULSE_SERVER").expect("PULSE_SERVER"),
        ),
    ] {
        env.push((k.to_string(), v.into()));
    }
    for &(k, v) in tray_app::WEBKIT_ENV {
        env.push((k.to_string(), v.into()));
    }
    let command = move |program: &Path| {
        let mut c = Command::new(program);
        c.env_clear().envs(env.iter().map(|(k, v)| (k, v)));
        c
    };
    let app = command(bin);
    Tray::start(app, dir.join("app.log"), move |args| {
        let mut c = command(Path::new("timeout"));
        c.arg("30").arg(bin).args(args);
        c
    })
}

/// GNOME's mutter has no layer shell: the indicator could only be an ordinary toplevel
/// (`no_focus::WAYLAND_TOPLEVEL`), which mutter 43 gives the keyboard when it appears (keys
/// stopped reaching the focused text box when it was shown), so the app never shows it there
/// (`no_focus::NOT_SHOWN`). On a headless mutter 43 without XWayland (`tests/common/gnome.rs`,
/// no `DISPLAY`) with its GTK text box focused: the app log says it stays native Wayland for
/// want of XWayland (`xwayland::NO_XWAYLAND`) and both indicator lines, and keys pressed through
/// mutter's RemoteDesktop API (`tests/mutter_keys.py`, as a keyboard would) still reach the text
/// box after `--show indicator`.
#[test]
fn on_gnome_the_indicator_is_a_toplevel_that_leaves_the_keys_to_the_focused_window() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let Some((t, bin)) = gnome_parts() else {
        return;
    };
    let began = Instant::now();
    let _pulse = common::pulse::Pulse::start();
    let g = gnome::Gnome::start(&t);
    let dir = tempfile::tempdir().expect("tempdir");
    let tray = gnome_tray(&g, &bin, dir.path(), Vec::new());
    let no_x = tray.wait_for(|l| l.starts_with(NO_XWAYLAND), 5);
    eprintln!("{no_x}");
    text_box_gets_keys(&g);

    let how = show_indicator(&tray);
    assert!(how.ends_with(WAYLAND_TOPLEVEL), "{how}");
    let why = tray.wait_for(|l| l.contains("dictum-tray: indicator: not shown"), 10);
    eprintln!("{why}");
    std::thread::sleep(Duration::from_millis(1500)); // were it mapped: any activation made
    keys_still_reach_the_text_box(&g, &tray);
    eprintln!("done in {:.1} s", began.elapsed().as_secs_f64());
}

/// `--show indicator` handed to the running app, and its log line saying which kind of window
/// it made (`dictum-tray: indicator: …`).
fn show_indicator(tray: &Tray) -> String {
    tray.second(&["--show", "indicator"]);
    let how = tray.wait_for(|l| l.contains("dictum-tray: indicator:"), 30);
    eprintln!("{how}");
    how
}

/// With the indicator up: keys pressed through mutter's RemoteDesktop API still reach the
/// focused text box (after the "ab" of [`text_box_gets_keys`]).
fn keys_still_reach_the_text_box(g: &gnome::Gnome, tray: &Tray) {
    g.keys(&["t", "y", "p", "e", "d"]);
    let (got, _) = g.wait_typed("abtyped");
    assert_eq!(
        got,
        "abtyped",
        "the keys pressed with the indicator shown did not reach the focused text box; app log:\n{}",
        tray.log()
    );
}

/// Before the indicator: keys pressed through mutter's RemoteDesktop API reach the focused
/// text box (without this, a later "keys still arrive" could not fail).
fn text_box_gets_keys(g: &gnome::Gnome) {
    g.keys(&["a", "b"]);
    let (got, _) = g.wait_typed("ab");
    assert_eq!(
        got,
        "ab",
        "the text box does not get the keys; logs:\n{}",
        g.logs()
    );
}

/// GNOME with XWayland, as a GNOME session has it: the tray app, started without
/// `GDK_BACKEND`, runs its windows as XWayland clients (`src-tauri/src/xwayland.rs`) and says
/// so, and `--show indicator` makes the X11 window that never takes the focus
/// (`no_focus::X11`: xprop shows the input hint off and the notification type), which mutter,
/// as X11 window manager, maps (xwininfo: viewable) without giving it the keyboard: keys pressed
/// through mutter's RemoteDesktop API while it is up still reach the focused native Wayland GTK
/// text box.
#[test]
fn on_gnome_with_xwayland_the_indicator_is_an_x11_window_shown_without_the_keyboard() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let Some((t, bin)) = gnome_parts() else {
        return;
    };
    let began = Instant::now();
    let _pulse = common::pulse::Pulse::start();
    let g = gnome::Gnome::start_xwayland(&t);
    let x11 = g.x11_env().expect("mutter's XWayland");
    let dir = tempfile::tempdir().expect("tempdir");
    let tray = gnome_tray(&g, &bin, dir.path(), x11.clone());
    let using = tray.wait_for(|l| l.starts_with(USING_XWAYLAND), 5);
    eprintln!("{using}");
    text_box_gets_keys(&g);

    let how = show_indicator(&tray);
    assert!(how.ends_with(X11), "{how}\n{}", tray.log());
    // Shown: mapped and viewable on XWayland's screen.
    let t0 = Instant::now();
    let state = loop {
        let out = Command::new("xwininfo")
            .args(["-name", "Dictum recording"])
            .envs(x11.iter().cloned())
            .output()
            .expect("run xwininfo");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if text.contains("Map State: IsViewable") || t0.elapsed() > Duration::from_secs(15) {
            break text;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        state.contains("Map State: IsViewable"),
        "the indicator is not shown on XWayland: {state}\napp log:\n{}",
        tray.log()
    );
    eprintln!(
        "indicator viewable {:.1} s after --show",
        t0.elapsed().as_secs_f64()
    );
    // Any activation mutter would make.
    std::thread::sleep(Duration::from_millis(1500));
    // What keeps it from the keyboard (an ordinary X11 window mapped here did not get the keys
    // either, mutter's focus-stealing prevention, so the keys alone cannot tell).
    x11_indicator_takes_no_focus(&["-name", "Dictum recording"], &x11);
    keys_still_reach_the_text_box(&g, &tray);
    assert!(
        !tray.log().contains("indicator: not shown"),
        "{}",
        tray.log()
    );
    eprintln!("done in {:.1} s", began.elapsed().as_secs_f64());
}
