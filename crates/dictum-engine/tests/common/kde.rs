//! The real KDE Plasma 5.27 stack, headless, for end-to-end tests (Debian packages): a copy of
//! `kwin_wayland --virtual` (headless KWin, which hosts kglobalaccel), the real
//! `xdg-desktop-portal` frontend and `xdg-desktop-portal-kde` backend on a private D-Bus session
//! bus, and a native Wayland window focused: a GTK 3 text view on GDK's Wayland backend
//! (`tests/wayland_textbox.py`) whose text is written to a file.
//!
//! Runs as root: `/usr/bin/kwin_wayland` carries file capabilities the container refuses to
//! grant ("Operation not permitted"), so a plain copy is run. [`tools`] returns `None` (skip)
//! when a part is missing, and panics instead when `DICTUM_REQUIRE_E2E` is set.
//! Used by `portal_kde.rs` (engine) and `live_kde.rs` (the daemon), included with `#[path]`.
#![allow(dead_code)]

use dictum_engine::portal::{self, Bus};
use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const PYTHON: &str = "/usr/bin/python3";
pub const SOCKET: &str = "wayland-dictum-kde";
pub const CONTROL_L: u32 = 0xffe3;
pub const ALT_L: u32 = 0xffe9;
pub const SPACE: u32 = 0x20;

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
    pub kwin: PathBuf,
    pub portal: PathBuf,
    pub portal_kde: PathBuf,
}

