//! Which desktop session this is, and which path reaches the focused window: the decision
//! table, a pure function of facts probed elsewhere (unit-tested for every combination).
//!
//! The rule that matters: on a Wayland session, native Wayland paths come first, whatever
//! `DISPLAY` says. A Wayland session with XWayland running has `DISPLAY` set too, and X11
//! key events sent there reach only XWayland windows: a native window gets nothing, while
//! the X server reports success. X11 paths are used on an X11 session, or for a window that
//! Dictum can tell is an XWayland window (sway and Hyprland say so; GNOME and KDE do not).
//!
//! | session | focused window | typing, in order of preference |
//! |---|---|---|
//! | X11 | any | XTest (enigo) |
//! | Wayland | XWayland (known) | XTest into XWayland, else as below |
//! | Wayland | native or unknown | virtual-keyboard protocol (wlroots: sway, Hyprland, river…), RemoteDesktop portal (GNOME, KDE), `wtype`, Dictum's own uinput keyboard (the user's layout), `ydotool` (uinput, US layout only) |
//!
//! Paste mode needs a clipboard on the same side: X11 (arboard) for X11 paths; the
//! data-control protocol, else `wl-copy`, for Wayland paths. The paste chord goes through the
//! typing path.

use super::config::{InjectBackend, InjectMethod};
use serde::Serialize;

/// The kind of graphical session this process runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionKind {
    X11,
    Wayland,
    /// No graphical session (a console, ssh, CI without a display).
    None,
}

/// The desktop, as far as it changes what works and what to advise.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Desktop {
    Gnome,
    Kde,
    Sway,
    Hyprland,
    /// Another desktop, by its `XDG_CURRENT_DESKTOP` name.
    Other(String),
    Unknown,
}

impl Desktop {
    pub fn name(&self) -> &str {
        match self {
            Desktop::Gnome => "GNOME",
            Desktop::Kde => "KDE Plasma",
            Desktop::Sway => "sway",
            Desktop::Hyprland => "Hyprland",
            Desktop::Other(name) => name,
            Desktop::Unknown => "an unknown desktop",
        }
    }
}

/// The session, from environment variables.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Session {
    pub kind: SessionKind,
    pub desktop: Desktop,
    /// `DISPLAY` is set: an X server (or XWayland) is there.
    pub x_display: bool,
    /// `WAYLAND_DISPLAY` is set.
    pub wayland_display: bool,
}

impl Session {
    /// This process's session.
    pub fn detect() -> Session {
        Session::from_env(|k| std::env::var(k).ok())
    }

    /// The session described by `get` (an environment lookup; empty values count as unset).
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Session {
        let var = |k: &str| get(k).filter(|v| !v.trim().is_empty());
        let x_display = var("DISPLAY").is_some();
        let wayland_display = var("WAYLAND_DISPLAY").is_some();
        let session_type = var("XDG_SESSION_TYPE").map(|s| s.trim().to_ascii_lowercase());
        let kind = match session_type.as_deref() {
            // A Wayland session whose WAYLAND_DISPLAY did not reach us (a systemd unit without
            // the imported environment) is still Wayland: X11 paths would type into nothing.
            Some("wayland") => SessionKind::Wayland,
            _ if wayland_display => SessionKind::Wayland,
            Some("x11") if x_display => SessionKind::X11,
            _ if x_display => SessionKind::X11,
            _ => SessionKind::None,
        };
        let desktop = desktop_from(
            var("XDG_CURRENT_DESKTOP").as_deref(),
            var("SWAYSOCK").is_some(),
            var("HYPRLAND_INSTANCE_SIGNATURE").is_some(),
        );
        Session {
            kind,
            desktop,
            x_display,
            wayland_display,
        }
    }

