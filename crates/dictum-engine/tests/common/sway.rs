//! A real headless Wayland session for tests: sway (wlroots headless backend, pixman renderer,
//! no input devices) with XWayland, and windows whose input is written to a file: `foot`
//! (native Wayland) and `xterm` (X11 through XWayland).
//!
//! sway refuses to run as root, so when the tests run as root the compositor and its clients
//! run as an unprivileged user ([`USER`], created when missing) with their own
//! `XDG_RUNTIME_DIR` (mode 0700) in a session folder under /tmp; the test process itself
//! (root) can still connect to the user's socket. As another user, everything runs as that
//! user. [`Sway::start`] takes a lock and points this process's `WAYLAND_DISPLAY` (the
//! socket's absolute path), `XDG_RUNTIME_DIR`, `DISPLAY` and `SWAYSOCK` at the new session,
//! so in-process Wayland clients reach it; dropping the `Sway` stops the compositor (its
//! clients go with it) and removes the folder.
//!
//! Tools missing: the test is skipped, or fails when `DICTUM_REQUIRE_E2E` is set.
#![allow(dead_code)]

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

pub const TOOLS: &[&str] = &[
    "sway", "swaymsg", "foot", "Xwayland", "xterm", "wtype", "wl-copy", "wl-paste", "xhost",
];
pub const APT: &str =
    "sudo apt install sway foot xwayland xterm wtype wl-clipboard x11-xserver-utils";
/// The unprivileged user the session runs as when the tests run as root.
pub const USER: &str = "dictumtest";
/// xterm pastes CLIPBOARD on Ctrl+Shift+V, like modern terminals.
pub const XTERM_PASTE: &str =
    "*VT100.translations: #override Shift Ctrl <Key>V: insert-selection(CLIPBOARD)";

pub static LOCK: Mutex<()> = Mutex::new(());

pub fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
}

/// False (skip) when a tool is missing and E2E is not required; panics when required.
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

/// uid and gid of [`USER`], created first when missing.
fn test_user() -> (u32, u32) {
    let id = |flag: &str| -> Option<u32> {
        let out = Command::new("id").args([flag, USER]).output().ok()?;
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    };
    if id("-u").is_none() {
        let status = Command::new("useradd")
            .args([
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
            ])
            .arg(USER)
            .status()
            .expect("run useradd");
        // Another test process may have created it meanwhile.
        assert!(
            status.success() || id("-u").is_some(),
            "useradd {USER} failed"
        );
    }
    (
        id("-u").expect("uid of the test user"),
        id("-g").expect("gid of the test user"),
    )
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
        let out = self
            .command("swaymsg")
            .args(args)
            .output()
            .expect("run swaymsg");
        assert!(
            out.status.success(),
            "swaymsg {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
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
                c.args(["-name", name, "-T", name, "-u8", "-xrm", XTERM_PASTE])
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
