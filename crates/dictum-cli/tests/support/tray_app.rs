//! The real tray app (`dictum-tray`) run by the live indicator tests (`tray_indicator.rs` on
//! X11, `tray_indicator_wayland.rs` on sway): where its binary is, its private D-Bus session
//! bus, the app itself with its log, second launches handed to it, and the screenshots'
//! folder and blankness check. How each desktop starts the processes (as this user, or as the
//! sway session's user through `runuser`) is the caller's: it passes ready `Command`s.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// WebKitGTK without a GPU (Xvfb, headless sway), as tests/tray_xvfb.sh runs it.
pub const WEBKIT_ENV: &[(&str, &str)] = &[
    ("WEBKIT_DISABLE_DMABUF_RENDERER", "1"),
    ("WEBKIT_DISABLE_COMPOSITING_MODE", "1"),
    ("LIBGL_ALWAYS_SOFTWARE", "1"),
    ("NO_AT_BRIDGE", "1"),
    ("RUST_LOG", "warn"),
];

/// The tray's log line for a partial the indicator shows.
const PARTIAL_SHOWN: &str = "ui: indicator: partial";

/// `dbus-daemon`'s arguments for [`session_bus`].
pub const DBUS_ARGS: &[&str] = &["--session", "--nofork", "--print-address=1"];

/// Until `player` has played and 500 ms more: every 100 ms, the focused window (`focused`)
/// kept and `during` called. The focused windows seen, in order.
pub fn focus_while_playing(
    mut player: Child,
    mut focused: impl FnMut() -> String,
    mut during: impl FnMut(),
) -> Vec<String> {
    let mut focus = Vec::new();
    let mut ended: Option<Instant> = None;
    while ended.is_none_or(|at| at.elapsed() < Duration::from_millis(500)) {
        if ended.is_none() && player.try_wait().expect("paplay").is_some() {
            ended = Some(Instant::now());
        }
        focus.push(focused());
        during();
        std::thread::sleep(Duration::from_millis(100));
    }
    // Already reaped by `try_wait` (the loop ends only after it): returns at once.
    let _ = player.wait();
    focus
}

/// The tray app built beside this test binary (`<target>/<profile>/dictum-tray`).
pub fn tray_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let bin = exe.parent()?.parent()?.join("dictum-tray");
    bin.is_file().then_some(bin)
}

/// The test's artifacts folder: `$DICTUM_TEST_ARTIFACTS`, default
/// `<target dir>/test-artifacts/<name>`; created.
pub fn artifacts(name: &str) -> PathBuf {
    let dir = match std::env::var_os("DICTUM_TEST_ARTIFACTS") {
        Some(d) => PathBuf::from(d),
        None => std::env::current_exe()
            .ok()
            .and_then(|e| Some(e.parent()?.parent()?.parent()?.to_path_buf()))
            .unwrap_or_else(std::env::temp_dir)
            .join("test-artifacts")
            .join(name),
    };
    std::fs::create_dir_all(&dir).expect("artifacts folder");
    dir
}

