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
//! | `config.rs` | the `[inject]` section, terminal class matching |
//! | `window.rs` | focused window class/title, held modifier keys (x11rb) |
//! | `typing.rs` | key presses with enigo: text, paste chord, modifier release |
//! | `paste.rs` | clipboard with arboard |
//! | `wayland.rs` | X11 vs Wayland-only, `wtype`/`ydotool`/`wl-copy` |
//! | `uinput/` | the last-resort uinput keyboard, keys chosen for the user's XKB layout |
//! | `vkbd/`, `wlclip.rs` | Wayland virtual keyboard and data-control clipboard (Linux) |
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

pub mod config;
pub mod focus;
#[cfg(target_os = "linux")]
pub mod focus_dbus;
pub mod gate;
mod keywatch;
mod lines;
pub mod notify;
mod paste;
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
        pub use crate::inject::wlclip::WlClipboard;
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

pub use config::{InjectBackend, InjectConfig, InjectMethod};
pub use gate::Verdict;
pub use session::{Abilities, ClipPath, Focus, HotkeyPath, Route, Session, SessionKind, TypePath};
pub use window::WindowInfo;

use paste::Board;
use serde::Serialize;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use typing::Keys;
use window::X11;

/// How the text was delivered: the path that really carried it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    /// Key presses through that path.
    Typed(TypePath),
    /// Clipboard + Ctrl+V / Ctrl+Shift+V, the chord sent through that path.
    Pasted(TypePath),
    /// Injection failed; the text was left on the clipboard for the user to paste.
    ClipboardOnly,
}

impl Delivery {
    /// The history row's and the events' `inject_method`.
    pub fn as_str(self) -> &'static str {
        match self {
            Delivery::Typed(TypePath::X11) => "x11_type",
            Delivery::Typed(TypePath::VirtualKeyboard) => "virtual_keyboard",
            Delivery::Typed(TypePath::Portal) => "portal",
            Delivery::Typed(TypePath::Wtype) => "wtype",
            Delivery::Typed(TypePath::Uinput) => "uinput",
            Delivery::Typed(TypePath::Ydotool) => "ydotool",
            Delivery::Pasted(TypePath::X11) => "x11_paste",
            Delivery::Pasted(TypePath::VirtualKeyboard) => "virtual_keyboard_paste",
            Delivery::Pasted(TypePath::Portal) => "portal_paste",
            Delivery::Pasted(TypePath::Wtype) => "wtype_paste",
            Delivery::Pasted(TypePath::Uinput) => "uinput_paste",
            Delivery::Pasted(TypePath::Ydotool) => "ydotool_paste",
            Delivery::ClipboardOnly => "clipboard_only",
        }
    }
}

/// What one [`Injector::inject`] did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct InjectReport {
    /// None: nothing was delivered (empty text, or even the clipboard fallback failed).
    pub method: Option<Delivery>,
    /// WM_CLASS class (or Wayland app id) of the target window, when known.
    pub app_class: Option<String>,
    /// Title of the target window, when known.
    pub window_title: Option<String>,
    /// What the focused window was, as far as the session tells.
    pub focus: Option<Focus>,
    /// From the call until the text was handed over (keys sent / paste chord sent),
    /// including the wait for the hotkey's modifiers.
    pub inject_ms: f64,
    /// The whole call, including the paste mode's wait before restoring the clipboard.
    pub total_ms: f64,
    /// Part of `inject_ms` spent waiting for the hotkey's modifiers to be released.
    pub modifier_wait_ms: f64,
    /// Modifiers were still held after the wait and were released by Dictum.
    pub modifiers_forced: bool,
    /// Characters delivered (the trailing space included).
    pub chars: usize,
    /// Why injection failed (the text is then on the clipboard when `method` is
    /// `clipboard_only`). None on success.
    pub error: Option<String>,
    /// Something that went wrong after the text arrived (e.g. restoring the old clipboard).
    pub warning: Option<String>,
    /// The cancel key stopped the typing midway (`error` says how far it got).
    pub stopped: bool,
    /// While typing: the byte offset where the cancel key stopped it.
    #[serde(skip)]
    stopped_at: Option<usize>,
}

impl InjectReport {
    /// Fills the history row's injection fields: window class and title, `inject_ms` (when
    /// the stage ran), and on failure `error_kind = "inject"` with the message. The outcome
    /// stays the caller's: the text exists and is on the clipboard.
    pub fn record(&self, entry: &mut crate::store::Entry) {
        entry.app_class = self.app_class.clone();
        entry.window_title = self.window_title.clone();
        if self.method.is_some() || self.error.is_some() {
            entry.inject_ms = Some(self.inject_ms);
        }
        if let Some(error) = &self.error {
            entry.error_kind = Some("inject".into());
            entry.error = Some(error.clone());
        }
    }

    /// Characters per second of the hand-over (0 when nothing was delivered).
    pub fn chars_per_s(&self) -> f64 {
        if self.inject_ms > 0.0 && self.method.is_some() {
            self.chars as f64 / (self.inject_ms / 1e3)
        } else {
            0.0
        }
    }
}