    /// "Wayland (sway), XWayland running" — for `doctor`, events and logs.
    pub fn describe(&self) -> String {
        match self.kind {
            SessionKind::X11 => format!("X11 ({})", self.desktop.name()),
            SessionKind::Wayland if self.x_display => {
                format!("Wayland ({}), XWayland running", self.desktop.name())
            }
            SessionKind::Wayland => format!("Wayland ({}), no XWayland", self.desktop.name()),
            SessionKind::None => "no graphical session".into(),
        }
    }
}

fn desktop_from(current: Option<&str>, swaysock: bool, hyprland: bool) -> Desktop {
    if hyprland {
        return Desktop::Hyprland;
    }
    if let Some(current) = current {
        // XDG_CURRENT_DESKTOP is a colon-separated list, e.g. "ubuntu:GNOME".
        for part in current.split(':').map(|p| p.trim().to_ascii_lowercase()) {
            match part.as_str() {
                "gnome" | "gnome-classic" | "gnome-flashback" | "unity" => return Desktop::Gnome,
                "kde" | "plasma" => return Desktop::Kde,
                "sway" => return Desktop::Sway,
                "hyprland" => return Desktop::Hyprland,
                _ => {}
            }
        }
    }
    if swaysock {
        return Desktop::Sway;
    }
    match current {
        Some(c) if !c.trim().is_empty() => Desktop::Other(c.trim().to_string()),
        _ => Desktop::Unknown,
    }
}

/// What the focused window is, when the compositor says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Focus {
    /// A native Wayland window.
    Native,
    /// An X11 window through XWayland.
    XWayland,
    /// An X11 window on an X11 session.
    X11,
    /// The compositor does not tell (GNOME, KDE) or nothing is focused.
    Unknown,
}

/// What this session offers, probed (see `Injector`); every field false when unknown.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Abilities {
    /// The X display answers.
    pub x11: bool,
    /// The compositor offers `zwp_virtual_keyboard_manager_v1` (wlroots compositors).
    pub virtual_keyboard: bool,
    /// The compositor offers a data-control clipboard (`zwlr_`/`ext_data_control_manager_v1`).
    pub data_control: bool,
    /// The RemoteDesktop portal is on the session bus (GNOME, KDE).
    pub remote_desktop: bool,
    /// The GlobalShortcuts portal is on the session bus (KDE ≥ 5.27, GNOME ≥ 48, Hyprland).
    pub global_shortcuts: bool,
    pub wtype: bool,
    /// `/dev/uinput` is writable: Dictum's own uinput keyboard can type (any compositor).
    pub uinput: bool,
    /// `ydotool` is installed (it needs its `ydotoold` daemon and /dev/uinput access).
    pub ydotool: bool,
    /// `wl-copy` and `wl-paste` are installed.
    pub wl_clipboard: bool,
}

/// How keys reach the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TypePath {
    /// XTest through enigo: X11 sessions and XWayland windows.
    X11,
    /// The `zwp_virtual_keyboard_v1` protocol, in-process.
    VirtualKeyboard,
    /// The RemoteDesktop portal (`NotifyKeyboardKeysym`), consent asked once.
    Portal,
    Wtype,
    /// Dictum's uinput keyboard, keys chosen for the user's XKB layout.
    Uinput,
    Ydotool,
}

impl TypePath {
    pub fn as_str(self) -> &'static str {
        match self {
            TypePath::X11 => "x11",
            TypePath::VirtualKeyboard => "virtual_keyboard",
            TypePath::Portal => "portal",
            TypePath::Wtype => "wtype",
            TypePath::Uinput => "uinput",
            TypePath::Ydotool => "ydotool",
        }
    }

    /// Native Wayland paths (they reach XWayland windows too, through the compositor).
    pub fn is_wayland(self) -> bool {
        self != TypePath::X11
    }
}

