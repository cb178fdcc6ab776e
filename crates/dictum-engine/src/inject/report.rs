//! What one delivery did: the path that really carried the text ([`Delivery`]) and the
//! [`InjectReport`] the caller stores in the history row.

use super::session::{Focus, TypePath};
use serde::Serialize;
use std::time::Instant;

/// What the report says of every paste on Wayland, where no program can see which window
/// fetches the clipboard (X11 watches the fetch and types the text when none comes).
pub const PASTE_UNCONFIRMED: &str =
    "pasted (unconfirmed: on Wayland Dictum cannot see which window fetched the paste)";

/// Whether a row's `inject_error` says the text did not (all) reach the window: anything
/// but the [`PASTE_UNCONFIRMED`] note alone, which every Wayland paste carries (its audio is
/// not kept for a retry, its voice commands run, no error cue).
pub fn inject_failed(inject_error: Option<&str>) -> bool {
    inject_error.is_some_and(|e| e != PASTE_UNCONFIRMED)
}

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

/// What one [`Injector::inject`](super::Injector::inject) did.
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
    pub(super) stopped_at: Option<usize>,
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

    /// Adds `warning` after any there already is ("; " between them).
    pub(super) fn add_warning(&mut self, warning: String) {
        self.warning = Some(match self.warning.take() {
            Some(before) => format!("{before}; {warning}"),
            None => warning,
        });
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

pub(super) fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    /// History's Retry button (`ui/src/lib/inject.ts`) must know the note by the same words.
    #[test]
    fn the_ui_knows_the_unconfirmed_paste_note_word_for_word() {
        let ui = include_str!("../../../../ui/src/lib/inject.ts");
        assert!(
            ui.contains(&format!("'{PASTE_UNCONFIRMED}'")),
            "ui/src/lib/inject.ts PASTE_UNCONFIRMED differs from the engine's"
        );
        assert!(!inject_failed(Some(PASTE_UNCONFIRMED)));
        assert!(inject_failed(Some("typing failed")));
        assert!(!inject_failed(None));
    }
}