/// X11 connections, each made when first needed and dropped after an error so the next
/// dictation reconnects (the X server may have restarted).
#[derive(Default)]
struct X11Parts {
    x11: Option<X11>,
    keys: Option<Keys>,
    board: Option<Board>,
    /// A connection of its own for the gate's focus check while typing (asked between
    /// words, while `keys` and `x11` are busy typing).
    watch: Option<std::sync::Arc<X11>>,
}

impl X11Parts {
    fn x11(&mut self) -> Result<&X11, String> {
        if self.x11.is_none() {
            self.x11 = Some(X11::connect(None)?);
        }
        self.x11.as_ref().ok_or_else(|| "X11: not connected".into())
    }

    fn keys_and_x11(&mut self) -> Result<(&mut Keys, &X11), String> {
        self.x11()?;
        if self.keys.is_none() {
            let x11 = self.x11.as_ref().ok_or("X11: not connected")?;
            self.keys = Some(Keys::connect(x11)?);
        }
        match (self.keys.as_mut(), self.x11.as_ref()) {
            (Some(k), Some(x)) => Ok((k, x)),
            _ => Err("X11: not connected".into()),
        }
    }

    /// [`X11Parts::keys_and_x11`], with enigo connected again first when the keyboard map
    /// it read has changed since ([`Keys::stale`]): before the first key of each delivery.
    fn fresh_keys_and_x11(&mut self) -> Result<(&mut Keys, &X11), String> {
        if let (Some(keys), Some(x11)) = (self.keys.as_ref(), self.x11.as_ref()) {
            if keys.stale(x11)? {
                tracing::info!("inject: the keyboard map changed; reading it again");
                // Dropped first: it unbinds its spare keys before the new one reads the map.
                self.keys = None;
            }
        }
        self.keys_and_x11()
    }

    fn board(&mut self) -> Result<&mut Board, String> {
        if self.board.is_none() {
            self.board = Some(Board::connect()?);
        }
        self.board
            .as_mut()
            .ok_or_else(|| "clipboard: not connected".into())
    }
}

/// Wayland connections, likewise made when first needed and dropped after an error.
#[derive(Default)]
struct WaylandParts {
    keyboard: Option<vkbd::VirtualKeyboard>,
    portal: Option<crate::portal::RemoteKeyboard>,
    uinput: Option<uinput::UinputKeyboard>,
    clipboard: Option<wlclip::WlClipboard>,
}

impl WaylandParts {
    fn keyboard(&mut self) -> Result<&mut vkbd::VirtualKeyboard, String> {
        if self.keyboard.is_none() {
            self.keyboard = Some(vkbd::VirtualKeyboard::connect()?);
        }
        self.keyboard
            .as_mut()
            .ok_or_else(|| "virtual keyboard: not connected".into())
    }

    fn portal(&mut self) -> Result<&mut crate::portal::RemoteKeyboard, String> {
        if self.portal.is_none() {
            self.portal = Some(crate::portal::RemoteKeyboard::connect(
                &portal_token_file()?
            )?);
        }
        self.portal
            .as_mut()
            .ok_or_else(|| "RemoteDesktop portal: not connected".into())
    }

    fn uinput(&mut self) -> Result<&mut uinput::UinputKeyboard, String> {
        if self.uinput.is_none() {
            self.uinput = Some(uinput::UinputKeyboard::connect()?);
        }
        self.uinput
            .as_mut()
            .ok_or_else(|| "uinput keyboard: not connected".into())
    }

    fn clipboard(&mut self) -> Result<&mut wlclip::WlClipboard, String> {
        if self.clipboard.is_none() {
            self.clipboard = Some(wlclip::WlClipboard::connect()?);
        }
        self.clipboard
            .as_mut()
            .ok_or_else(|| "Wayland clipboard: not connected".into())
    }
}

/// Where the RemoteDesktop portal's restore token is kept (so consent is asked once).
pub fn portal_token_file() -> Result<PathBuf, String> {
    crate::paths::data_dir()
        .map(|d| d.join("portal-remote-desktop.token"))
        .map_err(|e| e.to_string())
}

/// The section's validation as the engine's config error.
fn checked(config: &InjectConfig) -> crate::Result<()> {
    config
        .validate()
        .map_err(|(key, reason)| crate::Error::ConfigValue {
            key: key.into(),
            reason,
        })
}