// Here rather than beside `InjectBackend` (`config/inject.rs`): the config section is a leaf
// that imports nothing from the crate above it.
impl InjectBackend {
    /// The forced path; None for `auto`.
    pub fn path(self) -> Option<TypePath> {
        Some(match self {
            InjectBackend::Auto => return None,
            InjectBackend::X11 => TypePath::X11,
            InjectBackend::VirtualKeyboard => TypePath::VirtualKeyboard,
            InjectBackend::Portal => TypePath::Portal,
            InjectBackend::Wtype => TypePath::Wtype,
            InjectBackend::Uinput => TypePath::Uinput,
            InjectBackend::Ydotool => TypePath::Ydotool,
        })
    }
}

/// Where the paste mode's clipboard lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClipPath {
    /// arboard on the X display.
    X11,
    /// The data-control protocol, in-process.
    DataControl,
    /// `wl-copy` / `wl-paste`.
    WlCopy,
}

impl ClipPath {
    pub fn as_str(self) -> &'static str {
        match self {
            ClipPath::X11 => "x11",
            ClipPath::DataControl => "data_control",
            ClipPath::WlCopy => "wl_copy",
        }
    }
}

/// The decision: how to type, and the clipboard (paste mode, and the failure fallback).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Route {
    pub typing: TypePath,
    /// None: no clipboard on the typing path's side (type mode only).
    pub clipboard: Option<ClipPath>,
}

impl Route {
    /// "virtual_keyboard + data_control".
    pub fn describe(&self) -> String {
        match self.clipboard {
            Some(c) => format!("{} (clipboard: {})", self.typing.as_str(), c.as_str()),
            None => self.typing.as_str().to_string(),
        }
    }
}

/// Picks the path for one dictation. `Err` is the one-line reason with the command or
/// setting that fixes it.
pub fn route(
    session: &Session,
    focus: Focus,
    ab: &Abilities,
    method: InjectMethod,
    forced: InjectBackend,
) -> Result<Route, String> {
    let typing = match session.kind {
        SessionKind::None => {
            return Err(
                "no graphical session: neither WAYLAND_DISPLAY nor DISPLAY is set; run Dictum \
                 inside your desktop session"
                    .into(),
            )
        }
        // Even when the probe found no answering X server: the attempt then reports which
        // display failed, and a restarted X server is picked up again.
        SessionKind::X11 => match forced {
            InjectBackend::Auto | InjectBackend::X11 => TypePath::X11,
            other => {
                return Err(format!(
                    "[inject] backend = \"{}\" needs a Wayland session and this is X11; set \
                         it to \"auto\"",
                    other.as_str()
                ))
            }
        },
        SessionKind::Wayland => wayland_typing(session, focus, ab, forced)?,
    };
    let clipboard = clipboard_for(typing, ab);
    if method == InjectMethod::Paste && clipboard.is_none() {
        return Err(format!(
            "paste mode on Wayland needs a clipboard Dictum can set: this compositor offers no \
             data-control protocol and wl-clipboard is not installed (`sudo apt install \
             wl-clipboard`), or set [inject] method = \"type\" ({})",
            session.desktop.name()
        ));
    }
    Ok(Route { typing, clipboard })
}

fn wayland_typing(
    session: &Session,
    focus: Focus,
    ab: &Abilities,
    forced: InjectBackend,
) -> Result<TypePath, String> {
    let available = |p: TypePath| match p {
        TypePath::X11 => ab.x11,
        TypePath::VirtualKeyboard => ab.virtual_keyboard,
        TypePath::Portal => ab.remote_desktop,
        // wtype speaks the virtual-keyboard protocol: it works exactly where that exists.
        TypePath::Wtype => ab.wtype && ab.virtual_keyboard,
        TypePath::Uinput => ab.uinput,
        TypePath::Ydotool => ab.ydotool,
    };
    if let Some(p) = forced.path() {
        return if available(p) {
            Ok(p)
        } else {
            Err(format!(
                "[inject] backend = \"{}\" is not available on this session ({}); set it to \
                 \"auto\"",
                forced.as_str(),
                session.describe()
            ))
        };
    }
    // An XWayland window that the compositor named as such: XTest reaches it directly, with
    // no keymap switch on the X server.
    if focus == Focus::XWayland && ab.x11 {
        return Ok(TypePath::X11);
    }
    for p in [
        TypePath::VirtualKeyboard,
        TypePath::Portal,
        TypePath::Wtype,
        TypePath::Uinput,
        TypePath::Ydotool,
    ] {
        if available(p) {
            return Ok(p);
        }
    }
    Err(no_wayland_typing(session))
}

