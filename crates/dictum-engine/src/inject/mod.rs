//! The last stage: put the dictated text into the focused window.
//!
//! [`Injector`] is the façade. It keeps its connections (x11rb for the window and the
//! keyboard state, enigo for key presses, arboard for the clipboard) open between
//! dictations, reconnecting after a failure. [`Injector::inject`] never panics and never
//! returns an error: the [`InjectReport`] says what was done, how long it took and, when it
//! failed, why — the caller stores that in the history row. On failure the text is left on
//! the clipboard and a desktop notification says so.
//!
//! | file | does |
//! |---|---|
//! | `mod.rs` | the façade: [`Injector`], its set-up, route and gate verdict, reconnecting |
//! | `deliver.rs` | one dictation delivered: safe text, route, stop and fall back |
//! | `deliver_x11.rs` | typing on X11 (XTest through enigo) |
//! | `paste_x11.rs` | pasting on X11: every clipboard format kept, the fetch watched |
//! | `clip_x11/` | the X11 CLIPBOARD saved whole and served back byte for byte |
//! | `deliver_wayland.rs` | typing and pasting on each Wayland path, in pieces |
//! | `clipboard.rs` | the clipboard on every path: paste, restore, failure fallback |
//! | `window_probe.rs` | the focused window, and whether it still has the focus |
//! | `keys.rs` | voice commands' chords; the keyboard watch for "scratch that" |
//! | `connections.rs` | X11 and Wayland connections, made when needed, dropped on error |
//! | `abilities.rs` | what the session offers, probed |
//! | `report.rs` | [`Delivery`] and [`InjectReport`], what one delivery did |
//! | `config.rs` | the `[inject]` section, terminal class matching |
//! | `window.rs` | focused window class/title, held modifier keys (x11rb) |
//! | `typing.rs` | key presses with enigo: text, paste chord, modifier release |
//! | `paste.rs` | clipboard text with arboard (copy, the failure fallback) |
//! | `wayland.rs` | X11 vs Wayland-only, `wtype`/`ydotool`/`wl-copy` |
//! | `uinput/` | the last-resort uinput keyboard, keys chosen for the user's XKB layout |
//! | `vkbd/`, `wlclip/` | Wayland virtual keyboard and data-control clipboard, kept whole across a paste (Linux) |
//! | `unsupported.rs` | off Linux: stand-ins for `vkbd`, `wlclip`, `uinput` that say so |
//! | `notify.rs` | the failure notification (`notify-send`, never blocking) |
//!
//! Threads: the `Injector` is `Send` (checked at compile time), so it can be created on one
//! thread and moved to the daemon's "injector" thread; it is not `Sync` and needs `&mut` to
//! inject, so exactly one thread uses it at a time.
//!
//! ```no_run
//! use dictum_engine::inject::{InjectConfig, Injector};
//! use dictum_engine::store::{Entry, Source};
//!
//! let mut injector = Injector::new(&InjectConfig::default())?; // once, at start-up
//! // ... per dictation, on the injector thread:
//! let report = injector.inject("Send the report tomorrow.");
//! let mut entry = Entry::new(Source::Mic);
//! report.record(&mut entry); // window, inject_ms, and the error if it failed
//! # Ok::<(), dictum_engine::Error>(())
//! ```

mod abilities;
#[cfg(all(unix, not(target_os = "macos")))]
mod clip_x11;
mod clipboard;
pub mod config;
mod connections;
mod deliver;
mod deliver_wayland;
mod deliver_x11;
pub mod focus;
#[cfg(target_os = "linux")]
pub mod focus_dbus;
pub mod gate;
mod keys;
mod keywatch;
mod lines;
pub mod notify;
mod paste;
#[cfg(all(unix, not(target_os = "macos")))]
mod paste_x11;
mod report;
pub mod session;
mod typing;
// The typing backends: private to `inject/` (the gate, `gate.rs`, is the only way to the
// keyboard). Their tests reach them through `backends` (feature `test-hooks`, tests only).
#[cfg(target_os = "linux")]
#[allow(dead_code)] // some items are for the backend tests only
pub(crate) mod uinput;
#[cfg(not(target_os = "linux"))]
mod unsupported;
#[cfg(not(target_os = "linux"))]
pub(crate) use unsupported::{uinput, vkbd, wlclip};
#[cfg(target_os = "linux")]
#[allow(dead_code)] // some items are for the backend tests only
pub(crate) mod vkbd;
#[allow(dead_code)] // some items are for the backend tests only
pub(crate) mod wayland;
pub mod window;
mod window_probe;
#[cfg(target_os = "linux")]
#[allow(dead_code)] // some items are for the backend tests only
pub(crate) mod wlclip;