/// What this session offers for injection, probed now: the X display, the compositor's
/// globals, the portals, the tools on PATH. Bounded (about a second at worst, when a
/// compositor or the portal does not answer).
pub fn probe_abilities(session: &Session) -> Abilities {
    let mut ab = Abilities {
        wtype: wayland::on_path("wtype"),
        ydotool: wayland::on_path("ydotool"),
        uinput: uinput::available(),
        wl_clipboard: wayland::on_path("wl-copy") && wayland::on_path("wl-paste"),
        ..Abilities::default()
    };
    if session.x_display {
        ab.x11 = X11::connect(None).is_ok();
    }
    if session.kind == SessionKind::Wayland {
        match vkbd::probe_globals() {
            Ok(g) => {
                ab.virtual_keyboard = g.virtual_keyboard;
                ab.data_control = g.data_control;
            }
            Err(e) => tracing::info!("inject: Wayland globals unknown: {e}"),
        }
        let portals = crate::portal::probe();
        ab.remote_desktop = portals.remote_desktop.is_some();
        ab.global_shortcuts = portals.global_shortcuts.is_some();
    }
    ab
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
    /// Detects the session and what it offers and connects what the likely path needs now,
    /// so the first dictation does not pay for it. A display that is not reachable yet is
    /// not an error here: each `inject` retries and reports it. Errors only for an invalid
    /// config.
    pub fn new(config: &InjectConfig) -> crate::Result<Injector> {
        checked(config)?;
        let session = Session::detect();
        let abilities = probe_abilities(&session);
        let mut injector = Injector {
            config: config.clone(),
            session,
            abilities,
            x: X11Parts::default(),
            wl: WaylandParts::default(),
            keywatch: None,
            stop: None,
            keep_rest: false,
            profiles: crate::profile::Profiles::default(),
        };
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
                    self.x.board().map(drop)
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

    /// The window that would receive the text; all `None` when unknown (no display, GNOME
    /// or KDE, nothing focused). Never fails.
    pub fn focused_window(&mut self) -> WindowInfo {
        if crate::fault::active("focus_unknown") {
            return WindowInfo::default();
        }
        #[cfg(target_os = "linux")]
        if self.session.kind == SessionKind::Wayland {
            // KDE and GNOME tell only through D-Bus (the app, not how to reach it).
            let asked = match self.session.desktop {
                session::Desktop::Kde => {
                    Some(focus_dbus::kde_focused(&crate::portal::Bus::Session))
                }
                session::Desktop::Gnome => {
                    Some(focus_dbus::gnome_focused(&crate::portal::Bus::Session))
                }
                _ => None,
            };
            if let Some(asked) = asked {
                return asked.unwrap_or_else(|e| {
                    tracing::debug!("focused app unknown: {e}");
                    WindowInfo::default()
                });
            }
        }
        self.focused().0
    }

    /// The focused window and its kind.
    pub fn focused(&mut self) -> (WindowInfo, Focus) {
        if crate::fault::active("focus_unknown") {
            return (WindowInfo::default(), Focus::Unknown);
        }
        match self.session.kind {
            SessionKind::X11 => {
                let result = self.x.x11().and_then(|x| x.focused_window());
                match result {
                    Ok(w) => (w, Focus::X11),
                    Err(e) => {
                        tracing::debug!("inject: focused window unknown: {e}");
                        self.reset();
                        (WindowInfo::default(), Focus::Unknown)
                    }
                }
            }
            SessionKind::Wayland => focus::focused(&self.session),
            SessionKind::None => (WindowInfo::default(), Focus::Unknown),
        }
    }

    /// Types or pastes `text` (plus the trailing space) into the focused window. Empty or
    /// blank text does nothing. Never panics; failures are in the report, with the text left
    /// on the clipboard and a notification shown.
    pub fn inject(&mut self, text: &str) -> InjectReport {
        self.inject_until(text, None)
    }

    /// [`Injector::inject`], typing stopped at the next word once `stop` says so (the cancel
    /// key): the report then has `stopped` and the characters typed so far. Pasting is one
    /// chord and is not stopped.
    pub fn inject_until(&mut self, text: &str, stop: Option<StopCheck>) -> InjectReport {
        self.stop = stop;
        let report = self.inject_text(text);
        self.stop = None;
        report
    }

    /// [`Injector::inject_until`] of a stored text (a retry, "type again"): when the cancel
    /// key stops it, the rest is left on the clipboard (and the row keeps it all), with a
    /// notice, as for a focus change.
    pub fn inject_stored(&mut self, text: &str, stop: Option<StopCheck>) -> InjectReport {
        self.keep_rest = true;
        let report = self.inject_until(text, stop);
        self.keep_rest = false;
        report
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

    /// Whether the focused window is a terminal now: always an answer, and true when it
    /// cannot be known ([`Injector::verdict`]).
    pub fn focus_is_terminal(&mut self) -> Option<bool> {
        Some(self.verdict().1.terminal)
    }

    fn inject_text(&mut self, text: &str) -> InjectReport {
        let start = Instant::now();
        let mut report = InjectReport::default();
        if text.trim().is_empty() {
            report.total_ms = ms_since(start);
            return report;
        }
        let text = self.final_text(text);
        self.watch_keys();
        let (window, focus) = self.focused();
        report.app_class = window.class.clone();
        report.window_title = window.title.clone();
        report.focus = Some(focus);

        // The gate's focus check: typing goes on only while the window that had the focus
        // when it began still has it (asked with the cancel key, between words).
        let moved = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let user_stop = self.stop.clone();
        if let Some(still) = self.focus_check(&window, focus) {
            let moved = std::sync::Arc::clone(&moved);
            let user_stop = user_stop.clone();
            self.stop = Some(std::sync::Arc::new(move || {
                if user_stop.as_ref().is_some_and(|s| s()) {
                    return true;
                }
                let gone = !still();
                if gone {
                    moved.store(true, std::sync::atomic::Ordering::SeqCst);
                }
                gone
            }));
        }
        let result = self.route(focus).and_then(|route| {
            let terminal = self
                .config
                .is_terminal(window.instance.as_deref(), window.class.as_deref());
            match route.typing {
                TypePath::X11 => {
                    let x11 = self.inject_x11(&text, terminal, start, &mut report);
                    // An XWayland window that XTest cannot reach (XWayland without a usable
                    // keyboard map yet): the compositor's own path reaches it too.
                    match (x11, self.route(Focus::Unknown)) {
                        (Err(e), Ok(native))
                            if focus == Focus::XWayland && native.typing.is_wayland() =>
                        {
                            tracing::info!(
                                "inject: XTest into XWayland failed ({e}); using {}",
                                native.typing.as_str()
                            );
                            self.inject_wayland(
                                &text,
                                native,
                                native.typing,
                                terminal,
                                start,
                                &mut report,
                            )
                        }
                        (x11, _) => x11,
                    }
                }
                path => self.inject_wayland(&text, route, path, terminal, start, &mut report),
            }
        });
        match result {
            Ok(method) => {
                report.method = Some(method);
                match report.stopped_at.take() {
                    Some(at) if moved.load(std::sync::atomic::Ordering::SeqCst) => {
                        // The focus moved: the rest goes to the clipboard, not to another
                        // window, and the user is told.
                        self.keep_the_rest(&text, at, focus, FOCUS_MOVED, &mut report);
                    }
                    Some(at) if self.keep_rest => {
                        // A stored text: what was not typed goes to the clipboard.
                        self.keep_the_rest(&text, at, focus, STOPPED, &mut report);
                    }
                    Some(at) => {
                        report.chars = text[..at.min(text.len())].chars().count();
                        report.stopped = true;
                        report.error = Some(format!(
                            "{STOPPED} after {} of {} characters",
                            report.chars,
                            text.chars().count()
                        ));
                    }
                    None => report.chars = text.chars().count(),
                }
            }
            Err(e) => {
                tracing::warn!("inject: {e}");
                report.inject_ms = ms_since(start);
                report.error = Some(e);
                let kept = self.leave_on_clipboard(&text, focus);
                match &kept {
                    Ok(()) => {
                        report.method = Some(Delivery::ClipboardOnly);
                        report.chars = text.chars().count();
                    }
                    Err(clip) => {
                        report.error = report
                            .error
                            .take()
                            .map(|e| format!("{e}; the clipboard fallback failed too: {clip}"));
                    }
                }
                if self.config.notify_on_failure {
                    notify::notify(&notify::failure_message(&window.describe(), kept.is_ok()));
                }
            }
        }
        self.stop = user_stop;
        report.total_ms = ms_since(start);
        if let Some(w) = &self.keywatch {
            w.own(start);
        }
        report
    }

    /// A check that `window` (focused when typing began) still has the focus, where the
    /// session can tell: X11 through a connection of its own, sway and Hyprland through
    /// their sockets. None where the focus cannot be seen (GNOME, KDE).
    fn focus_check(
        &mut self,
        window: &WindowInfo,
        focus: Focus,
    ) -> Option<std::sync::Arc<dyn Fn() -> bool + Send + Sync>> {
        if self.config.method != InjectMethod::Type {
            return None; // one paste chord: nothing to stop midway
        }
        match (self.session.kind, focus) {
            (SessionKind::X11, _) => {
                let id = window.id?;
                if self.x.watch.is_none() {
                    self.x.watch = X11::connect(None).ok().map(std::sync::Arc::new);
                }
                let x = std::sync::Arc::clone(self.x.watch.as_ref()?);
                Some(std::sync::Arc::new(move || {
                    // A failed query is no proof of a move: typing goes on.
                    x.focused_id().map_or(true, |w| w == Some(id))
                }))
            }
            (SessionKind::Wayland, Focus::Native | Focus::XWayland) => {
                let session = self.session.clone();
                let then = (window.class.clone(), window.pid, window.id);
                Some(std::sync::Arc::new(move || {
                    let (now, f) = focus::focused(&session);
                    f == Focus::Unknown || (now.class, now.pid, now.id) == then
                }))
            }
            _ => None,
        }
    }

    /// Starts the keyboard watch once, in X11 sessions.
    fn watch_keys(&mut self) {
        if self.keywatch.is_none() && self.session.kind == SessionKind::X11 {
            match keywatch::KeyWatch::start() {
                Ok(w) => self.keywatch = Some(w),
                Err(e) => tracing::info!("scratch that cannot see the keyboard: {e}"),
            }
        }
    }

    /// Whether the user typed on the keyboard since `since` (not counting Dictum's own keys);
    /// None where that cannot be seen (Wayland).
    pub fn typed_elsewhere_since(&mut self, since: Instant) -> Option<bool> {
        self.keywatch.as_ref().and_then(|w| w.typed_since(since))
    }

    /// Presses `chords` (voice commands) in the focused window, by the path text would take
    /// there. Returns the path's name.
    pub fn press(&mut self, chords: &[crate::commands::Chord]) -> Result<&'static str, String> {
        let start = Instant::now();
        let pressed = self.press_keys(chords);
        if let Some(w) = &self.keywatch {
            w.own(start);
        }
        pressed
    }

    fn press_keys(&mut self, chords: &[crate::commands::Chord]) -> Result<&'static str, String> {
        let (_, focus) = self.focused();
        let route = self.route(focus)?;
        match route.typing {
            TypePath::X11 => {
                let timeout = Duration::from_millis(self.config.modifier_release_timeout_ms);
                self.x
                    .fresh_keys_and_x11()
                    .and_then(|(keys, x11)| keys.release_modifiers(x11, timeout))
                    .and_then(|_| self.x.keys_and_x11())
                    .and_then(|(keys, _)| keys.press_chords(chords))
                    .inspect_err(|_| self.reset_x11())?;
            }
            path => {
                for chord in chords {
                    let pressed = match path {
                        TypePath::VirtualKeyboard => self.wl.keyboard()?.press(chord),
                        TypePath::Wtype => wayland::press(wayland::Typer::Wtype, chord),
                        TypePath::Ydotool => wayland::press(wayland::Typer::Ydotool, chord),
                        // Return and Tab are typed like text on every path.
                        _ if chord.is_plain() && !chord.shift => match chord.key {
                            crate::commands::Key::Return => {
                                self.wayland_keys(path, Keystrokes::Text("\n"))
                            }
                            crate::commands::Key::Tab => {
                                self.wayland_keys(path, Keystrokes::Text("\t"))
                            }
                            _ => Err(format!(
                                "{} cannot press {chord}; the virtual-keyboard or wtype backend can",
                                path.as_str()
                            )),
                        },
                        _ => Err(format!(
                            "{} cannot press {chord}; the virtual-keyboard or wtype backend can",
                            path.as_str()
                        )),
                    };
                    if let Err(e) = pressed {
                        self.reprobe();
                        return Err(e);
                    }
                }
            }
        }
        Ok(route.typing.as_str())
    }

    fn final_text(&self, text: &str) -> String {
        // Typing never sends control characters (a newline would be Enter in a terminal);
        // whatever produced the text, transcript or cleanup, only printable text goes out.
        let mut text = crate::text_safety::strip_control(text, false);
        if self.config.trailing_space && !text.ends_with(char::is_whitespace) {
            text.push(' ');
        }
        text
    }

    /// Drops the X connections (not the clipboard): the next use reconnects.
    fn reset_x11(&mut self) {
        self.x.x11 = None;
        self.x.keys = None;
    }

    /// Drops every connection: the next use reconnects.
    fn reset(&mut self) {
        self.reset_x11();
        self.wl.keyboard = None;
        self.wl.portal = None;
        self.wl.uinput = None;
        // The clipboard handles stay: dropping them would discard text they are serving.
    }

    /// After a failure: reconnect next time, with what the session offers now.
    fn reprobe(&mut self) {
        self.reset();
        self.abilities = probe_abilities(&self.session);
    }

    fn inject_x11(
        &mut self,
        text: &str,
        terminal: bool,
        start: Instant,
        report: &mut InjectReport,
    ) -> Result<Delivery, String> {
        let timeout = Duration::from_millis(self.config.modifier_release_timeout_ms);
        let released = self
            .x
            .fresh_keys_and_x11()
            .and_then(|(keys, x11)| keys.release_modifiers(x11, timeout))
            .inspect_err(|_| self.reset_x11())?;
        report.modifier_wait_ms = released.waited_ms;
        report.modifiers_forced = !released.forced.is_empty();
        match self.config.method {
            InjectMethod::Type => {
                let typed = self.x.keys_and_x11().and_then(|(keys, x11)| {
                    let caps = keys.suspend_caps_lock(x11)?;
                    // Keys pressed while typing (the hotkey again) pause it until they
                    // are up: the next dictation is being spoken meanwhile.
                    let stop = self.stop.clone();
                    let stop = move || stop.as_ref().is_some_and(|s| s());
                    let typed = keys.type_text(text, x11, TYPING_HOLD_TIMEOUT, &stop);
                    if caps {
                        if let Err(e) = keys.restore_caps_lock() {
                            report.warning = Some(e);
                        }
                    }
                    typed
                });
                let typed = typed.inspect_err(|_| self.reset_x11())?;
                report.stopped_at = typed.stopped_at;
                let paused_ms = typed.waited_ms;
                if paused_ms > 0.0 {
                    tracing::info!(paused_ms, "typing paused while keys were held");
                }
                report.inject_ms = ms_since(start);
                Ok(Delivery::Typed(TypePath::X11))
            }
            InjectMethod::Paste => {
                let board = self.x.board()?;
                let previous = board.text();
                board.set_text(text)?;
                self.x
                    .keys_and_x11()
                    .and_then(|(keys, _)| keys.paste_chord(terminal))
                    .inspect_err(|_| self.reset_x11())?;
                report.inject_ms = ms_since(start);
                if let Some(previous) = previous.filter(|p| p != text) {
                    std::thread::sleep(Duration::from_millis(self.config.paste_restore_delay_ms));
                    let restored = self.x.board().and_then(|b| {
                        // The user may have copied something else meanwhile: keep that.
                        if b.text().as_deref() == Some(text) {
                            b.set_text(&previous)
                        } else {
                            Err(CHANGED_MEANWHILE.into())
                        }
                    });
                    report.warning = restored.err().map(not_restored);
                }
                Ok(Delivery::Pasted(TypePath::X11))
            }
        }
    }

    fn inject_wayland(
        &mut self,
        text: &str,
        route: Route,
        path: TypePath,
        terminal: bool,
        start: Instant,
        report: &mut InjectReport,
    ) -> Result<Delivery, String> {
        // The RemoteDesktop portal maps keysyms onto the user's layout and drops characters
        // the layout lacks (seen on KDE 5.27): such text is pasted, never typed with gaps.
        // The uinput keyboard types only what the user's layout has keys for: other text is
        // pasted too (or, with no clipboard, refused with the characters named).
        let untypable = match path {
            TypePath::Portal => !text.is_ascii(),
            TypePath::Uinput => match self.wl.uinput() {
                Ok(k) => k.can_type(text).is_err(),
                Err(e) => {
                    self.reprobe();
                    return Err(e);
                }
            },
            _ => false,
        };
        let paste =
            self.config.method == InjectMethod::Paste || (untypable && route.clipboard.is_some());
        let result = match paste {
            false => self.wayland_type(path, text, report).map(|()| {
                report.inject_ms = ms_since(start);
                Delivery::Typed(path)
            }),
            true => {
                let clip = route.clipboard.ok_or("no Wayland clipboard")?;
                let previous = self.clipboard_text(clip);
                self.set_clipboard(clip, text)?;
                self.wayland_keys(path, Keystrokes::Paste { terminal })
                    .map(|()| {
                        report.inject_ms = ms_since(start);
                        if let Some(previous) = previous.filter(|p| p != text) {
                            std::thread::sleep(Duration::from_millis(
                                self.config.paste_restore_delay_ms,
                            ));
                            let restored = if self.clipboard_text(clip).as_deref() == Some(text) {
                                self.set_clipboard(clip, &previous)
                            } else {
                                Err(CHANGED_MEANWHILE.into())
                            };
                            report.warning = restored.err().map(not_restored);
                        }
                        Delivery::Pasted(path)
                    })
            }
        };
        if result.is_err() {
            self.reprobe();
        }
        result
    }

    /// Types `text` on a Wayland path; with a stop check, a long text goes in pieces of a
    /// few words, the cancel key asked between them.
    fn wayland_type(
        &mut self,
        path: TypePath,
        text: &str,
        report: &mut InjectReport,
    ) -> Result<(), String> {
        let Some(stop) = self.stop.clone().filter(|_| text.len() > WAYLAND_PIECE) else {
            return self.wayland_keys(path, Keystrokes::Text(text));
        };
        for (at, piece) in pieces(text, WAYLAND_PIECE) {
            if stop() {
                report.stopped_at = Some(at);
                return Ok(());
            }
            self.wayland_keys(path, Keystrokes::Text(piece))?;
        }
        Ok(())
    }

    fn wayland_keys(&mut self, path: TypePath, keys: Keystrokes<'_>) -> Result<(), String> {
        match (path, keys) {
            (TypePath::VirtualKeyboard, Keystrokes::Text(t)) => self.wl.keyboard()?.type_text(t),
            (TypePath::VirtualKeyboard, Keystrokes::Paste { terminal }) => {
                self.wl.keyboard()?.paste_chord(terminal)
            }
            (TypePath::Portal, Keystrokes::Text(t)) => self.wl.portal()?.type_text(t),
            (TypePath::Portal, Keystrokes::Paste { terminal }) => {
                self.wl.portal()?.paste_chord(terminal)
            }
            (TypePath::Wtype, Keystrokes::Text(t)) => wayland::type_text(wayland::Typer::Wtype, t),
            (TypePath::Wtype, Keystrokes::Paste { terminal }) => {
                wayland::paste_chord(wayland::Typer::Wtype, terminal)
            }
            (TypePath::Uinput, Keystrokes::Text(t)) => self.wl.uinput()?.type_text(t),
            (TypePath::Uinput, Keystrokes::Paste { terminal }) => {
                self.wl.uinput()?.paste_chord(terminal)
            }
            (TypePath::Ydotool, Keystrokes::Text(t)) => {
                wayland::type_text(wayland::Typer::Ydotool, t)
            }
            (TypePath::Ydotool, Keystrokes::Paste { terminal }) => {
                wayland::paste_chord(wayland::Typer::Ydotool, terminal)
            }
            (TypePath::X11, _) => Err("X11 is not a Wayland path".into()),
        }
    }

    fn clipboard_text(&mut self, clip: ClipPath) -> Option<String> {
        match clip {
            ClipPath::X11 => self.x.board().ok().and_then(|b| b.text()),
            ClipPath::DataControl => self.wl.clipboard().ok().and_then(|c| c.text()),
            ClipPath::WlCopy => wayland::clipboard_text(),
        }
    }

    fn set_clipboard(&mut self, clip: ClipPath, text: &str) -> Result<(), String> {
        let result = match clip {
            ClipPath::X11 => self.x.board().and_then(|b| b.set_text(text)),
            ClipPath::DataControl => self.wl.clipboard().and_then(|c| c.set_text(text)),
            ClipPath::WlCopy => wayland::set_clipboard(text),
        };
        if result.is_err() {
            match clip {
                ClipPath::X11 => self.x.board = None,
                ClipPath::DataControl => self.wl.clipboard = None,
                ClipPath::WlCopy => {}
            }
        }
        result
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

    /// Puts `text` on this session's clipboard and leaves it there (the tray's "Copy last
    /// dictation"). Keep the injector alive: on X11 it serves what it copied.
    pub fn copy(&mut self, text: &str) -> Result<(), String> {
        self.leave_on_clipboard(text, Focus::Unknown)
    }

    /// The failure fallback: the text stays on the clipboard (not restored), on whichever
    /// clipboard this session has.
    /// Typing stopped at byte `at` (`why`): what was not typed goes to the clipboard, and the
    /// report and a notice say how much was typed and where the rest is.
    fn keep_the_rest(
        &mut self,
        text: &str,
        at: usize,
        focus: Focus,
        why: &str,
        report: &mut InjectReport,
    ) {
        let at = at.min(text.len());
        report.chars = text[..at].chars().count();
        report.stopped = true;
        let kept = self.leave_on_clipboard(text[at..].trim(), focus).is_ok();
        let message = format!(
            "{why} after {} of {} characters; the rest is {}in history",
            report.chars,
            text.chars().count(),
            if kept { "on the clipboard and " } else { "" }
        );
        if self.config.notify_on_failure {
            notify::notify(&message);
        }
        report.error = Some(message);
    }

    fn leave_on_clipboard(&mut self, text: &str, focus: Focus) -> Result<(), String> {
        let mut tried = Vec::new();
        let candidates: &[ClipPath] = match self.session.kind {
            SessionKind::X11 => &[ClipPath::X11],
            SessionKind::Wayland if focus == Focus::XWayland => {
                &[ClipPath::X11, ClipPath::DataControl, ClipPath::WlCopy]
            }
            SessionKind::Wayland => &[ClipPath::DataControl, ClipPath::WlCopy, ClipPath::X11],
            SessionKind::None => &[],
        };
        for &clip in candidates {
            let available = match clip {
                ClipPath::X11 => self.session.x_display,
                ClipPath::DataControl => self.abilities.data_control,
                ClipPath::WlCopy => self.abilities.wl_clipboard,
            };
            if !available {
                continue;
            }
            match self.set_clipboard(clip, text) {
                Ok(()) => return Ok(()),
                Err(e) => tried.push(e),
            }
        }
        Err(if tried.is_empty() {
            "no clipboard either".into()
        } else {
            tried.join("; ")
        })
    }
}

enum Keystrokes<'a> {
    Text(&'a str),
    Paste { terminal: bool },
}

/// The Wayland release grace (see [`Injector::release_grace`]): people let go of a chord's
/// keys within about this long of each other.
const WAYLAND_GRACE_MS: u64 = 100;
/// Longest pause of X11 typing while the user holds keys (the hotkey, for the next
/// dictation); modifiers still down then are released and typing goes on.
const TYPING_HOLD_TIMEOUT: Duration = Duration::from_secs(120);

/// Wayland typing with a stop check: bytes per piece (each piece a call of the path's tool).
const WAYLAND_PIECE: usize = 96;

/// `text` cut after whitespace into pieces of about `max` bytes (a longer word is cut on a
/// character boundary), each with its byte offset.
fn pieces(text: &str, max: usize) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let rest = &text[start..];
        let mut end = rest.len();
        if rest.len() > max {
            let mut cut = max;
            while !rest.is_char_boundary(cut) {
                cut -= 1;
            }
            end = rest[..cut]
                .rfind(char::is_whitespace)
                .map(|i| i + rest[i..].chars().next().map_or(1, char::len_utf8))
                .filter(|&e| e > 0)
                .unwrap_or(cut.max(rest.chars().next().map_or(1, char::len_utf8)));
        }
        out.push((start, &rest[..end]));
        start += end;
    }
    out
}

