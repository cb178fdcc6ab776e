//! A real Wayland desktop for end-to-end tests: headless sway 1.7 (wlroots headless backend,
//! pixman renderer, no input devices) with XWayland, run as an unprivileged user, and
//! terminals (native `foot`, XWayland `xterm`) whose input is written to a file.
//!
//! sway refuses to run as root, so when the test runs as root (CI) the compositor and every
//! client run as the user [`USER`] (created with `useradd` if missing) through
//! `runuser -u USER -- env -i ...`; otherwise they run as the current user. Everything lives
//! in one temporary folder owned by that user: `home/` (HOME, XDG_CONFIG_HOME=home/.config,
//! the sway config at home/.config/sway/config), `runtime/` (XDG_RUNTIME_DIR, mode 0700) and
//! the terminals' output files. Clients get exactly [`Session::env`], nothing of the test's
//! own environment.
//!
//! The session has no input devices; [`Keyboard`] stands in for the user's physical one: a
//! virtual keyboard (`zwp_virtual_keyboard_v1`, which sway treats like any keyboard, bindings
//! included) with the full US keymap a real keyboard gives the seat, so native and XWayland
//! clients see the keymap they would on a desktop. (`wtype` would press bindings too, but it
//! uploads a keymap holding only the keys it types, which then becomes XWayland's keymap.)
//!
//! Not declared in `common/mod.rs` (its Wayland crates are dev-dependencies of dictum-cli
//! only): include it with `#[path]`, as `crates/dictum-cli/tests/live_wayland.rs` does.
#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The unprivileged user the session runs as when the test runs as root.
pub const USER: &str = "dictumtest";

pub const TOOLS: &[&str] = &[
    "sway", "swaymsg", "foot", "wtype", "wl-copy", "wl-paste", "Xwayland", "xterm",
];

/// Evdev key codes (linux/input-event-codes.h) of the keys tests press.
pub mod keys {
    pub const LEFTCTRL: u32 = 29;
    pub const LEFTSHIFT: u32 = 42;
    pub const LEFTALT: u32 = 56;
    pub const SPACE: u32 = 57;
    pub const LEFTMETA: u32 = 125;
}

const APT: &str = "sudo apt install sway foot wtype wl-clipboard xwayland xterm";

/// xterm pastes CLIPBOARD on Ctrl+Shift+V, like modern terminals.
pub const XTERM_PASTE: &str =
    "XTerm*VT100.translations: #override Shift Ctrl <Key>V: insert-selection(CLIPBOARD)";

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
}

