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
pub mod notify;
mod paste;
mod typing;
pub mod vkbd;
pub mod wayland;
pub mod window;
pub mod wlclip;

pub use config::{InjectConfig, InjectMethod};
pub use wayland::Backend;
pub use window::WindowInfo;

use paste::Board;
use serde::Serialize;
use std::time::{Duration, Instant};
use typing::Keys;
use window::X11;

/// How the text was delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    /// Key presses through enigo (X11).
    Type,
    /// Clipboard + Ctrl+V / Ctrl+Shift+V (X11).
    Paste,
    /// `wtype` (Wayland).
    Wtype,
    /// `ydotool type` (Wayland).
    Ydotool,
    /// `wl-copy` + Ctrl+V sent with wtype/ydotool (Wayland).
    WlPaste,
    /// Injection failed; the text was left on the clipboard for the user to paste.
    ClipboardOnly,
}

impl Delivery {
    pub fn as_str(self) -> &'static str {
        match self {
            Delivery::Type => "type",
            Delivery::Paste => "paste",
            Delivery::Wtype => "wtype",
            Delivery::Ydotool => "ydotool",
            Delivery::WlPaste => "wl_paste",
            Delivery::ClipboardOnly => "clipboard_only",
        }
    }
}

/// What one [`Injector::inject`] did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct InjectReport {
    /// None: nothing was delivered (empty text, or even the clipboard fallback failed).
    pub method: Option<Delivery>,
    /// WM_CLASS class of the target window (e.g. `XTerm`), when known.
    pub app_class: Option<String>,
    /// Title of the target window, when known.
    pub window_title: Option<String>,
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

    fn board(&mut self) -> Result<&mut Board, String> {
        if self.board.is_none() {
            self.board = Some(Board::connect()?);
        }
        self.board
            .as_mut()
            .ok_or_else(|| "clipboard: not connected".into())
    }
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

/// Puts text into the focused window. Create one per process and keep it: connections are
/// reused (an enigo connection costs milliseconds and a keymap read).
pub struct Injector {
    config: InjectConfig,
    backend: Backend,
    x: X11Parts,
}

// The daemon moves the injector to its own thread.
const _: fn() = || {
    fn assert_send<T: Send>() {}
    assert_send::<Injector>();
};

impl Injector {
    /// Chooses the backend from the session (`DISPLAY`, `WAYLAND_DISPLAY`, tools on PATH) and,
    /// on X11, connects now so the first dictation does not pay for it. A display that is not
    /// reachable yet is not an error here: each `inject` retries and reports it.
    /// Errors only for an invalid config.
    pub fn new(config: &InjectConfig) -> crate::Result<Injector> {
        checked(config)?;
        let backend = detect_backend(config.method);
        let mut injector = Injector {
            config: config.clone(),
            backend,
            x: X11Parts::default(),
        };
        if injector.backend == Backend::X11 {
            if let Err(e) = injector.x.keys_and_x11() {
                tracing::info!("inject: {e} (will retry at the next dictation)");
            }
            if injector.config.method == InjectMethod::Paste {
                if let Err(e) = injector.x.board() {
                    tracing::info!("inject: {e} (will retry at the next dictation)");
                }
            }
        }
        Ok(injector)
    }

    /// Applies a new `[inject]` section (the daemon's config reload); connections are kept.
    pub fn reconfigure(&mut self, config: &InjectConfig) -> crate::Result<()> {
        checked(config)?;
        self.backend = detect_backend(config.method);
        self.config = config.clone();
        Ok(())
    }

    pub fn config(&self) -> &InjectConfig {
        &self.config
    }

    /// The backend in use (X11, Wayland tools, or why neither works).
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// Checks that text can be injected now: Ok, or the one-line reason (for `dictum doctor`).
    pub fn check(&mut self) -> Result<(), String> {
        match &self.backend {
            Backend::X11 => self
                .x
                .keys_and_x11()
                .map(drop)
                .inspect_err(|_| self.reset()),
            Backend::Wayland(_) => Ok(()),
            Backend::Unavailable(why) => Err(why.clone()),
        }
    }

