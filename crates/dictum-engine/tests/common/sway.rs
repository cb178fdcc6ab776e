//! A real headless Wayland session for tests: sway (wlroots headless backend, pixman renderer,
//! no input devices) with XWayland, and terminals whose input is written to a file: `foot`
//! (native Wayland) and `xterm` (X11 through XWayland). Two ways to drive it, sharing the
//! tools, the test user and the lock:
//!
//! - [`Sway`] (the engine's injection tests): the compositor and its clients run as
//!   [`USER`] with their own `XDG_RUNTIME_DIR` in a session folder under /tmp; the test
//!   process itself (root) connects to the user's socket. [`Sway::start`] takes [`LOCK`] and
//!   points this process's `WAYLAND_DISPLAY` (the socket's absolute path), `XDG_RUNTIME_DIR`,
//!   `DISPLAY` and `SWAYSOCK` at the new session, so in-process Wayland clients reach it;
//!   [`Window`]s are the terminals. Dropping the `Sway` stops the compositor (its clients go
//!   with it) and removes the folder.
//! - [`Session`] (the CLI's end-to-end tests): every client runs through
//!   `runuser -u USER -- env -i ...` (as root) or `env -i ...`, with exactly [`Session::env`]
//!   and nothing of the test's own environment. Everything lives in one temporary folder owned
//!   by that user: `home/` (HOME, XDG_CONFIG_HOME=home/.config, the sway config at
//!   home/.config/sway/config), `runtime/` (XDG_RUNTIME_DIR, mode 0700) and the terminals'
//!   output files ([`Terminal`]). The session has no input devices; [`Keyboard`] stands in for
//!   the user's physical one: a virtual keyboard (`zwp_virtual_keyboard_v1`, which sway treats
//!   like any keyboard, bindings included) with the full US keymap a real keyboard gives the
//!   seat, so native and XWayland clients see the keymap they would on a desktop. (`wtype`
//!   would press bindings too, but it uploads a keymap holding only the keys it types, which
//!   then becomes XWayland's keymap.)
//!
//! sway refuses to run as root, so when the tests run as root the compositor and its clients
//! run as the unprivileged user [`USER`] (created when missing); as another user, everything
//! runs as that user.
//!
//! Tools missing: the test is skipped, or fails when `DICTUM_REQUIRE_E2E` is set.
#![allow(dead_code)]

use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

pub const TOOLS: &[&str] = &[
    "sway", "swaymsg", "foot", "Xwayland", "xterm", "wtype", "wl-copy", "wl-paste", "xhost",
];
pub const APT: &str =
    "sudo apt install sway foot xwayland xterm wtype wl-clipboard x11-xserver-utils";
/// The unprivileged user the session runs as when the tests run as root.
pub const USER: &str = "dictumtest";
/// xterm pastes CLIPBOARD on Ctrl+Shift+V, like modern terminals.
pub use super::x11::XTERM_PASTE;

/// Evdev key codes (linux/input-event-codes.h) of the keys tests press.
pub mod keys {
    pub const LEFTCTRL: u32 = 29;
    pub const LEFTSHIFT: u32 = 42;
    pub const LEFTALT: u32 = 56;
    pub const SPACE: u32 = 57;
    pub const LEFTMETA: u32 = 125;
}

pub static LOCK: Mutex<()> = Mutex::new(());

