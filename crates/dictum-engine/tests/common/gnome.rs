//! The real GNOME stack, headless, for end-to-end tests (Debian bookworm packages): `mutter
//! --headless --wayland --virtual-monitor` (mutter 43, GNOME's compositor, with its
//! org.gnome.Mutter.RemoteDesktop D-Bus API), the real `xdg-desktop-portal` frontend and the
//! `xdg-desktop-portal-gnome` backend on a private D-Bus session bus, and a native Wayland
//! window focused: the GTK 3 text view of `tests/wayland_textbox.py`, whose text is written to
//! a file.
//!
//! GNOME asks the user before any application may control the keyboard: xdg-desktop-portal-gnome
//! 43 draws a "Remote desktop" dialog at every RemoteDesktop session (it has no restore tokens
//! and no permission-store grant in that version: nothing can pre-authorize it). The tests answer
//! it as a user would, with keys (Tab to "Allow remote interaction", Space, Alt+S for Share),
//! pressed through mutter's own RemoteDesktop D-Bus API by `tests/mutter_keys.py`
//! ([`Gnome::answer_consent`]).
//!
//! [`tools`] returns `None` (skip) when a part is missing, and panics instead when
//! `DICTUM_REQUIRE_E2E` is set. Runs as root or not (mutter does not refuse root).
#![allow(dead_code)]

use dictum_engine::portal::{self, Bus};
use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const PYTHON: &str = "/usr/bin/python3";
pub const SOCKET: &str = "wayland-dictum-gnome";
pub const APT: &str = "sudo apt install mutter xdg-desktop-portal xdg-desktop-portal-gnome python3-gi gir1.2-gtk-3.0 dbus wl-clipboard";
/// What xdg-desktop-portal-gnome logs each time it shows a dialog without a parent window.
const DIALOG_SHOWN: &str = "Failed to associate portal window with parent window";

fn find(candidates: &[&str]) -> Option<PathBuf> {
    candidates.iter().map(PathBuf::from).find(|p| p.is_file())
}

fn on_path(tool: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(tool))
            .find(|p| p.is_file())
    })
}

pub struct Tools {
    pub mutter: PathBuf,
    pub portal: PathBuf,
    pub portal_gnome: PathBuf,
}

pub fn tools() -> Option<Tools> {
    let mutter = on_path("mutter");
    let portal = find(&[
        "/usr/libexec/xdg-desktop-portal",
        "/usr/lib/xdg-desktop-portal",
    ]);
    let portal_gnome = find(&[
        "/usr/libexec/xdg-desktop-portal-gnome",
        "/usr/lib/xdg-desktop-portal-gnome",
    ]);
    let gtk = Command::new(PYTHON)
        .args([
            "-c",
            "import gi; gi.require_version('Gtk', '3.0'); from gi.repository import Gio",
        ])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
        .then_some(());
    let dbus = on_path("dbus-daemon");
    match (mutter, portal, portal_gnome, gtk, dbus) {
        (Some(mutter), Some(portal), Some(portal_gnome), Some(()), Some(_)) => Some(Tools {
            mutter,
            portal,
            portal_gnome,
        }),
        missing => {
            assert!(
                std::env::var_os("DICTUM_REQUIRE_E2E").is_none(),
                "DICTUM_REQUIRE_E2E is set but the GNOME portal stack is incomplete ({missing:?}); {APT}"
            );
            eprintln!("SKIPPED: GNOME portal stack missing ({APT})");
            None
        }
    }
}

/// Headless mutter + portals + a native window on a private session bus; all killed on drop.
pub struct Gnome {
    pub dir: tempfile::TempDir,
    children: Vec<Child>,
    pub address: String,
    /// The file holding the text box's whole text.
    pub typed: PathBuf,
}

impl Gnome {
    pub fn start(t: &Tools) -> Gnome {
        let dir = tempfile::tempdir().expect("tempdir");
        let rt = dir.path().join("rt");
        std::fs::create_dir(&rt).expect("runtime dir");
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&rt, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        }
        let env: Vec<(&str, PathBuf)> = vec![
            ("XDG_RUNTIME_DIR", rt.clone()),
            ("XDG_CONFIG_HOME", dir.path().join("config")),
            ("XDG_DATA_HOME", dir.path().join("data")),
            ("XDG_CACHE_HOME", dir.path().join("cache")),
            ("XDG_CURRENT_DESKTOP", "GNOME".into()),
            ("XDG_SESSION_TYPE", "wayland".into()),
            ("WAYLAND_DISPLAY", SOCKET.into()),
            ("GDK_BACKEND", "wayland".into()),
        ];
        let logs = dir.path().to_path_buf();
        let log = move |name: &str| std::fs::File::create(logs.join(name)).expect("log file");
        let command = |program: &Path, logname: &str| {
            let mut c = Command::new(program);
            c.env_remove("DISPLAY")
                .env_remove("SWAYSOCK")
                .envs(env.iter().map(|(k, v)| (k, v)));
            c.stdout(log(logname)).stderr(log(logname));
            c
        };
        let mut children = Vec::new();

        let mut bus = command(Path::new("dbus-daemon"), "dbus.log");
        bus.args(["--session", "--nofork", "--nopidfile", "--print-address=1"])
            .stdout(Stdio::piped());
        let mut bus = bus.spawn().expect("dbus-daemon");
        let mut address = String::new();
        BufReader::new(bus.stdout.take().expect("stdout"))
            .read_line(&mut address)
            .expect("bus address");
        let address = address.trim().to_string();
        children.push(bus);