    /// The window that would receive the text; all `None` when unknown (no X display,
    /// Wayland, nothing focused). Never fails.
    pub fn focused_window(&mut self) -> WindowInfo {
        if self.backend != Backend::X11 {
            return WindowInfo::default();
        }
        let result = self.x.x11().and_then(|x| x.focused_window());
        match result {
            Ok(w) => w,
            Err(e) => {
                tracing::debug!("inject: focused window unknown: {e}");
                self.reset();
                WindowInfo::default()
            }
        }
    }

    /// Types or pastes `text` (plus the trailing space) into the focused window. Empty or
    /// blank text does nothing. Never panics; failures are in the report, with the text left
    /// on the clipboard and a notification shown.
    pub fn inject(&mut self, text: &str) -> InjectReport {
        let start = Instant::now();
        let mut report = InjectReport::default();
        if text.trim().is_empty() {
            report.total_ms = ms_since(start);
            return report;
        }
        let text = self.final_text(text);
        let window = self.focused_window();
        report.app_class = window.class.clone();
        report.window_title = window.title.clone();

        let result = match self.backend.clone() {
            Backend::X11 => self.inject_x11(&text, &window, start, &mut report),
            Backend::Wayland(tools) => self.inject_wayland(&text, &tools, start, &mut report),
            Backend::Unavailable(why) => Err(why),
        };
        match result {
            Ok(method) => {
                report.method = Some(method);
                report.chars = text.chars().count();
            }
            Err(e) => {
                tracing::warn!("inject: {e}");
                report.inject_ms = ms_since(start);
                report.error = Some(e);
                let kept = self.leave_on_clipboard(&text);
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
        report.total_ms = ms_since(start);
        report
    }

    fn final_text(&self, text: &str) -> String {
        let mut text = text.to_owned();
        if self.config.trailing_space && !text.ends_with(char::is_whitespace) {
            text.push(' ');
        }
        text
    }

    /// Drops every X connection: the next use reconnects.
    fn reset(&mut self) {
        self.x.x11 = None;
        self.x.keys = None;
        // The clipboard handle stays: dropping it would discard text it is serving.
    }

    fn inject_x11(
        &mut self,
        text: &str,
        window: &WindowInfo,
        start: Instant,
        report: &mut InjectReport,
    ) -> Result<Delivery, String> {
        let timeout = Duration::from_millis(self.config.modifier_release_timeout_ms);
        let released = self
            .x
            .keys_and_x11()
            .and_then(|(keys, x11)| keys.release_modifiers(x11, timeout))
            .inspect_err(|_| self.reset())?;
        report.modifier_wait_ms = released.waited_ms;
        report.modifiers_forced = !released.forced.is_empty();
        match self.config.method {
            InjectMethod::Type => {
                let typed = self.x.keys_and_x11().and_then(|(keys, x11)| {
                    let caps = keys.suspend_caps_lock(x11)?;
                    let typed = keys.type_text(text);
                    if caps {
                        if let Err(e) = keys.restore_caps_lock() {
                            report.warning = Some(e);
                        }
                    }
                    typed
                });
                typed.inspect_err(|_| self.reset())?;
                report.inject_ms = ms_since(start);
                Ok(Delivery::Type)
            }
            InjectMethod::Paste => {
                let terminal = self
                    .config
                    .is_terminal(window.instance.as_deref(), window.class.as_deref());
                let board = self.x.board()?;
                let previous = board.text();
                board.set_text(text)?;
                self.x
                    .keys_and_x11()
                    .and_then(|(keys, _)| keys.paste_chord(terminal))
                    .inspect_err(|_| self.reset())?;
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
                Ok(Delivery::Paste)
            }
        }
    }

    fn inject_wayland(
        &mut self,
        text: &str,
        tools: &wayland::WaylandTools,
        start: Instant,
        report: &mut InjectReport,
    ) -> Result<Delivery, String> {
        match self.config.method {
            InjectMethod::Type => {
                wayland::type_text(tools.typer, text)?;
                report.inject_ms = ms_since(start);
                Ok(match tools.typer {
                    wayland::Typer::Wtype => Delivery::Wtype,
                    wayland::Typer::Ydotool => Delivery::Ydotool,
                })
            }
            InjectMethod::Paste => {
                let previous = wayland::clipboard_text();
                wayland::set_clipboard(text)?;
                wayland::paste_chord(tools.typer)?;
                report.inject_ms = ms_since(start);
                if let Some(previous) = previous.filter(|p| p != text) {
                    std::thread::sleep(Duration::from_millis(self.config.paste_restore_delay_ms));
                    let restored = if wayland::clipboard_text().as_deref() == Some(text) {
                        wayland::set_clipboard(&previous)
                    } else {
                        Err(CHANGED_MEANWHILE.into())
                    };
                    report.warning = restored.err().map(not_restored);
                }
                Ok(Delivery::WlPaste)
            }
        }
    }

    /// The failure fallback: the text stays on the clipboard (not restored).
    fn leave_on_clipboard(&mut self, text: &str) -> Result<(), String> {
        match &self.backend {
            Backend::X11 => {
                let result = self.x.board().and_then(|b| b.set_text(text));
                if result.is_err() {
                    self.x.board = None;
                }
                result
            }
            Backend::Wayland(tools) if tools.clipboard => wayland::set_clipboard(text),
            Backend::Wayland(_) => {
                Err("wl-copy is not installed (`sudo apt install wl-clipboard`)".into())
            }
            Backend::Unavailable(_) => {
                // Maybe only the typing tool is missing: try whatever clipboard exists.
                if wayland::on_path("wl-copy") && std::env::var_os("WAYLAND_DISPLAY").is_some() {
                    wayland::set_clipboard(text)
                } else {
                    Err("no clipboard either".into())
                }
            }
        }
    }
}

/// The backend for this process's session (`DISPLAY`, `WAYLAND_DISPLAY`, tools on PATH).
pub fn detect_backend(method: InjectMethod) -> Backend {
    let (display, wayland_display) = wayland::session_vars();
    wayland::choose_backend(
        wayland::SessionEnv {
            display: display.as_deref(),
            wayland_display: wayland_display.as_deref(),
        },
        method,
        wayland::on_path,
    )
}

const CHANGED_MEANWHILE: &str = "something else was copied meanwhile (kept)";

fn not_restored(why: String) -> String {
    format!("the text was pasted; the previous clipboard was not restored: {why}")
}

fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    fn injector(config: InjectConfig, backend: Backend) -> Injector {
        Injector {
            config,
            backend,
            x: X11Parts::default(),
        }
    }

    #[test]
    fn empty_or_blank_text_does_nothing() {
        let mut inj = injector(InjectConfig::default(), Backend::X11);
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
    fn trailing_space_is_added_once() {
        let inj = injector(InjectConfig::default(), Backend::X11);
        assert_eq!(inj.final_text("Hello."), "Hello. ");
        assert_eq!(inj.final_text("Hello. "), "Hello. ");
        let inj = injector(
            InjectConfig {
                trailing_space: false,
                ..InjectConfig::default()
            },
            Backend::X11,
        );
        assert_eq!(inj.final_text("Hello."), "Hello.");
    }

    #[test]
    fn unavailable_backend_reports_why() {
        let mut inj = injector(
            InjectConfig {
                notify_on_failure: false,
                ..InjectConfig::default()
            },
            Backend::Unavailable("install wtype".into()),
        );
        let r = inj.inject("hello");
        let err = r.error.expect("an error");
        assert!(err.starts_with("install wtype"), "{err}");
        assert_eq!(r.app_class, None);
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
            method: Some(Delivery::Type),
            chars: 100,
            inject_ms: 500.0,
            ..InjectReport::default()
        };
        assert_eq!(r.chars_per_s(), 200.0);
        assert_eq!(InjectReport::default().chars_per_s(), 0.0);
    }
}