pub fn tools() -> Option<Tools> {
    let kwin = on_path("kwin_wayland");
    let portal = find(&[
        "/usr/libexec/xdg-desktop-portal",
        "/usr/lib/xdg-desktop-portal",
    ]);
    let portal_kde = find(&[
        "/usr/lib/x86_64-linux-gnu/libexec/xdg-desktop-portal-kde",
        "/usr/lib/aarch64-linux-gnu/libexec/xdg-desktop-portal-kde",
        "/usr/libexec/xdg-desktop-portal-kde",
        "/usr/lib/xdg-desktop-portal-kde",
    ]);
    let gtk = Command::new(PYTHON)
        .args(["-c", "import gi; gi.require_version('Gtk', '3.0')"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
        .then_some(());
    let dbus = on_path("dbus-daemon");
    match (kwin, portal, portal_kde, gtk, dbus) {
        (Some(kwin), Some(portal), Some(portal_kde), Some(()), Some(_)) => Some(Tools {
            kwin,
            portal,
            portal_kde,
        }),
        missing => {
            assert!(
                std::env::var_os("DICTUM_REQUIRE_E2E").is_none(),
                "DICTUM_REQUIRE_E2E is set but the KDE portal stack is incomplete ({missing:?}); sudo apt install kwin-wayland xdg-desktop-portal xdg-desktop-portal-kde qtwayland5 python3-gi gir1.2-gtk-3.0 dbus"
            );
            eprintln!("SKIPPED: KDE portal stack missing (sudo apt install kwin-wayland xdg-desktop-portal xdg-desktop-portal-kde qtwayland5 python3-gi gir1.2-gtk-3.0)");
            None
        }
    }
}

/// Headless KWin + portals + a native window on a private session bus; everything killed on drop.
pub struct Kde {
    pub dir: tempfile::TempDir,
    children: Vec<Child>,
    pub address: String,
    /// The file holding the text box's whole text.
    pub typed: PathBuf,
}

impl Kde {
    pub fn start(t: &Tools) -> Kde {
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
            ("XDG_CURRENT_DESKTOP", "KDE".into()),
            ("KDE_FULL_SESSION", "true".into()),
            ("QT_QPA_PLATFORM", "wayland".into()),
            ("WAYLAND_DISPLAY", SOCKET.into()),
        ];
        let logs = dir.path().to_path_buf();
        let log = move |name: &str| std::fs::File::create(logs.join(name)).expect("log file");
        let command = |program: &Path, logname: &str| {
            let mut c = Command::new(program);
            c.env_remove("DISPLAY")
                .envs(env.iter().map(|(k, v)| (k, v)));
            c.stdout(log(logname)).stderr(log(logname));
            c
        };
        let mut children = Vec::new();

        // The bus first, with the session's environment for the services it activates
        // (permission store, document portal).
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

        // A copy of kwin_wayland without the file capabilities this container cannot grant.
        let kwin = dir.path().join("kwin_wayland");
        std::fs::copy(&t.kwin, &kwin).expect("copy kwin_wayland");
        let mut c = command(&kwin, "kwin.log");
        c.env("DBUS_SESSION_BUS_ADDRESS", &address).args([
            "--virtual",
            "--no-lockscreen",
            "--socket",
            SOCKET,
            "--width",
            "1024",
            "--height",
            "768",
        ]);
        children.push(c.spawn().expect("kwin_wayland"));
        let mut kde = Kde {
            typed: dir.path().join("typed.txt"),
            dir,
            children,
            address,
        };
        kde.wait("KWin's Wayland socket", || rt.join(SOCKET).exists());
        // kglobalaccel lives inside KWin 5.27; the portals need it on the bus.
        kde.wait("kglobalaccel on the bus", || {
            kde.bus_has("org.kde.kglobalaccel")
        });

        let mut c = command(&t.portal_kde, "xdp-kde.log");
        c.env("DBUS_SESSION_BUS_ADDRESS", &kde.address);
        kde.children
            .push(c.spawn().expect("xdg-desktop-portal-kde"));
        kde.wait("xdg-desktop-portal-kde on the bus", || {
            kde.bus_has("org.freedesktop.impl.portal.desktop.kde")
        });
        let mut c = command(&t.portal, "xdp.log");
        c.env("DBUS_SESSION_BUS_ADDRESS", &kde.address);
        kde.children.push(c.spawn().expect("xdg-desktop-portal"));
        let bus = kde.bus();
        kde.wait("the portal's RemoteDesktop and GlobalShortcuts", || {
            let i = portal::probe_on(&bus);
            i.can_type() && i.global_shortcuts.is_some()
        });

        // A native Wayland window writing what it receives to a file.
        let script =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/wayland_textbox.py");
        let mut c = command(Path::new(PYTHON), "textbox.log");
        c.env("DBUS_SESSION_BUS_ADDRESS", &kde.address)
            .env("GDK_BACKEND", "wayland")
            .arg(&script)
            .arg(&kde.typed);
        kde.children.push(c.spawn().expect("textbox"));
        let typed = kde.typed.clone();
        kde.wait("the Wayland text box to start", || typed.exists());
        std::thread::sleep(Duration::from_millis(700)); // mapped and focused
        kde
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

    pub fn wait(&self, what: &str, mut ok: impl FnMut() -> bool) {
        let t = Instant::now();
        while !ok() {
            if t.elapsed() > Duration::from_secs(30) {
                let logs: Vec<String> = ["kwin.log", "xdp-kde.log", "xdp.log", "textbox.log"]
                    .iter()
                    .map(|l| {
                        let text =
                            std::fs::read_to_string(self.dir.path().join(l)).unwrap_or_default();
                        let tail: Vec<&str> = text.lines().rev().take(15).collect();
                        format!(
                            "--- {l}\n{}",
                            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                        )
                    })
                    .collect();
                panic!("timed out waiting for {what}\n{}", logs.join("\n"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The session's environment for a client (the daemon): Wayland only (no DISPLAY), KDE,
    /// the private bus. Goes over a cleared environment.
    pub fn session_env(&self) -> Vec<(&'static str, OsString)> {
        vec![
            ("XDG_RUNTIME_DIR", self.dir.path().join("rt").into()),
            ("XDG_CONFIG_HOME", self.dir.path().join("config").into()),
            ("XDG_DATA_HOME", self.dir.path().join("data").into()),
            ("XDG_CACHE_HOME", self.dir.path().join("cache").into()),
            ("XDG_CURRENT_DESKTOP", "KDE".into()),
            ("XDG_SESSION_TYPE", "wayland".into()),
            ("KDE_FULL_SESSION", "true".into()),
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

impl Drop for Kde {
    fn drop(&mut self) {
        for c in self.children.iter_mut().rev() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