const CHANGED_MEANWHILE: &str = "something else was copied meanwhile (kept)";

fn not_restored(why: String) -> String {
    format!("the text was pasted; the previous clipboard was not restored: {why}")
}

fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

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
mod tests {
    use super::*;

    fn injector(config: InjectConfig, session: Session) -> Injector {
        Injector {
            config,
            session,
            abilities: Abilities::default(),
            x: X11Parts::default(),
            wl: WaylandParts::default(),
            keywatch: None,
            stop: None,
            keep_rest: false,
            profiles: crate::profile::Profiles::default(),
        }
    }

    #[test]
    fn long_texts_are_cut_into_pieces_after_whitespace_and_within_long_words() {
        let text = "one two three four five six seven eight nine ten";
        let p = pieces(text, 16);
        assert!(p.iter().all(|(_, s)| s.len() <= 16), "{p:?}");
        assert_eq!(p.iter().map(|(_, s)| *s).collect::<String>(), text);
        assert_eq!(p[1].0, p[0].1.len(), "offsets are where each piece starts");
        assert!(p[0].1.ends_with(' '), "cut after a space: {p:?}");
        // One long "word" (a runaway answer), multi-byte: cut on character boundaries.
        let word = "é".repeat(100);
        let p = pieces(&word, 15);
        assert!(p.iter().all(|(_, s)| s.len() <= 15 && !s.is_empty()));
        assert_eq!(p.iter().map(|(_, s)| *s).collect::<String>(), word);
        assert_eq!(pieces("", 10), vec![]);
    }

