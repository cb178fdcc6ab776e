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
//! The session's folder, bus, logs and text box are `portal_desktop.rs` (shared with `gnome.rs`).
#![allow(dead_code)]

use crate::portal_desktop::{self, Desktop, Spec, Tools};
use dictum_engine::portal;
use std::ffi::OsString;

pub const SOCKET: &str = "wayland-dictum-kde";
pub const CONTROL_L: u32 = 0xffe3;
pub const ALT_L: u32 = 0xffe9;
pub const SPACE: u32 = 0x20;
const APT: &str = "sudo apt install kwin-wayland xdg-desktop-portal xdg-desktop-portal-kde qtwayland5 python3-gi gir1.2-gtk-3.0 dbus";

pub fn tools() -> Option<Tools> {
    portal_desktop::tools(
        "KDE",
        "kwin_wayland",
        &[
            "/usr/lib/x86_64-linux-gnu/libexec/xdg-desktop-portal-kde",
            "/usr/lib/aarch64-linux-gnu/libexec/xdg-desktop-portal-kde",
            "/usr/libexec/xdg-desktop-portal-kde",
            "/usr/lib/xdg-desktop-portal-kde",
        ],
        "import gi; gi.require_version('Gtk', '3.0')",
        APT,
    )
}

/// Headless KWin + portals + a native window on a private session bus; everything killed on
/// drop. The session's folder, bus, logs and text box are the [`Desktop`] it derefs to.
pub struct Kde {
    desktop: Desktop,
}

impl std::ops::Deref for Kde {
    type Target = Desktop;
    fn deref(&self) -> &Desktop {
        &self.desktop
    }
}

impl Kde {
    pub fn start(t: &Tools) -> Kde {
        let mut desktop = Desktop::start_bus(Spec {
            socket: SOCKET,
            vars: vec![
                ("XDG_CURRENT_DESKTOP", "KDE".into()),
                ("KDE_FULL_SESSION", "true".into()),
                ("QT_QPA_PLATFORM", "wayland".into()),
            ],
            unset: &["DISPLAY"],
            logs: &["kwin.log", "xdp-kde.log", "xdp.log", "textbox.log"],
        });

        // A copy of kwin_wayland without the file capabilities this container cannot grant.
        let kwin = desktop.dir.path().join("kwin_wayland");
        crate::common::copy_executable(&t.compositor, &kwin);
        let mut c = desktop.command(&kwin, "kwin.log");
        c.args([
            "--virtual",
            "--no-lockscreen",
            "--socket",
            SOCKET,
            "--width",
            "1024",
            "--height",
            "768",
        ]);
        desktop.spawn("kwin_wayland", c);
        desktop.wait_socket("KWin's Wayland socket");
        // kglobalaccel lives inside KWin 5.27; the portals need it on the bus.
        desktop.wait("kglobalaccel on the bus", || {
            desktop.bus_has("org.kde.kglobalaccel")
        });

        let c = desktop.command(&t.backend, "xdp-kde.log");
        desktop.spawn("xdg-desktop-portal-kde", c);
        desktop.wait("xdg-desktop-portal-kde on the bus", || {
            desktop.bus_has("org.freedesktop.impl.portal.desktop.kde")
        });
        let c = desktop.command(&t.portal, "xdp.log");
        desktop.spawn("xdg-desktop-portal", c);
        let bus = desktop.bus();
        desktop.wait("the portal's RemoteDesktop and GlobalShortcuts", || {
            let i = portal::probe_on(&bus);
            i.can_type() && i.global_shortcuts.is_some()
        });

        // A native Wayland window writing what it receives to a file.
        desktop.start_textbox(&[("GDK_BACKEND", "wayland")]);
        Kde { desktop }
    }

    /// The session's environment for a client (the daemon): Wayland only (no DISPLAY), KDE,
    /// the private bus. Goes over a cleared environment.
    pub fn session_env(&self) -> Vec<(&'static str, OsString)> {
        self.desktop.session_env(&[
            ("XDG_CURRENT_DESKTOP", "KDE"),
            ("XDG_SESSION_TYPE", "wayland"),
            ("KDE_FULL_SESSION", "true"),
        ])
    }
}