/// A process killed (SIGTERM, then SIGKILL after 6 s) on drop. `runuser` passes the SIGTERM
/// on to the process it runs.
pub struct Proc(pub Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = Command::new("kill").arg(self.0.id().to_string()).status();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(6) {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A private D-Bus session bus (`cmd`: `dbus-daemon` with [`DBUS_ARGS`], as whichever user
/// the app runs as); its address.
pub fn session_bus(mut cmd: Command) -> (Proc, String) {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start dbus-daemon");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("dbus-daemon stdout"))
        .read_line(&mut line)
        .expect("dbus-daemon address");
    let address = line.trim().to_string();
    assert!(!address.is_empty(), "dbus-daemon printed no address");
    (Proc(child), address)
}

/// Builds the command of a second launch with the given arguments.
type SecondLaunch<'a> = Box<dyn Fn(&[&str]) -> Command + 'a>;

/// The running tray app, its standard output and error in one log file.
pub struct Tray<'a> {
    pub log: PathBuf,
    second: SecondLaunch<'a>,
    _app: Proc,
}

impl<'a> Tray<'a> {
    /// Starts `app` (the tray binary with its environment) logging to `log` and waits up to
    /// 90 s for its dictation to be ready. `second(args)` is the command of a second launch
    /// with `args` (handed to the running app by its single-instance plugin).
    pub fn start(
        mut app: Command,
        log: PathBuf,
        second: impl Fn(&[&str]) -> Command + 'a,
    ) -> Tray<'a> {
        let file = std::fs::File::create(&log).expect("app log");
        let child = app
            .stdin(Stdio::null())
            .stdout(file.try_clone().expect("app log"))
            .stderr(file)
            .spawn()
            .expect("start dictum-tray");
        let tray = Tray {
            log,
            second: Box::new(second),
            _app: Proc(child),
        };
        tray.wait_for(|l| l.contains("dictum-tray: dictation ready"), 90);
        tray
    }

    /// How many `ui: indicator: partial` lines the log holds so far.
    pub fn partials_shown(&self) -> usize {
        self.log().matches(PARTIAL_SHOWN).count()
    }

    /// The first `ui: indicator: partial` line after the first `skip` that shows words (not
    /// `: 0 committed words`), if one came yet.
    pub fn partial_with_words(&self, skip: usize) -> Option<String> {
        self.log()
            .lines()
            .filter(|l| l.contains(PARTIAL_SHOWN))
            .skip(skip)
            .find(|l| !l.contains(": 0 committed words"))
            .map(str::to_string)
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits up to `secs` for a log line matching `pred`; returns it.
    pub fn wait_for(&self, pred: impl Fn(&str) -> bool, secs: u64) -> String {
        let start = Instant::now();
        loop {
            if let Some(l) = self.log().lines().find(|l| pred(l)) {
                return l.to_string();
            }
            assert!(
                start.elapsed() < Duration::from_secs(secs),
                "timed out; app log:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits up to `secs` until the log holds `n` lines containing `needle`.
    pub fn wait_count(&self, needle: &str, n: usize, secs: u64) {
        let start = Instant::now();
        while self.log().matches(needle).count() < n {
            assert!(
                start.elapsed() < Duration::from_secs(secs),
                "waited {secs} s for {n} \"{needle}\"; app log:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// A second launch with `args`, handed to the running app; must succeed.
    pub fn second(&self, args: &[&str]) {
        let status = (self.second)(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("second dictum-tray");
        assert!(status.success(), "dictum-tray {args:?}: {status}");
    }
}

/// ImageMagick's view of a screenshot: (grey standard deviation, distinct colours).
pub fn image_stats(png: &Path) -> (f64, u64) {
    let out = Command::new("convert")
        .arg(png)
        .args([
            "-colorspace",
            "Gray",
            "-format",
            "%[fx:standard_deviation]",
            "info:",
        ])
        .output()
        .expect("convert");
    let sd = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0.0);
    let out = Command::new("convert")
        .arg(png)
        .args(["-format", "%k", "info:"])
        .output()
        .expect("convert");
    let colours = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0);
    (sd, colours)
}

/// The screenshot `shot`, taken while the indicator showed committed words (`words_line`: the
/// app's log line then; empty when none was taken), is not blank. `log`: the app's log.
pub fn assert_words_screenshot(shot: &Path, words_line: &str, log: &str) {
    assert!(
        !words_line.is_empty(),
        "the indicator never said it showed committed words while the key was held:\n{log}"
    );
    let (sd, colours) = image_stats(shot);
    eprintln!(
        "screenshot {} at \"{words_line}\": grey std dev {sd:.3}, {colours} colours",
        shot.display()
    );
    assert!(
        sd > 0.05 && colours > 30,
        "the indicator screenshot looks blank: std dev {sd}, {colours} colours"
    );
}

/// The indicator's X11 window (`window`: xprop's selector, e.g. `["-id", id]` or
/// `["-name", "Dictum recording"]`, on the display `env` names) refuses the focus: its WM_HINTS
/// say it accepts no input and it is a notification window (`no_focus::X11`).
pub fn x11_indicator_takes_no_focus(window: &[&str], env: &[(&str, std::ffi::OsString)]) {
    let out = Command::new("xprop")
        .args(window)
        .args(["WM_HINTS", "_NET_WM_WINDOW_TYPE"])
        .envs(env.iter().cloned())
        .output()
        .expect("run xprop");
    let props = String::from_utf8_lossy(&out.stdout).into_owned();
    eprintln!("indicator {window:?}: {props}");
    assert!(
        props.contains("Client accepts input or input focus: False"),
        "the indicator accepts the focus: {props}"
    );
    assert!(
        props.contains("_NET_WM_WINDOW_TYPE_NOTIFICATION"),
        "{props}"
    );
}
