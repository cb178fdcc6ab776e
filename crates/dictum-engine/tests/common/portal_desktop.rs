//! What the headless portal desktops of the end-to-end tests share (`gnome.rs`: mutter,
//! `kde.rs`: KWin): a private folder with its own XDG runtime, config, data and cache folders,
//! a private D-Bus session bus, every process started with the session's environment and
//! logging to a file there, waits that show the logs' last lines when they time out, the
//! native Wayland text box (`tests/wayland_textbox.py`) whose text is written to a file, and
//! everything killed on drop (last started first).
//!
//! Each desktop starts its own compositor and portal backend with [`Desktop::command`] and
//! [`Desktop::spawn`]; the rest is here. A test that includes `gnome.rs` or `kde.rs` with
//! `#[path]` includes this file beside it, at its root (they use `crate::portal_desktop`).
#![allow(dead_code)]

use dictum_engine::inject::backends::portal::RemoteKeyboard;
use dictum_engine::inject::{Focus, InjectConfig, Injector, TypePath};
use dictum_engine::portal::{self, Bus, PortalInfo};
use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const PYTHON: &str = "/usr/bin/python3";

/// The first of `candidates` that is a file.
fn find(candidates: &[&str]) -> Option<PathBuf> {
    candidates.iter().map(PathBuf::from).find(|p| p.is_file())
}

/// `tool` in a folder of PATH.
fn on_path(tool: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(tool))
            .find(|p| p.is_file())
    })
}

/// The programs of a portal desktop.
pub struct Tools {
    /// The compositor (mutter, kwin_wayland).
    pub compositor: PathBuf,
    /// The `xdg-desktop-portal` frontend.
    pub portal: PathBuf,
    /// The desktop's portal backend (`xdg-desktop-portal-gnome`, `-kde`).
    pub backend: PathBuf,
}

/// The `compositor` on PATH, the portal frontend, the first of `backend` that exists, GTK 3
/// for the text box (`python3` running `gtk_check`) and `dbus-daemon`. None (the test is
/// skipped) when one is missing, or a panic when `DICTUM_REQUIRE_E2E` is set; `apt` says
/// how to install them.
pub fn tools(
    desktop: &str,
    compositor: &str,
    backend: &[&str],
    gtk_check: &str,
    apt: &str,
) -> Option<Tools> {
    let compositor = on_path(compositor);
    let portal = find(&[
        "/usr/libexec/xdg-desktop-portal",
        "/usr/lib/xdg-desktop-portal",
    ]);
    let backend = find(backend);
    let gtk = Command::new(PYTHON)
        .args(["-c", gtk_check])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
        .then_some(());
    let dbus = on_path("dbus-daemon");
    match (compositor, portal, backend, gtk, dbus) {
        (Some(compositor), Some(portal), Some(backend), Some(()), Some(_)) => Some(Tools {
            compositor,
            portal,
            backend,
        }),
        missing => {
            assert!(
                std::env::var_os("DICTUM_REQUIRE_E2E").is_none(),
                "DICTUM_REQUIRE_E2E is set but the {desktop} portal stack is incomplete ({missing:?}); {apt}"
            );
            eprintln!("SKIPPED: {desktop} portal stack missing ({apt})");
            None
        }
    }
}

/// How a desktop's processes are run.
pub struct Spec {
    /// The compositor's Wayland socket name.
    pub socket: &'static str,
    /// Variables every process of the desktop gets, after the XDG folders and before
    /// WAYLAND_DISPLAY.
    pub vars: Vec<(&'static str, OsString)>,
    /// Variables of the test's own environment its processes must not see.
    pub unset: &'static [&'static str],
    /// The log files whose last lines a timed-out wait shows.
    pub logs: &'static [&'static str],
}

/// The session's folder, bus and processes; everything killed on drop.
pub struct Desktop {
    pub dir: tempfile::TempDir,
    children: Vec<Child>,
    pub address: String,
    /// The file holding the text box's whole text.
    pub typed: PathBuf,
    spec: Spec,
}