/// The typing backends for their own tests only (feature `test-hooks`, which release
/// builds and packages never carry): everything else types through [`Injector`].
#[cfg(all(target_os = "linux", feature = "test-hooks"))]
#[doc(hidden)]
pub mod backends {
    pub mod vkbd {
        pub use crate::inject::vkbd::{probe_globals, seat_keymap, VirtualKeyboard};
    }
    pub mod wlclip {
        pub use crate::inject::wlclip::{WlClipboard, WlSaved};
    }
    pub mod portal {
        pub use crate::portal::remote::RemoteKeyboard;
    }
    pub mod uinput {
        pub use crate::inject::uinput::{
            user_layout, LayoutMap, LayoutSource, Names, Stroke, UinputKeyboard,
        };
        pub mod events {
            pub use crate::inject::uinput::events::*;
        }
    }
}

pub use abilities::probe_abilities;
pub use config::{InjectBackend, InjectConfig, InjectMethod};
pub use connections::portal_token_file;
pub use gate::Verdict;
pub use report::{inject_failed, Delivery, InjectReport, PASTE_UNCONFIRMED};
pub use session::{Abilities, ClipPath, Focus, HotkeyPath, Route, Session, SessionKind, TypePath};
pub use window::WindowInfo;

use connections::{WaylandParts, X11Parts};
use std::time::Duration;

/// The section's validation as the engine's config error.
fn checked(config: &InjectConfig) -> crate::Result<()> {
    config
        .validate()
        .map_err(|(key, reason)| crate::Error::ConfigValue {
            key: key.into(),
            reason,
        })
}

/// Puts text into the focused window. Create one per process and keep it: connections are
/// reused (an enigo connection costs milliseconds and a keymap read).
pub struct Injector {
    config: InjectConfig,
    session: Session,
    abilities: Abilities,
    x: X11Parts,
    wl: WaylandParts,
    /// Keyboard activity since the last dictation (X11 sessions; started at the first
    /// delivery), for "scratch that".
    keywatch: Option<keywatch::KeyWatch>,
    /// Asked between words while typing (the cancel key); set for one `inject_until`.
    stop: Option<StopCheck>,
    /// A stored text is typed ([`Injector::inject_stored`]): when the cancel key stops it,
    /// the rest goes to the clipboard.
    keep_rest: bool,
    /// The config's `[[profile]]` tables: a class-matched one may say `terminal = false`.
    profiles: crate::profile::Profiles,
}

/// Asked between words while typing: true stops the typing there (the cancel key).
pub type StopCheck = std::sync::Arc<dyn Fn() -> bool + Send + Sync>;

/// Why typing ended early, as the report's error says it.
pub const STOPPED: &str = "typing stopped with the cancel key";

/// Why typing ended early when the focus moved to another window.
pub const FOCUS_MOVED: &str = "typing stopped: the focus moved to another window";

// The daemon moves the injector to its own thread.
const _: fn() = || {
    fn assert_send<T: Send>() {}
    assert_send::<Injector>();
};

impl Injector {
    /// An injector for `session` with nothing connected yet (no display, no clipboard).
    fn unconnected(config: InjectConfig, session: Session, abilities: Abilities) -> Injector {
        Injector {
            config,
            session,
            abilities,
            x: X11Parts::default(),
            wl: WaylandParts::default(),
            keywatch: None,
            stop: None,
            keep_rest: false,
            profiles: crate::profile::Profiles::default(),
        }
    }

    /// Detects the session and what it offers and connects what the likely path needs now,
    /// so the first dictation does not pay for it. A display that is not reachable yet is
    /// not an error here: each `inject` retries and reports it. Errors only for an invalid
    /// config.
    pub fn new(config: &InjectConfig) -> crate::Result<Injector> {
        checked(config)?;
        let session = Session::detect();
        let abilities = probe_abilities(&session);
        let mut injector = Injector::unconnected(config.clone(), session, abilities);
        injector.warm_up();
        Ok(injector)
    }

    /// Connects the most likely path (the one for a native or unknown window).
    fn warm_up(&mut self) {
        let Ok(route) = self.route(Focus::Unknown) else {
            return;
        };
        let paste = self.config.method == InjectMethod::Paste;
        let result = match route.typing {
            TypePath::X11 => self.x.keys_and_x11().map(drop).and_then(|()| {
                if paste {
                    #[cfg(all(unix, not(target_os = "macos")))]
                    let warmed = self.x.clip().map(drop);
                    #[cfg(not(all(unix, not(target_os = "macos"))))]
                    let warmed = self.x.board().map(drop);
                    warmed
                } else {
                    Ok(())
                }
            }),
            TypePath::VirtualKeyboard => self.wl.keyboard().map(drop),
            // A new uinput device takes the compositor a moment to pick up: not at a dictation.
            TypePath::Uinput => self.wl.uinput().map(drop),
            // The portal may show a consent dialog: only when a dictation needs it.
            _ => Ok(()),
        };
        if let Err(e) = result {
            tracing::info!("inject: {e} (will retry at the next dictation)");
        }
        if paste && route.clipboard == Some(ClipPath::DataControl) {
            if let Err(e) = self.wl.clipboard() {
                tracing::info!("inject: {e} (will retry at the next dictation)");
            }
        }
    }