    fn x11_session() -> Session {
        Session::from_env(|k| (k == "DISPLAY").then(|| ":0".to_string()))
    }

    #[test]
    fn empty_or_blank_text_does_nothing() {
        let mut inj = injector(InjectConfig::default(), x11_session());
        for text in ["", "   ", "\n"] {
            let r = inj.inject(text);
            assert_eq!(r.method, None);
            assert_eq!(r.chars, 0);
            assert_eq!(r.error, None);
        }
        // Nothing was even connected.
        assert!(inj.x.x11.is_none() && inj.x.keys.is_none() && inj.x.board.is_none());
    }

    #[test]
    fn control_characters_never_reach_the_keyboard() {
        let inj = injector(InjectConfig::default(), x11_session());
        assert_eq!(
            inj.final_text("echo one;\ntouch tmp\r pwned\u{1b}[A"),
            "echo one;touch tmp pwned[A "
        );
    }

    #[test]
    fn trailing_space_is_added_once() {
        let inj = injector(InjectConfig::default(), x11_session());
        assert_eq!(inj.final_text("Hello."), "Hello. ");
        assert_eq!(inj.final_text("Hello. "), "Hello. ");
        let inj = injector(
            InjectConfig {
                trailing_space: false,
                ..InjectConfig::default()
            },
            x11_session(),
        );
        assert_eq!(inj.final_text("Hello."), "Hello.");
    }