/// False (skip) when the tools are missing and E2E is not required; panics when required.
pub fn tools_present() -> bool {
    let missing: Vec<&str> = TOOLS.iter().copied().filter(|t| !on_path(t)).collect();
    if missing.is_empty() {
        return true;
    }
    assert!(
        std::env::var_os("DICTUM_REQUIRE_E2E").is_none(),
        "DICTUM_REQUIRE_E2E is set but {missing:?} are not installed ({APT})"
    );
    eprintln!("SKIPPED: {missing:?} not installed ({APT})");
    false
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// (uid, gid) of [`USER`], created if missing.
fn test_user() -> (u32, u32) {
    let id = |flag: &str| -> Option<u32> {
        let o = Command::new("id").args([flag, USER]).output().ok()?;
        o.status
            .success()
            .then(|| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
            .flatten()
    };
    if id("-u").is_none() {
        let status = Command::new("useradd")
            .args(["--create-home", "--shell", "/bin/sh", USER])
            .status()
            .expect("run useradd");
        // Another test may have created it meanwhile.
        assert!(
            status.success() || id("-u").is_some(),
            "useradd {USER} failed: {status}"
        );
    }
    (
        id("-u").expect("uid of the test user"),
        id("-g").expect("gid of the test user"),
    )
}

/// A running headless sway; stopped on drop.
pub struct Session {
    sway: Option<Child>,
    /// (uid, gid) the session runs as; None: as this process's user.
    pub user: Option<(u32, u32)>,
    pub dir: tempfile::TempDir,
    pub home: PathBuf,
    pub runtime: PathBuf,
    pub wayland_display: String,
    pub display: String,
    pub swaysock: String,
    log: PathBuf,
}

impl Session {
    /// Starts sway with `extra_config` appended to its config (home/.config/sway/config).
    pub fn start(extra_config: &str) -> Session {
        let user = is_root().then(test_user);
        let dir = tempfile::Builder::new()
            .prefix("dictum-sway-")
            .tempdir()
            .expect("tempdir");
        let home = dir.path().join("home");
        let runtime = dir.path().join("runtime");
        let config = home.join(".config/sway/config");
        std::fs::create_dir_all(config.parent().expect("parent")).expect("mkdir config");
        std::fs::create_dir_all(&runtime).expect("mkdir runtime");
        let env_file = dir.path().join("session.env");
        std::fs::write(
            &config,
            format!(
                "# headless test session (dictum tests/common/sway_session.rs)\n\
                 xwayland enable\n\
                 output HEADLESS-1 resolution 1280x800\n\
                 focus_follows_mouse no\n\
                 exec env > {}\n{extra_config}\n",
                env_file.display()
            ),
        )
        .expect("write sway config");
        let log = dir.path().join("sway.log");
        let mut s = Session {
            sway: None,
            user,
            home,
            runtime,
            wayland_display: String::new(),
            display: String::new(),
            swaysock: String::new(),
            log,
            dir,
        };
        s.give(s.dir.path());
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&s.runtime, std::fs::Permissions::from_mode(0o700))
            .expect("chmod runtime");
        s.sway = Some(
            s.command("sway")
                .args(["-c"])
                .arg(&config)
                .stdout(Stdio::from(
                    std::fs::File::create(&s.log).expect("sway log"),
                ))
                .stderr(Stdio::from(
                    std::fs::OpenOptions::new()
                        .append(true)
                        .open(&s.log)
                        .expect("sway log"),
                ))
                .spawn(),
        );
        let start = Instant::now();
        loop {
            let text = std::fs::read_to_string(&env_file).unwrap_or_default();
            let get = |k: &str| {
                text.lines()
                    .find_map(|l| l.strip_prefix(&format!("{k}=")))
                    .map(str::to_string)
            };
            if let (Some(w), Some(d), Some(sock)) =
                (get("WAYLAND_DISPLAY"), get("DISPLAY"), get("SWAYSOCK"))
            {
                s.wayland_display = w;
                s.display = d;
                s.swaysock = sock;
                break;
            }
            if let Some(Ok(Some(status))) = s.sway.as_mut().map(|c| c.try_wait()) {
                panic!(
                    "sway exited ({status}):\n{}",
                    std::fs::read_to_string(&s.log).unwrap_or_default()
                );
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "sway did not start within 20 s:\n{}",
                std::fs::read_to_string(&s.log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        s
    }

    /// The environment every client of the session gets (and nothing else).
    pub fn env(&self) -> Vec<(String, String)> {
        let mut env = vec![
            ("HOME".to_string(), self.home.display().to_string()),
            (
                "XDG_CONFIG_HOME".to_string(),
                self.home.join(".config").display().to_string(),
            ),
            (
                "XDG_DATA_HOME".to_string(),
                self.home.join(".local/share").display().to_string(),
            ),
            (
                "XDG_CACHE_HOME".to_string(),
                self.home.join(".cache").display().to_string(),
            ),
            (
                "XDG_RUNTIME_DIR".to_string(),
                self.runtime.display().to_string(),
            ),
            (
                "PATH".to_string(),
                "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin".to_string(),
            ),
            ("LANG".to_string(), "C.UTF-8".to_string()),
            ("LC_ALL".to_string(), "C.UTF-8".to_string()),
            ("WLR_BACKENDS".to_string(), "headless".to_string()),
            ("WLR_LIBINPUT_NO_DEVICES".to_string(), "1".to_string()),
            ("WLR_RENDERER".to_string(), "pixman".to_string()),
            ("XDG_SESSION_TYPE".to_string(), "wayland".to_string()),
            ("XDG_CURRENT_DESKTOP".to_string(), "sway".to_string()),
        ];
        if !self.wayland_display.is_empty() {
            env.push(("WAYLAND_DISPLAY".into(), self.wayland_display.clone()));
            env.push(("DISPLAY".into(), self.display.clone()));
            env.push(("SWAYSOCK".into(), self.swaysock.clone()));
        }
        env
    }

    /// `prog` run as the session's user with exactly [`Session::env`] (plus `.env()`s
    /// the caller adds through [`UserCommand::env`]).
    pub fn command(&self, prog: impl AsRef<std::ffi::OsStr>) -> UserCommand {
        UserCommand {
            user: self.user.map(|_| USER),
            env: self.env(),
            prog: prog.as_ref().to_owned(),
            args: Vec::new(),
            stdio: Vec::new(),
        }
    }

    /// Makes `path` (and everything under it) the session user's.
    pub fn give(&self, path: &Path) {
        let Some((uid, gid)) = self.user else { return };
        let status = Command::new("chown")
            .args(["-R", &format!("{uid}:{gid}")])
            .arg(path)
            .status()
            .expect("chown");
        assert!(status.success(), "chown {}", path.display());
    }

    /// Can the session user read `path`?
    pub fn can_read(&self, path: &Path) -> bool {
        self.command("test")
            .arg("-r")
            .arg(path)
            .run_status()
            .success()
    }

    pub fn swaymsg(&self, args: &[&str]) -> String {
        let out = self.command("swaymsg").args(args).output();
        assert!(
            out.status.success(),
            "swaymsg {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The focused window: (app_id or X11 class, title).
    pub fn focused(&self) -> Option<(String, String)> {
        let tree: Value = serde_json::from_str(&self.swaymsg(&["-t", "get_tree"])).ok()?;
        fn find(n: &Value) -> Option<&Value> {
            if n["focused"] == true && n["pid"].is_number() {
                return Some(n);
            }
            for key in ["nodes", "floating_nodes"] {
                for c in n[key].as_array().into_iter().flatten() {
                    if let Some(f) = find(c) {
                        return Some(f);
                    }
                }
            }
            None
        }
        let n = find(&tree)?;
        let id = n["app_id"]
            .as_str()
            .or_else(|| n["window_properties"]["class"].as_str())
            .unwrap_or_default();
        Some((
            id.to_string(),
            n["name"].as_str().unwrap_or_default().to_string(),
        ))
    }

    /// Focuses the window matching the sway criteria, e.g. `[app_id="foot"]`, and waits
    /// until sway says it has focus.
    pub fn focus(&self, criteria: &str, expect_id: &str) {
        self.swaymsg(&[&format!("{criteria} focus")]);
        let start = Instant::now();
        loop {
            let f = self.focused();
            if f.as_ref().is_some_and(|(id, _)| id == expect_id) {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "{criteria} did not get the focus: {f:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Puts `text` on the Wayland clipboard from another client (wl-copy, which stays to
    /// serve it) and checks it is there.
    pub fn set_clipboard(&self, text: &str) {
        let status = self.command("wl-copy").arg(text).run_status();
        assert!(status.success(), "wl-copy: {status}");
        assert_eq!(self.clipboard().as_deref(), Some(text));
    }

    /// The Wayland clipboard's text as another application sees it.
    pub fn clipboard(&self) -> Option<String> {
        let out = self.command("wl-paste").args(["--no-newline"]).output();
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self
            .command("swaymsg")
            .arg("exit")
            .stdio_null()
            .run_status_quiet();
        let Some(sway) = self.sway.as_mut() else {
            return;
        };
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            if let Ok(Some(_)) = sway.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // runuser passes SIGTERM on to sway.
        let _ = Command::new("kill").arg(sway.id().to_string()).status();
        std::thread::sleep(Duration::from_millis(500));
        let _ = sway.kill();
        let _ = sway.wait();
    }
}

/// A command for the session user: `runuser -u USER -- env -i K=V... prog args` as root,
/// `env -i K=V... prog args` otherwise.
pub struct UserCommand {
    user: Option<&'static str>,
    env: Vec<(String, String)>,
    prog: std::ffi::OsString,
    args: Vec<std::ffi::OsString>,
    stdio: Vec<(u8, Stdio)>,
}

impl UserCommand {
    pub fn arg(mut self, a: impl AsRef<std::ffi::OsStr>) -> Self {
        self.args.push(a.as_ref().to_owned());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    pub fn env(mut self, k: &str, v: impl Into<String>) -> Self {
        self.env.retain(|(n, _)| n != k);
        self.env.push((k.to_string(), v.into()));
        self
    }

    pub fn stdin(mut self, s: Stdio) -> Self {
        self.stdio.push((0, s));
        self
    }

    pub fn stdout(mut self, s: Stdio) -> Self {
        self.stdio.push((1, s));
        self
    }

    pub fn stderr(mut self, s: Stdio) -> Self {
        self.stdio.push((2, s));
        self
    }

    pub fn stdio_null(self) -> Self {
        self.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
    }

    pub fn build(self) -> Command {
        let mut c = match self.user {
            Some(u) => {
                let mut c = Command::new("runuser");
                c.args(["-u", u, "--", "env", "-i"]);
                c
            }
            None => {
                let mut c = Command::new("env");
                c.arg("-i");
                c
            }
        };
        for (k, v) in &self.env {
            c.arg(format!("{k}={v}"));
        }
        c.arg(&self.prog).args(&self.args);
        for (fd, s) in self.stdio {
            match fd {
                0 => c.stdin(s),
                1 => c.stdout(s),
                _ => c.stderr(s),
            };
        }
        c
    }

    pub fn spawn(self) -> Child {
        let prog = self.prog.clone();
        self.build()
            .spawn()
            .unwrap_or_else(|e| panic!("start {prog:?}: {e}"))
    }

    pub fn output(self) -> std::process::Output {
        let prog = self.prog.clone();
        self.build()
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("run {prog:?}: {e}"))
    }

    pub fn run_status(self) -> std::process::ExitStatus {
        let prog = self.prog.clone();
        self.build()
            .stdin(Stdio::null())
            .status()
            .unwrap_or_else(|e| panic!("run {prog:?}: {e}"))
    }

    fn run_status_quiet(self) -> std::io::Result<std::process::ExitStatus> {
        self.build().status()
    }
}

/// A terminal in the session whose shell writes every byte it receives to `file`
/// (`stty -icanon -echo; cat > file`: no line buffering, so the file grows as keys arrive),
/// with a watcher that records when it grew. Killed on drop.
pub struct Terminal {
    child: Child,
    pub file: PathBuf,
    /// sway criteria that select it, e.g. `[app_id="foot"]`.
    pub criteria: String,
    /// Its app_id (Wayland) or class (XWayland), as [`Session::focused`] reports it.
    pub id: String,
    pub growth: Arc<Mutex<Vec<(Instant, u64)>>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
}

impl Terminal {
    /// A native Wayland terminal (foot, app_id `foot`).
    pub fn foot(s: &Session, title: &str) -> Terminal {
        let file = s.dir.path().join("foot.txt");
        let child = s
            .command("foot")
            .args(["-T", title, "sh", "-c"])
            .arg(format!(
                "stty -icanon -echo; exec cat > '{}'",
                file.display()
            ))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        Terminal::wait_up(s, child, file, "[app_id=\"foot\"]", "foot")
    }

    /// An X11 terminal under XWayland (xterm, class `XTerm`; Ctrl+Shift+V pastes CLIPBOARD).
    pub fn xterm(s: &Session, title: &str) -> Terminal {
        let file = s.dir.path().join("xterm.txt");
        let child = s
            .command("xterm")
            .args(["-T", title, "-u8", "-xrm", XTERM_PASTE, "-e", "sh", "-c"])
            .arg(format!(
                "stty -icanon -echo; exec cat > '{}'",
                file.display()
            ))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        Terminal::wait_up(s, child, file, "[class=\"XTerm\"]", "XTerm")
    }

    fn wait_up(s: &Session, mut child: Child, file: PathBuf, criteria: &str, id: &str) -> Terminal {
        let start = Instant::now();
        loop {
            let up = s.focused().is_some_and(|(f, _)| f == id) && file.exists();
            if up {
                break;
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!("{id} exited ({status}); sway log:\n{}", s.log());
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "{id} did not come up (focused: {:?}, file: {}); sway log:\n{}",
                s.focused(),
                file.exists(),
                s.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let growth = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        {
            let (growth, stop, file) = (growth.clone(), stop.clone(), file.clone());
            std::thread::spawn(move || {
                let mut last = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let len = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
                    if len != last {
                        last = len;
                        if let Ok(mut g) = growth.lock() {
                            g.push((Instant::now(), len));
                        }
                    }
                    std::thread::sleep(Duration::from_micros(500));
                }
            });
        }
        Terminal {
            child,
            file,
            criteria: criteria.to_string(),
            id: id.to_string(),
            growth,
            stop,
        }
    }

    pub fn len(&self) -> u64 {
        std::fs::metadata(&self.file).map(|m| m.len()).unwrap_or(0)
    }

    /// Waits until the file holds at least `len` bytes (or `within` passes); returns the
    /// bytes from `from` on.
    pub fn wait_for(&self, from: u64, len: u64, within: Duration) -> String {
        let start = Instant::now();
        loop {
            let bytes = std::fs::read(&self.file).unwrap_or_default();
            if bytes.len() as u64 >= len || start.elapsed() > within {
                let from = (from as usize).min(bytes.len());
                return String::from_utf8_lossy(&bytes[from..]).into_owned();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// When the file grew past `from` bytes for the first time and when it reached its
    /// last length, with that length (None if it did not grow).
    pub fn growth_since(&self, from: u64) -> Option<(Instant, Instant, u64)> {
        let g = self.growth.lock().ok()?;
        let grown: Vec<&(Instant, u64)> = g.iter().filter(|(_, l)| *l > from).collect();
        let first = grown.first()?;
        let last = grown.last()?;
        Some((first.0, last.0, last.1))
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.wait();
    }
}

/// The user's keyboard: a virtual keyboard with the full US (pc105, evdev) keymap, connected
/// to the session's Wayland socket directly (this process may be root; the socket is the
/// session user's). Keys stay down until released, as with a real keyboard.
pub struct Keyboard {
    queue: wayland_client::EventQueue<KbState>,
    state: KbState,
    kb: wayland_protocols_misc::zwp_virtual_keyboard_v1::client::zwp_virtual_keyboard_v1::ZwpVirtualKeyboardV1,
    down: Vec<u32>,
    start: Instant,
    _keymap: std::fs::File,
}

pub struct KbState;

/// What sway's default keyboard config (and a plain desktop) gives: rules evdev, model pc105,
/// layout us. libxkbcommon in the compositor resolves the includes.
const US_KEYMAP: &str = "xkb_keymap {\n\
    xkb_keycodes { include \"evdev+aliases(qwerty)\" };\n\
    xkb_types { include \"complete\" };\n\
    xkb_compat { include \"complete\" };\n\
    xkb_symbols { include \"pc+us+inet(evdev)\" };\n\
};\n";

mod kb_dispatch {
    use super::KbState;
    use wayland_client::globals::GlobalListContents;
    use wayland_client::protocol::{wl_registry, wl_seat};
    use wayland_client::{Connection, Dispatch, QueueHandle};
    use wayland_protocols_misc::zwp_virtual_keyboard_v1::client::{
        zwp_virtual_keyboard_manager_v1::ZwpVirtualKeyboardManagerV1,
        zwp_virtual_keyboard_v1::ZwpVirtualKeyboardV1,
    };

    impl Dispatch<wl_registry::WlRegistry, GlobalListContents> for KbState {
        fn event(
            _: &mut Self,
            _: &wl_registry::WlRegistry,
            _: wl_registry::Event,
            _: &GlobalListContents,
            _: &Connection,
            _: &QueueHandle<Self>,
        ) {
        }
    }

    impl Dispatch<wl_seat::WlSeat, ()> for KbState {
        fn event(
            _: &mut Self,
            _: &wl_seat::WlSeat,
            _: wl_seat::Event,
            _: &(),
            _: &Connection,
            _: &QueueHandle<Self>,
        ) {
        }
    }

    impl Dispatch<ZwpVirtualKeyboardManagerV1, ()> for KbState {
        fn event(
            _: &mut Self,
            _: &ZwpVirtualKeyboardManagerV1,
            _: <ZwpVirtualKeyboardManagerV1 as wayland_client::Proxy>::Event,
            _: &(),
            _: &Connection,
            _: &QueueHandle<Self>,
        ) {
        }
    }

    impl Dispatch<ZwpVirtualKeyboardV1, ()> for KbState {
        fn event(
            _: &mut Self,
            _: &ZwpVirtualKeyboardV1,
            _: <ZwpVirtualKeyboardV1 as wayland_client::Proxy>::Event,
            _: &(),
            _: &Connection,
            _: &QueueHandle<Self>,
        ) {
        }
    }
}

impl Keyboard {
    pub fn connect(s: &Session) -> Keyboard {
        use std::io::Write;
        use std::os::fd::AsFd;
        use wayland_client::protocol::wl_seat::WlSeat;
        use wayland_protocols_misc::zwp_virtual_keyboard_v1::client::zwp_virtual_keyboard_manager_v1::ZwpVirtualKeyboardManagerV1;
        let socket = s.runtime.join(&s.wayland_display);
        let stream = std::os::unix::net::UnixStream::connect(&socket)
            .unwrap_or_else(|e| panic!("connect to {}: {e}", socket.display()));
        let conn = wayland_client::Connection::from_socket(stream).expect("wayland connection");
        let (globals, mut queue) =
            wayland_client::globals::registry_queue_init::<KbState>(&conn).expect("registry");
        let qh = queue.handle();
        let seat: WlSeat = globals.bind(&qh, 1..=7, ()).expect("wl_seat");
        let manager: ZwpVirtualKeyboardManagerV1 = globals
            .bind(&qh, 1..=1, ())
            .expect("the compositor has no zwp_virtual_keyboard_manager_v1");
        let kb = manager.create_virtual_keyboard(&seat, &qh, ());
        let mut keymap = tempfile::tempfile().expect("keymap file");
        keymap
            .write_all(US_KEYMAP.as_bytes())
            .expect("write keymap");
        keymap.write_all(b"\0").expect("write keymap");
        keymap.flush().expect("flush keymap");
        kb.keymap(1, keymap.as_fd(), US_KEYMAP.len() as u32 + 1);
        let mut state = KbState;
        queue.roundtrip(&mut state).expect("roundtrip");
        Keyboard {
            queue,
            state,
            kb,
            down: Vec::new(),
            start: Instant::now(),
            _keymap: keymap,
        }
    }

    fn modifiers(&self) -> u32 {
        let mut m = 0;
        for k in &self.down {
            m |= match *k {
                keys::LEFTSHIFT => 1,
                keys::LEFTCTRL => 4,
                keys::LEFTALT => 8,
                keys::LEFTMETA => 64,
                _ => 0,
            };
        }
        m
    }

    fn send(&mut self, key: u32, pressed: bool) {
        if pressed {
            self.down.push(key);
        } else {
            self.down.retain(|k| *k != key);
        }
        let time = self.start.elapsed().as_millis() as u32;
        self.kb.key(time, key, u32::from(pressed));
        self.kb.modifiers(self.modifiers(), 0, 0, 0);
        self.queue.roundtrip(&mut self.state).expect("roundtrip");
    }

    /// Presses `keys` in order and keeps them down.
    pub fn down(&mut self, keys: &[u32]) {
        for k in keys {
            self.send(*k, true);
        }
    }

    /// Releases `keys` in order.
    pub fn up(&mut self, keys: &[u32]) {
        for k in keys {
            self.send(*k, false);
        }
    }
}

impl Drop for Keyboard {
    fn drop(&mut self) {
        let down = self.down.clone();
        for k in down.iter().rev() {
            self.kb.key(self.start.elapsed().as_millis() as u32, *k, 0);
        }
        self.kb.destroy();
        let _ = self.queue.flush();
    }
}