        let mut c = command(&t.mutter, "mutter.log");
        c.env("DBUS_SESSION_BUS_ADDRESS", &address).args([
            "--headless",
            "--wayland",
            "--no-x11",
            "--virtual-monitor",
            "1280x720",
            "--wayland-display",
            SOCKET,
        ]);
        children.push(c.spawn().expect("mutter"));
        let mut gnome = Gnome {
            typed: dir.path().join("typed.txt"),
            dir,
            children,
            address,
        };
        gnome.wait("mutter's Wayland socket", || rt.join(SOCKET).exists());
        gnome.wait("org.gnome.Mutter.RemoteDesktop on the bus", || {
            gnome.bus_has("org.gnome.Mutter.RemoteDesktop")
        });

        let mut c = command(&t.portal_gnome, "xdp-gnome.log");
        c.env("DBUS_SESSION_BUS_ADDRESS", &gnome.address);
        gnome
            .children
            .push(c.spawn().expect("xdg-desktop-portal-gnome"));
        gnome.wait("xdg-desktop-portal-gnome on the bus", || {
            gnome.bus_has("org.freedesktop.impl.portal.desktop.gnome")
        });
        // The backends a GNOME install has (gnome, gtk): xdg-desktop-portal 1.16 otherwise
        // falls back to any installed backend for an interface GNOME lacks (KDE's
        // GlobalShortcuts, when xdg-desktop-portal-kde is installed too, as on this machine).
        let portals = gnome.dir.path().join("portals");
        std::fs::create_dir(&portals).expect("portals dir");
        for name in ["gnome.portal", "gtk.portal"] {
            let src = Path::new("/usr/share/xdg-desktop-portal/portals").join(name);
            if src.is_file() {
                std::fs::copy(&src, portals.join(name)).expect("copy portal file");
            }
        }
        let mut c = command(&t.portal, "xdp.log");
        c.env("DBUS_SESSION_BUS_ADDRESS", &gnome.address)
            .env("XDG_DESKTOP_PORTAL_DIR", &portals);
        gnome.children.push(c.spawn().expect("xdg-desktop-portal"));
        let bus = gnome.bus();
        gnome.wait("the portal's RemoteDesktop", || {
            portal::probe_on(&bus).can_type()
        });

        let script =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/wayland_textbox.py");
        let mut c = command(Path::new(PYTHON), "textbox.log");
        c.env("DBUS_SESSION_BUS_ADDRESS", &gnome.address)
            .arg(&script)
            .arg(&gnome.typed);
        gnome.children.push(c.spawn().expect("textbox"));
        let typed = gnome.typed.clone();
        gnome.wait("the Wayland text box to start", || typed.exists());
        std::thread::sleep(Duration::from_millis(700)); // mapped and focused
        gnome
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

    fn log_text(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default()
    }

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
        ["mutter.log", "xdp-gnome.log", "xdp.log", "textbox.log"]
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

    /// How many portal dialogs have been shown so far.
    pub fn dialogs_shown(&self) -> usize {
        self.log_text("xdp-gnome.log").matches(DIALOG_SHOWN).count()
    }

    /// Waits for dialog number `before + 1` to be shown, then allows remote control in it
    /// with keys, as the user would. Returns how long the dialog took to appear.
    pub fn answer_consent(&self, before: usize) -> Duration {
        let t = Instant::now();
        self.wait("the portal's consent dialog", || {
            self.dialogs_shown() > before
        });
        let appeared = t.elapsed();
        std::thread::sleep(Duration::from_millis(700)); // mapped and focused
        self.keys(&["Tab", "space", "pause", "alt+s"]);
        appeared
    }

    /// Presses keys through mutter's RemoteDesktop D-Bus API (`tests/mutter_keys.py`).
    pub fn keys(&self, keys: &[&str]) {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/mutter_keys.py");
        let out = Command::new(PYTHON)
            .arg(script)
            .args(keys)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .output()
            .expect("run mutter_keys.py");
        assert!(
            out.status.success(),
            "mutter_keys.py failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The session's environment for a client: Wayland only (no DISPLAY), GNOME, the bus.
    pub fn session_env(&self) -> Vec<(&'static str, OsString)> {
        vec![
            ("XDG_RUNTIME_DIR", self.dir.path().join("rt").into()),
            ("XDG_CONFIG_HOME", self.dir.path().join("config").into()),
            ("XDG_DATA_HOME", self.dir.path().join("data").into()),
            ("XDG_CACHE_HOME", self.dir.path().join("cache").into()),
            ("XDG_CURRENT_DESKTOP", "GNOME".into()),
            ("XDG_SESSION_TYPE", "wayland".into()),
            ("WAYLAND_DISPLAY", SOCKET.into()),
            ("DBUS_SESSION_BUS_ADDRESS", self.address.clone().into()),
        ]
    }

    pub fn typed(&self) -> String {
        std::fs::read_to_string(&self.typed).unwrap_or_default()
    }

    /// Waits until the window has received `expected` (or 5 s), returns what it received and when.
    pub fn wait_typed(&self, expected: &str) -> (String, Instant) {
        let t = Instant::now();
        loop {
            let got = self.typed();
            if got == expected || t.elapsed() > Duration::from_secs(5) {
                return (got, Instant::now());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Gnome {
    fn drop(&mut self) {
        for c in self.children.iter_mut().rev() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