/// False (skip) when a tool is missing and E2E is not required; panics when required.
pub fn tools_present() -> bool {
    super::tools_ready(TOOLS, &format!(" ({APT})"))
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// (uid, gid) of [`USER`], created first when missing.
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
        // Another test process may have created it meanwhile.
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

/// What `swaymsg ARGS` printed; panics when it failed.
fn swaymsg_output(args: &[&str], out: std::process::Output) -> String {
    assert!(
        out.status.success(),
        "swaymsg {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A headless sway session; stopped on drop.
pub struct Sway {
    /// The session folder (owned by the session's user): runtime dir, config, logs, files.
    pub dir: PathBuf,
    pub runtime_dir: PathBuf,
    /// The socket's name in `runtime_dir` (`wayland-1`).
    pub wayland_display: String,
    /// XWayland's display (`:1`); XWayland starts with the first X client.
    pub display: String,
    pub swaysock: String,
    /// (uid, gid) the session runs as; None: as this process.
    user: Option<(u32, u32)>,
    child: Child,
    _lock: MutexGuard<'static, ()>,
}

impl Sway {
    pub fn start() -> Sway {
        Sway::start_with("")
    }

    /// With extra lines for sway's config.
    pub fn start_with(extra_config: &str) -> Sway {
        let lock = LOCK.lock().unwrap_or_else(|p| p.into_inner());
        let user = is_root().then(test_user);
        let dir = tempfile::Builder::new()
            .prefix("dictum-sway-")
            .tempdir_in("/tmp")
            .expect("session folder")
            .keep();
        let runtime_dir = dir.join("rt");
        std::fs::create_dir(&runtime_dir).expect("runtime dir");
        std::fs::set_permissions(&runtime_dir, std::fs::Permissions::from_mode(0o700))
            .expect("chmod runtime dir");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755))
            .expect("chmod session folder");
        if let Some((uid, gid)) = user {
            for d in [&dir, &runtime_dir] {
                std::os::unix::fs::chown(d, Some(uid), Some(gid)).expect("chown session folder");
            }
        }
        let env_file = dir.join("env.txt");
        let config = dir.join("config");
        std::fs::write(
            &config,
            format!(
                "xwayland enable\n\
                 output HEADLESS-1 resolution 1280x800\n\
                 default_border none\n\
                 exec sh -c 'env > {dir}/env.tmp && mv {dir}/env.tmp {env}'\n\
                 {extra_config}\n",
                dir = dir.display(),
                env = env_file.display()
            ),
        )
        .expect("write sway config");
        let log = std::fs::File::create(dir.join("sway.log")).expect("sway log");
        let mut cmd = Command::new("sway");
        cmd.arg("-c")
            .arg(&config)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &dir)
            .env("XDG_RUNTIME_DIR", &runtime_dir)
            .env("LANG", "C.UTF-8")
            .env("WLR_BACKENDS", "headless")
            .env("WLR_LIBINPUT_NO_DEVICES", "1")
            .env("WLR_RENDERER", "pixman")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        if let Some((uid, gid)) = user {
            cmd.uid(uid).gid(gid);
        }
        let mut child = cmd.spawn().expect("start sway");
        let start = Instant::now();
        let env = loop {
            if let Ok(text) = std::fs::read_to_string(&env_file) {
                break text;
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!(
                    "sway exited ({status}):\n{}",
                    std::fs::read_to_string(dir.join("sway.log")).unwrap_or_default()
                );
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "sway did not start within 20 s:\n{}",
                std::fs::read_to_string(dir.join("sway.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let var = |name: &str| -> String {
            env.lines()
                .find_map(|l| l.strip_prefix(&format!("{name}=")))
                .unwrap_or_else(|| panic!("{name} missing from sway's environment:\n{env}"))
                .to_string()
        };
        let sway = Sway {
            wayland_display: var("WAYLAND_DISPLAY"),
            display: var("DISPLAY"),
            swaysock: var("SWAYSOCK"),
            dir,
            runtime_dir,
            user,
            child,
            _lock: lock,
        };
        // Under the lock: no other test of this process reads or writes the environment now.
        std::env::set_var("WAYLAND_DISPLAY", sway.socket());
        std::env::set_var("XDG_RUNTIME_DIR", &sway.runtime_dir);
        std::env::set_var("DISPLAY", &sway.display);
        std::env::set_var("SWAYSOCK", &sway.swaysock);
        if sway.user.is_some() {
            // XWayland admits only the session's user; the tests (root) type with XTest too.
            let ok = sway
                .command("xhost")
                .arg("+si:localuser:root")
                .stdout(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            assert!(
                ok,
                "xhost +si:localuser:root failed (sudo apt install x11-xserver-utils)"
            );
        }
        std::env::set_var("XDG_SESSION_TYPE", "wayland");
        sway
    }

    /// The compositor's socket, absolute.
    pub fn socket(&self) -> PathBuf {
        self.runtime_dir.join(&self.wayland_display)
    }

    /// The session's environment, as its clients see it.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("PATH", std::env::var("PATH").unwrap_or_default()),
            ("HOME", self.dir.display().to_string()),
            ("XDG_RUNTIME_DIR", self.runtime_dir.display().to_string()),
            ("WAYLAND_DISPLAY", self.wayland_display.clone()),
            ("DISPLAY", self.display.clone()),
            ("SWAYSOCK", self.swaysock.clone()),
            ("XDG_SESSION_TYPE", "wayland".to_string()),
            ("LANG", "C.UTF-8".to_string()),
            ("LC_ALL", "C.UTF-8".to_string()),
        ]
    }

    /// `program` as a client of the session: its user, its environment only.
    pub fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.env_clear().envs(self.env()).current_dir(&self.dir);
        if let Some((uid, gid)) = self.user {
            cmd.uid(uid).gid(gid);
        }
        cmd
    }

    /// Runs `swaymsg ARGS`, panicking when it fails; its output.
    pub fn swaymsg(&self, args: &[&str]) -> String {
        let out = self.command("swaymsg").args(args).output();
        swaymsg_output(args, out.expect("run swaymsg"))
    }

    /// The focused window's app_id (Wayland) or instance (X11), if any.
    pub fn focused(&self) -> Option<String> {
        let tree: serde_json::Value =
            serde_json::from_str(&self.swaymsg(&["-t", "get_tree", "-r"])).ok()?;
        fn find(node: &serde_json::Value) -> Option<String> {
            if node["focused"].as_bool() == Some(true) {
                return node["app_id"]
                    .as_str()
                    .or(node["window_properties"]["instance"].as_str())
                    .map(str::to_string);
            }
            ["nodes", "floating_nodes"]
                .iter()
                .filter_map(|k| node[*k].as_array())
                .flatten()
                .find_map(find)
        }
        find(&tree)
    }

    /// A file in the session folder that the session's user can write.
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

impl Drop for Sway {
    fn drop(&mut self) {
        // SIGTERM: sway exits cleanly, its clients lose their connection and exit.
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(3) {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::env::var_os("DICTUM_KEEP_SWAY").is_none() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// The kind of window [`Window::open`] starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `foot`, a native Wayland terminal (pastes on Ctrl+Shift+V).
    Foot,
    /// `xterm` through XWayland (pastes CLIPBOARD on Ctrl+Shift+V, see [`XTERM_PASTE`]).
    Xterm,
}

/// A terminal whose shell writes every byte typed into it to `file` (no line editing, no
/// echo). Focused when opened; killed on drop.
pub struct Window {
    child: Child,
    pub kind: Kind,
    /// app_id (foot) or instance (xterm) to find it with.
    pub name: String,
    pub file: PathBuf,
}

impl Window {
    pub fn open(sway: &Sway, kind: Kind, name: &str) -> Window {
        let file = sway.file(&format!("{name}.txt"));
        let _ = std::fs::remove_file(&file);
        // The redirection creates the file only once the terminal is set up: its
        // existence says the window is ready.
        let script = format!("stty -icanon -echo; exec cat >> '{}'", file.display());
        let log = std::fs::File::create(sway.file(&format!("{name}.log"))).expect("log file");
        let mut cmd = match kind {
            Kind::Foot => {
                let mut c = sway.command("foot");
                c.args(["-a", name, "-T", name, "sh", "-c", &script]);
                c
            }
            Kind::Xterm => {
                let mut c = sway.command("xterm");
                let paste = XTERM_PASTE.replacen("XTerm", "", 1);
                c.args(["-name", name, "-T", name, "-u8", "-xrm", &paste])
                    .args(["-e", "sh", "-c", &script]);
                c
            }
        };
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start the terminal");
        let mut win = Window {
            child,
            kind,
            name: name.to_string(),
            file,
        };
        let start = Instant::now();
        while !win.file.exists() {
            if let Ok(Some(status)) = win.child.try_wait() {
                panic!("{kind:?} exited ({status}):\n{}", win.log(sway));
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "{kind:?} did not come up within 20 s:\n{}",
                win.log(sway)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        win.focus(sway);
        win
    }

    fn log(&self, sway: &Sway) -> String {
        std::fs::read_to_string(sway.file(&format!("{}.log", self.name))).unwrap_or_default()
    }

    /// Gives it the keyboard focus (and checks that it has it).
    pub fn focus(&self, sway: &Sway) {
        let criteria = match self.kind {
            Kind::Foot => format!("[app_id=\"{}\"]", self.name),
            Kind::Xterm => format!("[instance=\"{}\"]", self.name),
        };
        let start = Instant::now();
        loop {
            let _ = sway
                .command("swaymsg")
                .arg(format!("{criteria} focus"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            if sway.focused().as_deref() == Some(self.name.as_str()) {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "could not focus {}: focused is {:?}",
                self.name,
                sway.focused()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// What the window received so far.
    pub fn text(&self) -> String {
        std::fs::read_to_string(&self.file).unwrap_or_default()
    }

    /// Waits until the window received `expected` (or more, or `timeout` passed); returns what
    /// it received.
    pub fn wait_for(&self, expected: &str, timeout: Duration) -> String {
        let start = Instant::now();
        loop {
            let text = self.text();
            if text.len() >= expected.len() || start.elapsed() > timeout {
                // A moment more: anything extra arriving late would be a fault too.
                std::thread::sleep(Duration::from_millis(100));
                return self.text();
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Empties the file (the terminal keeps appending to it).
    pub fn clear(&self) {
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&self.file);
    }
}

impl Drop for Window {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `file` until it is not empty; the time it was first seen non-empty.
pub fn first_byte(file: &Path, timeout: Duration) -> Option<Instant> {
    let start = Instant::now();
    while start.elapsed() < timeout {
        if std::fs::metadata(file).is_ok_and(|m| m.len() > 0) {
            return Some(Instant::now());
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    None
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
                "# headless test session (dictum tests/common/sway.rs)\n\
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

    /// `src` where the session's user can run or read it: as it is when it can, else
    /// hard-linked (or copied) into the session folder. A hard link is never chowned: it is
    /// the build's file.
    pub fn reachable(&self, src: &Path) -> PathBuf {
        if self.can_read(src) {
            return src.to_path_buf();
        }
        let dir = self.dir.path().join("bin");
        std::fs::create_dir_all(&dir).expect("mkdir bin");
        let to = dir.join(src.file_name().expect("file name"));
        if std::fs::hard_link(src, &to).is_err() {
            super::copy_executable(src, &to);
        }
        assert!(
            self.can_read(&to),
            "{} unreadable by the session",
            to.display()
        );
        to
    }

    /// Can the session user read `path`?
    pub fn can_read(&self, path: &Path) -> bool {
        self.command("test")
            .arg("-r")
            .arg(path)
            .run_status()
            .success()
    }

    /// Runs `swaymsg ARGS`, panicking when it fails; its output.
    pub fn swaymsg(&self, args: &[&str]) -> String {
        swaymsg_output(args, self.command("swaymsg").args(args).output())
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

    /// Builds the command and runs `go` on it, panicking with `what` and the program when
    /// it cannot start.
    fn go<T>(self, what: &str, go: impl FnOnce(&mut Command) -> std::io::Result<T>) -> T {
        let prog = self.prog.clone();
        go(&mut self.build()).unwrap_or_else(|e| panic!("{what} {prog:?}: {e}"))
    }

    pub fn spawn(self) -> Child {
        self.go("start", Command::spawn)
    }

    pub fn output(self) -> std::process::Output {
        self.go("run", |c| c.stdin(Stdio::null()).output())
    }

    pub fn run_status(self) -> std::process::ExitStatus {
        self.go("run", |c| c.stdin(Stdio::null()).status())
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
        Terminal::open(s, "foot", &["-T", title], "[app_id=\"foot\"]", "foot")
    }

    /// An X11 terminal under XWayland (xterm, class `XTerm`; Ctrl+Shift+V pastes CLIPBOARD).
    pub fn xterm(s: &Session, title: &str) -> Terminal {
        let args = ["-T", title, "-u8", "-xrm", XTERM_PASTE, "-e"];
        Terminal::open(s, "xterm", &args, "[class=\"XTerm\"]", "XTerm")
    }

    /// `program ARGS sh -c SCRIPT`, the script writing what it gets to `program.txt`; waits
    /// until it is up and focused.
    fn open(s: &Session, program: &str, args: &[&str], criteria: &str, id: &str) -> Terminal {
        let file = s.dir.path().join(format!("{program}.txt"));
        let mut child = s
            .command(program)
            .args(args)
            .args(["sh", "-c"])
            .arg(format!(
                "stty -icanon -echo; exec cat > '{}'",
                file.display()
            ))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
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

// Used by the CLI's Wayland tests only.
#[cfg(all(unix, not(target_os = "macos")))]
#[allow(unused_imports)]
pub use keyboard::Keyboard;

#[cfg(all(unix, not(target_os = "macos")))]
mod keyboard {
    use super::{keys, Session};
    use std::time::Instant;

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
        use wayland_client::{Connection, Dispatch, Proxy, QueueHandle};
        use wayland_protocols_misc::zwp_virtual_keyboard_v1::client::{
            zwp_virtual_keyboard_manager_v1::ZwpVirtualKeyboardManagerV1,
            zwp_virtual_keyboard_v1::ZwpVirtualKeyboardV1,
        };

        /// The keyboard listens to nothing: every event of these objects is dropped.
        macro_rules! ignore_events {
        ($($object:ty, $data:ty;)*) => {$(
            impl Dispatch<$object, $data> for KbState {
                fn event(
                    _: &mut Self,
                    _: &$object,
                    _: <$object as Proxy>::Event,
                    _: &$data,
                    _: &Connection,
                    _: &QueueHandle<Self>,
                ) {
                }
            }
        )*};
    }

        ignore_events! {
            wl_registry::WlRegistry, GlobalListContents;
            wl_seat::WlSeat, ();
            ZwpVirtualKeyboardManagerV1, ();
            ZwpVirtualKeyboardV1, ();
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
}