/// Why nothing can type on this Wayland session, and the one thing to do about it.
pub fn no_wayland_typing(session: &Session) -> String {
    let fix = match session.desktop {
        Desktop::Gnome => {
            "GNOME offers no virtual keyboard to applications; Dictum types through the \
             RemoteDesktop portal: `sudo apt install xdg-desktop-portal xdg-desktop-portal-gnome`, \
             log in again, and allow Dictum once when asked"
        }
        Desktop::Kde => {
            "on KDE Dictum types through the RemoteDesktop portal: `sudo apt install \
             xdg-desktop-portal xdg-desktop-portal-kde`, log in again, and allow Dictum once \
             when asked"
        }
        Desktop::Sway | Desktop::Hyprland => {
            "this compositor should offer the virtual-keyboard protocol; check that it is not \
             disabled, or give Dictum /dev/uinput (the udev rule in the user guide)"
        }
        Desktop::Other(_) | Desktop::Unknown => {
            "install your desktop's portal (`sudo apt install xdg-desktop-portal` plus \
             xdg-desktop-portal-gnome, -kde or -wlr), or give Dictum /dev/uinput (the udev \
             rule in the user guide)"
        }
    };
    format!(
        "no way to type into native Wayland windows on {}: {fix}; until then each dictation is \
         left on the clipboard",
        session.describe()
    )
}

fn clipboard_for(typing: TypePath, ab: &Abilities) -> Option<ClipPath> {
    if typing == TypePath::X11 {
        return Some(ClipPath::X11);
    }
    if ab.data_control {
        Some(ClipPath::DataControl)
    } else if ab.wl_clipboard {
        Some(ClipPath::WlCopy)
    } else {
        None
    }
}

/// How the dictation hotkey is had on this session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "path", rename_all = "snake_case")]
pub enum HotkeyPath {
    /// XGrabKey through `global-hotkey` (X11 sessions).
    X11Grab,
    /// The GlobalShortcuts portal: press and release, the user confirms the binding once.
    Portal,
    /// A compositor shortcut running `dictum ctl` (what `dictum shortcut install` writes).
    /// `release` says whether the desktop reports the key's release (push-to-talk) or only
    /// its press (toggle).
    Compositor { release: bool },
    /// No hotkey: `dictum ctl` or the tray menu only.
    None { reason: String },
}

impl HotkeyPath {
    pub fn as_str(&self) -> &'static str {
        match self {
            HotkeyPath::X11Grab => "x11_grab",
            HotkeyPath::Portal => "portal",
            HotkeyPath::Compositor { .. } => "compositor",
            HotkeyPath::None { .. } => "none",
        }
    }
}

/// The hotkey path for a session. A Wayland session always gets one it can start with: the
/// portal when it is there, else a compositor shortcut that `dictum shortcut install` sets up.
pub fn hotkey_path(session: &Session, ab: &Abilities) -> HotkeyPath {
    match session.kind {
        SessionKind::X11 if ab.x11 => HotkeyPath::X11Grab,
        SessionKind::X11 => HotkeyPath::None {
            reason: "the X display does not answer".into(),
        },
        SessionKind::Wayland if ab.global_shortcuts => HotkeyPath::Portal,
        SessionKind::Wayland => HotkeyPath::Compositor {
            // GNOME's custom shortcuts fire on the press only.
            release: session.desktop != Desktop::Gnome,
        },
        SessionKind::None => HotkeyPath::None {
            reason: "no graphical session".into(),
        },
    }
}

#[cfg(test)]
mod tests;