impl Desktop {
    /// The folders and the private session bus (started with the session's environment, for
    /// the services it activates: permission store, document portal).
    pub fn start_bus(spec: Spec) -> Desktop {
        let dir = tempfile::tempdir().expect("tempdir");
        let rt = dir.path().join("rt");
        std::fs::create_dir(&rt).expect("runtime dir");
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&rt, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        }
        let mut desktop = Desktop {
            typed: dir.path().join("typed.txt"),
            dir,
            children: Vec::new(),
            address: String::new(),
            spec,
        };
        let mut bus = desktop.bare_command(Path::new("dbus-daemon"), "dbus.log");
        bus.args(["--session", "--nofork", "--nopidfile", "--print-address=1"])
            .stdout(Stdio::piped());
        let mut bus = bus.spawn().expect("dbus-daemon");
        let mut address = String::new();
        BufReader::new(bus.stdout.take().expect("stdout"))
            .read_line(&mut address)
            .expect("bus address");
        desktop.address = address.trim().to_string();
        desktop.children.push(bus);
        desktop
    }

    /// The session's own XDG folders.
    fn xdg_dirs(&self) -> Vec<(&'static str, OsString)> {
        let p = self.dir.path();
        vec![
            ("XDG_RUNTIME_DIR", p.join("rt").into()),
            ("XDG_CONFIG_HOME", p.join("config").into()),
            ("XDG_DATA_HOME", p.join("data").into()),
            ("XDG_CACHE_HOME", p.join("cache").into()),
        ]
    }

    fn env(&self) -> Vec<(&'static str, OsString)> {
        let mut env = self.xdg_dirs();
        env.extend(self.spec.vars.iter().cloned());
        env.push(("WAYLAND_DISPLAY", self.spec.socket.into()));
        env
    }

    /// `program` with the session's environment (no bus address), its output to `logname`.
    fn bare_command(&self, program: &Path, logname: &str) -> Command {
        let log = || std::fs::File::create(self.dir.path().join(logname)).expect("log file");
        let mut c = Command::new(program);
        for name in self.spec.unset {
            c.env_remove(name);
        }
        c.envs(self.env()).stdout(log()).stderr(log());
        c
    }

    /// `program` with the session's environment and bus, its output to the log `logname`.
    pub fn command(&self, program: &Path, logname: &str) -> Command {
        let mut c = self.bare_command(program, logname);
        c.env("DBUS_SESSION_BUS_ADDRESS", &self.address);
        c
    }

    /// Starts `c`; it is killed on drop.
    pub fn spawn(&mut self, what: &str, mut c: Command) {
        let child = c.spawn().unwrap_or_else(|e| panic!("start {what}: {e}"));
        self.children.push(child);
    }

    /// Waits for the compositor's Wayland socket.
    pub fn wait_socket(&self, what: &str) {
        let socket = self.dir.path().join("rt").join(self.spec.socket);
        self.wait(what, || socket.exists());
    }

    /// Starts the native Wayland text box (with `extra` variables) and waits until it is
    /// mapped and focused.
    pub fn start_textbox(&mut self, extra: &[(&str, &str)]) {
        let script =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/wayland_textbox.py");
        let mut c = self.command(Path::new(PYTHON), "textbox.log");
        c.envs(extra.iter().copied()).arg(&script).arg(&self.typed);
        self.spawn("the text box", c);
        let typed = self.typed.clone();
        self.wait("the Wayland text box to start", || typed.exists());
        std::thread::sleep(Duration::from_millis(700)); // mapped and focused
    }

    /// What the session's portals offer, and how long the probe took (ms).
    pub fn probe(&self) -> (PortalInfo, f64) {
        let t = Instant::now();
        let info = portal::probe_on(&self.bus());
        (info, t.elapsed().as_secs_f64() * 1e3)
    }

    /// Types a dictation-sized text (450 characters) with `kb` and waits until the last
    /// character is in the window: the characters, the time to send them and the time until
    /// all arrived.
    pub fn type_long(&self, kb: &mut RemoteKeyboard) -> (f64, Duration, Duration) {
        let before = self.typed();
        let long = "The quick brown fox jumps over the lazy dog. ".repeat(10);
        let t = Instant::now();
        kb.type_text(&long).expect("type long");
        let sent = t.elapsed();
        let (got, at) = self.wait_typed(&format!("{before}{long}"));
        assert_eq!(got, format!("{before}{long}"));
        (long.chars().count() as f64, sent, at.duration_since(t))
    }

    /// A character the US layout lacks, typed with `kb`: the portal drops it (no wrong
    /// character typed).
    pub fn type_off_layout(&self, kb: &mut RemoteKeyboard) {
        let before = self.typed();
        kb.type_text("café\n").expect("type");
        let (got, _) = self.wait_typed(&format!("{before}caf\n"));
        assert_eq!(
            got,
            format!("{before}caf\n"),
            "é is not on the layout: dropped, not mistyped"
        );
    }

    pub fn bus(&self) -> Bus {
        Bus::Address(self.address.clone())
    }

    pub fn bus_has(&self, name: &str) -> bool {
        Command::new("dbus-send")
            .args([
                &format!("--bus={}", self.address),
                "--print-reply",
                "--dest=org.freedesktop.DBus",
                "/org/freedesktop/DBus",
                "org.freedesktop.DBus.NameHasOwner",
                &format!("string:{name}"),
            ])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).contains("boolean true"))
            .unwrap_or(false)
    }

    pub fn log_text(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default()
    }

    /// Polls `ok` every 50 ms; panics with the logs after 30 s.
    pub fn wait(&self, what: &str, mut ok: impl FnMut() -> bool) {
        let t = Instant::now();
        while !ok() {
            if t.elapsed() > Duration::from_secs(30) {
                panic!("timed out waiting for {what}\n{}", self.logs());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The last lines of every log, for failure messages.
    pub fn logs(&self) -> String {
        self.spec
            .logs
            .iter()
            .map(|l| {
                let text = self.log_text(l);
                let tail: Vec<&str> = text.lines().rev().take(15).collect();
                format!(
                    "--- {l}\n{}",
                    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The session's environment for a client (the daemon; it goes over a cleared
    /// environment): the XDG folders, `vars`, Wayland only (no DISPLAY), the private bus.
    pub fn session_env(&self, vars: &[(&'static str, &str)]) -> Vec<(&'static str, OsString)> {
        let mut env = self.xdg_dirs();
        env.extend(vars.iter().map(|(k, v)| (*k, OsString::from(v))));
        env.push(("WAYLAND_DISPLAY", self.spec.socket.into()));
        env.push(("DBUS_SESSION_BUS_ADDRESS", self.address.clone().into()));
        env
    }

    pub fn typed(&self) -> String {
        std::fs::read_to_string(&self.typed).unwrap_or_default()
    }

    /// Waits until the window has received `expected` (or 5 s), returns what it received and when.
    pub fn wait_typed(&self, expected: &str) -> (String, Instant) {
        let t = Instant::now();
        loop {
            let got = self.typed();
            // A deadline for a hang, not a speed limit (the time is reported): two headless
            // compositors side by side on 2 busy cores took over 5 s for 450 characters.
            if got == expected || t.elapsed() > Duration::from_secs(20) {
                return (got, Instant::now());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// The product's injector, in the session whose environment the test process has taken: the
/// desktop offers no virtual keyboard to applications, so the RemoteDesktop portal types.
pub fn portal_injector() -> Injector {
    let inj = Injector::new(&InjectConfig {
        notify_on_failure: false,
        ..InjectConfig::default()
    })
    .expect("injector");
    assert!(!inj.abilities().virtual_keyboard, "{:?}", inj.abilities());
    assert_eq!(
        inj.route(Focus::Unknown).map(|r| r.typing),
        Ok(TypePath::Portal)
    );
    inj
}

impl Drop for Desktop {
    fn drop(&mut self) {
        for c in self.children.iter_mut().rev() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