    /// Applies a new `[inject]` section (the daemon's config reload); connections are kept.
    pub fn reconfigure(&mut self, config: &InjectConfig) -> crate::Result<()> {
        checked(config)?;
        self.config = config.clone();
        Ok(())
    }

    pub fn config(&self) -> &InjectConfig {
        &self.config
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    pub fn abilities(&self) -> &Abilities {
        &self.abilities
    }

    /// The route for a window of kind `focus` with the current config.
    pub fn route(&self, focus: Focus) -> Result<Route, String> {
        session::route(
            &self.session,
            focus,
            &self.abilities,
            self.config.method,
            self.config.backend,
        )
    }

    /// Checks that text can be injected now into the focused window: the route, or the
    /// one-line reason (for `dictum doctor` and the ready event).
    pub fn check(&mut self) -> Result<Route, String> {
        let (_, focus) = self.focused();
        let route = self.route(focus)?;
        let connected = match route.typing {
            TypePath::X11 => self.x.keys_and_x11().map(drop),
            TypePath::VirtualKeyboard => self.wl.keyboard().map(drop),
            TypePath::Uinput => self.wl.uinput().map(drop),
            _ => Ok(()),
        };
        connected.inspect_err(|_| self.reset())?;
        Ok(route)
    }

    /// The config's `[[profile]]` tables, for the terminal verdict (a profile matched by
    /// class may say `terminal = false`).
    pub fn set_profiles(&mut self, profiles: crate::profile::Profiles) {
        self.profiles = profiles;
    }

    /// The window that would get the keys now, and whether it is a terminal
    /// ([`gate::judge`]: fail closed, a window that cannot be known is one).
    pub fn verdict(&mut self) -> (WindowInfo, Verdict) {
        let window = self.focused_window();
        let verdict = self.judge(&window);
        (window, verdict)
    }

    /// [`gate::judge`] of `window` with this injector's config and profiles.
    pub fn judge(&self, window: &WindowInfo) -> Verdict {
        let profile = self
            .profiles
            .pick(window.class.as_deref(), window.title.as_deref());
        let says = profile.says_terminal().map(|t| (profile.name.as_str(), t));
        gate::judge(&self.config.terminal_classes, window, says)
    }

    /// Turns `[inject] trailing_space` on or off; returns what it was.
    pub fn set_trailing_space(&mut self, on: bool) -> bool {
        std::mem::replace(&mut self.config.trailing_space, on)
    }

    /// Whether the focused window is a terminal now: always an answer, and true when it
    /// cannot be known ([`Injector::verdict`]).
    pub fn focus_is_terminal(&mut self) -> Option<bool> {
        Some(self.verdict().1.terminal)
    }

    /// Drops the X connections (not the clipboard): the next use reconnects.
    pub(super) fn reset_x11(&mut self) {
        self.x.x11 = None;
        self.x.keys = None;
    }

    /// Drops every connection: the next use reconnects.
    pub(super) fn reset(&mut self) {
        self.reset_x11();
        self.wl.keyboard = None;
        self.wl.portal = None;
        self.wl.uinput = None;
        // The clipboard handles stay: dropping them would discard text they are serving.
    }

    /// After a failure: reconnect next time, with what the session offers now.
    pub(super) fn reprobe(&mut self) {
        self.reset();
        self.abilities = probe_abilities(&self.session);
    }

    /// On Wayland Dictum cannot see other keyboards, so it cannot wait for the hotkey's
    /// modifiers to come up as it does on X11: the first key waits this long after the
    /// release instead. It matters where injected keys share the desktop's keyboard state
    /// (the RemoteDesktop portal: a held Ctrl+Alt would turn letters into shortcuts); a
    /// wlroots virtual keyboard has modifiers of its own. It costs nothing when the text is
    /// ready later than this (the usual case). Zero on X11, where `release_modifiers`
    /// watches the real keys.
    pub fn release_grace(&self) -> Duration {
        match self.session.kind {
            SessionKind::Wayland => Duration::from_millis(
                self.config
                    .modifier_release_timeout_ms
                    .min(WAYLAND_GRACE_MS),
            ),
            _ => Duration::ZERO,
        }
    }
}

/// The Wayland release grace (see [`Injector::release_grace`]): people let go of a chord's
/// keys within about this long of each other.
const WAYLAND_GRACE_MS: u64 = 100;

/// The window focused now, read as a dictation's key press reads it (an `Injector` on the
/// `[inject]` settings, its `focused_window`): the tray's profile picker.
pub fn focused_window(config: &crate::config::Config) -> crate::profile::FocusedWindow {
    let Ok(mut injector) = Injector::new(&config.inject) else {
        return crate::profile::FocusedWindow::default();
    };
    let window = injector.focused_window();
    crate::profile::FocusedWindow {
        known: window.class.is_some() || window.title.is_some(),
        class: window.class,
        title: window.title,
    }
}

#[cfg(test)]
mod tests;