    #[test]
    fn a_wayland_session_without_any_path_reports_why() {
        let wayland = Session::from_env(|k| {
            (k == "WAYLAND_DISPLAY").then(|| "dictum-test-no-such-display".to_string())
        });
        let mut inj = injector(
            InjectConfig {
                notify_on_failure: false,
                ..InjectConfig::default()
            },
            wayland,
        );
        let r = inj.inject("hello");
        let err = r.error.expect("an error");
        assert!(err.starts_with("no way to type"), "{err}");
        assert!(err.contains("clipboard"), "{err}");
        assert_eq!(r.app_class, None);
        assert_eq!(r.method, None, "no clipboard either");
    }

    #[test]
    fn record_fills_the_history_row() {
        use crate::store::{Entry, Source};
        let mut entry = Entry::new(Source::Mic);
        InjectReport::default().record(&mut entry);
        assert_eq!(entry.inject_ms, None, "empty text: the stage did not run");
        assert_eq!(entry.error, None);

        let failed = InjectReport {
            method: Some(Delivery::ClipboardOnly),
            app_class: Some("XTerm".into()),
            window_title: Some("vim notes.txt".into()),
            inject_ms: 12.5,
            error: Some("typing failed: no XTEST".into()),
            ..InjectReport::default()
        };
        failed.record(&mut entry);
        assert_eq!(entry.app_class.as_deref(), Some("XTerm"));
        assert_eq!(entry.window_title.as_deref(), Some("vim notes.txt"));
        assert_eq!(entry.inject_ms, Some(12.5));
        assert_eq!(entry.error_kind.as_deref(), Some("inject"));
        assert_eq!(entry.error.as_deref(), Some("typing failed: no XTEST"));
    }

    #[test]
    fn chars_per_second() {
        let r = InjectReport {
            method: Some(Delivery::Typed(TypePath::X11)),
            chars: 100,
            inject_ms: 500.0,
            ..InjectReport::default()
        };
        assert_eq!(r.chars_per_s(), 200.0);
        assert_eq!(InjectReport::default().chars_per_s(), 0.0);
    }
}
