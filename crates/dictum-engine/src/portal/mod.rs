//! The XDG desktop portals Dictum uses on Wayland, usable from the engine's plain threads:
//!
//! - [`probe`]: which portal interfaces the session bus offers (bounded to 1 s);
//! - `RemoteKeyboard`: typing through `org.freedesktop.portal.RemoteDesktop`
//!   (`NotifyKeyboardKeysym`), GNOME and KDE; the session stays open between dictations and its
//!   restore token is kept in a file so the user consents once (portal version ≥ 2);
//! - [`PortalShortcut`]: push-to-talk through `org.freedesktop.portal.GlobalShortcuts`
//!   (`Activated` = pressed, `Deactivated` = released), KDE ≥ 5.27, GNOME ≥ 48, Hyprland.
//!
//! The D-Bus side is plain `zbus` on a small private tokio runtime (`rt.rs`); every public call
//! blocks the calling thread with a time limit. `ashpd` was the first choice but cannot do what
//! KDE Plasma 5.27 (Debian 12, Ubuntu 24.04 LTS) needs: there the shortcuts must be passed in
//! `CreateSession`'s `shortcuts` option (its `BindShortcuts` only opens System Settings) and the
//! binding is remembered under the session token, so the token must be fixed (`dictum`), and
//! its `CreateSession` reply carries the session handle as a string, not an object path.
//!
//! What each desktop does (checked against the real KDE 5.27 portal, `tests/portal_kde.rs`):
//! - KDE 5.27: RemoteDesktop version 1 (no restore tokens): host applications get no dialog,
//!   only a "Remote control session started" notification. Keysyms are mapped to keys of the
//!   current layout; characters the layout lacks are dropped by the portal (it logs "Failed to
//!   convert keysym into keycode"), so such text should be pasted instead.
//! - GNOME 43 (mutter 43 and xdg-desktop-portal-gnome 43, `tests/portal_gnome.rs`): RemoteDesktop
//!   version 1, a consent dialog at every session (no restore token); keysyms the layout lacks
//!   are dropped like on KDE; the first key events of a new session are lost, so
//!   `RemoteKeyboard` primes it with a lone Shift tap. Newer GNOME portals hand out restore
//!   tokens (persist mode 2): asked once.
//!
//! `RemoteKeyboard` types, so it is private to the engine: only the injector (`inject/`, the
//! gate) uses it; its own tests reach it through `inject::backends::portal` (the test-only
//! feature `test-hooks`).
//!
//! Linux only (zbus, the portals); elsewhere `unsupported.rs` gives the same API, every call
//! saying the portal is not there, and [`probe`] finds nothing.

#[cfg(target_os = "linux")]
mod dbus;
#[cfg(target_os = "linux")]
mod keysym;
#[cfg(target_os = "linux")]
#[allow(dead_code)] // some items are for the backend tests only
pub(crate) mod remote;
#[cfg(target_os = "linux")]
pub(crate) mod rt;
#[cfg(target_os = "linux")]
mod shortcut;
#[cfg(not(target_os = "linux"))]
mod unsupported;

#[cfg(target_os = "linux")]
pub use keysym::{keysym_for, keysyms_for_text, KEYSYM_RETURN};
#[cfg(target_os = "linux")]
pub(crate) use remote::RemoteKeyboard;
#[cfg(target_os = "linux")]
pub use shortcut::{portal_trigger, PortalShortcut, ShortcutEvent, ShortcutRequest};
#[cfg(not(target_os = "linux"))]
pub(crate) use unsupported::RemoteKeyboard;
#[cfg(not(target_os = "linux"))]
pub use unsupported::{PortalShortcut, ShortcutEvent, ShortcutRequest};

use std::time::Duration;

/// Which D-Bus bus to talk to: the session bus of this process, or an explicit address (tests,
/// a session started by someone else).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Bus {
    #[default]
    Session,
    Address(String),
}

/// What the session bus offers (see [`probe`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PortalInfo {
    /// `org.freedesktop.portal.RemoteDesktop` version, None when absent.
    pub remote_desktop: Option<u32>,
    /// `org.freedesktop.portal.GlobalShortcuts` version, None when absent.
    pub global_shortcuts: Option<u32>,
    /// RemoteDesktop `AvailableDeviceTypes` bits (1 keyboard, 2 pointer, 4 touchscreen); 0 when
    /// the portal is absent.
    pub available_device_types: u32,
}

impl PortalInfo {
    /// The RemoteDesktop portal is there and offers a keyboard.
    pub fn can_type(&self) -> bool {
        self.remote_desktop.is_some() && self.available_device_types & DEVICE_KEYBOARD != 0
    }
}

/// RemoteDesktop device type bit for a keyboard.
pub const DEVICE_KEYBOARD: u32 = 1;

/// How long [`probe`] may take, connection included.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// Which portal interfaces this process's session bus offers. Never takes more than
/// [`PROBE_TIMEOUT`]; no bus, no portal or a portal that does not answer in time read as absent.
/// A portal that is D-Bus-activated and slow to start may read as absent on the very first call.
pub fn probe() -> PortalInfo {
    probe_on(&Bus::Session)
}

/// [`probe`] on a given bus.
#[cfg(not(target_os = "linux"))]
pub fn probe_on(_bus: &Bus) -> PortalInfo {
    PortalInfo::default()
}

/// [`probe`] on a given bus.
#[cfg(target_os = "linux")]
pub fn probe_on(bus: &Bus) -> PortalInfo {
    let bus = bus.clone();
    rt::run(PROBE_TIMEOUT, async move {
        let Ok(portal) = dbus::Portal::connect(&bus).await else {
            return PortalInfo::default();
        };
        let (rd, gs, types) = futures_util::join!(
            portal.version(dbus::REMOTE_DESKTOP),
            portal.version(dbus::GLOBAL_SHORTCUTS),
            portal.property_u32(dbus::REMOTE_DESKTOP, "AvailableDeviceTypes"),
        );
        PortalInfo {
            remote_desktop: rd,
            global_shortcuts: gs,
            available_device_types: if rd.is_some() { types.unwrap_or(0) } else { 0 },
        }
    })
    .unwrap_or_default()
}
