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
//! `DICTUM_REQUIRE_E2E` is set. Runs as root or not (mutter does not refuse root). The
//! session's folder, bus, logs and text box are `portal_desktop.rs` (shared with `kde.rs`).
#![allow(dead_code)]

use crate::portal_desktop::{self, Desktop, Spec, Tools, PYTHON};
use dictum_engine::portal;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

pub const SOCKET: &str = "wayland-dictum-gnome";
pub const APT: &str = "sudo apt install mutter xdg-desktop-portal xdg-desktop-portal-gnome python3-gi gir1.2-gtk-3.0 dbus wl-clipboard xwayland x11-utils";
/// What xdg-desktop-portal-gnome logs each time it shows a dialog without a parent window.
const DIALOG_SHOWN: &str = "Failed to associate portal window with parent window";

pub fn tools() -> Option<Tools> {
    portal_desktop::tools(
        "GNOME",
        "mutter",
        &[
            "/usr/libexec/xdg-desktop-portal-gnome",
            "/usr/lib/xdg-desktop-portal-gnome",
        ],
        "import gi; gi.require_version('Gtk', '3.0'); from gi.repository import Gio",
        APT,
    )
}

/// Headless mutter + portals + a native window on a private session bus; all killed on drop.
/// The session's folder, bus, logs and text box are the [`Desktop`] it derefs to.
pub struct Gnome {
    desktop: Desktop,
}

impl std::ops::Deref for Gnome {
    type Target = Desktop;
    fn deref(&self) -> &Desktop {
        &self.desktop
    }
}

impl Gnome {
    pub fn start(t: &Tools) -> Gnome {
        Gnome::start_with(t, false)
    }

    /// As [`Gnome::start`], with mutter's XWayland (as a GNOME session has it): mutter 43
    /// starts Xwayland itself at start-up (not with `--no-x11`); [`Gnome::x11_env`] is how
    /// an X11 client reaches it. The session's own processes still get no `DISPLAY`.
    pub fn start_xwayland(t: &Tools) -> Gnome {
        let g = Gnome::start_with(t, true);
        g.wait("mutter's XWayland", || g.x11_env().is_some());
        g
    }

    fn start_with(t: &Tools, xwayland: bool) -> Gnome {
        let mut desktop = Desktop::start_bus(Spec {
            socket: SOCKET,
            vars: vec![
                ("XDG_CURRENT_DESKTOP", "GNOME".into()),
                ("XDG_SESSION_TYPE", "wayland".into()),
                ("GDK_BACKEND", "wayland".into()),
            ],
            unset: &["DISPLAY", "SWAYSOCK"],
            logs: &["mutter.log", "xdp-gnome.log", "xdp.log", "textbox.log"],
        });

        let mut c = desktop.command(&t.compositor, "mutter.log");
        c.args(["--headless", "--wayland"]);
        if !xwayland {
            c.arg("--no-x11");
        }
        c.args(["--virtual-monitor", "1280x720", "--wayland-display", SOCKET]);
        desktop.spawn("mutter", c);
        desktop.wait_socket("mutter's Wayland socket");
        desktop.wait("org.gnome.Mutter.RemoteDesktop on the bus", || {
            desktop.bus_has("org.gnome.Mutter.RemoteDesktop")
        });

        let c = desktop.command(&t.backend, "xdp-gnome.log");
        desktop.spawn("xdg-desktop-portal-gnome", c);
        desktop.wait("xdg-desktop-portal-gnome on the bus", || {
            desktop.bus_has("org.freedesktop.impl.portal.desktop.gnome")
        });
        // The backends a GNOME install has (gnome, gtk): xdg-desktop-portal 1.16 otherwise
        // falls back to any installed backend for an interface GNOME lacks (KDE's
        // GlobalShortcuts, when xdg-desktop-portal-kde is installed too, as on this machine).
        let portals = desktop.dir.path().join("portals");
        std::fs::create_dir(&portals).expect("portals dir");
        for name in ["gnome.portal", "gtk.portal"] {
            let src = Path::new("/usr/share/xdg-desktop-portal/portals").join(name);
            if src.is_file() {
                std::fs::copy(&src, portals.join(name)).expect("copy portal file");
            }
        }
        let mut c = desktop.command(&t.portal, "xdp.log");
        c.env("XDG_DESKTOP_PORTAL_DIR", &portals);
        desktop.spawn("xdg-desktop-portal", c);
        let bus = desktop.bus();
        desktop.wait("the portal's RemoteDesktop", || {
            portal::probe_on(&bus).can_type()
        });

        desktop.start_textbox(&[]);
        Gnome { desktop }
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

    /// `DISPLAY` and `XAUTHORITY` of mutter's XWayland ([`Gnome::start_xwayland`]), once its
    /// X server accepts clients: the display mutter logs ("Using public X11 display :N") and
    /// the cookie file it writes in the runtime folder (`.mutter-Xwaylandauth.*`).
    pub fn x11_env(&self) -> Option<Vec<(&'static str, OsString)>> {
        let log = self.log_text("mutter.log");
        let display = log
            .split("Using public X11 display ")
            .nth(1)?
            .split(|c: char| c == ',' || c.is_whitespace())
            .next()?
            .to_string();
        let auth = std::fs::read_dir(self.dir.path().join("rt"))
            .ok()?
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(".mutter-Xwaylandauth."))
            })?;
        let env = vec![("DISPLAY", display.into()), ("XAUTHORITY", auth.into())];
        let up = Command::new("xdpyinfo")
            .envs(env.iter().cloned())
            .output()
            .is_ok_and(|o| o.status.success());
        up.then_some(env)
    }

    /// The session's environment for a client: Wayland only (no DISPLAY), GNOME, the bus.
    pub fn session_env(&self) -> Vec<(&'static str, OsString)> {
        self.desktop.session_env(&[
            ("XDG_CURRENT_DESKTOP", "GNOME"),
            ("XDG_SESSION_TYPE", "wayland"),
        ])
    }
}
